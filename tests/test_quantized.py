"""Networks quantized by onnxruntime (``quantize_static``) on VTA, with any scales.

The small float network (vtabench.workloads.float_models.small_resnet_float) is quantized here
on a seeded random calibration set in four forms: per-tensor and per-channel weight scales with
symmetric int8 activations, asymmetric int8 activations (zero points at padded borders; slow),
and per-channel with asymmetric uint8 activations. For each:

* every operator with MACs (convs, the global average pool, the Gemm) runs on VTA, in one device
  program, requantizing with integer multipliers (ALU MUL) - no power-of-two scale anywhere;
* the package is bit-identical to the integer reference (every operator on the CPU), on fsim
  for every form and on every target for one;
* against onnxruntime: each VTA operator run alone on onnxruntime's inputs is within one
  quantization step of onnxruntime's output (two where a fused residual Add's scale ratio is
  above one), nearly always exact; end to end (differences carried from layer to layer) the
  stated fractions hold and the top-1 class agrees.

Also the QOperator form of the same model, the requantization arithmetic itself (no int32
overflow over the whole accumulator range, error within what it claims) and ``vtabench
quantize``. The large networks (ResNet-18/50, MobileNetV2-like, the detector) are in
test_networks.py, marked slow.
"""

from __future__ import annotations

import numpy as np
import pytest

from vtabench.graph import compile_model, reference_package, run_package
from vtabench.graph.ir import VTA
from vtabench.workloads.float_models import small_resnet_float
from vtabench.workloads.quantize import calibration_set, quantize

from targets_env import targets_from_env

pytestmark = pytest.mark.tvm

TARGETS = targets_from_env("VTABENCH_GRAPH_TARGETS")
CFG = "default"
FORMS = {
    "tensor": {"per_channel": False},
    "channel": {"per_channel": True},
    "asym": {"per_channel": False, "symmetric": False},
    "uint8": {"per_channel": True, "symmetric": False, "activation": "uint8"},
}
#: The default run takes three forms; asymmetric int8 (what uint8 covers, less the offset) is slow.
FORM_PARAMS = [pytest.param(f, marks=pytest.mark.slow) if f == "asym" else f for f in FORMS]
INPUTS = 4
SHAPE = (1, 3, 16, 16)


def _inputs(n: int, seed: int = 100) -> list[np.ndarray]:
    return [np.random.default_rng([seed, i]).standard_normal(SHAPE).astype(np.float32)
            for i in range(n)]


@pytest.fixture(scope="module")
def float_model():
    return small_resnet_float()


@pytest.fixture(scope="module")
def quantized(float_model):
    """form -> (model, package, reference package), built on first use."""
    cache: dict[str, tuple] = {}

    def get(form: str) -> tuple:
        if form not in cache:
            q = quantize(float_model, calibration_set(float_model, 8), **FORMS[form])
            cache[form] = (q, compile_model(q, CFG), reference_package(q, CFG))
        return cache[form]
    return get


@pytest.fixture(scope="module")
def fsim_runs(quantized):
    """form -> per input: (package outputs, reference outputs, device tensors, onnxruntime's
    tensors, layer-wise deviation), one fsim device and one executor per package."""
    from vtabench.drivers import open_device
    from vtabench.graph.compare import (Deviation, device_tensors, layer_inputs, layerwise,
                                        onnxruntime_tensors)
    from vtabench.graph.execute import Executor

    cache: dict[str, list] = {}

    def get(form: str) -> list:
        if form not in cache:
            q, pkg, ref = quantized(form)
            rows = []
            with open_device("fsim", CFG, max(pkg.mem_bytes, ref.mem_bytes)) as dev:
                ex, ex_ref = Executor(pkg, dev), Executor(ref, dev)
                for x in _inputs(INPUTS):
                    out = ex.run([x]).outputs
                    ours = device_tensors(ex)
                    theirs = onnxruntime_tensors(q, list(ours) + layer_inputs(ex), {"input": x})
                    lw = layerwise(ex, theirs, Deviation())
                    rows.append((out, ex_ref.run([x]).outputs, ours, theirs, lw))
            cache[form] = rows
        return cache[form]
    return get


def test_shared_dequantize(quantized):
    """onnxruntime shares one DequantizeLinear between a residual block's two branches (what
    crashed the frontend before): the model has one, and it compiles."""
    q, pkg, _ = quantized("tensor")
    uses: dict[str, int] = {}
    for n in q.graph.node:
        for i in n.input:
            uses[i] = uses.get(i, 0) + 1
    shared = [n for n in q.graph.node if n.op_type == "DequantizeLinear"
              and uses.get(n.output[0], 0) > 1]
    assert shared
    assert pkg.manifest["stats"]["syncs_per_inference"] == 1


