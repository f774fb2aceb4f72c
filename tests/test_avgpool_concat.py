"""ShuffleNet's last syncs as lowerings of their own: an ``AveragePool`` that does not count its
padding (ONNX's default ``count_include_pad = 0``: divisors 4, 6, 9 by position for a 3 x 3,
stride 2, pad 1 window) and a channel ``Concat`` whose operands have different scales and zero
points and whose channel counts are not whole blocks (docs/graph.md, "ShuffleNet's average pools
and concats").

Each model holds the operator alone (an input quantize, the operator, an output dequantize)
between two convs that keep it inside one device program. On VTA, bit-identical on fsim to the
integer reference (every operator on the CPU), each VTA operator run alone on onnxruntime's
inputs within one step of onnxruntime's output, with symmetric and asymmetric int8 activations.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_real_models import (CFG, _Builder, _model, cpu_nodes, vta_op_counts,
                              assert_exact_and_within_a_step)

from vtabench.graph import compile_model, reference_package
from vtabench.graph.ir import VTA
from vtabench.workloads.quantize import calibration_set, quantize

pytestmark = pytest.mark.tvm


def _avgpool(k: int, stride: int, pad: int, c: int, h: int, w: int, include: int = 0):
    """conv -> ReLU -> AveragePool(k, stride, pad, count_include_pad) -> conv, on an h x w map
    of c channels."""
    b = _Builder(11)
    y = b.op("Relu", [b.conv("x", 5, c, 3, pad=1)])
    y = b.op("AveragePool", [y], kernel_shape=[k, k], strides=[stride, stride],
             pads=[pad] * 4, count_include_pad=include)
    ho, wo = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    y = b.conv(y, c, 8)
    return _model(b.nodes, b.inits, (1, 5, h, w), y, (1, 8, ho, wo)), (k, stride, pad,
                                                                        bool(include))


AVGPOOLS = {
    "shufflenet": lambda: _avgpool(3, 2, 1, 24, 13, 11),  # odd sizes: a last column of 2 taps
    "k3s1p1": lambda: _avgpool(3, 1, 1, 20, 7, 9),
    "k5s2p2": lambda: _avgpool(5, 2, 2, 36, 9, 10),  # counts 9, 12, 15, 20, 25: L = 900
    "include_pad": lambda: _avgpool(3, 2, 1, 24, 13, 11, include=1),
}


def _run(pkg, q, inputs):
    """Per input: the outputs of ``pkg`` and of the integer reference on fsim, every tensor a
    VTA operator wrote (by ONNX name), and the layer-by-layer deviation from onnxruntime."""
    from vtabench.drivers import open_device
    from vtabench.graph.compare import (
        Deviation,
        device_tensors,
        layer_inputs,
        layerwise,
        onnxruntime_tensors,
    )
    from vtabench.graph.execute import Executor
    from vtabench.spec.config import load_config

    ref = reference_package(q, CFG)
    name = q.graph.input[0].name
    outs, refs, written, lw = [], [], [], Deviation()
    with open_device("fsim", load_config(CFG), max(pkg.mem_bytes, ref.mem_bytes)) as dev:
        ex, ex_ref = Executor(pkg, dev), Executor(ref, dev)
        for x in inputs:
            outs.append(ex.run([x]).outputs)
            written.append(device_tensors(ex))
            theirs = onnxruntime_tensors(q, list(written[-1]) + layer_inputs(ex), {name: x})
            layerwise(ex, theirs, lw)
            refs.append(ex_ref.run([x]).outputs)
    return outs, refs, written, lw


def _check(model, symmetric: bool, want: dict[str, int]) -> tuple[object, list, object]:
    """Quantized, compiled: ``want`` (op -> count) on VTA in one program; bit-identical to the
    integer reference on fsim; within one step of onnxruntime per VTA operator (two where an
    Add is fused). The quantized model, the VTA-written tensors per input and the deviation."""
    q = quantize(model, calibration_set(model, 8), symmetric=symmetric)
    pkg = compile_model(q, CFG)
    got, cpu = vta_op_counts(pkg), cpu_nodes(pkg)
    assert got == want, (got, cpu)
    assert len(pkg.programs) == 1, cpu
    rng = np.random.default_rng(5)
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    inputs = [rng.standard_normal(shape).astype(np.float32) for _ in range(2)]
    outs, refs, written, lw = _run(pkg, q, inputs)
    assert_exact_and_within_a_step(pkg, outs, refs, lw)
    return q, written, lw


def _qparams(q, tensor: str, consumer: bool) -> tuple[float, int]:
    """(scale, zero point) of ``tensor``: read by the DequantizeLinear that consumes it, or
    written by the QuantizeLinear that produces it."""
    from onnx import numpy_helper

    inits = {i.name: numpy_helper.to_array(i) for i in q.graph.initializer}
    node = next(n for n in q.graph.node if (tensor in n.input if consumer else
                                            tensor in n.output)
                and n.op_type in ("DequantizeLinear", "QuantizeLinear"))
    return float(inits[node.input[1]]), int(inits[node.input[2]])


def _pool_exact(x: np.ndarray, k: int, stride: int, pad: int, include: bool) -> np.ndarray:
    """The mean over each window of ``x`` (N, C, H, W) in float64, the padding counted or not."""
    n, c, h, w = x.shape
    xp = np.zeros((n, c, h + 2 * pad, w + 2 * pad))
    ones = np.zeros((h + 2 * pad, w + 2 * pad))
    xp[:, :, pad:pad + h, pad:pad + w] = x
    ones[pad:pad + h, pad:pad + w] = 1
    ho, wo = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    out = np.zeros((n, c, ho, wo))
    for i in range(ho):
        for j in range(wo):
            win = (slice(i * stride, i * stride + k), slice(j * stride, j * stride + k))
            count = k * k if include else ones[win].sum()
            out[:, :, i, j] = xp[:, :, win[0], win[1]].sum(axis=(2, 3)) / count
    return out


@pytest.mark.parametrize("symmetric", [True, False], ids=["sym", "asym"])
@pytest.mark.parametrize("case", list(AVGPOOLS))
def test_avgpool_vs_onnxruntime(case, symmetric):
    """The pool is a depthwise conv of ones on VTA (with its count map when the padding is not
    counted), next to the two convs around it. Its output is the exact mean of its input
    (from the device) rounded half up, except within 1e-3 of a half step (the multiplier's
    approximation), where it is one step off at most; onnxruntime rounds exact ties half to
    even (a pool whose output scale is its input's puts many means on a half: sums of 2, 6 or
    18 over 4, 12 or 36 taps), so against it the pool is only held to one step."""
    model, (k, stride, pad, include) = AVGPOOLS[case]()
    q, written, _ = _check(model, symmetric, {"conv2d (average pool)": 1, "conv2d": 2})
    pool = next(n for n in q.graph.node if n.op_type == "AveragePool")
    dq = next(n for n in q.graph.node if n.output[0] == pool.input[0])
    quant = next(n for n in q.graph.node if pool.output[0] in n.input)
    sx, zx = _qparams(q, dq.input[0], consumer=True)
    sy, zy = _qparams(q, quant.output[0], consumer=False)
    for t in written:
        x = t[dq.input[0]].astype(np.float64) - zx
        val = _pool_exact(x, k, stride, pad, include) * sx / sy
        want = np.clip(np.floor(val + 0.5) + zy, -128 if zy < 128 else 0, 127 if zy < 128
                       else 255)
        got = t[quant.output[0]].astype(np.int64)
        near = np.abs(val - np.floor(val) - 0.5) < 1e-3
        assert np.array_equal(got[~near], want[~near])
        assert np.abs(got[near] - want[near]).max(initial=0) <= 1


def _concat(chans: tuple[int, ...], relu: bool):
    """Convs of ``chans`` channels from one input (each with its own weight scale, so each its
    own quantization), concatenated on the channel axis (ReLU after it or not), then a conv."""
    b = _Builder(12)
    parts = []
    for k, c in enumerate(chans):
        w = b.const(b.rng.standard_normal((c, 5, 3, 3)) * (k + 1) ** 2 * 0.2)
        y = b.op("Conv", ["x", w, b.const(b.rng.standard_normal(c) * 0.1 + k)],
                 kernel_shape=[3, 3], pads=[1] * 4)
        parts.append(b.op("Relu", [y]) if k == 0 else y)
    y = b.op("Concat", parts, axis=1)
    if relu:
        y = b.op("Relu", [y])
    y = b.conv(y, sum(chans), 8)
    return _model(b.nodes, b.inits, (1, 5, 7, 9), y, (1, 8, 7, 9))


CONCATS = {
    "shufflenet": lambda: _concat((24, 20), relu=True),  # 20: a half block after 1.5 blocks
    "three": lambda: _concat((7, 16, 9), relu=False),
}


@pytest.mark.parametrize("symmetric", [True, False], ids=["sym", "asym"])
@pytest.mark.parametrize("case", list(CONCATS))
def test_concat_vs_onnxruntime(case, symmetric):
    """The Concat becomes one placement conv per operand on VTA, each Add of the chain fused
    into one of them; the last node's output is the Concat's tensor, within one step of
    onnxruntime (two: its Add is fused), and onnxruntime computes the rewritten model's
    outputs exactly as the original's."""
    from vtabench.graph.onnx_concat import concat_to_convs

    model = CONCATS[case]()
    operands = sum(n.op_type == "Concat" and len(n.input) for n in model.graph.node)
    q, _, lw = _check(model, symmetric, {"conv2d": operands + 1, "conv2d (concat)": operands})
    concat = next(n for n in q.graph.node if n.op_type == "Concat")
    quant = next(n for n in q.graph.node if concat.output[0] in n.input)
    final = [quant.output[0]]  # the Concat's tensor, then the ReLU's folded into its node
    for op in ("DequantizeLinear", "Relu", "QuantizeLinear"):
        final += [n.output[0] for n in q.graph.node if final[-1] in n.input and n.op_type == op]
    assert final[0] in lw.per_tensor or final[-1] in lw.per_tensor, lw.per_tensor
    rewritten = type(q)()
    rewritten.CopyFrom(q)
    assert concat_to_convs(rewritten) == 1
    x = {q.graph.input[0].name: np.random.default_rng(7).standard_normal(
        [d.dim_value for d in q.graph.input[0].type.tensor_type.shape.dim]).astype(np.float32)}
    assert np.array_equal(_onnxruntime(q, quant.output[0], x),
                          _onnxruntime(rewritten, quant.output[0], x))


