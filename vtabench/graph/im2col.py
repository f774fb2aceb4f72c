"""Kernel taps folded into the reduction axis where a convolution's input has few channels.

VTA's GEMM reduces over whole blocks of input channels at every kernel position, so a
convolution over 3 channels (an image network's stem) pads them to a block at each of its
k x k taps: ResNet-18's 7 x 7 stem multiplies 16 x 49 = 784 values per output pixel, 147 of them
real. When the input comes from the host (a copy to VTA), the host writes it in im2col form
instead: channel ``(ky * kw + kx) * C + c`` of output pixel (y, x) holds input channel ``c`` at
``(y * stride + ky - pad, x * stride_w + kx - pad)``, the zero point where that falls outside
(real zero, as the convolution's padding). The convolution becomes a 1 x 1 one over
``C * k * kw`` channels, padded once to whole blocks (160 for the stem: 5x fewer multiplies),
with its weights reordered the same way. The integer result is the same: the zero-point term
that the padded border needs (``integer.py``'s bias map) becomes the plain per-channel fold,
because every tap now reads a value, the zero point at the border.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from vtabench.graph.ir import VTA, Graph
from vtabench.graph.pack import phys_channels

if TYPE_CHECKING:
    from vtabench.spec.config import Config

#: Manifest / attrs key of a copy node that writes its tensor in im2col form.
IM2COL = "im2col"
_FIELDS = ("k", "kw", "stride", "stride_w", "pad", "value")


def im2col(x: np.ndarray, k: int, kw: int, stride: int, stride_w: int, pad: int,
           value: int) -> np.ndarray:
    """NCHW ``x`` -> (N, k * kw * C, Ho, Wo), tap-major (see the module docstring); ``value``
    fills the taps outside the input."""
    n, c, h, w = x.shape
    ho, wo = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - kw) // stride_w + 1
    xp = np.full((n, c, h + 2 * pad, w + 2 * pad), value, x.dtype)
    xp[:, :, pad:pad + h, pad:pad + w] = x
    taps = [xp[:, :, ky:ky + stride * (ho - 1) + 1:stride, kx:kx + stride_w * (wo - 1) + 1:stride_w]
            for ky in range(k) for kx in range(kw)]
    return np.ascontiguousarray(np.concatenate(taps, axis=1))


def im2col_args(attrs: dict[str, Any]) -> dict[str, int] | None:
    """The :func:`im2col` arguments a copy node (graph attrs or manifest entry) carries."""
    spec = attrs.get(IM2COL)
    if spec is None:
        return None
    values = [spec[f] for f in _FIELDS] if isinstance(spec, dict) else spec
    return dict(zip(_FIELDS, (int(v) for v in values)))


def _worth_it(c: int, k: int, kw: int, cfg: Config) -> bool:
    return phys_channels(c * k * kw, cfg) < phys_channels(c, cfg) * k * kw


def fold_kernel_taps(g: Graph, cfg: Config) -> None:
    """Rewrite every convolution on VTA whose input is a copy from the host (that nothing else
    reads) and whose channels pad to more multiplies than its taps packed together: the copy
    writes the input in im2col form, the convolution becomes 1 x 1 over the packed channels."""
    from vtabench.compiler import CompileError, Conv2dSpec, choose_tiling
    from vtabench.graph.integer import integer_form

    for name in g.order:
        n = g.nodes[name]
        if n.op != "conv2d" or n.device != VTA or n.spec is None or n.q.groups != 1 \
                or n.q.pool_lcm or n.q.transposed:  # a pool's count map is per pixel of the padded window
            continue
        src = g.nodes[n.inputs[0]]
        o, c, k, kw = n.q.weight.shape
        if src.op != "copy" or g.consumers(src.name) != [name] or (k, kw) == (1, 1) \
                or not _worth_it(c, k, kw, cfg):
            continue
        stride, stride_w, pad = n.q.stride, n.q.stride_w or n.q.stride, n.q.pad
        _, _, ho, wo = n.shape
        packed = n.q.weight.transpose(0, 2, 3, 1).reshape(o, k * kw * c, 1, 1)
        old = (n.q.weight, n.q.stride, n.q.stride_w, n.q.pad)
        n.q.weight, n.q.stride, n.q.stride_w, n.q.pad = packed, 1, 0, 0
        try:
            iform = integer_form(n.q, (ho, wo))
            spec = Conv2dSpec(1, phys_channels(k * kw * c, cfg), ho, wo, phys_channels(o, cfg), 1,
                              1, 0, epilogue=iform.epilogue, name=n.name)
            spec.check(cfg)
            choose_tiling(spec, cfg)
        except (CompileError, ValueError):
            n.q.weight, n.q.stride, n.q.stride_w, n.q.pad = old
            continue
        n.iform, n.spec = iform, spec
        src.shape = (src.shape[0], k * kw * c, ho, wo)
        src.attrs[IM2COL] = (k, kw, stride, stride_w, pad, n.q.x.zero_stored)
