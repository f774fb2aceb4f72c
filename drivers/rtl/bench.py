"""The rtl target's core bench in the driver API: many programs in one simulator process.

The core bench (top ``vta_tb_top``, :func:`vtabench.rtl.simjob.run_batch`) runs programs with
their :class:`~vtabench.spec.program.Placement`, DRAM model knobs and cycle bounds, resetting the
core between them; it builds coverage and mutant simulators too. The target table names
:func:`run_bench` as the rtl target's ``bench``; callers reach it through
:func:`vtabench.drivers.api.run_on_bench`, never through the target's modules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from vtabench.drivers.api import DeviceError
from vtabench.rtl.simjob import RtlRunError, run_batch

if TYPE_CHECKING:
    from vtabench.spec.config import Config
    from vtabench.spec.program import Program


class BenchError(DeviceError):
    """The core bench gave no results (the simulator crashed or did not build); the message
    names the cause and where the simulator's log is kept."""


def run_bench(cfg: Config, programs: Sequence[Program], *, seed: int | None = None,
              **opts: Any) -> list[dict[str, Any]]:
    """Run ``programs`` on the core bench; one result dict per program (``state``: done,
    error, timeout, wall-timeout; ``error``, ``error_insn``, cycles, the DRAM model's counters),
    each program's image updated in place. ``opts``: those of
    :func:`~vtabench.rtl.simjob.run_batch` (waves, coverage, mutation, knobs, validate...)."""
    try:
        return run_batch(cfg, programs, seed=seed, **opts)
    except RtlRunError as exc:
        raise BenchError(str(exc)) from None
