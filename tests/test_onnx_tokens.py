"""A transformer's token sequence kept in its map's NCHW layout (:mod:`vtabench.graph.onnx_tokens`;
docs/graph.md, "The rapidocr recognizer"), and the two lowerings PaddleOCR's recognizer needs
besides: a conv of unequal H and W pads (1 x 3, pads (0, 1)), and a conv with a dead output
channel (all-zero weights: onnxruntime's per-channel weight scale ~1e-38).

The block is PaddleOCR's in small and odd sizes (20 features, 6 tokens, an MLP of 36): a map
flattened into tokens, LayerNorm, a Linear layer, ``x * Sigmoid(k x)``, a second Linear layer,
the residual, the write-back to the map and a 1 x 3 conv. The rewrite alone gives onnxruntime's
outputs bit for bit (float and int8); compiled, the Linear layers are 1x1 convs on VTA and the
device programs are only those LayerNorm and the Sigmoid force, each VTA operator within one
step of onnxruntime, bit-identical to the integer reference. A sequence that is only read by a
Softmax (the CTC head's) goes back to the original layout before it.
"""

from __future__ import annotations

import copy

import numpy as np
import onnx
import onnx.numpy_helper
import pytest
from test_real_models import CFG, _Builder, _layerwise, _model, assert_exact_and_within_a_step, \
    cpu_nodes, vta_op_counts

from vtabench.graph import compile_model, reference_package
from vtabench.graph.onnx_prep import fold_constants
from vtabench.graph.onnx_tokens import tokens_to_nchw
from vtabench.workloads.quantize import calibration_set, quantize

pytestmark = pytest.mark.tvm

C, T, HIDDEN = 20, 6, 36


def _layer_norm(b: _Builder, x: str) -> str:
    """LayerNorm over the last axis as Paddle's exporter writes it."""
    mean = b.op("ReduceMean", [x], axes=[-1])
    d = b.op("Sub", [x, mean])
    var = b.op("ReduceMean", [b.op("Pow", [d, b.const(2.0)])], axes=[-1])
    y = b.op("Div", [d, b.op("Sqrt", [b.op("Add", [var, b.const(1e-6)])])])
    y = b.op("Mul", [y, b.const(b.rng.uniform(0.5, 1.5, C))])
    return b.op("Add", [y, b.const(b.rng.standard_normal(C) * 0.1)])


def _linear(b: _Builder, x: str, k: int, n: int) -> str:
    w = b.const(b.rng.standard_normal((k, n)) * (1.0 / k) ** .5)
    return b.op("Add", [b.op("MatMul", [x, w]), b.const(b.rng.standard_normal(n) * 0.1)])


def _block(head: bool = False):
    """(1, C, 1, T) -> tokens -> LayerNorm -> Linear -> x * Sigmoid(1.7 x) -> Linear -> + x
    -> (1, C, 1, T) -> 1 x 3 conv; ``head``: then tokens again -> Linear -> Softmax (the
    output, (1, T, 11))."""
    b = _Builder(27)
    x = b.conv("x", 4, C, 1)
    flat = b.op("Reshape", [x, b.const_int([1, C, T])])
    tok = b.op("Transpose", [flat], perm=[0, 2, 1])
    h = _linear(b, _layer_norm(b, tok), C, HIDDEN)
    h = b.op("Mul", [h, b.op("Sigmoid", [b.op("Mul", [h, b.const(1.7)])])])
    y = b.op("Add", [tok, _linear(b, h, HIDDEN, C)])
    y = b.op("Transpose", [b.op("Reshape", [y, b.const_int([1, 1, T, C])])], perm=[0, 3, 1, 2])
    w = b.const(b.rng.standard_normal((C, C, 1, 3)) * (2.0 / (3 * C)) ** .5)
    y = b.op("Conv", [y, w], kernel_shape=[1, 3], pads=[0, 1, 0, 1])
    if not head:
        return _model(b.nodes, b.inits, (1, 4, 1, T), y, (1, C, 1, T))
    y = b.op("Transpose", [b.op("Squeeze", [y, b.const_int([2])])], perm=[0, 2, 1])
    y = b.op("Softmax", [_linear(b, y, C, 11)], axis=2)
    return _model(b.nodes, b.inits, (1, 4, 1, T), y, (1, T, 11))


