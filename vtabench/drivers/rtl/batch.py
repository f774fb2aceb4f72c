"""Many raw programs on the RTL at once: the regression's rtl runs (the ``batch`` of target rtl).

They go to the core bench (:func:`vtabench.targets.rtl.simjob.run_batch`, top ``vta_tb_top``):
one simulator process for the whole batch, the core reset between programs, with the bench's
DRAM knobs (latency, back-pressure, faults), coverage builds and mutation builds as options. The
platform device (:mod:`.device`) is one program per run through PCIe; the regression wants the
core, many programs, and those knobs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from vtabench.spec.config import Config
    from vtabench.spec.isa.insn import Insn


def run_batch(cfg: Config, programs: Sequence[tuple[str, Sequence[Insn], np.ndarray]], *,
              seed: int | None = None, **opts: Any) -> list[str | None]:
    """Run ``(name, instructions, image)`` programs (images updated in place); per program
    None or why the run did not complete (the core's error code, a timeout). ``opts`` go to
    the core bench (knobs, coverage, mutation, timeout_s...)."""
    from vtabench.targets.rtl.simjob import RawProgram
    from vtabench.targets.rtl.simjob import run_batch as run_on_bench

    raws = [RawProgram(name, insns, img) for name, insns, img in programs]
    problems: list[str | None] = []
    for r in run_on_bench(cfg, raws, seed=seed, quiet=True, **opts):
        problems.append(None if r.get("state") == "done" else
                        f"rtl: run ended in state {r.get('state')} (error code "
                        f"{r.get('error', 0):#x} at instruction {r.get('error_insn')})")
    return problems
