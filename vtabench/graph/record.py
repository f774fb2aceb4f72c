"""The recording device: a :class:`~vtabench.drivers.api.Device` that runs nothing.

Compiling a graph emits every VTA operator through a :class:`vtabench.runtime.Runtime` over this
device. Its allocator's high-water mark is the memory plan, the bytes written to it (packed
weights, biases, micro-op kernels) are the static image, and each program the runtime asks it to
run is kept as one program of the package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from vtabench.drivers.api import Device, DeviceError, RunResult
from vtabench.spec.isa.insn import INSN_BYTES

if TYPE_CHECKING:
    from vtabench.spec.config import Config

#: Address space the plan may use while compiling (the package's mem_bytes is sized afterwards).
PLAN_SPACE_BYTES = 1 << 33


class RecordingDevice(Device):
    """Keeps allocations (the memory plan), writes (the static image) and the programs that
    ``run`` is asked to start (removed from the writes: they are not part of the image)."""

    target = "record"

    def __init__(self, cfg: Config, mem_bytes: int = PLAN_SPACE_BYTES) -> None:
        super().__init__(cfg, mem_bytes)
        self.writes: list[tuple[int, np.ndarray]] = []
        self.runs: list[bytes] = []
        self.high = 0  # end of the highest allocation so far: the plan's size

    def alloc(self, nbytes: int, align: int = 64) -> int:
        addr = super().alloc(nbytes, align)
        self.high = max(self.high, addr + nbytes)
        return addr

    def _write(self, addr: int, data: np.ndarray) -> None:
        self.writes.append((int(addr), data.copy()))

    def _read(self, addr: int, nbytes: int) -> np.ndarray:
        raise DeviceError("the recording device cannot be read (compile time)")

    def _run(self, insn_addr: int, insn_count: int, timeout_s: float | None) -> RunResult:
        for i in range(len(self.writes) - 1, -1, -1):
            a, d = self.writes[i]
            if a == insn_addr and d.size == insn_count * INSN_BYTES:
                self.runs.append(d.tobytes())
                del self.writes[i]
                break
        else:
            raise DeviceError(f"run of a program that was not written (at {insn_addr:#x}, "
                              f"{insn_count} instructions)")
        return RunResult(insn_count, 0.0, {})

    def static_ranges(self) -> list[tuple[int, np.ndarray]]:
        """The writes merged into non-overlapping ranges (later writes win)."""
        if not self.writes:
            return []
        lo = min(a for a, _ in self.writes)
        hi = max(a + d.size for a, d in self.writes)
        img = np.zeros(hi - lo, np.uint8)
        mask = np.zeros(hi - lo, bool)
        for a, d in self.writes:
            img[a - lo:a - lo + d.size] = d
            mask[a - lo:a - lo + d.size] = True
        idx = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(np.int8), [0]])))
        return [(lo + int(s), img[s:e].copy()) for s, e in zip(idx[::2], idx[1::2], strict=True)]