def _const_int(self: _Builder, v: list[int]) -> str:
    k = self.name("s")
    self.inits[k] = np.asarray(v, np.int64)
    return k


_Builder.const_int = _const_int  # shapes and axes as int64 initializers


def _run(model, inputs):
    import onnxruntime as ort

    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return [sess.run(None, {"x": x})[0] for x in inputs]


@pytest.mark.parametrize("head", [False, True], ids=["block", "head"])
def test_rewrite_keeps_the_outputs(head):
    """The Linear layers are convs, no MatMul is left, and only the Softmax's input goes back
    to the token layout (one Transpose). The rewrite only moves values, but onnxruntime sums a
    Conv in another order than a MatMul: float outputs within 1e-5, int8 ones within one step
    of the output's scale (a sum on a half step rounds the other way) and 99% equal."""
    m = _block(head)
    inputs = [np.random.default_rng(s).standard_normal((1, 4, 1, T)).astype(np.float32)
              for s in range(3)]
    for model in (m, quantize(m, calibration_set(m, 8))):
        r = copy.deepcopy(model)
        fold_constants(r)
        assert tokens_to_nchw(r) == 2 + head
        onnx.checker.check_model(r, full_check=True)
        ops = [n.op_type for n in r.graph.node]
        assert "MatMul" not in ops and ops.count("Transpose") == int(head), ops
        outs = [p for p in model.graph.node if p.output[0] == model.graph.output[0].name]
        step = onnx.numpy_helper.to_array(next(
            i for i in model.graph.initializer if i.name == outs[0].input[1])) \
            if outs[0].op_type == "DequantizeLinear" else 0.0
        for want, got in zip(_run(model, inputs), _run(r, inputs), strict=True):
            if not step:
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
                continue
            assert np.abs(got - want).max() <= step * 1.001
            assert np.mean(got == want) >= 0.99


def test_no_tokens_no_rewrite():
    """A conv model with a flatten and no MatMul after it is left as it is."""
    b = _Builder(3)
    y = b.op("Reshape", [b.conv("x", 4, C, 1), b.const_int([1, C, T])])
    m = _model(b.nodes, b.inits, (1, 4, 1, T), y, (1, C, T))
    r = copy.deepcopy(m)
    assert tokens_to_nchw(r) == 0 and r == m


@pytest.mark.parametrize("head", [False, pytest.param(True, marks=pytest.mark.slow)],
                         ids=["block", "head"])
def test_block_on_vta(head):
    """Compiled (symmetric int8): every Linear layer a conv on VTA, the 1 x 3 conv on VTA, the
    LayerNorm's epsilon Add (a one-channel scale and shift between CPU nodes) on the CPU with
    its reason; device programs: the first conv's, then one after LayerNorm and one after the
    Sigmoid; within one step per layer, bit-identical to the integer reference."""
    m = _block(head)
    q = quantize(m, calibration_set(m, 8))
    pkg = compile_model(q, CFG)
    convs = sum(v for k, v in vta_op_counts(pkg).items() if k.split(" ")[0] == "conv2d")
    # the stem conv, 2 (3 with the head) Linear layers, their bias Adds, LayerNorm's scale and
    # shift, the Swish's scalar, the 1 x 3 conv
    assert convs >= 6 + 2 * head, (vta_op_counts(pkg), cpu_nodes(pkg))
    cpu = cpu_nodes(pkg)
    assert not [c for c in cpu if c[1] == "conv2d" and "scale and shift" not in (c[2] or "")], cpu
    assert any("scale and shift" in (c[2] or "") for c in cpu)
    assert len(pkg.programs) == 3
    rng = np.random.default_rng(8)
    inputs = [rng.standard_normal((1, 4, 1, T)).astype(np.float32) for _ in range(2)]
    outs, refs, _, lw = _layerwise(pkg, q, inputs, ref=reference_package(q, CFG))
    assert_exact_and_within_a_step(pkg, outs, refs, lw)


