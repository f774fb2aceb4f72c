"""``ConvTranspose`` whose kernel equals its stride (the 2x2 stride-2 upsampling of a DBNet head)
on VTA: ``ConvTransposeSpec``, one GEMM per input pixel and tap whose micro-op loops place the
tap's output pixel (docs/graph.md, "Resize and ConvTranspose").

The operator alone, on fsim and opencl (PoCL): equal to the llvm build of its TE, which equals
a numpy transposed convolution, with epilogues of every operand kind (per-channel bias, residual,
bias map) and tilings that split rows, columns and reduction chunks. In a graph (small
``onnx.helper`` models quantized by ``quantize_static``, symmetric and asymmetric int8: the
zero-point term per tap is a bias map): on VTA in one program with the convs around it,
bit-identical to the integer reference, every VTA operator within one step of onnxruntime
(two where an Add is fused). A ConvTranspose outside the form stays on the CPU with its reason.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from test_real_models import (CFG, _layerwise, _model, cpu_nodes, vta_op_counts,
                              assert_exact_and_within_a_step)

from vtabench.compiler import ConvTransposeSpec, Tiling, compile_op
from vtabench.graph import compile_model, reference_package
from vtabench.spec.config import load_config
from vtabench.verify.operators import OpJob, run_ops
from vtabench.workloads.quantize import calibration_set, quantize

pytestmark = pytest.mark.tvm

_CLIP = ("clip", -128, 127)
#: (id, input blocks, h, w, output blocks, stride, epilogue, tiling or None)
OPS = [("s2_5x7_shift", 2, 5, 7, 1, 2, (("shift", 8), _CLIP), None),
       ("s2_row_tiles_bias", 1, 3, 5, 2, 2, (("bias",), ("shift", 6), _CLIP),
        Tiling(oc=1, ic=1, h=1, w=5)),
       ("s2_residual_chunks", 2, 4, 4, 2, 2, (("shift", 7), ("residual",), _CLIP),
        Tiling(oc=1, ic=1, h=2, w=2)),
       ("s2_bias_map", 2, 8, 12, 2, 2, (("bias_map",), ("shift", 8), _CLIP), None),
       ("s3_3x4", 1, 3, 4, 1, 3, (("shift", 7), _CLIP), None)]


def _numpy_conv_transpose(x: np.ndarray, w: np.ndarray, s: int) -> np.ndarray:
    """Packed int8 input (1, C/BI, H, W, 1, BI) and weight (O/BO, C/BI, s, s, BO, BI) ->
    the int64 accumulator (O, H s, W s): ``out[o, y s + a, x s + b] = sum_c x[c, y, x]
    w[o, c, a, b]``."""
    xu = x[0, :, :, :, 0].transpose(0, 3, 1, 2).reshape(-1, *x.shape[2:4]).astype(np.int64)
    wu = w.transpose(0, 4, 1, 5, 2, 3).reshape(w.shape[0] * w.shape[4], -1, s, s)
    out = np.zeros((wu.shape[0], xu.shape[1] * s, xu.shape[2] * s), np.int64)
    for a in range(s):
        for b in range(s):
            out[:, a::s, b::s] = np.einsum("chw,oc->ohw", xu, wu[:, :, a, b].astype(np.int64))
    return out


@pytest.mark.parametrize("target", ["fsim", "opencl"])
@pytest.mark.parametrize("case", OPS, ids=[c[0] for c in OPS])
def test_conv_transpose_operator(case, target):
    """Bit-exact against the llvm build of the TE; the TE's accumulator (an epilogue of one
    shift) against numpy's transposed convolution."""
    _, cb, h, w, ob, s, ep, tiling = case
    cfg = load_config(CFG)
    spec = ConvTransposeSpec(1, cb * cfg.block_in, h, w, ob * cfg.block_out, s, epilogue=ep)
    op = compile_op(spec, cfg, tiling=tiling)
    x = op.random_inputs(np.random.default_rng(cb * 10 + h))
    ref = op.reference(x)
    if [e[0] for e in ep] == ["shift", "clip"]:
        acc = _numpy_conv_transpose(x["data"], x["weight"], s)
        want = np.clip((acc + (1 << (ep[0][1] - 1))) >> ep[0][1], -128, 127)
        assert np.array_equal(ref.transpose(0, 1, 6, 7, 2, 3, 4, 5).reshape(want.shape), want)
    (res,) = run_ops(target, cfg, [OpJob(spec, x, tiling)])
    assert np.array_equal(res.out, ref)
    assert res.syncs == 1


