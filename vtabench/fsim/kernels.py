"""Vectorised GEMM and ALU micro-op loops (docs/isa.md section 4).

Both take the loop unexpanded (:class:`MicroLoop`: the kernel's micro-ops and the per-(i0, i1)
offsets). What depends on the loop alone, not on buffer contents, is worked out once as a plan
(:func:`gemm_plan`, :func:`alu_plan`) that fsim caches per kernel; running a plan is a few
gathers, matmuls and scatters.

GEMM never reads what it writes except ``acc[a]`` itself, and int32 wrap-around addition is
associative and commutative, so summing every iteration's product per dst in any order gives the
sequential result; out is the low 8 bits of the final acc. Products are computed as float matmuls
that are exact (see _F32_EXACT_TERMS), then added to acc wrapping to int32.

ALU iterations do depend on each other when a later one reads or rewrites what an earlier one
wrote; an ALU plan runs the whole loop as one vector operation when no such hazard exists, and
otherwise in dependency levels (each level vectorised, levels in order).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vtabench.spec.isa.layout import AluOp

#: float32 holds every integer up to 2^24 exactly and float64 up to 2^53; an int8 x int8 product
#: is at most 2^14 in magnitude, so a dot product of up to 2^10 terms is exact in float32 (in any
#: summation order: every partial sum obeys the same bound) and one of up to 2^39 in float64.
_F32_EXACT_TERMS = 1 << 10
#: Above this many distinct micro-op patterns per GEMM, one matmul per pattern costs more in
#: Python than grouping the iterations by weight tile.
_MAX_PATTERNS = 64
#: The by-micro-op path computes every (src offset, weight offset) combination of a loop; it is
#: taken while that is at most this many times the loop's (i0, i1) pairs.
_MAX_PRODUCT_WASTE = 2
#: Loops of at most this many iterations take the direct path: a random program's loops are a
#: few dozen iterations, each loop seen once, where grouping them into patterns costs more than
#: it saves.
SMALL_LOOP = 256
#: Odd random multipliers hashing a dst's sequence of weight indices (up to 2^14 of them) to one
#: int64; equal hashes are verified before they are trusted.
_HASH = np.random.default_rng(0x5EED).integers(1, 1 << 62, 1 << 14, dtype=np.int64) | 1


def _exact_dtype(terms: int) -> type[np.floating]:
    return np.float32 if terms <= _F32_EXACT_TERMS else np.float64


@dataclass(frozen=True)
class MicroLoop:
    """A two-level micro-op loop before expansion.

    ``uop[k]`` holds micro-op field k (0 dst, 1 src, 2 wgt) for each micro-op of the kernel;
    ``off[k]`` the loop's offset ``i0 * factor_out + i1 * factor_in`` for each (i0, i1), i0
    major. Iteration (i0, i1, u) uses index ``off[k][i0 * iter_in + i1] + uop[k][u]``.
    """

    uop: tuple[np.ndarray, np.ndarray, np.ndarray]
    off: tuple[np.ndarray, np.ndarray, np.ndarray]

    @classmethod
    def build(cls, uop: tuple[np.ndarray, np.ndarray, np.ndarray], iters: tuple[int, int],
              factors: tuple[tuple[int, int], ...]) -> MicroLoop:
        """The loop of micro-op fields ``uop`` (dst, src, wgt) under ``iters`` = (iter_out,
        iter_in) and the (out, in) ``factors`` of dst, src and wgt."""
        f = np.array(factors, np.int64)  # (field, out / in)
        i0 = np.arange(iters[0], dtype=np.int64)[None, :, None]
        i1 = np.arange(iters[1], dtype=np.int64)[None, None, :]
        off = (i0 * f[:, :1, None] + i1 * f[:, 1:, None]).reshape(len(factors), -1)
        return cls(uop, tuple(off))  # type: ignore[arg-type]

    @property
    def size(self) -> int:
        return self.uop[0].size * self.off[0].size

    def expand(self, k: int) -> np.ndarray:
        """Per-iteration indices of field k, in iteration order."""
        return (self.off[k][:, None] + self.uop[k][None, :]).reshape(-1)


def gemm(acc: np.ndarray, out: np.ndarray, inp: np.ndarray, wgt: np.ndarray,
         loop: MicroLoop, plan: GemmPlan | None = None) -> None:
    """acc[a] += inp[s] . wgt[w]^T for every iteration; out[a] = low 8 bits of acc[a].

    acc / out: (depth, batch, block_out) int32 / int8; inp: (depth, batch, block_in) int8;
    wgt: (depth, block_out, block_in) int8. ``plan``: :func:`gemm_plan` of the loop, when the
    caller has one (fsim caches them per kernel); the general path below otherwise.

    The general path groups iterations per dst. Dsts whose contributions use the same sequence
    of weight tiles form one pattern: their inp rows side by side times the pattern's weight
    tiles stacked is one matmul that also does the reduction.
    """
    if loop.size == 0:
        return
    if plan is not None:
        plan.run(acc, out, inp, wgt)
        return
    a, s, w = (loop.expand(k) for k in range(3))
    if a.size <= SMALL_LOOP:
        _gemm_direct(acc, out, inp, wgt, a, s, w)
        return
    order = np.argsort(a, kind="stable")
    a_sorted = a[order]
    starts = np.flatnonzero(np.r_[True, a_sorted[1:] != a_sorted[:-1]])
    counts = np.diff(np.r_[starts, a.size])
    dsts = a_sorted[starts]
    groups = _patterns(order, starts, counts, w)
    if groups is None:
        delta = _by_weight(inp, wgt, s, w, order, starts)
    else:
        batch, block_in = inp.shape[1:]
        block_out = wgt.shape[1]
        delta = np.empty((dsts.size, batch, block_out), np.int64)
        tables = _FloatTables(inp)
        for rows, pos in groups:  # rows: dst positions; pos: (len(rows), r) iteration indices
            r = pos.shape[1]
            dtype = _exact_dtype(r * block_in)
            lhs = _side_by_side(tables[dtype][s[pos]])
            rhs = _stacked(wgt[w[pos[0]]], dtype)
            delta[rows] = (lhs @ rhs).reshape(rows.size, batch, block_out)
    _accumulate(acc, out, dsts, delta)


def _gemm_direct(acc: np.ndarray, out: np.ndarray, inp: np.ndarray, wgt: np.ndarray,
                 a: np.ndarray, s: np.ndarray, w: np.ndarray) -> None:
    """A short loop: every iteration's product in one stacked matmul (exact), summed per dst."""
    dtype = _exact_dtype(inp.shape[2])
    prod = np.matmul(inp[s].astype(dtype), wgt[w].astype(dtype).transpose(0, 2, 1))
    order = np.argsort(a, kind="stable")
    a_sorted = a[order]
    starts = np.flatnonzero(np.r_[True, a_sorted[1:] != a_sorted[:-1]])
    delta = np.add.reduceat(prod.astype(np.int64)[order], starts, axis=0)
    _accumulate(acc, out, a_sorted[starts], delta)


