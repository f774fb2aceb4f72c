"""Vectorised GEMM and ALU micro-op loops (docs/isa.md section 4).

Both take the micro-op loop already expanded into per-iteration index arrays ``a`` (dst), ``s``
(src) and ``w`` (wgt), in iteration order.

GEMM never reads what it writes except ``acc[a]`` itself, and int32 wrap-around addition is
associative and commutative, so summing every iteration's product per dst in any order gives the
sequential result; out is the low 8 bits of the final acc. The products are computed per weight
tile as one float32 matmul (an int8 x int8 dot product over at most 64 terms stays below 2^24, so
float32 is exact), then summed per dst in int64 and wrapped.

ALU iterations do depend on each other when a later one reads or rewrites what an earlier one
wrote; :func:`alu` runs the whole loop as one vector operation when no such hazard exists, and
otherwise in dependency levels (each level vectorised, levels in order).
"""

from __future__ import annotations

import numpy as np

from vtabench.isa.layout import AluOp

#: float32 holds every integer up to 2^24 exactly; a dot product of BLOCK_IN int8 x int8 terms
#: is at most BLOCK_IN * 2^14 in magnitude.
_F32_EXACT_TERMS = 1 << 10


def gemm(acc: np.ndarray, out: np.ndarray, inp: np.ndarray, wgt: np.ndarray, a: np.ndarray,
         s: np.ndarray, w: np.ndarray) -> None:
    """acc[a] += inp[s] . wgt[w]^T for every iteration; out[a] = low 8 bits of acc[a].

    acc / out: (depth, batch, block_out) int32 / int8; inp: (depth, batch, block_in) int8;
    wgt: (depth, block_out, block_in) int8.
    """
    if a.size == 0:
        return
    block_in = inp.shape[2]
    exact = np.float32 if block_in <= _F32_EXACT_TERMS else np.float64
    # Group iterations by weight tile.
    order = np.argsort(w, kind="stable")
    ws = w[order]
    starts = np.flatnonzero(np.r_[True, ws[1:] != ws[:-1]])
    sizes = np.diff(np.r_[starts, ws.size])
    rows = inp[s[order]].astype(exact)  # (n, batch, block_in)
    wt = wgt[ws[starts]].astype(exact).transpose(0, 2, 1)  # (groups, block_in, block_out)
    n, batch, _ = rows.shape
    block_out = wgt.shape[1]
    if np.all(sizes == sizes[0]):
        g, m = starts.size, int(sizes[0])
        prod = np.matmul(rows.reshape(g, m * batch, block_in), wt).reshape(n, batch, block_out)
    else:
        prod = np.empty((n, batch, block_out), exact)
        for k, (lo, size) in enumerate(zip(starts.tolist(), sizes.tolist())):
            np.matmul(rows[lo:lo + size].reshape(size * batch, block_in), wt[k],
                      out=prod[lo:lo + size].reshape(size * batch, block_out))
    contrib = prod.astype(np.int64)
    # Sum per dst: sort the (weight-ordered) iterations by dst and reduce each run.
    ad = a[order]
    by_dst = np.argsort(ad, kind="stable")
    ad = ad[by_dst]
    dstarts = np.flatnonzero(np.r_[True, ad[1:] != ad[:-1]])
    sums = np.add.reduceat(contrib[by_dst], dstarts, axis=0)
    dst = ad[dstarts]
    total = acc[dst].astype(np.int64) + sums
    acc[dst] = total.astype(np.int32)  # wraps: int64 -> int32 keeps the low 32 bits
    out[dst] = acc[dst].astype(np.int8)


def gemm_reset(acc: np.ndarray, out: np.ndarray, a: np.ndarray) -> None:
    acc[a] = 0
    out[a] = 0


def shr(x: np.ndarray, amount: np.ndarray) -> np.ndarray:
    """The saturating shift of docs/isa.md ("Decision (shift amounts)"), on int32 arrays."""
    x = x.astype(np.int32, copy=False)
    amount = np.asarray(amount, np.int64)
    right = x >> np.clip(amount, 0, 31).astype(np.int32)
    left = (x.view(np.uint32) << np.clip(-amount, 0, 31).astype(np.uint32)).view(np.int32)
    return np.where(amount >= 0, right, np.where(amount > -32, left, np.int32(0)))


def alu_op(op: AluOp, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """One ALU operation on int32 arrays (y broadcast against x), wrapping like hardware."""
    if op == AluOp.MIN:
        return np.minimum(x, y)
    if op == AluOp.MAX:
        return np.maximum(x, y)
    if op == AluOp.ADD:
        return (x.astype(np.int64) + y).astype(np.int32)
    if op == AluOp.MUL:
        return (x.astype(np.int64) * y).astype(np.int32)
    if op == AluOp.SHR:
        return shr(x, np.broadcast_to(y, x.shape))
    raise ValueError(f"ALU opcode {op} is not one of {', '.join(o.name for o in AluOp)}")


def alu(acc: np.ndarray, out: np.ndarray, op: AluOp, a: np.ndarray, s: np.ndarray | None,
        imm: int) -> None:
    """acc[a] = op(acc[a], acc[s] or imm) per iteration, in order; out[a] = low 8 bits."""
    if a.size == 0:
        return
    for level in _levels(a, s, acc.shape[0]):
        la = a[level]
        b = np.int64(imm) if s is None else acc[s[level]].astype(np.int64)
        res = alu_op(op, acc[la], b)
        acc[la] = res
        out[la] = res.astype(np.int8)


def _levels(a: np.ndarray, s: np.ndarray | None, depth: int) -> list[np.ndarray]:
    """Split iterations into levels that can each run as one gather-compute-scatter.

    Within a level no element is written twice and none is read after an earlier iteration of
    the same level wrote it; later iterations that write what an earlier one read go in the same
    or a later level (the gather happens before the scatter, so they see the old value).
    """
    n = a.size
    first_write = np.full(depth, n, np.int64)
    first_write[a[::-1]] = np.arange(n - 1, -1, -1)  # earliest iteration writing each element
    positions = np.arange(n)
    unique = np.unique(a).size == n
    if unique and (s is None or not np.any(first_write[s] < positions)):
        return [positions]
    # Ordered path: a level per iteration from its dependences (RAW, WAW: later level; WAR:
    # same or later level).
    write_level: dict[int, int] = {}
    read_level: dict[int, int] = {}
    levels = np.empty(n, np.int64)
    al = a.tolist()
    sl = s.tolist() if s is not None else None
    for i in range(n):
        d = al[i]
        lv = max(write_level.get(d, -1) + 1, read_level.get(d, 0))
        if sl is not None:
            src = sl[i]
            lv = max(lv, write_level.get(src, -1) + 1)
            if read_level.get(src, -1) < lv:
                read_level[src] = lv
        levels[i] = lv
        write_level[d] = lv
        if read_level.get(d, -1) < lv:
            read_level[d] = lv
    order = np.argsort(levels, kind="stable")
    bounds = np.flatnonzero(np.diff(levels[order])) + 1
    return np.split(order, bounds)
