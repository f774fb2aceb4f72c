"""Host tensors <-> VTA's tiled layouts: activations, conv and dense weights, biases."""

from __future__ import annotations

from typing import Any

import numpy as np


def pack_act(x: np.ndarray, cfg: Any) -> np.ndarray:
    """NCHW (or NK) int8 -> VTA layout (N/B, C/BI, H, W, B, BI) (or (N/B, K/BI, B, BI))."""
    B, BI = cfg.batch, cfg.block_in
    if x.ndim == 2:
        x = x.reshape(*x.shape, 1, 1)
    n, c, h, w = x.shape
    return np.ascontiguousarray(
        x.reshape(n // B, B, c // BI, BI, h, w).transpose(0, 2, 4, 5, 1, 3))


def unpack_act(buf: np.ndarray, shape: tuple[int, ...], cfg: Any) -> np.ndarray:
    """The inverse of :func:`pack_act`: raw device bytes -> an int8 tensor of ``shape``."""
    B, BI = cfg.batch, cfg.block_in
    s4 = tuple(shape) + (1,) * (4 - len(shape))
    n, c, h, w = s4
    x = buf.view(np.int8).reshape(n // B, c // BI, h, w, B, BI).transpose(0, 4, 1, 5, 2, 3)
    return np.ascontiguousarray(x.reshape(shape))


def pack_conv_weight(w: np.ndarray, cfg: Any) -> np.ndarray:
    """OIHW -> (O/BO, I/BI, KH, KW, BO, BI)."""
    BI, BO = cfg.block_in, cfg.block_out
    o, c, kh, kw = w.shape
    return np.ascontiguousarray(w.reshape(o // BO, BO, c // BI, BI, kh, kw)
                                .transpose(0, 2, 4, 5, 1, 3))


def pack_dense_weight(w: np.ndarray, cfg: Any) -> np.ndarray:
    """(M, K) -> (M/BO, K/BI, BO, BI)."""
    BI, BO = cfg.block_in, cfg.block_out
    m, k = w.shape
    return np.ascontiguousarray(w.reshape(m // BO, BO, k // BI, BI).transpose(0, 2, 1, 3))


def pack_bias(b: np.ndarray, cfg: Any, conv: bool) -> np.ndarray:
    """Per-channel int32 bias broadcast over the batch lanes, in the accumulator's layout."""
    B, BO = cfg.batch, cfg.block_out
    o = b.shape[0]
    t = np.broadcast_to(b.reshape(o // BO, 1, BO), (o // BO, B, BO)).astype(np.int32)
    shape = (1, o // BO, 1, 1, B, BO) if conv else (1, o // BO, B, BO)
    return np.ascontiguousarray(t.reshape(shape))