class _FloatTables(dict):  # type: ignore[type-arg]
    """The inp buffer converted to a float dtype on first use."""

    def __init__(self, inp: np.ndarray) -> None:
        super().__init__()
        self.inp = inp

    def __missing__(self, dtype: type[np.floating]) -> np.ndarray:
        self[dtype] = table = self.inp.astype(dtype)
        return table


def _side_by_side(rows: np.ndarray, dtype: type[np.floating] | None = None) -> np.ndarray:
    """(m, r, batch, block_in) gathered inp tiles -> (m * batch, r * block_in) matmul rows
    (converted to ``dtype`` in the same pass, if given)."""
    m, r, batch, block_in = rows.shape
    t = rows.transpose(0, 2, 1, 3)
    if dtype is not None:
        t = t.astype(dtype, order="C")
    return t.reshape(m * batch, r * block_in)


def _stacked(tiles: np.ndarray, dtype: type[np.floating]) -> np.ndarray:
    """(r, block_out, block_in) weight tiles -> (r * block_in, block_out) matmul operand."""
    r, block_out, block_in = tiles.shape
    return tiles.transpose(0, 2, 1).astype(dtype, order="C").reshape(r * block_in, block_out)


def _accumulate(acc: np.ndarray, out: np.ndarray, dsts: np.ndarray | slice,
                delta: np.ndarray) -> None:
    """acc[dsts] += delta (distinct dsts; delta integer-valued, exact), wrapping to int32;
    out[dsts] = the low byte."""
    if delta.dtype == np.float64:
        delta = delta.astype(np.int64)  # may exceed int32: wrapped below
    total = acc[dsts] + delta.astype(np.int32)  # int32 array addition wraps
    acc[dsts] = total
    out[dsts] = total.astype(np.int8)


