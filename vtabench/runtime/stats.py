"""What a runtime has run: syncs, instructions, no-ops, micro-op traffic, the drivers' results."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vtabench.drivers.api import RunResult


@dataclass
class RuntimeStats:
    syncs: int = 0
    insns: int = 0  # instructions run, FINISH included
    noops: int = 0  # token-carrying no-ops inserted
    uop_loads: int = 0  # LOAD UOP instructions
    uop_uploads: int = 0  # distinct kernels copied to device memory
    auto_syncs: int = 0  # syncs forced by a full instruction buffer or micro-op pool
    run_results: list[RunResult] = field(default_factory=list)
    wall_s: float = 0.0

    def cycles(self) -> int | None:
        """Total device cycles of every run, if the target reports them."""
        total = 0
        for r in self.run_results:
            c = r.stats.get("cycles")
            if c is None:
                return None
            total += int(c)
        return total
