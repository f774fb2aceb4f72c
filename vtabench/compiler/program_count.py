"""The exact instruction count of one compiled operator's program.

:func:`program_instructions` emits the operator through a real
:class:`~vtabench.runtime.Runtime` over :class:`DiscardDevice` (a device that keeps nothing and
runs nothing), so the count includes what only the runtime decides: LOAD UOPs for kernels that
are not resident, token no-ops, FINISH. The compiler uses it to check a ragged tiling against the
best dividing one on the real program (:func:`vtabench.compiler.compile.compile_op`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from vtabench.drivers.api import Device, DeviceError, RunResult
from vtabench.runtime import Runtime

if TYPE_CHECKING:
    from vtabench.compiler.compile import CompiledOp


class DiscardDevice(Device):
    """Allocates (bookkeeping only), drops every write, runs nothing."""

    target = "discard"

    def _write(self, addr: int, data: np.ndarray) -> None:
        pass

    def _read(self, addr: int, nbytes: int) -> np.ndarray:
        raise DeviceError("the discarding device keeps nothing to read")

    def _run(self, insn_addr: int, insn_count: int, timeout_s: float | None) -> RunResult:
        return RunResult(insn_count, 0.0, {})


def program_instructions(op: CompiledOp) -> int:
    """Instructions of ``op``'s program run alone (one sync, FINISH included)."""
    rt = Runtime(DiscardDevice(op.cfg))
    bufs = {t.op.name: rt.alloc(int(np.prod([int(s) for s in t.shape]))
                                * np.dtype(str(t.dtype)).itemsize) for t in op.te.inputs}
    bufs["out"] = rt.alloc(int(np.prod(op.output_shape)))
    op.emit(rt, bufs)
    rt.sync()
    return rt.stats.insns