def _onnxruntime(model, name: str, inputs: dict[str, np.ndarray]) -> np.ndarray:
    """onnxruntime's value of tensor ``name`` of ``model`` as it is (no rewrite)."""
    import onnx
    import onnxruntime as ort

    m = type(model)()
    m.CopyFrom(model)
    m.graph.output.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.INT8, None))
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run([name], inputs)[0]


def test_outside_the_form_stays_on_the_cpu():
    """A pool in ceil mode and a Concat along the width keep their QDQ chains on the CPU, each
    node with its reason (the compile still succeeds)."""
    b = _Builder(13)
    y = b.op("Relu", [b.conv("x", 5, 20, 3, pad=1)])
    p = b.op("AveragePool", [y], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4, ceil_mode=1)
    y = b.op("Concat", [p, p], axis=3)
    y = b.conv(y, 20, 8)
    model = _model(b.nodes, b.inits, (1, 5, 8, 8), y, (1, 8, 5, 10))
    pkg = compile_model(quantize(model, calibration_set(model, 8)), CFG)
    nodes = pkg.manifest["nodes"]
    pool = next(n for n in nodes if n["op"].startswith("avgpool2d"))
    assert pool["device"] != VTA and "ceil mode" in pool["reason"]
    assert any(n["op"] == "relax.concat" and n["device"] != VTA for n in nodes)
    assert not any("(concat)" in n["op"] for n in nodes)