@dataclass(frozen=True)
class _GemmGroup:
    """One matmul of a :class:`GemmPlan`: lhs rows gathered from inp at ``src`` (rows, r),
    weight tiles at ``wgt`` (r, columns); ``take`` picks, from the product viewed as
    (-1, block_out), the rows of each (dst, batch) in ascending dst order; ``dst`` those dsts
    (a slice when they are contiguous)."""

    src: np.ndarray
    wgt: np.ndarray
    take: np.ndarray
    dst: np.ndarray | slice
    dtype: type[np.floating]


@dataclass(frozen=True)
class GemmPlan:
    """The matmuls of a GEMM micro-op loop of the common shapes (see :func:`gemm_plan`)."""

    groups: tuple[_GemmGroup, ...]

    def run(self, acc: np.ndarray, out: np.ndarray, inp: np.ndarray, wgt: np.ndarray) -> None:
        batch = inp.shape[1]
        block_out = wgt.shape[1]
        for g in self.groups:
            lhs = _side_by_side(inp[g.src], g.dtype)
            cols = g.wgt.shape[1]
            tiles = wgt[g.wgt]  # (r, cols, block_out, block_in)
            rhs = tiles.transpose(0, 3, 1, 2).astype(g.dtype, order="C").reshape(
                lhs.shape[1], cols * block_out)
            prod = (lhs @ rhs).reshape(-1, block_out)
            _accumulate(acc, out, g.dst, prod[g.take].reshape(-1, batch, block_out))


def gemm_plan(loop: MicroLoop, acc_depth: int, batch: int, block_in: int) -> GemmPlan | None:
    """Matmuls for the common kernel shapes, found from the loop alone; None when they do not
    apply (then :func:`gemm` takes the general path).

    Applies when no dst is reached from two different (i0, i1) or two different micro-op dst
    values, and the loop's distinct (src offset, weight offset) combinations are not many more
    than its (i0, i1) pairs (a convolution's src offset moves with the pixel, its weight offset
    with the output channel block: every combination is used). Then the micro-ops sharing a dst
    value form that dst's pattern. Patterns whose src sequences are equal (output channel
    blocks) or whose weight sequences are equal (output rows) form one group, computed as one
    matmul over every src offset and weight offset of the loop; each (i0, i1) then takes its
    (src offset, weight offset) block of the product.
    """
    if loop.size == 0:
        return GemmPlan(())
    d_u, s_u, w_u = loop.uop
    off_d, off_s, off_w = loop.off
    pairs = off_d.size
    values, which = np.unique(d_u, return_inverse=True)
    if values.size > _MAX_PATTERNS:
        return None
    dsts = off_d[:, None] + values[None, :]  # (pairs, patterns)
    if np.bincount(dsts.reshape(-1), minlength=acc_depth).max() > 1:
        return None
    s_vals, s_of = np.unique(off_s, return_inverse=True)
    w_vals, w_of = np.unique(off_w, return_inverse=True)
    n_s, n_w = s_vals.size, w_vals.size
    if n_s * n_w > _MAX_PRODUCT_WASTE * pairs:
        return None
    members = [np.flatnonzero(which == j) for j in range(values.size)]
    by_src = _same_sequence(s_u, members)
    by_wgt = _same_sequence(w_u, members)
    shared_src = len(by_src) <= len(by_wgt)
    bb = np.arange(batch)[None, None, :]
    s_p = s_of[:, None, None]
    w_p = w_of[:, None, None]
    groups = []
    for js in (by_src if shared_src else by_wgt):
        ms = np.stack([members[j] for j in js])  # (patterns, r) micro-op indices
        n_j, r = ms.shape
        c = np.arange(n_j)[None, :, None]
        if shared_src:  # product rows (s, batch), columns (pattern, w)
            src = s_vals[:, None] + s_u[ms[0]][None, :]
            wgt = (w_u[ms].T[:, :, None] + w_vals[None, None, :]).reshape(r, n_j * n_w)
            row = ((s_p * batch + bb) * n_j + c) * n_w + w_p
        else:  # product rows (pattern, s, batch), columns w
            src = (s_vals[None, :, None] + s_u[ms][:, None, :]).reshape(n_j * n_s, r)
            wgt = w_u[ms[0]][:, None] + w_vals[None, :]
            row = ((c * n_s + s_p) * batch + bb) * n_w + w_p
        dst = dsts[:, js].reshape(-1)
        order = np.argsort(dst)
        dst = dst[order]
        take = row.reshape(pairs * n_j, batch)[order].reshape(-1)
        groups.append(_GemmGroup(src, wgt, take, as_rows(dst), _exact_dtype(r * block_in)))
    return GemmPlan(tuple(groups))


