"""Nearest-neighbour ``Resize`` by integer factors on VTA (the upsample of FPN / DBNet heads):
``UpsampleSpec``, a copy of each input pixel to its ``s x s_w`` output block by the ALU's
micro-op loops (docs/graph.md, "Resize and ConvTranspose").

The operator alone, on fsim and opencl (PoCL): equal to numpy's ``repeat`` and to the llvm build
of its TE, with tilings that split the rows and the columns. In a graph (small ``onnx.helper``
models quantized by ``quantize_static``, symmetric and asymmetric int8, channels not a multiple
of the block, odd maps): the Resize on VTA in one program with the convs around it,
bit-identical to the integer reference, equal to onnxruntime's output (a copy: not one step
off); a Resize outside the form stays on the CPU and says why.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from test_real_models import (CFG, _layerwise, _model, cpu_nodes, vta_op_counts,
                              assert_exact_and_within_a_step)

from vtabench.compiler import Tiling, UpsampleSpec, compile_op
from vtabench.graph import compile_model, reference_package
from vtabench.spec.config import load_config
from vtabench.verify.operators import OpJob, run_ops
from vtabench.workloads.quantize import calibration_set, quantize

pytestmark = pytest.mark.tvm

#: (id, channels in blocks, h, w, scale, scale_w (0: the same), tiling or None)
OPS = [("2x_5x7", 2, 5, 7, 2, 0, None),
       ("2x_5x7_column_tiles", 2, 5, 7, 2, 0, Tiling(oc=1, ic=1, h=5, w=1)),
       ("2x_row_tiles", 3, 16, 24, 2, 0, Tiling(oc=1, ic=1, h=1, w=24)),
       ("4x_3x4", 1, 3, 4, 4, 0, None),
       ("2x3_3x5", 1, 3, 5, 2, 3, None),
       ("8x_4x16", 6, 4, 16, 8, 0, None)]


@pytest.mark.parametrize("target", ["fsim", "opencl"])
@pytest.mark.parametrize("case", OPS, ids=[c[0] for c in OPS])
def test_upsample_operator(case, target):
    """Every output pixel is its source pixel (numpy's repeat), one sync."""
    _, blocks, h, w, s, sw, tiling = case
    cfg = load_config(CFG)
    spec = UpsampleSpec(1, blocks * cfg.block_in, h, w, s, sw)
    op = compile_op(spec, cfg, tiling=tiling)
    x = op.random_inputs(np.random.default_rng(blocks * 100 + h))
    want = x["data"].repeat(s, axis=2).repeat(spec.s_w, axis=3)
    assert np.array_equal(op.reference(x).reshape(want.shape), want)
    (res,) = run_ops(target, cfg, [OpJob(spec, x, tiling)])
    assert np.array_equal(res.out.reshape(want.shape), want)
    assert res.syncs == 1


def _resize(x: str, out: str, scales, inits, mode: str = "nearest",
            coord: str = "asymmetric", nearest: str = "floor"):
    """A Resize node of ``x`` by ``scales`` (its roi and scales as initializers)."""
    inits[f"{out}_roi"] = np.zeros(0, np.float32)
    inits[f"{out}_scales"] = np.asarray(scales, np.float32)
    return helper.make_node("Resize", [x, f"{out}_roi", f"{out}_scales"], [out], name=out,
                            mode=mode, coordinate_transformation_mode=coord,
                            nearest_mode=nearest)


def _conv(x: str, out: str, cin: int, cout: int, rng, inits, stride: int = 1, k: int = 1):
    inits[f"{out}_w"] = rng.standard_normal((cout, cin, k, k)) * (2.0 / (cin * k * k)) ** .5
    inits[f"{out}_b"] = rng.standard_normal(cout) * 0.1
    return helper.make_node("Conv", [x, f"{out}_w", f"{out}_b"], [out], name=out,
                            kernel_shape=[k, k], strides=[stride] * 2, pads=[k // 2] * 4)


def _fpn():
    """An FPN step with 20 channels: a stride-2 conv to 5 x 7, its output upsampled 2x and
    added to a conv of the 10 x 14 input (the Add fused into that conv, the upsampled tensor
    its residual), a Relu, then a 3x3 conv."""
    rng = np.random.default_rng(8)
    inits: dict = {}
    nodes = [_conv("x", "low", 16, 20, rng, inits, stride=2),
             _conv("x", "lat", 16, 20, rng, inits),
             _resize("low", "up", [1, 1, 2, 2], inits),
             helper.make_node("Add", ["up", "lat"], ["sum"], name="sum"),
             helper.make_node("Relu", ["sum"], ["act"], name="act"),
             _conv("act", "y", 20, 12, rng, inits, k=3)]
    return _model(nodes, inits, (1, 16, 10, 14), "y", (1, 12, 10, 14))


def _upsample_out(s: int, sw: int, coord: str = "asymmetric", nearest: str = "floor",
                  mode: str = "nearest"):
    """A conv of 20 channels on a 5 x 7 map, then the Resize by (s, sw): the graph's output."""
    rng = np.random.default_rng(9)
    inits: dict = {}
    nodes = [_conv("x", "a", 16, 20, rng, inits),
             _resize("a", "y", [1, 1, s, sw], inits, mode=mode, coord=coord, nearest=nearest)]
    ho, wo = int(5 * s), int(7 * sw)
    return _model(nodes, inits, (1, 16, 5, 7), "y", (1, 20, ho, wo))


CASES = {
    "fpn_2x": (lambda: _fpn(), 1),
    "out_2x": (lambda: _upsample_out(2, 2), 1),
    "out_4x_half_pixel": (lambda: _upsample_out(4, 4, coord="half_pixel",
                                                nearest="round_prefer_floor"), 1),
    "out_2x3": (lambda: _upsample_out(2, 3), 1),
}


def _check(model, resizes: int, target: str = "fsim", symmetric: bool = True):
    q = quantize(model, calibration_set(model, 8), symmetric=symmetric)
    pkg = compile_model(q, CFG)
    got = vta_op_counts(pkg)
    assert got.get("resize", 0) == resizes, (got, cpu_nodes(pkg))
    assert len(pkg.programs) == 1
    ref = reference_package(q, CFG)
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal(shape).astype(np.float32) for _ in range(2)]
    outs, refs, _, lw = _layerwise(pkg, q, xs, target=target, ref=ref)
    resized = {n["onnx"] for n in pkg.manifest["nodes"] if n["op"] == "resize"}
    assert resized and all(lw.per_tensor[t][0] == 0 for t in resized), lw.per_tensor
    assert_exact_and_within_a_step(pkg, outs, refs, lw)
    return pkg


#: Outside the slow runs: the FPN step with zero points (a fused Add, asymmetric) and a 4x
#: ``half_pixel`` output, symmetric; the rest only with ``-m slow`` (make test's budget).
FAST = {("fpn_2x", False), ("out_4x_half_pixel", True)}


@pytest.mark.parametrize("case, symmetric", [
    pytest.param(c, s, id=f"{c}-{'sym' if s else 'asym'}",
                 marks=() if (c, s) in FAST else pytest.mark.slow)
    for c in CASES for s in (True, False)])
def test_resize_vs_onnxruntime(case, symmetric):
    """On VTA in one program, bit-identical to the integer reference, the Resize's output
    equal to onnxruntime's (every other operator within one step, two where an Add is
    fused)."""
    make, resizes = CASES[case]
    _check(make(), resizes, symmetric=symmetric)


@pytest.mark.slow
def test_resize_on_opencl():
    """The FPN step on opencl (PoCL): the same checks."""
    _check(_fpn(), 1, target="opencl", symmetric=False)


@pytest.mark.parametrize("model, reason", [
    (lambda: _upsample_out(1.5, 1.5), "not an integer"),
    (lambda: _upsample_out(2, 2, mode="linear"), "only nearest"),
    (lambda: _upsample_out(4, 4, coord="asymmetric", nearest="round_prefer_floor"),
     "asymmetric with floor"),
], ids=["scale_1.5", "linear", "asymmetric_round"])
def test_resize_outside_the_form(model, reason):
    """A Resize that is not a copy of whole blocks runs its QDQ chain on the CPU and says why
    (4x with asymmetric coordinates and rounding to nearest takes source ``round(o / 4)``:
    output 3 reads input 1, not a block copy)."""
    m = model()
    q = quantize(m, calibration_set(m, 8))
    pkg = compile_model(q, CFG)
    assert vta_op_counts(pkg).get("resize", 0) == 0
    reasons = [r for _, op, r in cpu_nodes(pkg) if op == "resize"]
    assert len(reasons) == 1 and reason in reasons[0], cpu_nodes(pkg)
