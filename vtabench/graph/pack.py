"""Host tensors <-> VTA's tiled layouts: activations, conv and dense weights, biases.

A tensor on VTA has its channels rounded up to a whole block (:func:`phys_channels`): packing
pads them with zeros, unpacking drops them. Padded weight rows and columns are zero, so the
padded channels never reach a real output.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def phys_channels(c: int, cfg: Any) -> int:
    """Channels of a tensor on VTA: ``c`` rounded up to a whole block."""
    b = max(cfg.block_in, cfg.block_out)
    return -(-c // b) * b


def phys_shape(shape: tuple[int, ...], cfg: Any) -> tuple[int, ...]:
    """The shape of an activation (NCHW or NK) on VTA (channels padded)."""
    return (shape[0], phys_channels(shape[1], cfg), *shape[2:])


def pad_axis(a: np.ndarray, axis: int, size: int) -> np.ndarray:
    """``a`` zero-padded along ``axis`` to ``size``."""
    if a.shape[axis] == size:
        return a
    pad = [(0, 0)] * a.ndim
    pad[axis] = (0, size - a.shape[axis])
    return np.pad(a, pad)


def pack_act(x: np.ndarray, cfg: Any) -> np.ndarray:
    """NCHW (or NK) -> VTA layout (N/B, C/BI, H, W, B, BI) (or (N/B, K/BI, B, BI)), channels
    padded with zeros. int8 activations, or an int32 map of the output's shape (``bias_map``)."""
    B, BI = cfg.batch, cfg.block_in
    if x.ndim == 2:
        x = x.reshape(*x.shape, 1, 1)
    x = pad_axis(x, 1, phys_channels(x.shape[1], cfg))
    n, c, h, w = x.shape
    return np.ascontiguousarray(
        x.reshape(n // B, B, c // BI, BI, h, w).transpose(0, 2, 4, 5, 1, 3))


def unpack_act(buf: np.ndarray, shape: tuple[int, ...], cfg: Any) -> np.ndarray:
    """The inverse of :func:`pack_act`: raw device bytes -> an int8 tensor of ``shape``."""
    B, BI = cfg.batch, cfg.block_in
    s4 = tuple(shape) + (1,) * (4 - len(shape))
    n, c, h, w = s4
    cp = phys_channels(c, cfg)
    x = buf.view(np.int8).reshape(n // B, cp // BI, h, w, B, BI).transpose(0, 4, 1, 5, 2, 3)
    return np.ascontiguousarray(x.reshape(n, cp, h, w)[:, :c].reshape(shape))


def pack_conv_weight(w: np.ndarray, cfg: Any) -> np.ndarray:
    """OIHW -> (O/BO, I/BI, KH, KW, BO, BI) (O and I padded)."""
    BI, BO = cfg.block_in, cfg.block_out
    w = pad_axis(pad_axis(w, 0, phys_channels(w.shape[0], cfg)), 1,
                 phys_channels(w.shape[1], cfg))
    o, c, kh, kw = w.shape
    return np.ascontiguousarray(w.reshape(o // BO, BO, c // BI, BI, kh, kw)
                                .transpose(0, 2, 4, 5, 1, 3))


def pack_blockwise_weight(w: np.ndarray, cfg: Any) -> np.ndarray:
    """One kernel per channel, (O, 1, KH, KW) -> the diagonal blocks of a blockwise conv,
    (O/BO, 1, KH, KW, BO, BI) with [ob, 0, kh, kw, j, i] = w[ob * BO + j, 0, kh, kw] if i == j
    (BI == BO), else 0."""
    BO = cfg.block_out
    w = pad_axis(w, 0, phys_channels(w.shape[0], cfg))
    o, _, kh, kw = w.shape
    d = w.reshape(o // BO, BO, kh, kw).transpose(0, 2, 3, 1)  # (O/BO, KH, KW, BO)
    out = np.zeros((o // BO, 1, kh, kw, BO, BO), w.dtype)
    j = np.arange(BO)
    out[:, 0, :, :, j, j] = d.transpose(3, 0, 1, 2)
    return out


def expand_groups(w: np.ndarray, groups: int) -> np.ndarray:
    """A grouped conv's weight (O, C/g, KH, KW) -> the dense (O, C, KH, KW) one with the same
    result: output channel ``o`` of group ``o // (O/g)`` keeps its kernels over that group's
    input channels, zeros elsewhere (block diagonal)."""
    o, cg, kh, kw = w.shape
    og = o // groups
    out = np.zeros((o, cg * groups, kh, kw), w.dtype)
    for g in range(groups):
        out[g * og:(g + 1) * og, g * cg:(g + 1) * cg] = w[g * og:(g + 1) * og]
    return out


def groups_in_blocks(c: int, o: int, groups: int, cfg: Any) -> bool:
    """Whether a grouped conv (``c`` input, ``o`` output channels) can run blockwise: as many
    outputs as inputs and square blocks, and no group straddles a block (the block is a multiple
    of the channels per group), so output block ``b`` reads input block ``b`` only."""
    return (c == o and cfg.block_in == cfg.block_out and c % groups == 0
            and cfg.block_in % (c // groups) == 0)


def groups_of_blocks(c: int, o: int, groups: int, cfg: Any) -> bool:
    """Whether every group of a grouped conv has whole blocks of input and of output channels:
    then each group is a dense conv on a contiguous range of channel blocks."""
    return (c % groups == 0 and o % groups == 0 and (c // groups) % cfg.block_in == 0
            and (o // groups) % cfg.block_out == 0 and cfg.batch == 1)


def pack_grouped_blockwise_weight(w: np.ndarray, groups: int, cfg: Any) -> np.ndarray:
    """A grouped conv's weight (O, C/g, KH, KW) with :func:`groups_in_blocks` -> the diagonal
    blocks of a blockwise conv, (O/BO, 1, KH, KW, BO, BI): block ``b`` holds the kernels of the
    groups inside channels ``b * BO .. b * BO + BO - 1`` (the diagonal of the dense expansion)."""
    dense = pack_conv_weight(expand_groups(w, groups), cfg)  # (O/BO, C/BI, KH, KW, BO, BI)
    b = np.arange(dense.shape[0])
    return np.ascontiguousarray(dense[b, b][:, None])


def pack_dense_weight(w: np.ndarray, cfg: Any) -> np.ndarray:
    """(M, K) -> (M/BO, K/BI, BO, BI) (M and K padded)."""
    BI, BO = cfg.block_in, cfg.block_out
    w = pad_axis(pad_axis(w, 0, phys_channels(w.shape[0], cfg)), 1,
                 phys_channels(w.shape[1], cfg))
    m, k = w.shape
    return np.ascontiguousarray(w.reshape(m // BO, BO, k // BI, BI).transpose(0, 2, 1, 3))


def pack_bias(b: np.ndarray, cfg: Any, conv: bool) -> np.ndarray:
    """Per-channel int32 bias broadcast over the batch lanes, in the accumulator's layout
    (padded channels 0)."""
    B, BO = cfg.batch, cfg.block_out
    b = pad_axis(b, 0, phys_channels(b.shape[0], cfg))
    o = b.shape[0]
    t = np.broadcast_to(b.reshape(o // BO, 1, BO), (o // BO, B, BO)).astype(np.int32)
    shape = (1, o // BO, 1, 1, B, BO) if conv else (1, o // BO, B, BO)
    return np.ascontiguousarray(t.reshape(shape))