def _head(bias: bool, residual: bool = False, k: int = 2, stride: int = 2, pads=(0, 0, 0, 0)):
    """A DBNet-head step on a 5 x 7 map: 3x3 conv (20 channels), Relu, ConvTranspose (20 ->
    24, ``k`` x ``k``, ``stride``; with or without its bias), Relu (or, ``residual``, an Add
    of a 1x1 conv of the upsampled input first), a 1x1 conv to 8 channels."""
    rng = np.random.default_rng(4)
    ho, wo = (5 - 1) * stride + k - pads[0] - pads[2], (7 - 1) * stride + k - pads[1] - pads[3]
    inits = {"w1": rng.standard_normal((20, 16, 3, 3)) * 0.1, "b1": rng.standard_normal(20) * .1,
             "wt": rng.standard_normal((20, 24, k, k)) * 0.2, "bt": rng.standard_normal(24) * .1,
             "w2": rng.standard_normal((8, 24, 1, 1)) * 0.2}
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["a"], pads=[1] * 4,
                              kernel_shape=[3, 3]),
             helper.make_node("Relu", ["a"], ["r"]),
             helper.make_node("ConvTranspose", ["r", "wt"] + (["bt"] if bias else []), ["t"],
                              kernel_shape=[k, k], strides=[stride] * 2, pads=list(pads))]
    if residual:
        inits["up_roi"] = np.zeros(0, np.float32)
        inits["up_scales"] = np.array([1, 1, 2, 2], np.float32)
        inits["wl"] = rng.standard_normal((24, 20, 1, 1)) * 0.2
        nodes += [helper.make_node("Resize", ["r", "up_roi", "up_scales"], ["up"],
                                   mode="nearest", coordinate_transformation_mode="asymmetric",
                                   nearest_mode="floor"),
                  helper.make_node("Conv", ["up", "wl"], ["lat"]),
                  helper.make_node("Add", ["t", "lat"], ["t2"])]
    nodes += [helper.make_node("Relu", ["t2" if residual else "t"], ["tr"]),
              helper.make_node("Conv", ["tr", "w2"], ["y"])]
    return _model(nodes, inits, (1, 16, 5, 7), "y", (1, 8, ho, wo))


CASES = {"bias": lambda: _head(True), "no_bias": lambda: _head(False),
         "fused_add": lambda: _head(False, residual=True)}


def _check(model, target: str = "fsim", symmetric: bool = True,
           per_channel: bool = False) -> None:
    q = quantize(model, calibration_set(model, 8), symmetric=symmetric, per_channel=per_channel)
    pkg = compile_model(q, CFG)
    got = vta_op_counts(pkg)
    assert got.get("conv2d (transpose)", 0) == 1, (got, cpu_nodes(pkg))
    assert len(pkg.programs) == 1
    ref = reference_package(q, CFG)
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal((1, 16, 5, 7)).astype(np.float32) for _ in range(2)]
    outs, refs, _, lw = _layerwise(pkg, q, xs, target=target, ref=ref)
    assert_exact_and_within_a_step(pkg, outs, refs, lw)
    assert lw.fraction_exact > 0.99


#: Outside the slow runs: the head with a fused Add and zero points (the per-tap bias map) and
#: the one without a bias, symmetric (the detector's); the rest only with ``-m slow``.
FAST = {("fused_add", False), ("no_bias", True)}


@pytest.mark.parametrize("case, symmetric", [
    pytest.param(c, s, id=f"{c}-{'sym' if s else 'asym'}",
                 marks=() if (c, s) in FAST else pytest.mark.slow)
    for c in CASES for s in (True, False)])
def test_conv_transpose_vs_onnxruntime(case, symmetric):
    """On VTA in one program, bit-identical to the integer reference, within one step of
    onnxruntime layer by layer (two where the Add is fused)."""
    _check(CASES[case](), symmetric=symmetric)


@pytest.mark.slow
def test_conv_transpose_on_opencl():
    """The head step with a bias on opencl (PoCL), asymmetric: the same checks."""
    _check(_head(True), target="opencl", symmetric=False)


@pytest.mark.slow
def test_conv_transpose_per_channel():
    """Per-channel weight scales (onnxruntime's along the ConvTranspose weight's axis 1, its
    outputs), asymmetric activations: the same checks."""
    _check(_head(True), symmetric=False, per_channel=True)


@pytest.mark.parametrize("kw", [dict(k=3, stride=2), dict(k=2, stride=2, pads=(0, 0, 1, 1))],
                         ids=["k3_s2", "padded"])
def test_conv_transpose_outside_the_form(kw):
    """Overlapping taps (3x3 stride 2) or padding: the CPU runs the QDQ chain and says why."""
    m = _head(True, **kw)
    q = quantize(m, calibration_set(m, 8))
    pkg = compile_model(q, CFG)
    assert vta_op_counts(pkg).get("conv2d (transpose)", 0) == 0
    reasons = [r for _, op, r in cpu_nodes(pkg) if op.startswith("conv2d (transpose)")]
    assert len(reasons) == 1 and "kernel = stride" in reasons[0], cpu_nodes(pkg)
