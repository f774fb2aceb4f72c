"""Ragged last tiles: tile sizes that do not divide the dimension they tile.

A dimension of ``n`` split into tiles of ``t`` (``n % t != 0``) has ``n // t`` full tiles and a
last one of ``n % t``. s_tir guards such a split with a block predicate, but ``tensorize``
cannot match a predicated block, so the schedules split without predication
(``disable_predication=True``) and the guard is restored outside the schedule:

* :func:`domain_guards` reads the scheduled module (before lowering, while buffers still have
  the whole tensor's shape) and returns, per block name, the conditions under which the block
  writes inside its buffers, only those that the loop ranges do not already prove (none at all
  when every split divides: such operators compile exactly as before);
* the analysis turns a leaf nest's guard into an inclusive upper bound per loop
  (:func:`loop_upper_bounds`, expressions in the tile loops);
* the walker emits each leaf nest of a tile with its loop extents cut to those bounds
  (:func:`clipped`): the same program with a smaller extent in the last tile.

The on-chip buffers keep the full tile's shape, so every address and stride of a ragged tile is
the full tile's; only the extents (rows / columns of a DMA, micro-op loop counts) shrink.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import tvm
from tvm import s_tir, tirx

from vtabench.compiler.ops import CompileError
from vtabench.compiler.tir_expr import Env, evaluate


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def tile_sizes(n: int) -> list[int]:
    """Candidate tile sizes of a dimension of ``n``: its divisors, and for every tile count k
    the smallest size that needs k tiles, ``ceil(n / k)`` (a ragged size is only worth trying as
    the smallest one for its count)."""
    return sorted({-(-n // k) for k in range(1, n + 1)} | set(divisors(n)))


def tile_classes(n: int, t: int) -> list[tuple[int, int]]:
    """(size, count) of the tiles of a dimension of ``n`` split by ``t``: the full tiles, then
    the ragged last one."""
    out = [(t, n // t)] if n >= t else []
    if n % t:
        out.append((n % t, 1))
    return out


def split(sch: s_tir.Schedule, loop: s_tir.LoopRV, n: int,
          t: int) -> tuple[s_tir.LoopRV, s_tir.LoopRV]:
    """Split ``loop`` (extent ``n``) into tiles of ``t``; without a predicate when ``t`` does not
    divide ``n`` (the guard comes back through :func:`domain_guards`)."""
    outer, inner = sch.split(loop, [None, t], disable_predication=n % t != 0)
    return outer, inner


def domain_guards(mod: tvm.IRModule) -> dict[str, Any]:
    """Block name -> the conjunction of the conditions under which every region the block writes
    lies inside its buffer (``0 <= min`` and ``min + extent <= shape`` per axis, in the loop
    variables), only those that the enclosing loops' ranges do not prove; blocks that stay
    inside are absent. (Writes, not the iter vars' domains: ``tensorize`` widens the domains of
    the block it replaces to the loops' product.)"""
    ana = tvm.sym.Analyzer()
    guards: dict[str, Any] = {}

    def visit(stmt: Any) -> None:
        if isinstance(stmt, tirx.For):
            ana.bind(stmt.loop_var, tvm.ir.Range.from_min_extent(stmt.min, stmt.extent))
            visit(stmt.body)
        elif isinstance(stmt, tirx.SeqStmt):
            for s in stmt.seq:
                visit(s)
        elif isinstance(stmt, s_tir.SBlockRealize):
            blk = stmt.block
            for iv, value in zip(blk.iter_vars, stmt.iter_values, strict=True):
                ana.bind(iv.var, value)
            cond = None
            for region in blk.writes:
                for r, dim in zip(region.region, region.source.shape, strict=True):
                    for c in (r.min >= 0, r.min + r.extent <= dim):
                        c = ana.simplify(c)
                        if not ana.can_prove(c):
                            cond = c if cond is None else tirx.And(cond, c)
            if cond is not None:
                guards[blk.name_hint] = cond
            visit(blk.body)

    visit(mod["main"].body)
    return guards


def loop_upper_bounds(name: str, guard: Any, loops: list[tirx.For],
                      fixed: list[tirx.For]) -> list[Any]:
    """Inclusive upper bound of each of ``loops`` under ``guard`` (an expression in the outer
    loops, or None where the guard does not bound that loop); ``fixed`` are the nest's unit
    loops, bound to their start."""
    ana = tvm.sym.Analyzer()
    for lp in fixed:
        ana.bind(lp.loop_var, lp.min)
    guard = ana.simplify(guard)
    if not loops:
        raise CompileError(f"block {name}: guard {guard} on a nest without loops")
    bounds = tvm.sym.detect_clip_bound(guard, [lp.loop_var for lp in loops])
    if len(bounds) != 2 * len(loops):
        raise CompileError(f"block {name}: cannot bound the loops of a ragged tile by {guard}")
    return [bounds[2 * i + 1] for i in range(len(loops))]


def clipped(n: Any, env: Env, keep: int | None = None) -> Any:
    """The nest ``n`` with each loop's extent cut to its upper bound under ``env`` (the tile
    loops' values); loop ``keep`` keeps its extent (a padded copy's x loop: columns past the
    tensor become padding, so the on-chip rows keep the full tile's stride)."""
    ext = list(n.extents)
    for i, hi in enumerate(n.upper):
        if hi is None or i == keep:
            continue
        ext[i] = min(ext[i], evaluate(hi, env) + 1)
        if ext[i] <= 0:
            raise CompileError(f"block {n.name}: a ragged tile leaves loop {n.loops[i].loop_var} "
                               f"empty")
    return dataclasses.replace(n, extents=ext)