@pytest.mark.parametrize("kernel, pads, hw", [((1, 3), (0, 1), (1, 9)), ((1, 3), (0, 1), (5, 7)),
                                              ((3, 1), (1, 0), (6, 5)), ((1, 5), (1, 2), (4, 9))])
def test_unequal_pads_and_a_dead_channel(kernel, pads, hw):
    """A conv whose H and W pads differ runs on VTA as the conv of a kernel with zero rows (or
    columns) around it and equal pads; one of its output channels has all-zero weights
    (per-channel weight scales: that channel's is ~1e-38, its multiplier 0). Within one step of
    onnxruntime, bit-identical to the integer reference."""
    b = _Builder(11)
    x = b.conv("x", 3, 18, 1)
    w = b.rng.standard_normal((18, 18, *kernel)) * 0.3
    w[5] = 0.0
    y = b.op("Conv", [x, b.const(w), b.const(b.rng.standard_normal(18) * 0.1)],
             kernel_shape=list(kernel), pads=[*pads, *pads])
    out = (1, 18, hw[0] + 2 * pads[0] - kernel[0] + 1, hw[1] + 2 * pads[1] - kernel[1] + 1)
    m = _model(b.nodes, b.inits, (1, 3, *hw), y, out)
    q = quantize(m, calibration_set(m, 8), per_channel=True)
    pkg = compile_model(q, CFG)
    assert vta_op_counts(pkg).get("conv2d") == 2, cpu_nodes(pkg)
    assert len(pkg.programs) == 1
    rng = np.random.default_rng(2)
    inputs = [rng.standard_normal((1, 3, *hw)).astype(np.float32) for _ in range(2)]
    outs, refs, _, lw = _layerwise(pkg, q, inputs, ref=reference_package(q, CFG))
    assert_exact_and_within_a_step(pkg, outs, refs, lw)


def test_a_near_dead_channel_with_a_bias_needs_no_wide_pre_shift():
    """One output channel of a 3 x 3 conv has weights about 1e-7 and a bias: per-channel
    weight scales put its requantization scale some 2^22 below the others', and its
    accumulator near 1e9 (the bias). One shared shift needs a pre-shift of 7 bits, rounding every
    channel twice; the channel's output is all but a constant (its input moves it by 0.0004
    of a step), so it is multiplied by 0 and its constant added after the requantization: the
    others keep their precision, within one step of onnxruntime, bit-identical to the integer
    reference (PaddleOCR's recognizer has such channels: docs/graph.md)."""
    b = _Builder(12)
    x = b.conv("x", 3, 18, 1)
    w = b.rng.standard_normal((18, 18, 3, 3)) * 0.3
    w[5] *= 3e-7
    bias = b.rng.standard_normal(18) * 0.1
    bias[5] = 0.1
    y = b.op("Conv", [x, b.const(w), b.const(bias)], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    m = _model(b.nodes, b.inits, (1, 3, 7, 9), y, (1, 18, 7, 9))
    q = quantize(m, calibration_set(m, 8), per_channel=True)
    pkg = compile_model(q, CFG)
    assert len(pkg.programs) == 1, cpu_nodes(pkg)
    epilogue = [n for n in pkg.manifest["nodes"] if n.get("epilogue")][-1]["epilogue"]
    # bias, then the pre-shift if any: 7 bits when channel 5 shares the shift (its worst case
    # 0.31 steps for every channel), 1 with it constant (0.004 steps, as other layers take)
    assert epilogue[1][0] != "shift" or epilogue[1][1] <= 1, epilogue
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal((1, 3, 7, 9)).astype(np.float32) for _ in range(2)]
    outs, refs, _, lw = _layerwise(pkg, q, inputs, ref=reference_package(q, CFG))
    assert_exact_and_within_a_step(pkg, outs, refs, lw)
    assert np.all(outs[0][0][0, 5] != 0)  # the constant is there (r * bias = 0.55 steps)
