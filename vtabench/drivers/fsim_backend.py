"""fsim backend of the driver API: device memory is a numpy array, a run is the golden model.

The instruction stream is decoded from device memory (exactly the bytes a hardware target would
fetch) and :class:`vtabench.fsim.Fsim` runs it over the whole memory image, which it validates
first (a malformed program raises ``vtabench.spec.validate.ValidationError``).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from vtabench.drivers.api import DEFAULT_MEM_BYTES, Device, RunResult

if TYPE_CHECKING:
    from vtabench.spec.config import Config


class FsimDevice(Device):
    target = "fsim"

    def __init__(self, cfg: Config, mem_bytes: int = DEFAULT_MEM_BYTES, **_: Any) -> None:
        super().__init__(cfg, mem_bytes)
        self.mem = np.zeros(self.mem_bytes, dtype=np.uint8)

    @property
    def name(self) -> str:
        return f"fsim ({self.cfg.name})"

    def _write(self, addr: int, data: np.ndarray) -> None:
        self.mem[addr:addr + data.size] = data

    def _read(self, addr: int, nbytes: int) -> np.ndarray:
        return self.mem[addr:addr + nbytes].copy()

    def _run(self, insn_addr: int, insn_count: int, timeout_s: float | None) -> RunResult:
        from vtabench.fsim import Fsim
        from vtabench.spec.isa.insn import decode_program

        insns = decode_program(self.cfg, self.mem[insn_addr:insn_addr + 16 * insn_count].tobytes())
        t0 = time.perf_counter()
        stats = Fsim(self.cfg).run(insns, self.mem)
        return RunResult(insn_count, time.perf_counter() - t0, stats.as_dict())
