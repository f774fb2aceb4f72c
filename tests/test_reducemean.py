"""``ReduceMean`` over the spatial axes of an NCHW tensor on VTA as the average pool it is
(:mod:`vtabench.graph.onnx_reduce`; docs/graph.md, "Average pools and Concats").

The rewrite alone: onnxruntime's float outputs of the rewritten model equal the original's
(axes as attribute and as input, negative axes, keepdims 0 and 1), and what is no pool is left
alone. In a graph (small ``onnx.helper`` models quantized by ``quantize_static``, which keeps
the ``ReduceMean`` in float between a dequantize and the next operator's quantize; 20 channels,
odd maps): the pool on VTA, bit-identical on fsim to the integer reference, every VTA operator
within one step of onnxruntime, the pool's output the exact mean of its device input rounded
half up except within 1e-3 of a half step (the rule of the average-pool lowering). A mean over
the channels stays on the CPU and says why.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from test_avgpool_concat import _qparams, _run
from test_real_models import CFG, _Builder, _model, cpu_nodes, vta_op_counts

from vtabench.graph import compile_model
from vtabench.graph.onnx_reduce import SUFFIX, reduce_mean_to_pool
from vtabench.workloads.quantize import calibration_set, quantize

pytestmark = pytest.mark.tvm


def _mean_model(axes: list[int], keep: int, opset: int, c: int = 20, h: int = 7, w: int = 9,
                after: bool = True):
    """conv -> ReLU -> ReduceMean(axes, keepdims) on an h x w map of c channels, then (when
    ``after``) a 1x1 conv of the 4-D result or a MatMul of the reduced one; ``axes`` as the
    attribute below opset 18, as a constant input from 18 on."""
    b = _Builder(13)
    y = b.op("Relu", [b.conv("x", 5, c, 3, pad=1)])
    if opset >= 18:
        b.inits["axes"] = np.array(axes, np.int64)
        y = b.op("ReduceMean", [y, "axes"], keepdims=keep)
    else:
        y = b.op("ReduceMean", [y], axes=axes, keepdims=keep)
    shape = [1, c, h, w]
    for a in sorted((a % 4 for a in axes), reverse=True):
        if keep:
            shape[a] = 1
        else:
            del shape[a]
    if after and len(shape) == 4 and shape[1] == c:
        y, shape[1] = b.conv(y, c, 8), 8
    elif after:
        y = b.op("MatMul", [y, b.const(b.rng.standard_normal((shape[-1], 6)))])
        shape[-1] = 6
    return _model(b.nodes, b.inits, (1, 5, h, w), y, shape, opset=opset)


@pytest.mark.parametrize("axes, keep, opset, rewritten", [
    ([2, 3], 1, 13, 1), ([-1, -2], 0, 13, 1), ([2], 1, 18, 1), ([3], 0, 18, 1),
    ([-2], 0, 13, 1), ([1], 1, 13, 0), ([1, 2, 3], 0, 18, 0), ([0], 1, 13, 0)])
def test_rewrite_keeps_the_outputs(axes, keep, opset, rewritten):
    """The rewritten float model computes what the original does (onnxruntime, float32
    sums in another order: 1e-6 relative); a mean that is no spatial pool is left as is."""
    import onnxruntime as ort

    m = _mean_model(axes, keep, opset, after=False)
    r = onnx.ModelProto()
    r.CopyFrom(m)
    assert reduce_mean_to_pool(r) == rewritten
    onnx.checker.check_model(r, full_check=True)
    assert any(n.op_type == "ReduceMean" for n in r.graph.node) == (not rewritten)
    assert ("axes" in {i.name for i in r.graph.initializer}) == (opset >= 18 and not rewritten)
    x = {"x": np.random.default_rng(1).standard_normal((1, 5, 7, 9)).astype(np.float32)}
    want, got = (ort.InferenceSession(k.SerializeToString(), providers=[
        "CPUExecutionProvider"]).run(None, x)[0] for k in (m, r))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


#: (id, axes, keepdims, opset, symmetric, VTA operators, device programs): keepdims 0 over one
#: axis leaves a 3-D tensor, whose reshape the CPU runs (two programs).
CASES = [
    ("hw_keep", [2, 3], 1, 13, True, {"avgpool (global average pool)": 1, "conv2d": 2}, 1),
    ("hw_keep_asym", [2, 3], 1, 13, False,
     {"avgpool (global average pool)": 1, "conv2d": 2}, 1),
    ("hw_drop_opset18", [-1, -2], 0, 18, False,
     {"avgpool (global average pool)": 1, "reshape": 1, "conv2d": 1, "dense": 1}, 1),
    ("h_keep", [2], 1, 13, True, {"conv2d (average pool)": 1, "conv2d": 2}, 1),
    ("w_keep_opset18_asym", [3], 1, 18, False, {"conv2d (average pool)": 1, "conv2d": 2}, 1),
    ("w_drop", [3], 0, 13, True, {"conv2d (average pool)": 1, "conv2d": 1}, 1),
]


#: Outside the slow runs (make test's budget: about 5 s each): the two asymmetric ones with
#: the axes as attribute / a single axis kept are ``-m slow``.
SLOW = {"hw_keep_asym", "w_keep_opset18_asym"}


@pytest.mark.parametrize("case", [pytest.param(c, id=c[0], marks=pytest.mark.slow if c[0] in SLOW
                                               else ()) for c in CASES])
def test_reducemean_vs_onnxruntime(case):
    """The mean on VTA as its pool, bit-identical to the integer reference, within one step of
    onnxruntime, and the exact mean rounded half up away from half steps."""
    _, axes, keep, opset, symmetric, want, programs = case
    model = _mean_model(axes, keep, opset)
    q = quantize(model, calibration_set(model, 8), symmetric=symmetric)
    pkg = compile_model(q, CFG)
    assert vta_op_counts(pkg) == want, cpu_nodes(pkg)
    assert len(pkg.programs) == programs, cpu_nodes(pkg)
    rng = np.random.default_rng(5)
    inputs = [rng.standard_normal((1, 5, 7, 9)).astype(np.float32) for _ in range(2)]
    outs, refs, written, lw = _run(pkg, q, inputs)
    for o, r in zip(outs, refs, strict=True):
        assert all(np.array_equal(a, b) for a, b in zip(o, r, strict=True))
    over = {k: v for k, v in lw.per_tensor.items() if v[0] > 1}
    assert not over, over

    mean = next(n for n in q.graph.node if n.op_type == "ReduceMean")
    dq = next(n for n in q.graph.node if n.output[0] == mean.input[0])
    quant = next(n for n in q.graph.node if mean.output[0] in n.input)
    pooled = quant.output[0] if keep else f"{mean.output[0]}{SUFFIX}_q"
    sx, zx = _qparams(q, dq.input[0], consumer=True)
    sy, zy = _qparams(q, quant.output[0], consumer=False)
    hi = 127 if zy < 128 else 255
    for t in written:
        x = t[dq.input[0]].astype(np.float64) - zx
        val = x.mean(axis=tuple(a % 4 for a in axes), keepdims=True) * sx / sy
        exact = np.clip(np.floor(val + 0.5) + zy, hi - 255, hi)
        got = t[pooled].astype(np.int64).reshape(exact.shape)
        near = np.abs(val - np.floor(val) - 0.5) < 1e-3
        assert np.array_equal(got[~near], exact[~near])
        assert np.abs(got[near] - exact[near]).max(initial=0) <= 1


def test_channel_mean_on_the_cpu():
    """A mean over the channels is no pool: its QDQ chain runs on the CPU, with the reason."""
    m = _mean_model([1], 1, 13)
    q = quantize(m, calibration_set(m, 8))
    pkg = compile_model(q, CFG)
    reasons = [r for _, op, r in cpu_nodes(pkg) if op == "avgpool"]
    assert len(reasons) == 1 and "mean over axes (1,) of a 4-D tensor" in reasons[0] \
        and "over channels" in reasons[0], cpu_nodes(pkg)
    assert "avgpool (global average pool)" not in vta_op_counts(pkg)


def test_matmul_of_rows_on_the_cpu():
    """The MatMul after a mean over W alone reads a (1, C, H) tensor: H-long rows, C of them.
    VTA's dense takes one row, so it runs on the CPU and says why (before, it was placed on
    VTA as a one-row dense and the reference package's integer form did not build)."""
    m = _mean_model([3], 0, 13)
    pkg = compile_model(quantize(m, calibration_set(m, 8)), CFG)
    reasons = [r for _, op, r in cpu_nodes(pkg) if op == "dense"]
    assert reasons == ["matmul of a (1, 20, 7) activation: 20 rows of 7, VTA's dense takes one"]
