"""fsim backend of the driver API: device memory is a numpy array, a run is the golden model.

The instruction stream is decoded from device memory (exactly the bytes a hardware target would
fetch) and :class:`vtabench.fsim.Fsim` runs it over the whole memory image, which it validates
first (a malformed program raises ``vtabench.spec.validate.ValidationError``).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from vtabench.drivers.api import (DEFAULT_MEM_BYTES, Device, DeviceError, RunResult,
                                  RunTimeoutError)

if TYPE_CHECKING:
    from vtabench.spec.config import Config


class FsimDevice(Device):
    target = "fsim"

    def __init__(self, cfg: Config, mem_bytes: int = DEFAULT_MEM_BYTES, **_: Any) -> None:
        super().__init__(cfg, mem_bytes)
        try:
            self.mem = np.zeros(self.mem_bytes, dtype=np.uint8)
        except MemoryError:
            raise DeviceError(f"fsim cannot allocate {self.mem_bytes} bytes of device memory on "
                              f"this host") from None

    @property
    def name(self) -> str:
        return f"fsim ({self.cfg.name})"

    def _write(self, addr: int, data: np.ndarray) -> None:
        self.mem[addr:addr + data.size] = data

    def _read(self, addr: int, nbytes: int) -> np.ndarray:
        return self.mem[addr:addr + nbytes].copy()

    def _run(self, insn_addr: int, insn_count: int, timeout_s: float | None) -> RunResult:
        from vtabench.fsim import Fsim
        from vtabench.fsim.core import FsimBudgetError
        from vtabench.spec.isa.insn import decode_program

        insns = decode_program(self.cfg, self.mem[insn_addr:insn_addr + 16 * insn_count].tobytes())
        t0 = time.perf_counter()
        try:
            stats = Fsim(self.cfg).run(insns, self.mem, timeout_s=timeout_s)
        except FsimBudgetError as exc:
            raise RunTimeoutError(str(exc), timeout_s or 0.0, {"insn_index": exc.index}) from None
        return RunResult(insn_count, time.perf_counter() - t0, stats.as_dict())
