"""PReLU on VTA (issue #27; docs/graph.md, "Channels, pools, depthwise"): LeakyReLU's lowering
with the slope's multiplier a per-channel vector, ``rshift(max(a * ma, a * mb[c]), n)``, the
larger branch being the slope's for every slope at most 1 (negative ones too).

onnxruntime leaves ``PRelu`` in float between a dequantize and the next quantize; its integer
form is chosen against that float32 chain on every one of the 256 input values of every channel.
Small ``onnx.helper`` models (conv -> PRelu -> conv, 20 channels, a 7 x 9 map) quantized by
onnxruntime: the PReLU on VTA in one device program, bit-identical on fsim to the integer
reference, every VTA operator within one step of onnxruntime; per channel, the integer form
against the float chain on all 256 values; a slope above 1 and a slope along the width stay on
the CPU with the reason.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_avgpool_concat import _run
from test_real_models import CFG, _Builder, _model, cpu_nodes, vta_op_counts

from vtabench.graph import compile_model
from vtabench.graph.integer import integer_form
from vtabench.graph.ir import QParams, TensorQ
from vtabench.graph.requant import rshift
from vtabench.workloads.quantize import calibration_set, quantize

pytestmark = pytest.mark.tvm

C, H, W = 20, 7, 9


def _prelu_model(slopes: np.ndarray):
    """conv -> PRelu(slopes) -> conv."""
    b = _Builder(3)
    y = b.conv("x", 5, C, 3, pad=1)
    y = b.op("PRelu", [y, b.const(slopes)])
    y = b.conv(y, C, 8)
    return _model(b.nodes, b.inits, (1, 5, H, W), y, (1, 8, H, W))


def _slopes(shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(7).uniform(-0.4, 0.9, shape)


#: (id, slope, onnxruntime's activations symmetric, slow).
CASES = [
    ("per_channel_asym", _slopes((C, 1, 1)), False, False),
    ("per_channel_sym", _slopes((C, 1, 1)), True, True),
    ("one_slope_asym", np.array([0.25]), False, True),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c[0], marks=pytest.mark.slow if c[-1]
                                               else ()) for c in CASES])
def test_prelu_vs_onnxruntime(case):
    _, slopes, symmetric, _slow = case
    model = _prelu_model(slopes)
    q = quantize(model, calibration_set(model, 8), symmetric=symmetric)
    pkg = compile_model(q, CFG)
    assert vta_op_counts(pkg) == {"leaky": 1, "conv2d": 2}, cpu_nodes(pkg)
    assert len(pkg.programs) == 1, cpu_nodes(pkg)
    rng = np.random.default_rng(5)
    inputs = [rng.standard_normal((1, 5, H, W)).astype(np.float32) for _ in range(2)]
    outs, refs, written, lw = _run(pkg, q, inputs)
    for o, r in zip(outs, refs, strict=True):
        assert all(np.array_equal(a, b) for a, b in zip(o, r, strict=True))
    prelu = next(n for n in q.graph.node if n.op_type == "PRelu")
    out = next(n for n in q.graph.node if prelu.output[0] in n.input).output[0]
    assert out in lw.per_tensor and lw.per_tensor[out][0] <= 1, lw.per_tensor
    over = {t: v for t, v in lw.per_tensor.items() if v[0] > 1}
    assert not over, over


@pytest.mark.parametrize("sy", [0.0613, 0.06])
@pytest.mark.parametrize("zero", [0, -128, 37])
def test_prelu_form_on_every_value(zero, sy):
    """The integer form (run as the epilogue computes it) against the float32 chain on all 256
    inputs of each of 20 channels (slopes in [-0.4, 0.9], input scale 0.05): at most one step
    off, and only where the exact value lies on a half step, which float32 rounding decides
    (an output scale of 0.06 puts every third positive input there: ``a * 5 / 6``)."""
    slopes = _slopes((C,))
    x, y = TensorQ(0.05, zero, "int8"), TensorQ(sy, 3, "int8")
    q = QParams(kind="leaky", x=x, y=y, slopes=slopes, w_scale=np.ones(C),
                bias=np.zeros(C, np.int32), lo=-128, hi=127)
    form = integer_form(q)
    v = np.arange(-128, 128, dtype=np.int64)[None, :].repeat(C, 0)  # stored values
    acc = v.copy()
    for i, op in enumerate(form.epilogue):
        vec = form.operands.get(i)
        k = vec[:, None].astype(np.int64) if vec is not None else None
        if op[0] == "bias":
            acc = acc + k
        elif op[0] == "mul_imm":
            acc = acc * op[1]
        elif op[0] == "chan_mul":
            acc = acc * k
        elif op[0] == "residual_max":
            acc = np.maximum(acc, v * k)
        elif op[0] == "shift":
            acc = rshift(acc, op[1])
        elif op[0] == "add_imm":
            acc = acc + op[1]
        elif op[0] == "clip":
            acc = np.clip(acc, op[1], op[2])
        else:
            raise AssertionError(f"unexpected epilogue op {op}")
    f32 = np.float32
    xf = (v - zero).astype(f32) * f32(0.05)
    yf = np.where(xf >= 0, xf, xf * slopes.astype(f32)[:, None])
    want = np.clip(np.rint(yf / f32(sy)).astype(np.int64) + 3, -128, 127)
    exact = np.where(v >= zero, 1.0, slopes[:, None]) * (v - zero) * 0.05 / sy
    on_half = np.abs(exact - np.floor(exact) - 0.5) < 1e-6
    assert np.abs(acc - want).max() <= 1
    assert not ((acc != want) & ~on_half).any()


@pytest.mark.parametrize("slopes, reason", [
    (np.concatenate([_slopes((C - 1, 1, 1)), [[[1.5]]]]), "above 1"),
    (_slopes((W,)), "along axis 3"),
], ids=["slope_above_1", "slope_along_width"])
def test_prelu_on_the_cpu(slopes, reason):
    model = _prelu_model(slopes)
    q = quantize(model, calibration_set(model, 8), symmetric=False)
    pkg = compile_model(q, CFG)
    reasons = [r for _, op, r in cpu_nodes(pkg) if op == "leaky"]
    assert len(reasons) == 1 and reason in reasons[0], cpu_nodes(pkg)