def as_rows(dst: np.ndarray) -> np.ndarray | slice:
    """Distinct buffer indices in ascending order as a slice when they are contiguous (indexing
    a view instead of gathering), else unchanged."""
    if dst.size == 0:
        return dst
    lo, hi = int(dst[0]), int(dst[-1]) + 1
    return slice(lo, hi) if hi - lo == dst.size else dst


def _same_sequence(seq: np.ndarray, members: list[np.ndarray]) -> list[list[int]]:
    """Patterns (indices into ``members``) grouped by equal ``seq[members[j]]``."""
    groups: dict[bytes, list[int]] = {}
    for j, m in enumerate(members):
        groups.setdefault(seq[m].tobytes(), []).append(j)
    return list(groups.values())


def _patterns(order: np.ndarray, starts: np.ndarray, counts: np.ndarray,
              w: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]] | None:
    """Group dsts by the sequence of weight tiles of their iterations (in iteration order).

    Returns (dst positions, iteration indices per dst) per pattern, or None when there are more
    than _MAX_PATTERNS patterns.
    """
    groups: list[tuple[np.ndarray, np.ndarray]] = []
    lengths = np.unique(counts)
    if lengths.size > _MAX_PATTERNS or lengths[-1] > _HASH.size:
        return None
    for r in lengths.tolist():
        sel = np.flatnonzero(counts == r) if lengths.size > 1 else np.arange(counts.size)
        pos = order[starts[sel][:, None] + np.arange(r)]
        seq = w[pos]
        keys = seq @ _HASH[:r]  # wraps: a hash, verified below
        uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        if len(groups) + uniq.size > _MAX_PATTERNS:
            return None
        if not np.array_equal(seq, seq[first][inverse]):
            return None  # a hash collision: take the general path
        if uniq.size == 1:
            groups.append((sel, pos))
            continue
        by_class = np.argsort(inverse, kind="stable")
        bounds = np.flatnonzero(np.diff(inverse[by_class])) + 1
        for members in np.split(by_class, bounds):
            groups.append((sel[members], pos[members]))
    return groups


