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

from vtabench.compiler.sink import TileBudget
from vtabench.drivers.api import Device, DeviceError, RunResult
from vtabench.runtime import Runtime
from vtabench.spec.isa.insn import INSN_BYTES

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


#: Room for any one operator's program: no checkpoint of the emission syncs early, so the
#: count is that of one program (and the emission needs no measured tile budget).
_INSNS = 1 << 20
_UOPS = 1 << 22


def program_instructions(op: CompiledOp) -> int:
    """Instructions of ``op``'s program run alone in one sync (FINISH included)."""
    sizes = [int(np.prod([int(s) for s in t.shape])) * np.dtype(str(t.dtype)).itemsize
             for t in op.te.inputs] + [int(np.prod(op.output_shape))]
    room = sum(sizes) + _INSNS * INSN_BYTES + _UOPS * op.cfg.uop_elem_bytes + (len(sizes) + 2) * 4096
    rt = Runtime(DiscardDevice(op.cfg, -(-room // 4096) * 4096), insn_capacity=_INSNS,
                 uop_pool_uops=_UOPS)
    bufs = {t.op.name: rt.alloc(n) for t, n in zip(op.te.inputs, sizes, strict=False)}
    bufs["out"] = rt.alloc(sizes[-1])
    op.emitter.emit(rt, bufs, budget=TileBudget(0, 0))
    rt.sync()
    return rt.stats.insns
