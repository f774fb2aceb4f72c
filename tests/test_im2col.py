"""Kernel taps folded into channels for small-channel convolutions fed by the host
(vtabench.graph.im2col): the host's im2col equals the convolution, and a network compiled with
the fold computes bit for bit what it computes without it."""

from __future__ import annotations

import numpy as np
import pytest

import vtabench.graph.compile as graph_compile
from vtabench.graph.im2col import fold_kernel_taps, im2col


def _conv(x: np.ndarray, w: np.ndarray, stride: int, stride_w: int, pad: int,
          value: int) -> np.ndarray:
    """A direct integer convolution over ``x`` padded with ``value``."""
    n, c, h, wd = x.shape
    o, _, k, kw = w.shape
    xp = np.full((n, c, h + 2 * pad, wd + 2 * pad), value, np.int64)
    xp[:, :, pad:pad + h, pad:pad + wd] = x
    ho, wo = (h + 2 * pad - k) // stride + 1, (wd + 2 * pad - kw) // stride_w + 1
    out = np.zeros((n, o, ho, wo), np.int64)
    for y in range(ho):
        for z in range(wo):
            win = xp[:, :, y * stride:y * stride + k, z * stride_w:z * stride_w + kw]
            out[:, :, y, z] = np.einsum("nckl,ockl->no", win, w.astype(np.int64))
    return out


@pytest.mark.parametrize("c,k,kw,stride,stride_w,pad,value", [
    (3, 7, 7, 2, 2, 3, 0), (3, 3, 3, 1, 1, 1, -21), (2, 3, 1, 2, 1, 1, 5), (5, 2, 3, 1, 2, 0, 0)])
def test_im2col_times_packed_weights_is_the_convolution(c: int, k: int, kw: int, stride: int,
                                                        stride_w: int, pad: int,
                                                        value: int) -> None:
    rng = np.random.default_rng(c * 100 + k)
    x = rng.integers(-128, 128, (1, c, 11, 13)).astype(np.int8)
    w = rng.integers(-128, 128, (4, c, k, kw)).astype(np.int8)
    cols = im2col(x, k, kw, stride, stride_w, pad, value).astype(np.int64)
    packed = w.transpose(0, 2, 3, 1).reshape(4, -1).astype(np.int64)
    got = np.einsum("nchw,oc->nohw", cols, packed)
    assert np.array_equal(got, _conv(x, w, stride, stride_w, pad, value))


@pytest.mark.tvm
def test_folded_stem_is_bit_identical_on_fsim(monkeypatch: pytest.MonkeyPatch) -> None:
    """small_resnet_float quantized with asymmetric uint8 activations (a zero point that pads
    the border): its 3-channel stem folds (27 channels, one block instead of nine), and fsim's
    output equals the unfolded package's."""
    from vtabench.graph.execute import run_package
    from vtabench.workloads.float_models import FLOAT_MODELS
    from vtabench.workloads.quantize import calibration_set, quantize

    f = FLOAT_MODELS["small_resnet_float"](seed=0)
    q = quantize(f, calibration_set(f, count=4, seed=0), symmetric=False, activation="uint8")
    dims = [d.dim_value for d in q.graph.input[0].type.tensor_type.shape.dim]
    x = np.random.default_rng(1).normal(0, 1, dims).astype(np.float32)
    folded = graph_compile.compile_model(q, "default", profile=False)
    taps = [n["im2col"] for n in folded.manifest["nodes"] if "im2col" in n]
    assert taps and taps[0]["k"] == 3 and taps[0]["value"] != 0
    stem = next(v for v in folded.manifest["layers"].values() if v["op"] == "conv2d")
    assert "k1 " in stem["shape"]
    monkeypatch.setattr(graph_compile, "fold_kernel_taps", lambda g, cfg: None)
    plain = graph_compile.compile_model(q, "default", profile=False)
    assert not [n for n in plain.manifest["nodes"] if "im2col" in n]
    a = run_package(folded, "fsim", [x])[0].outputs
    b = run_package(plain, "fsim", [x])[0].outputs
    assert all(np.array_equal(u, v) for u, v in zip(a, b))
    assert fold_kernel_taps is not graph_compile.fold_kernel_taps  # the patch took effect