def _by_weight(inp: np.ndarray, wgt: np.ndarray, s: np.ndarray, w: np.ndarray,
               order: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per-dst sums (in dst order of ``order`` / ``starts``) with one matmul per weight tile."""
    batch, block_in = inp.shape[1:]
    block_out = wgt.shape[1]
    dtype = _exact_dtype(block_in)
    by_w = np.argsort(w, kind="stable")
    ws = w[by_w]
    wstarts = np.flatnonzero(np.r_[True, ws[1:] != ws[:-1]])
    sizes = np.diff(np.r_[wstarts, ws.size])
    rows = inp[s[by_w]].astype(dtype)  # (n, batch, block_in)
    wt = wgt[ws[wstarts]].astype(dtype).transpose(0, 2, 1)  # (groups, block_in, block_out)
    n = rows.shape[0]
    prod = np.empty((n, batch, block_out), dtype)
    for k, (lo, size) in enumerate(zip(wstarts.tolist(), sizes.tolist())):
        np.matmul(rows[lo:lo + size].reshape(size * batch, block_in), wt[k],
                  out=prod[lo:lo + size].reshape(size * batch, block_out))
    contrib = np.empty_like(prod, np.int64)
    contrib[by_w] = prod  # back to iteration order
    return np.add.reduceat(contrib[order], starts, axis=0)


def gemm_reset(acc: np.ndarray, out: np.ndarray, a: np.ndarray) -> None:
    acc[a] = 0
    out[a] = 0


def shr(x: np.ndarray, amount: np.ndarray | int) -> np.ndarray:
    """The saturating shift of docs/isa.md ("Decision (shift amounts)"), on int32 arrays;
    ``amount`` is an int (an immediate) or an array like x."""
    x = x.astype(np.int32, copy=False)
    if isinstance(amount, int):
        if amount >= 0:
            return x >> np.int32(min(amount, 31))
        if amount > -32:
            return (x.view(np.uint32) << np.uint32(-amount)).view(np.int32)
        return np.zeros_like(x)
    amount = np.asarray(amount, np.int64)
    right = x >> np.clip(amount, 0, 31).astype(np.int32)
    left = (x.view(np.uint32) << np.clip(-amount, 0, 31).astype(np.uint32)).view(np.int32)
    return np.where(amount >= 0, right, np.where(amount > -32, left, np.int32(0)))


def alu_op(op: AluOp, x: np.ndarray, y: np.ndarray | int) -> np.ndarray:
    """One ALU operation on int32 arrays; y is an int (immediate) or an int array like x."""
    if op == AluOp.MIN:
        return np.minimum(x, y)
    if op == AluOp.MAX:
        return np.maximum(x, y)
    if op == AluOp.ADD:
        return (x.astype(np.int64) + y).astype(np.int32)
    if op == AluOp.MUL:
        return (x.astype(np.int64) * y).astype(np.int32)
    if op == AluOp.SHR:
        return shr(x, y)
    raise ValueError(f"ALU opcode {op} is not one of {', '.join(o.name for o in AluOp)}")


@dataclass(frozen=True)
class AluPlan:
    """An ALU micro-op loop as dependency levels (see :func:`alu_plan`): per level the dsts
    (a slice when contiguous) and the srcs in the same order (None with an immediate)."""

    levels: tuple[tuple[np.ndarray | slice, np.ndarray | None], ...]

    def run(self, acc: np.ndarray, out: np.ndarray, op: AluOp, imm: int) -> None:
        for dst, src in self.levels:
            res = alu_op(op, acc[dst], imm if src is None else acc[src])
            acc[dst] = res
            out[dst] = res.astype(np.int8)


def alu_plan(loop: MicroLoop, use_imm: bool, acc_depth: int) -> AluPlan:
    """The loop's iterations split into levels, each one gather-compute-scatter.

    Within a level dsts are distinct, so its iterations may run in any order: they are sorted
    by dst, which makes the common requantisation loops (every dst once) one slice.
    """
    a = loop.expand(0)
    s = None if use_imm else loop.expand(1)
    levels = []
    if a.size == 0:
        return AluPlan(())
    for level in _levels(a, s, acc_depth):
        order = level[np.argsort(a[level], kind="stable")]
        dst = a[order]
        levels.append((as_rows(dst),
                       None if s is None else s[order]))
    return AluPlan(tuple(levels))


def alu(acc: np.ndarray, out: np.ndarray, op: AluOp, loop: MicroLoop, use_imm: bool,
        imm: int, plan: AluPlan | None = None) -> None:
    """acc[a] = op(acc[a], acc[s] or imm) per iteration, in order; out[a] = low 8 bits.
    ``plan``: :func:`alu_plan` of the loop, when the caller has one; without one a loop of at
    most SMALL_LOOP iterations runs its levels as they come (unsorted: a plan sorts each level
    by dst for slices, which pays off only when the plan is reused)."""
    if loop.size == 0:
        return
    if plan is None and loop.size <= SMALL_LOOP:
        a = loop.expand(0)
        s = None if use_imm else loop.expand(1)
        for level in _levels(a, s, acc.shape[0]):
            dst = a[level]
            res = alu_op(op, acc[dst], imm if s is None else acc[s[level]])
            acc[dst] = res
            out[dst] = res.astype(np.int8)
        return
    (plan or alu_plan(loop, use_imm, acc.shape[0])).run(acc, out, op, imm)


def _levels(a: np.ndarray, s: np.ndarray | None, depth: int) -> list[np.ndarray]:
    """Split iterations into levels that can each run as one gather-compute-scatter.

    Within a level no element is written twice and none is read after an earlier iteration of
    the same level wrote it; later iterations that write what an earlier one read go in the same
    or a later level (the gather happens before the scatter, so they see the old value).
    """
    n = a.size
    positions = np.arange(n)
    if np.bincount(a, minlength=depth).max() == 1:
        if s is None:
            return [positions]
        writer = np.full(depth, n, np.int64)
        writer[a] = positions  # the one iteration writing each element
        if not np.any(writer[s] < positions):
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
    bounds = [0, *(np.flatnonzero(np.diff(levels[order])) + 1).tolist(), n]
    return [order[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:])]
