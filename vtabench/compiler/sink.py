"""What the walker queues instructions on: a :class:`Trace`, the record of one emission that is
then replayed into a :class:`~vtabench.runtime.Runtime` for each layer of the operator.

The walker's calls do not depend on the runtime's state (only the tile checkpoints' budget
does), and its device-memory addresses are an operand's start plus an offset that does not
depend on where the operand lies. So an operator is walked once, with every operand at address
0, and the recorded calls (offsets and the operand they belong to, tile starts and ends) are
replayed with each layer's buffers: the same runtime calls in the same order as a walk with
those buffers, at a fraction of the cost (the walk evaluates TIR expressions through TVM's FFI).
The tile budget (the most instructions and micro-ops one tile queues) is read off the same
record (:meth:`Trace.most_per_tile`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from vtabench.runtime import DeviceBuffer, UopKernel
from vtabench.spec.isa.layout import AluOp, MemType

if TYPE_CHECKING:
    from vtabench.runtime import Runtime


class InstructionSink(Protocol):
    """The calls the DMA and micro-op emitters make (a :class:`Trace` takes them)."""

    def load(self, mem: MemType, sram_base: int, dram_base: int, y_size: int, x_size: int,
             x_stride: int, y_pad_0: int = 0, y_pad_1: int = 0, x_pad_0: int = 0,
             x_pad_1: int = 0) -> Any: ...

    def store(self, sram_base: int, dram_base: int, y_size: int, x_size: int,
              x_stride: int) -> Any: ...

    def gemm(self, kernel: UopKernel, reset: bool = False) -> Any: ...

    def alu(self, kernel: UopKernel, op: AluOp, imm: int | None = None) -> Any: ...


@dataclass
class TileBudget:
    """The most instructions and device micro-ops one tile queues."""

    insns: int
    uops: int


# event kinds (first field of each recorded call)
_LOAD, _STORE, _GEMM, _ALU, _TILE, _TILE_END = range(6)

#: (operand name, element bytes): a device-memory address is that operand's first element of
#: that size plus the recorded offset.
DramKey = tuple[str, int]


@dataclass
class Trace:
    """One emission of an operator: its runtime calls in order, device-memory addresses as
    offsets from the operand that :attr:`operand` names while they are recorded."""

    events: list[tuple[Any, ...]] = field(default_factory=list)
    operand: DramKey = ("", 1)  # set by the walker before each DMA nest
    stage: str = ""  # set by the walker before each GEMM / ALU nest

    # -- recording ---------------------------------------------------------------------------
    def tile(self) -> None:
        """A tile starts (the walker's checkpoint)."""
        self.events.append((_TILE,))

    def tile_end(self) -> None:
        self.events.append((_TILE_END,))

    def load(self, mem: MemType, sram_base: int, dram_base: int, y_size: int, x_size: int,
             x_stride: int, y_pad_0: int = 0, y_pad_1: int = 0, x_pad_0: int = 0,
             x_pad_1: int = 0) -> None:
        self.events.append((_LOAD, mem, sram_base, self.operand, dram_base, y_size, x_size,
                            x_stride, y_pad_0, y_pad_1, x_pad_0, x_pad_1))

    def store(self, sram_base: int, dram_base: int, y_size: int, x_size: int,
              x_stride: int) -> None:
        self.events.append((_STORE, sram_base, self.operand, dram_base, y_size, x_size,
                            x_stride))

    def gemm(self, kernel: UopKernel, reset: bool = False) -> None:
        self.events.append((_GEMM, kernel, reset))

    def alu(self, kernel: UopKernel, op: AluOp, imm: int | None = None) -> None:
        self.events.append((_ALU, kernel, op, imm, self.stage))

    def with_immediates(self, imms: dict[str, int]) -> Trace:
        """The same calls with each ALU immediate of a stage named in ``imms`` replaced by its
        value there (:mod:`vtabench.compiler.immediates`)."""
        return Trace([(ev[0], ev[1], ev[2], imms[ev[4]], ev[4])
                      if ev[0] == _ALU and ev[3] is not None and ev[4] in imms else ev
                      for ev in self.events])

    # -- reading -----------------------------------------------------------------------------
    def most_per_tile(self) -> tuple[int, int]:
        """(most instructions, most micro-ops) one tile queues; a GEMM
        or ALU counts with its LOAD UOP (at most one). Without tiles, the instructions are
        those of the whole emission."""
        pending = uops = most_i = most_u = 0
        marks: list[tuple[int, int]] = []
        tiles = False
        for ev in self.events:
            kind = ev[0]
            if kind in (_LOAD, _STORE):
                pending += 1
            elif kind in (_GEMM, _ALU):
                pending += 2
                uops += len(ev[1])
            elif kind == _TILE:
                tiles = True
                marks.append((pending, uops))
            else:
                p, u = marks.pop()
                most_i, most_u = max(most_i, pending - p), max(most_u, uops - u)
        return (most_i if tiles else max(most_i, pending)), most_u

    def replay(self, rt: Runtime, bindings: dict[str, DeviceBuffer], budget: TileBudget) -> None:
        """Make the recorded calls on ``rt`` with the operands at ``bindings``; before each
        tile, a checkpoint for ``budget`` (``insns``, ``uops``), raised to what a tile that
        ran without a sync queued."""
        bases: dict[DramKey, int] = {}
        marks: list[tuple[int, int, int]] = []
        for ev in self.events:
            kind = ev[0]
            if kind == _LOAD:
                key = ev[3]
                if key not in bases:
                    bases[key] = bindings[key[0]].elem(key[1])
                rt.load(ev[1], ev[2], bases[key] + ev[4], ev[5], ev[6], ev[7], ev[8], ev[9],
                        ev[10], ev[11])
            elif kind == _GEMM:
                rt.gemm(ev[1], ev[2])
            elif kind == _ALU:
                rt.alu(ev[1], ev[2], ev[3])
            elif kind == _STORE:
                key = ev[2]
                if key not in bases:
                    bases[key] = bindings[key[0]].elem(key[1])
                rt.store(ev[1], bases[key] + ev[3], ev[4], ev[5], ev[6])
            elif kind == _TILE:
                rt.checkpoint(budget.insns, budget.uops)
                marks.append((rt.stats.syncs, rt.pending, rt.uop_pool_used))
            else:
                syncs, pending, uops = marks.pop()
                if rt.stats.syncs == syncs:
                    budget.insns = max(budget.insns, rt.pending - pending)
                    budget.uops = max(budget.uops, rt.uop_pool_used - uops)
