"""What the emitter queues instructions on: a :class:`~vtabench.runtime.Runtime`, or a
:class:`CountingSink` when it measures what one tile queues."""

from __future__ import annotations

from typing import Any, Protocol

from vtabench.runtime import RuntimeStats, UopKernel
from vtabench.spec.isa.layout import AluOp, MemType


class InstructionSink(Protocol):
    """The part of the runtime's interface the emitter uses."""

    stats: RuntimeStats

    @property
    def pending(self) -> int: ...

    @property
    def uop_pool_used(self) -> int: ...

    def checkpoint(self, insns_needed: int = 0, uops_needed: int = 0) -> None: ...

    def layer_end(self) -> None: ...

    def load(self, mem: MemType, sram_base: int, dram_base: int, y_size: int, x_size: int,
             x_stride: int, y_pad_0: int = 0, y_pad_1: int = 0, x_pad_0: int = 0,
             x_pad_1: int = 0) -> Any: ...

    def store(self, sram_base: int, dram_base: int, y_size: int, x_size: int,
              x_stride: int) -> Any: ...

    def gemm(self, kernel: UopKernel, reset: bool = False) -> Any: ...

    def alu(self, kernel: UopKernel, op: AluOp, imm: int | None = None) -> Any: ...


class CountingSink:
    """Counts what an emission would queue: instructions (a GEMM or ALU counts with, at most,
    its LOAD UOP), micro-ops and tiles (the emitter checkpoints once before each tile). It never
    syncs."""

    def __init__(self) -> None:
        self.stats = RuntimeStats()
        self.pending = 0
        self.uop_pool_used = 0
        self.tiles = 0

    def checkpoint(self, insns_needed: int = 0, uops_needed: int = 0) -> None:
        self.tiles += 1

    def layer_end(self) -> None:
        pass

    def load(self, mem: MemType, sram_base: int, dram_base: int, y_size: int, x_size: int,
             x_stride: int, y_pad_0: int = 0, y_pad_1: int = 0, x_pad_0: int = 0,
             x_pad_1: int = 0) -> None:
        self.pending += 1

    def store(self, sram_base: int, dram_base: int, y_size: int, x_size: int,
              x_stride: int) -> None:
        self.pending += 1

    def gemm(self, kernel: UopKernel, reset: bool = False) -> None:
        self.pending += 2
        self.uop_pool_used += len(kernel)

    def alu(self, kernel: UopKernel, op: AluOp, imm: int | None = None) -> None:
        self.pending += 2
        self.uop_pool_used += len(kernel)
