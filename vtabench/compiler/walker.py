"""The walker: one lowered operator emitted into a runtime, tile by tile.

The walker unrolls the loops above the leaf nests (tile loops, reduction chunk loops) with
concrete values and turns each leaf nest into instructions (:mod:`vtabench.compiler.dma` for
copies, :mod:`vtabench.compiler.uop_nests` for GEMM and ALU). Each opaque block that allocates
an accumulator is one tile: before it, the walker calls the runtime's ``checkpoint`` with the
most instructions and micro-ops one tile can queue (:class:`TileBudget`, measured once by a dry
run over a :class:`~vtabench.compiler.sink.CountingSink` and raised whenever a tile queues more),
so the runtime's automatic syncs happen in time. Dependency tokens come from the runtime's
hazard tracking (:mod:`vtabench.runtime.hazards`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tvm import s_tir, tirx

from vtabench.compiler.addressing import Addresses
from vtabench.compiler.analysis import (AluNest, GemmNest, LoadNest, OperatorAnalysis, StoreNest,
                                        analyze)
from vtabench.compiler.dma import emit_load, emit_store
from vtabench.compiler.onchip import SCOPES, scope
from vtabench.compiler.ops import CompileError
from vtabench.compiler.ragged import clipped
from vtabench.compiler.sink import CountingSink, InstructionSink
from vtabench.compiler.sram_layout import SramLayout, plan_sram
from vtabench.compiler.tiling import uop_count
from vtabench.compiler.tir_expr import Env, evaluate
from vtabench.compiler.tir_visitor import OperatorVisitor
from vtabench.compiler.uop_nests import emit_uop_nest
from vtabench.runtime import DeviceBuffer

if TYPE_CHECKING:
    from vtabench.spec.config import Config

#: Instructions added to the measured most of one tile: token no-ops the runtime may insert.
_TOKEN_SLACK = 4


@dataclass
class TileBudget:
    """The most instructions and device micro-ops one tile queues."""

    insns: int
    uops: int


class Emitter:
    """A lowered operator ready to emit: its analysis, SRAM layout and tile budget. ``emit``
    binds the PrimFunc's parameters (by name) to device buffers."""

    def __init__(self, cfg: Config, func: tirx.PrimFunc,
                 guards: dict[str, Any] | None = None) -> None:
        self.cfg = cfg
        self.func = func
        self.params = [p.name for p in func.params]
        self.analysis = analyze(cfg, func, guards)
        self.layout = plan_sram(cfg, self.analysis)
        self._budget: TileBudget | None = None  # measured at the first emission

    def uop_bound(self) -> int:
        """Micro-ops one tile can add to the device pool: every GEMM / ALU kernel of the
        operator, once per virtual thread (kernels differ only by their buffer copy)."""
        total = sum(uop_count(n.extents) for n in self.analysis.nests.values()
                    if isinstance(n, (GemmNest, AluNest)))
        return total * self.analysis.vthreads

    def measure(self) -> TileBudget:
        """Dry run over a counting stand-in for the runtime: the most instructions (plus one
        LOAD UOP per kernel and a few token no-ops) and micro-ops one tile can queue."""
        counter = CountingSink()
        seen = TileBudget(0, 0)
        bindings = {name: DeviceBuffer(0, 0) for name in self.params}
        _Walk(self.cfg, self.analysis, self.layout, counter, bindings, seen).visit(self.func.body)
        whole = counter.pending if not counter.tiles else 0
        return TileBudget(max(seen.insns, whole) + _TOKEN_SLACK,
                          max(seen.uops, self.uop_bound()))

    def emit(self, rt: InstructionSink, bindings: dict[str, DeviceBuffer], *,
             budget: TileBudget | None = None) -> None:
        """Queue the operator on ``rt``; ``budget``: what the tile checkpoints ask the runtime
        to have room for (default: measured once, :meth:`measure`; a runtime whose instruction
        buffer and micro-op pool hold the whole operator can take ``TileBudget(0, 0)``)."""
        missing = set(self.params) - set(bindings)
        if missing:
            raise CompileError(f"no device buffer bound to {', '.join(sorted(missing))}")
        if budget is None:
            if self._budget is None:
                self._budget = self.measure()
            budget = self._budget
        _Walk(self.cfg, self.analysis, self.layout, rt, bindings, budget).visit(self.func.body)
        rt.layer_end()


class _Walk(OperatorVisitor):
    """One emission: loop values in ``env``, buffer copies in the placement. Raises ``budget``
    to what each tile that ran without a sync queued."""

    def __init__(self, cfg: Config, analysis: OperatorAnalysis, layout: SramLayout,
                 rt: InstructionSink, bindings: dict[str, DeviceBuffer],
                 budget: TileBudget) -> None:
        self.nests = analysis.nests
        self.rt = rt
        self.budget = budget
        self.placement = layout.placement()
        self.addr = Addresses(cfg, self.placement, bindings)
        self.env: Env = {}

    def visit_leaf(self, loops: list[tirx.For], blk: s_tir.SBlock) -> None:
        n = self.nests[blk.name_hint]
        if n.upper:  # a ragged tile: the extents cut to what lies inside the tensors
            n = clipped(n, self.env, n.pad.x if isinstance(n, LoadNest) and n.pad else None)
        if isinstance(n, LoadNest):
            emit_load(self.rt, n, self.env, self.addr)
        elif isinstance(n, StoreNest):
            emit_store(self.rt, n, self.env, self.addr)
        elif isinstance(n, (GemmNest, AluNest)):
            emit_uop_nest(self.rt, n, self.env, self.addr)
        else:
            raise CompileError(f"block {n.name}: no emission for {type(n).__name__}")

    def visit_for(self, loop: tirx.For) -> None:
        var = loop.loop_var
        lo = evaluate(loop.min, self.env)
        for v in range(lo, lo + evaluate(loop.extent, self.env)):
            self.env[var] = v
            self.visit(loop.body)
        self.env.pop(var, None)

    def visit_block(self, blk: s_tir.SBlock) -> None:
        rt, budget = self.rt, self.budget
        tile = any(SCOPES[scope(b)] == "acc" for b in blk.alloc_buffers)
        if tile:
            rt.checkpoint(budget.insns, budget.uops)
            syncs, pending, uops = rt.stats.syncs, rt.pending, rt.uop_pool_used
        self.placement.allocate(blk.alloc_buffers)
        self.visit(blk.body)
        if tile and rt.stats.syncs == syncs:
            budget.insns = max(budget.insns, rt.pending - pending)
            budget.uops = max(budget.uops, rt.uop_pool_used - uops)
