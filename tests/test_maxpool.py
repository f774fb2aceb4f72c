"""Padded max pools of inputs that may be negative on VTA (issue #27; docs/graph.md, "Channels,
pools, depthwise"): the stored int8 form of a uint8 activation (onnxruntime's default, where a
ReLU's output zero is stored as -128) or any signed activation, with equal and unequal pads.

VTA's LOAD pads with zeros; the pool moves only the interior up by 128 (a tensor of ones loaded
with the same padding, times 128, added), takes the maximum from 0 and moves it back down, so the
padding is the minimum of the moved range. The operator alone (``MaxPoolSpec``, signed, padded)
on fsim (two cases also on opencl and the RTL, slow) against numpy's max pool with -128
padding (odd sizes, channel blocks broadcast, ragged tiles); in graphs (``onnx.helper`` models
quantized by onnxruntime, 20 channels, odd maps): the pool on VTA in one device program,
bit-identical to the integer reference, equal to onnxruntime's max pool on the same inputs and
every other operator within one step.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_avgpool_concat import _run
from test_real_models import CFG, _Builder, _model, cpu_nodes, vta_op_counts

from vtabench.compiler import MaxPoolSpec, Tiling, compile_op
from vtabench.compiler.ops import POOL_ONES, pool_ones
from vtabench.graph import compile_model
from vtabench.runtime import available_targets
from vtabench.spec.config import load_config
from vtabench.verify.operators import OpJob, run_ops
from vtabench.workloads.quantize import calibration_set, quantize

pytestmark = pytest.mark.tvm

B = 16  # the default configuration's block


def _numpy_pool(x: np.ndarray, k: int, s: int, pad: int, end: int) -> np.ndarray:
    """Max pool of packed int8 ``x`` (N, C/B, H, W, 1, B), padded with -128 (the minimum)."""
    n, c, h, w, b, i = x.shape
    xp = np.full((n, c, h + pad + end, w + pad + end, b, i), -128, np.int8)
    xp[:, :, pad:pad + h, pad:pad + w] = x
    ho, wo = (h + pad + end - k) // s + 1, (w + pad + end - k) // s + 1
    out = np.full((n, c, ho, wo, b, i), -128, np.int8)
    for a in range(k):
        for bb in range(k):
            out = np.maximum(out, xp[:, :, a:a + s * (ho - 1) + 1:s, bb:bb + s * (wo - 1) + 1:s])
    return out


#: (id, spec, tiling or None for the tiler's).
OPS = [
    # two channel blocks in one tile (the ones broadcast over them), 9 x 11, stride 2, pad 1
    ("k3s2p1_9x11", MaxPoolSpec(1, 2 * B, 9, 11, 3, 2, 1, signed=True), None),
    # Inception v2's pads [0, 0, 1, 1]: padding after only
    ("k3s2_pads0011_8x8", MaxPoolSpec(1, B, 8, 8, 3, 2, 0, signed=True, pad_end=1), None),
    # stride 1, ragged tiles (rows 4+4+4+1, columns 3+3+1): the padding in the first and last
    ("k3s1p1_13x7_ragged", MaxPoolSpec(1, 3 * B, 13, 7, 3, 1, 1, signed=True),
     Tiling(oc=1, ic=1, h=4, w=3)),
    # padding before only, a 2 x 2 window
    ("k2s1_pads1100_5x5", MaxPoolSpec(1, B, 5, 5, 2, 1, 1, signed=True, pad_end=0), None),
]
SLOW_OPS = {"k3s1p1_13x7_ragged", "k2s1_pads1100_5x5"}


@pytest.mark.parametrize("case", [pytest.param(c, id=c[0], marks=pytest.mark.slow
                                               if c[0] in SLOW_OPS else ()) for c in OPS])
def test_signed_padded_pool_on_fsim(case):
    """Every int8 input value, -128 included (a whole channel block of -128s at the borders)."""
    _check_pool("fsim", case)


@pytest.mark.slow
@pytest.mark.parametrize("target", [t for t in available_targets() if t in ("opencl", "rtl")])
def test_signed_padded_pool_on_other_targets(target):
    """The unequal pads and the ragged case on the OpenCL kernel (PoCL) and the RTL."""
    for case in OPS[1:3]:
        _check_pool(target, case)


def _check_pool(target: str, case: tuple) -> None:
    _, spec, tiling = case
    cfg = load_config(CFG)
    op = compile_op(spec, cfg, tiling=tiling)
    assert POOL_ONES in op.input_names
    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, op.input_shapes()["data"], dtype=np.int8)
    x[:, 0, :, :2] = -128
    inputs = {"data": x, POOL_ONES: pool_ones(op.input_shapes()[POOL_ONES])}
    want = _numpy_pool(x, spec.k, spec.stride, spec.pad, spec.pad_after)
    (res,) = run_ops(target, cfg, [OpJob(spec, inputs, op.tiling)])
    assert res.out.shape == want.shape
    bad = int(np.count_nonzero(res.out != want))
    assert bad == 0, f"{bad} of {want.size} outputs differ from numpy's max pool"
    assert res.syncs == 1


def _pool_model(k: int, stride: int, pads: list[int], relu: bool, h: int = 9, w: int = 11,
                c: int = 20):
    """conv -> (ReLU) -> MaxPool(k, stride, pads) -> conv on an h x w map of c channels."""
    b = _Builder(17)
    y = b.conv("x", 5, c, 3, pad=1)
    if relu:
        y = b.op("Relu", [y])
    y = b.op("MaxPool", [y], kernel_shape=[k, k], strides=[stride, stride], pads=pads)
    ho = (h + pads[0] + pads[2] - k) // stride + 1
    wo = (w + pads[1] + pads[3] - k) // stride + 1
    y = b.conv(y, c, 8)
    return _model(b.nodes, b.inits, (1, 5, h, w), y, (1, 8, ho, wo))


#: (id, k, stride, pads, ReLU before the pool, onnxruntime's activations, slow).
GRAPHS = [
    ("resnet_stem_uint8", 3, 2, [1, 1, 1, 1], True, "uint8", False),
    ("inception_v2_pads0011_uint8", 3, 2, [0, 0, 1, 1], True, "uint8", False),
    ("inception_v1_s1_uint8", 3, 1, [1, 1, 1, 1], True, "uint8", True),
    ("signed_int8_asym", 3, 2, [1, 1, 1, 1], False, "int8", True),
    ("signed_int8_sym_pads0011", 3, 1, [0, 0, 1, 1], False, "int8_sym", True),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c[0], marks=pytest.mark.slow if c[-1]
                                               else ()) for c in GRAPHS])
def test_padded_maxpool_vs_onnxruntime(case):
    _, k, stride, pads, relu, act, _slow = case
    model = _pool_model(k, stride, pads, relu)
    q = quantize(model, calibration_set(model, 8), symmetric=act == "int8_sym",
                 activation="uint8" if act == "uint8" else "int8")
    pkg = compile_model(q, CFG)
    assert vta_op_counts(pkg) == {"maxpool": 1, "conv2d": 2}, cpu_nodes(pkg)
    assert len(pkg.programs) == 1, cpu_nodes(pkg)
    rng = np.random.default_rng(5)
    inputs = [rng.standard_normal((1, 5, 9, 11)).astype(np.float32) for _ in range(2)]
    outs, refs, written, lw = _run(pkg, q, inputs)
    for o, r in zip(outs, refs, strict=True):
        assert all(np.array_equal(a, b) for a, b in zip(o, r, strict=True))
    pool = next(n for n in q.graph.node if n.op_type == "MaxPool")
    pooled = next(n for n in q.graph.node if pool.output[0] in n.input).output[0]
    assert lw.per_tensor[pooled][0] == 0, lw.per_tensor  # a maximum is exact
    over = {t: v for t, v in lw.per_tensor.items() if v[0] > 1}
    assert not over, over
    assert written and all(pooled in t for t in written)
