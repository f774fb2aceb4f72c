"""DMA nests -> LOAD / STORE instructions.

A copy nest becomes 2-D patterns: the innermost loop is the x loop (outer loops merged into it
where the copy stays contiguous), the next one the y loop (likewise, with the device-memory
stride of its coefficient); the loops left over are enumerated, one instruction each. A padded
copy (the padding stage's condition) keeps its two innermost loops as y and x and takes the pad
fields from the loops' valid range under the condition (``tvm.sym.detect_clip_bound``, computed
by the analysis; a numerical scan of the condition where no bound was found).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from vtabench.compiler.addressing import Addresses
from vtabench.compiler.analysis import LoadNest, Nest, PadBounds, StoreNest
from vtabench.compiler.ops import PAD_MAX, CompileError
from vtabench.compiler.sink import InstructionSink
from vtabench.compiler.tir_expr import Env, evaluate, holds
from vtabench.spec.isa.layout import MemType


def iterate(n: Nest, idx: list[int], env: Env) -> Iterator[Env]:
    """``env`` extended with every combination of the loops ``idx`` (the nest's others at 0)."""
    ranges = [range(n.extents[i]) for i in idx]
    for vals in itertools.product(*ranges):
        e = dict(env)
        for lp in n.loops:
            e[lp.loop_var] = 0
        for i, v in zip(idx, vals, strict=True):
            e[n.loops[i].loop_var] = v
        yield e


def _at(n: Nest, coefs: list[int], env: Env, idx: Any) -> int:
    """Sum of ``coefs[i]`` times loop ``i``'s value in ``env`` over the loops ``idx``."""
    return sum(coefs[i] * env[n.loops[i].loop_var] for i in idx)


def dma_shape(n: Nest, sram_c: list[int], dram_c: list[int]) -> tuple[int, int, int, list[int]]:
    """Pick the x loop (merging outer loops into it where contiguous) and the y loop (the
    same); returns (x_size, y_size, x_stride, remaining loop indices)."""
    order = list(range(len(n.loops)))  # outer first
    if not order:
        return 1, 1, 1, []
    xi = order[-1]
    rest = order[:-1]
    if sram_c[xi] != 1:
        return 1, 1, 1, order  # element by element (not expected)
    x_size = n.extents[xi]
    while rest:
        j = rest[-1]
        if sram_c[j] == x_size and dram_c[j] == x_size * dram_c[xi] and dram_c[xi] == 1:
            x_size *= n.extents[j]
            rest = rest[:-1]
        else:
            break
    if dram_c[xi] != 1:
        return 1, 1, 1, order
    if not rest:
        return x_size, 1, x_size, []
    yj = rest[-1]
    if sram_c[yj] != x_size:
        return x_size, 1, x_size, rest
    y_size = n.extents[yj]
    stride = dram_c[yj]
    rest = rest[:-1]
    while rest:
        j = rest[-1]
        if sram_c[j] == x_size * y_size and dram_c[j] == stride * y_size:
            y_size *= n.extents[j]
            rest = rest[:-1]
        else:
            break
    return x_size, y_size, stride, rest


def emit_load(rt: InstructionSink, n: LoadNest, env: Env, addr: Addresses) -> None:
    if n.pad is None:
        xs, ys, stride, rest = dma_shape(n, n.dst.coefs, n.src.coefs)
        every = range(len(n.loops))
        for e in iterate(n, rest, env):
            rt.load(n.mem, addr.sram(n.dst, e, n.mem) + _at(n, n.dst.coefs, e, every),
                    addr.dram(n.src, e, n.mem) + _at(n, n.src.coefs, e, every), ys, xs, stride)
        return
    pad = n.pad
    yi, xi = pad.y, pad.x
    rest = list(range(xi if yi is None else yi))
    for e in iterate(n, rest, env):
        (ylo, yhi), (xlo, xhi) = _clip(n, pad, e)
        nx = n.extents[xi]
        ny = n.extents[yi] if yi is not None else 1
        e2 = dict(e)
        e2[n.loops[xi].loop_var] = xlo
        if yi is not None:
            e2[n.loops[yi].loop_var] = ylo
        sram0 = addr.sram(n.dst, e, n.mem) + _at(n, n.dst.coefs, e, rest)
        dram0 = addr.dram(n.src, e2, n.mem) + _at(n, n.src.coefs, e2, range(len(n.loops)))
        ypad0, ypad1 = ylo, ny - 1 - yhi
        xpad0, xpad1 = xlo, nx - 1 - xhi
        ys, xs = yhi - ylo + 1, xhi - xlo + 1
        if ys <= 0 or xs <= 0:
            raise CompileError("a tile of the padded copy lies entirely in the padding")
        if max(ypad0, ypad1, xpad0, xpad1) > PAD_MAX:
            raise CompileError(f"padding {ypad0, ypad1, xpad0, xpad1} exceeds the pad "
                               f"fields (at most {PAD_MAX})")
        stride = n.src.coefs[yi] if yi is not None else xs
        rt.load(n.mem, sram0, dram0, ys, xs, stride, ypad0, ypad1, xpad0, xpad1)


def _clip(n: LoadNest, pad: PadBounds, env: Env) -> tuple[tuple[int, int], tuple[int, int]]:
    """Valid [lo, hi] of the y and x loops under the padded copy's condition."""
    idxs = ([pad.y] if pad.y is not None else []) + [pad.x]
    b = pad.bounds
    out = []
    for k, i in enumerate(idxs):
        ext = n.extents[i]
        if len(b) == 2 * len(idxs):
            lo_e, hi_e = b[2 * k], b[2 * k + 1]
            lo = 0 if lo_e is None else max(0, evaluate(lo_e, env))
            hi = ext - 1 if hi_e is None else min(ext - 1, evaluate(hi_e, env))
        else:  # no bound found: scan the condition numerically
            lo, hi = _scan(n, env, i)
        out.append((lo, hi))
    if pad.y is None:
        out.insert(0, (0, 0))
    return out[0], out[1]


def _scan(n: LoadNest, env: Env, i: int) -> tuple[int, int]:
    good = []
    for v in range(n.extents[i]):
        e = dict(env)
        e[n.loops[i].loop_var] = v
        if holds(n.cond, e):
            good.append(v)
    if not good:
        return 0, -1
    return good[0], good[-1]


def emit_store(rt: InstructionSink, n: StoreNest, env: Env, addr: Addresses) -> None:
    xs, ys, stride, rest = dma_shape(n, n.src.coefs, n.dst.coefs)
    every = range(len(n.loops))
    for e in iterate(n, rest, env):
        rt.store(addr.sram(n.src, e, MemType.OUT) + _at(n, n.src.coefs, e, every),
                 addr.dram(n.dst, e, MemType.OUT) + _at(n, n.dst.coefs, e, every), ys, xs, stride)