@pytest.mark.parametrize("form", FORM_PARAMS)
def test_all_macs_on_vta(quantized, form):
    _, pkg, _ = quantized(form)
    nodes = pkg.manifest["nodes"]
    gemm = [n for n in nodes if n["op"].split(" ")[0] in ("conv2d", "dense", "avgpool")]
    assert len(gemm) == 8 and all(n["device"] == VTA for n in gemm), [
        (n["name"], n.get("reason")) for n in gemm if n["device"] != VTA]
    assert len(pkg.programs) == 1
    ops = {e[0] for n in gemm for e in n["epilogue"]}
    assert ops & {"mul_imm", "chan_mul"}  # integer multipliers, not power-of-two shifts
    if form in ("channel", "uint8"):
        assert "chan_mul" in ops
    if form in ("asym", "uint8"):
        assert "bias_map" in ops  # zero points at the padded borders


@pytest.mark.parametrize("form", FORM_PARAMS)
def test_bit_identical_fsim(fsim_runs, form):
    for out, ref, *_ in fsim_runs(form):
        for u, v in zip(out, ref, strict=True):
            assert np.array_equal(u, v)


@pytest.mark.parametrize("target", [t for t in TARGETS if t != "fsim"])
def test_bit_identical_targets(quantized, target):
    _, pkg, ref = quantized("channel")
    [x] = _inputs(1)
    res = run_package(pkg, target, [x])[0]
    want = run_package(ref, "fsim", [x])[0]
    for u, v in zip(res.outputs, want.outputs, strict=True):
        assert np.array_equal(u, v), target
    assert res.per_inference["syncs"] == 1


@pytest.mark.parametrize("form", FORM_PARAMS)
def test_vs_onnxruntime(quantized, fsim_runs, form):
    from vtabench.graph.compare import Deviation, deviation

    q, _, _ = quantized(form)
    e2e, lw, agree = Deviation(), Deviation(), 0
    rows = fsim_runs(form)
    for out, _, ours, theirs, lw1 in rows:
        deviation(ours, theirs, e2e)
        for name, (m, exact, size) in lw1.per_tensor.items():
            t = lw.per_tensor.setdefault(name, [0, 0, 0])
            t[0], t[1], t[2] = max(t[0], m), t[1] + exact, t[2] + size
        agree += int(np.argmax(out[0]) == np.argmax(theirs[q.graph.output[0].name]))
    lw_exact = sum(t[1] for t in lw.per_tensor.values()) / sum(
        t[2] for t in lw.per_tensor.values())
    lw_max = max(t[0] for t in lw.per_tensor.values())
    assert e2e.tensors == 8 * len(rows) and len(lw.per_tensor) == 8
    # each operator alone: onnxruntime's float requantization, reproduced to 1e-5 or so
    assert lw_exact >= 0.999, (lw_exact, lw.per_tensor)
    assert lw_max <= (1 if form in ("tensor", "channel") else 2), lw.per_tensor
    # end to end, a difference moves the next layer's inputs
    assert e2e.fraction_exact >= 0.98 and e2e.max_steps <= 4, (e2e.fraction_exact,
                                                                e2e.per_tensor)
    assert agree >= len(rows) - 1


def test_qoperator(float_model):
    """The QOperator form (QLinearConv, QLinearAdd, QGemm, QLinearGlobalAveragePool) is
    rewritten to QDQ and runs on VTA like it, equal to its integer reference and agreeing with
    onnxruntime's own QOperator kernels on the top-1 class."""
    import tempfile
    from pathlib import Path

    import onnx
    import onnxruntime as ort
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, quantize_static

    calib = calibration_set(float_model, 8)

    class Samples(CalibrationDataReader):
        def __init__(self) -> None:
            self.items = iter([{"input": s[None]} for s in calib])

        def get_next(self):
            return next(self.items, None)

    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "f.onnx", Path(tmp) / "q.onnx"
        onnx.save(float_model, str(src))
        quantize_static(str(src), str(dst), Samples(), quant_format=QuantFormat.QOperator,
                        per_channel=True)
        q = onnx.load(str(dst))
    ops = {n.op_type for n in q.graph.node}
    assert {"QLinearConv", "QLinearAdd", "QGemm", "QLinearGlobalAveragePool"} <= ops
    pkg = compile_model(q, CFG, profile=False)
    gemm = [n for n in pkg.manifest["nodes"] if n["op"].split(" ")[0] in ("conv2d", "dense",
                                                                         "avgpool")]
    assert len(gemm) == 8 and all(n["device"] == VTA for n in gemm)
    from vtabench.drivers import open_device
    from vtabench.graph.execute import Executor

    ref = reference_package(q, CFG)
    sess = ort.InferenceSession(q.SerializeToString())
    with open_device("fsim", CFG, max(pkg.mem_bytes, ref.mem_bytes)) as dev:
        ex, ex_ref = Executor(pkg, dev), Executor(ref, dev)
        for x in _inputs(1):
            a = ex.run([x]).outputs[0]
            assert np.array_equal(a, ex_ref.run([x]).outputs[0])
            assert np.argmax(a) == np.argmax(sess.run(None, {"input": x})[0])


