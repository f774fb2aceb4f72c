"""The walker: one lowered operator emitted into a runtime, tile by tile.

The walker unrolls the loops above the leaf nests (tile loops, reduction chunk loops) with
concrete values and turns each leaf nest into instructions (:mod:`vtabench.compiler.dma` for
copies, :mod:`vtabench.compiler.uop_nests` for GEMM and ALU). It walks an operator once, into a
:class:`~vtabench.compiler.sink.Trace` (device-memory addresses relative to each operand), and
each emission replays that record with the layer's buffers. Each opaque block that allocates
an accumulator is one tile: before it, the emission calls the runtime's ``checkpoint`` with the
most instructions and micro-ops one tile can queue (:class:`TileBudget`, read once off the
record and raised whenever a tile queues more), so the runtime's automatic syncs happen in
time. Dependency tokens come from the runtime's hazard tracking
(:mod:`vtabench.runtime.hazards`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tvm import s_tir, tirx

from vtabench.compiler.addressing import Addresses
from vtabench.compiler.analysis import (AluNest, GemmNest, LoadNest, Nest, OperatorAnalysis,
                                        StoreNest, analyze)
from vtabench.compiler.dma import emit_load, emit_store
from vtabench.compiler.onchip import SCOPES, scope
from vtabench.compiler.ops import CompileError
from vtabench.compiler.ragged import clipped
from vtabench.compiler.sink import TileBudget, Trace
from vtabench.compiler.sram_layout import SramLayout, plan_sram
from vtabench.compiler.tiling import uop_count
from vtabench.compiler.tir_expr import Env, compile_index
from vtabench.compiler.tir_visitor import OperatorVisitor
from vtabench.compiler.uop_nests import emit_uop_nest
from vtabench.runtime import DeviceBuffer
from vtabench.spec.isa.layout import MemType, mem_elem_bytes

if TYPE_CHECKING:
    from vtabench.runtime import Runtime
    from vtabench.spec.config import Config

#: Instructions added to the measured most of one tile: token no-ops the runtime may insert.
_TOKEN_SLACK = 4


class Emitter:
    """A lowered operator ready to emit: its analysis, SRAM layout, the record of its walk and
    the tile budget. ``emit`` binds the PrimFunc's parameters (by name) to device buffers."""

    def __init__(self, cfg: Config, func: tirx.PrimFunc,
                 guards: dict[str, Any] | None = None) -> None:
        self.cfg = cfg
        self.func = func
        self.params = [p.name for p in func.params]
        self.analysis = analyze(cfg, func, guards)
        self.layout = plan_sram(cfg, self.analysis)
        self._trace: Trace | None = None  # walked at the first emission
        self._budget: TileBudget | None = None  # measured at the first emission

    def uop_bound(self) -> int:
        """Micro-ops one tile can add to the device pool: every GEMM / ALU kernel of the
        operator, once per virtual thread (kernels differ only by their buffer copy)."""
        total = sum(uop_count(n.extents) for n in self.analysis.nests.values()
                    if isinstance(n, (GemmNest, AluNest)))
        return total * self.analysis.vthreads

    def trace(self) -> Trace:
        """The operator's walk (once), every operand at device address 0."""
        if self._trace is None:
            self._trace = Trace()
            bindings = {name: DeviceBuffer(0, 0) for name in self.params}
            _Walk(self.cfg, self.analysis, self.layout, self._trace, bindings).visit(
                self.func.body)
        return self._trace

    def immediates_match(self, imms: dict[str, int]) -> bool:
        """Whether the ALU nests' immediates are exactly ``imms`` (stage -> value, read off the
        TE): every nest with an immediate has its stage's value, every stage's value is a
        nest's immediate, and no nest scales its operand by an immediate."""
        alu = [n for n in self.analysis.nests.values() if isinstance(n, AluNest)]
        if any(isinstance(n.src_scale, int) for n in alu):
            return False
        found = {n.name: n.imm for n in alu if n.imm is not None}
        return found == imms

    def with_immediates(self, imms: dict[str, int]) -> Emitter:
        """This operator's emitter for an operator of the same structure whose ALU immediates
        are ``imms`` (its own tile budget; the analysis, layout and lowered function are this
        one's, whose immediates differ)."""
        other = copy.copy(self)
        other._trace = self.trace().with_immediates(imms)
        other._budget = None
        return other

    def measure(self) -> TileBudget:
        """The most instructions (plus one LOAD UOP per kernel and a few token no-ops) and
        micro-ops one tile can queue."""
        insns, uops = self.trace().most_per_tile()
        return TileBudget(insns + _TOKEN_SLACK, max(uops, self.uop_bound()))

    def emit(self, rt: Runtime, bindings: dict[str, DeviceBuffer], *,
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
        self.trace().replay(rt, bindings, budget)
        rt.layer_end()


@dataclass
class _Loop:
    """A loop above the leaf nests: its variable, bounds (compiled on first use) and body."""

    var: Any
    min: Any
    extent: Any
    body: list[Any]
    bounds: tuple[Callable[[Env], int], Callable[[Env], int]] | None = None


@dataclass
class _Block:
    """An opaque block: whether it is a tile (it allocates an accumulator), the buffers it
    allocates and its body."""

    tile: bool
    buffers: list[str]
    body: list[Any]


class _Plan(OperatorVisitor):
    """The lowered body read once into plain Python nodes (loops, blocks, leaf nests), so
    that the walk does not go through TVM's objects at every iteration of the loops."""

    def __init__(self, nests: dict[str, Nest]) -> None:
        self.nests = nests
        self.out: list[Any] = []

    def read(self, stmt: Any) -> list[Any]:
        outer, self.out = self.out, []
        self.visit(stmt)
        body, self.out = self.out, outer
        return body

    def visit_leaf(self, loops: list[tirx.For], blk: s_tir.SBlock) -> None:
        self.out.append(self.nests[blk.name_hint])

    def visit_for(self, loop: tirx.For) -> None:
        self.out.append(_Loop(loop.loop_var, loop.min, loop.extent, self.read(loop.body)))

    def visit_block(self, blk: s_tir.SBlock) -> None:
        buffers = list(blk.alloc_buffers)
        self.out.append(_Block(any(SCOPES[scope(b)] == "acc" for b in buffers),
                               [b.name for b in buffers], self.read(blk.body)))


class _Walk:
    """One walk into ``trace``: loop values in ``env``, buffer copies in the placement."""

    def __init__(self, cfg: Config, analysis: OperatorAnalysis, layout: SramLayout,
                 trace: Trace, bindings: dict[str, DeviceBuffer]) -> None:
        self.cfg = cfg
        self.nests = analysis.nests
        self.trace = trace
        self.placement = layout.placement()
        self.addr = Addresses(cfg, self.placement, bindings)
        self.env: Env = {}

    def visit(self, stmt: Any) -> None:
        self.run(_Plan(self.nests).read(stmt))

    def run(self, body: list[Any]) -> None:
        for node in body:
            if isinstance(node, _Loop):
                self.loop(node)
            elif isinstance(node, _Block):
                self.block(node)
            else:
                self.leaf(node)

    def leaf(self, n: Nest) -> None:
        if n.upper:  # a ragged tile: the extents cut to what lies inside the tensors
            n = clipped(n, self.env, n.pad.x if isinstance(n, LoadNest) and n.pad else None)
        if isinstance(n, LoadNest):
            self.trace.operand = (n.src.buf.name, mem_elem_bytes(self.cfg, n.mem))
            emit_load(self.trace, n, self.env, self.addr)
        elif isinstance(n, StoreNest):
            self.trace.operand = (n.dst.buf.name, mem_elem_bytes(self.cfg, MemType.OUT))
            emit_store(self.trace, n, self.env, self.addr)
        elif isinstance(n, (GemmNest, AluNest)):
            self.trace.stage = n.name
            emit_uop_nest(self.trace, n, self.env, self.addr)
        else:
            raise CompileError(f"block {n.name}: no emission for {type(n).__name__}")

    def loop(self, node: _Loop) -> None:
        if node.bounds is None:
            node.bounds = (compile_index(node.min), compile_index(node.extent))
        first, extent = node.bounds
        var = node.var
        lo = first(self.env)
        for v in range(lo, lo + extent(self.env)):
            self.env[var] = v
            self.run(node.body)
        self.env.pop(var, None)

    def block(self, node: _Block) -> None:
        if node.tile:
            self.trace.tile()
        self.placement.allocate(node.buffers)
        self.run(node.body)
        if node.tile:
            self.trace.tile_end()
