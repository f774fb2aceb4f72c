"""On-chip memory layout: a fixed SRAM region per buffer, one copy per virtual thread.

Each on-chip buffer gets a fixed region of its SRAM, twice over when the schedule asks for two
virtual threads (``vta.virtual_threads`` = 2): successive allocations of a buffer alternate
between the copies, which is what lets the load of the next chunk or tile overlap the compute
and store of the current one. Elementwise epilogue stages are computed in place (their output
buffer shares the region of their first operand).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from vtabench.compiler.analysis import OperatorAnalysis
from vtabench.compiler.onchip import SCOPES, scope, tile_scalars
from vtabench.compiler.ops import CompileError

if TYPE_CHECKING:
    from vtabench.spec.config import Config


@dataclass(frozen=True)
class SramLayout:
    """``region``: root buffer name -> (first element, elements per copy) in its SRAM."""

    analysis: OperatorAnalysis
    region: dict[str, tuple[int, int]]

    @property
    def copies(self) -> int:
        return self.analysis.vthreads

    def placement(self) -> SramPlacement:
        """Fresh per-emission state: which copy each buffer's allocation uses."""
        return SramPlacement(self)


def plan_sram(cfg: Config, analysis: OperatorAnalysis) -> SramLayout:
    """Give every root buffer its region; a CompileError when an SRAM overflows."""
    depth = {"inp": cfg.inp_depth, "wgt": cfg.wgt_depth, "acc": cfg.acc_depth}
    used = {"inp": 0, "wgt": 0, "acc": 0}
    region: dict[str, tuple[int, int]] = {}
    parts: dict[str, list[str]] = {"inp": [], "wgt": [], "acc": []}
    copies = analysis.vthreads
    for name, buf in analysis.buffers.items():
        if analysis.root(name) != name:
            continue
        kind = SCOPES[scope(buf)]
        scal = 1
        for s in buf.shape:
            scal *= int(s)
        size = -(-scal // tile_scalars(cfg, kind))
        region[name] = (used[kind], size)
        used[kind] += size * copies
        parts[kind].append(f"{name} {size} x {copies}")
    for kind, n in used.items():
        if n > depth[kind]:
            raise CompileError(f"{kind} buffer overflow: {', '.join(parts[kind])} = "
                               f"{n} elements, the buffer holds {depth[kind]}")
    return SramLayout(analysis, region)


class SramPlacement:
    """The SRAM element where each allocated buffer starts, as one emission walks the blocks."""

    def __init__(self, layout: SramLayout) -> None:
        self._layout = layout
        self._count: dict[str, int] = {}  # allocations of each root buffer so far
        self._base: dict[str, int] = {}

    def allocate(self, names: list[str]) -> None:
        """A block allocates the buffers ``names``: each root buffer moves to its next copy,
        each in-place buffer follows its root."""
        root = self._layout.analysis.root
        for name in names:
            if root(name) == name:
                k = self._count.get(name, 0)
                self._count[name] = k + 1
                off, size = self._layout.region[name]
                self._base[name] = off + (k % self._layout.copies) * size
        for name in names:
            self._base[name] = self._base[root(name)]

    def base(self, name: str) -> int:
        return self._base[name]