def test_requant_int32_and_error():
    """Over the whole accumulator range the requantization stays in int32 and within the
    error it claims of acc * r, for per-tensor and per-channel scales; outputs that saturate
    stay saturated; a power-of-two scale is the plain rounding shift."""
    from vtabench.graph.requant import choose, rshift

    rng = np.random.default_rng(3)
    for r, bound in ((np.array([0.004871]), np.array([1 << 19])),
                     (np.array([3.1e-5]), np.array([1 << 26])),
                     (rng.uniform(1e-4, 4e-3, 32), rng.integers(1 << 15, 1 << 24, 32))):
        rq = choose(r, bound, ymax=129)
        acc = np.stack([np.concatenate([np.linspace(-b, b, 4001).astype(np.int64),
                                        rng.integers(-b, b, 4000)]) for b in bound])
        got = rq.apply(acc[None], chan_axis=1)[0]
        exact = acc * r[:, None]
        inside = np.abs(exact) <= 128
        assert np.all(np.abs(got[inside] - exact[inside]) <= 0.5 + rq.error + 1e-9)
        assert np.all(np.abs(got[~inside]) >= 128)
        # every intermediate fits int32
        v = rshift(acc, rq.pre)
        if rq.clamp:
            lim = np.broadcast_to(np.asarray(rq.clamp)[:, None], v.shape)
            v = np.clip(v, -lim, lim)
        m = np.broadcast_to(np.asarray(rq.mult)[:, None], v.shape)
        assert np.abs(v * m).max() + (1 << max(rq.shift - 1, 0)) < 1 << 31
    assert choose(np.array([2.0 ** -7]), np.array([1 << 20])).ops() == [(("shift", 7), None)]


def test_cli_quantize_compile(tmp_path, float_model):
    """The documented flow: the float model and its calibration samples from ``python -m
    vtabench.workloads`` (the same as the library's), ``vtabench quantize``, ``vtabench
    compile``."""
    import onnx

    from vtabench.cli import main
    from vtabench.workloads import __main__ as workloads_cli
    from vtabench.workloads.float_models import FLOAT_MODELS

    assert set(FLOAT_MODELS) <= set(workloads_cli.MODELS)
    assert workloads_cli.main(["small_resnet_float", "-o", str(tmp_path / "f.onnx"),
                               "--calib", str(tmp_path / "calib.npy"), "--count", "4"]) == 0
    assert onnx.load(str(tmp_path / "f.onnx")) == float_model
    assert np.array_equal(np.load(tmp_path / "calib.npy"), calibration_set(float_model, 4))
    assert main(["quantize", str(tmp_path / "f.onnx"), "--calib", str(tmp_path / "calib.npy"),
                 "--per-channel", "-o", str(tmp_path / "q.onnx")]) == 0
    assert main(["compile", str(tmp_path / "q.onnx"), "-o", str(tmp_path / "q.vtapkg"),
                 "--no-profile"]) == 0
    from vtabench.graph import Package

    pkg = Package.load(tmp_path / "q.vtapkg")
    assert len(pkg.manifest["layers"]) == 8


def test_qlinear_matmul():
    """QLinearMatMul (ai.onnx) with a constant int8 weight: rewritten to QDQ, a dense on VTA,
    equal to its reference and within one step of onnxruntime's kernel."""
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(5)
    w = rng.integers(-127, 128, (48, 20)).astype(np.int8)  # (K, N): 48 -> 20 (padded to 32)
    inits = [numpy_helper.from_array(np.array(v, dt), n) for n, v, dt in (
        ("xs", 0.05, np.float32), ("xz", 0, np.int8), ("ws", 0.013, np.float32),
        ("wz", 0, np.int8), ("ys", 0.7, np.float32), ("yz", 3, np.int8))]
    inits.append(numpy_helper.from_array(w, "w"))
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("QLinearMatMul", ["xq", "xs", "xz", "w", "ws", "wz", "ys", "yz"],
                              ["yq"]),
             helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    g = helper.make_graph(nodes, "qmm", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                        [1, 48])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 20])],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    pkg = compile_model(m, CFG, profile=False)
    dense = [n for n in pkg.manifest["nodes"] if n["op"] == "dense"]
    assert len(dense) == 1 and dense[0]["device"] == VTA
    sess = ort.InferenceSession(m.SerializeToString())
    from vtabench.drivers import open_device
    from vtabench.graph.execute import Executor

    ref = reference_package(m, CFG)
    with open_device("fsim", CFG, max(pkg.mem_bytes, ref.mem_bytes)) as dev:
        ex, ex_ref = Executor(pkg, dev), Executor(ref, dev)
        for seed in range(3):
            x = np.random.default_rng(seed).standard_normal((1, 48)).astype(np.float32) * 3
            a = ex.run([x]).outputs[0]
            assert np.array_equal(a, ex_ref.run([x]).outputs[0])
            assert np.abs(a - sess.run(None, {"x": x})[0]).max() <= 0.7 + 1e-6
