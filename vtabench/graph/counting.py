"""A :class:`~vtabench.drivers.api.Device` that wraps an open device and counts what crosses
the host interface: writes, reads, bytes each way, runs (= syncs), the cycles each run reports
and the host time spent in runs."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from vtabench.drivers.api import Device, RunResult


@dataclass
class DriverCounts:
    writes: int = 0
    bytes_written: int = 0
    reads: int = 0
    bytes_read: int = 0
    syncs: int = 0
    cycles: int = 0
    has_cycles: bool = True  # every run so far reported cycles
    run_wall_s: float = 0.0

    def snapshot(self) -> DriverCounts:
        return DriverCounts(**asdict(self))

    def minus(self, o: DriverCounts) -> dict[str, Any]:
        """What was counted since snapshot ``o``."""
        return {k: getattr(self, k) - getattr(o, k) for k in
                ("writes", "bytes_written", "reads", "bytes_read", "syncs", "cycles",
                 "run_wall_s")}


class CountingDevice(Device):
    """Pass-through to ``dev`` (same configuration, memory and allocator) that counts.

    The wrapped device stays its opener's: closing the wrapper does not close it."""

    def __init__(self, dev: Device) -> None:
        super().__init__(dev.cfg, dev.mem_bytes)
        self.dev = dev
        self.target = dev.target
        self.allocator = dev.allocator  # one memory, one allocator
        self.counts = DriverCounts()

    @property
    def name(self) -> str:
        return self.dev.name

    def alloc(self, nbytes: int, align: int = 64) -> int:
        self._check_open()
        return self.dev.alloc(nbytes, align)

    def free(self, addr: int) -> None:
        self._check_open()
        self.dev.free(addr)

    def _write(self, addr: int, data: np.ndarray) -> None:
        self.counts.writes += 1
        self.counts.bytes_written += int(data.size)
        self.dev.write(addr, data)

    def _read(self, addr: int, nbytes: int) -> np.ndarray:
        self.counts.reads += 1
        self.counts.bytes_read += int(nbytes)
        return self.dev.read(addr, nbytes)

    def _run(self, insn_addr: int, insn_count: int, timeout_s: float | None) -> RunResult:
        r = self.dev.run(insn_addr, insn_count, timeout_s=timeout_s)
        self.counts.syncs += 1
        self.counts.run_wall_s += r.wall_s
        c = r.stats.get("cycles")
        if c is None:
            self.counts.has_cycles = False
        else:
            self.counts.cycles += int(c)
        return r
