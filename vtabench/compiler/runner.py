"""Run compiled operators on any target through the runtime and the driver API.

:func:`run_ops` takes a list of :class:`OpJob` (operator spec, optional tiling, inputs, double
buffering) and returns, per job, the int8 output and statistics (instructions, device cycles
when the target counts them). On ``fsim`` and ``opencl`` it opens the device here; on ``rtl``
the whole list runs in one platform simulation (``run_in_simulator``: the driver runs in the
simulator's thread and the jobs are compiled there), so the simulator starts once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from vtabench.compiler.build import compile_op
from vtabench.compiler.ops import Conv2dSpec, DenseSpec
from vtabench.compiler.schedule import Tiling
from vtabench.runtime.stream import Runtime, open_device

if TYPE_CHECKING:
    from vtabench.config import Config


@dataclass
class OpJob:
    spec: Conv2dSpec | DenseSpec
    inputs: dict[str, np.ndarray]
    tiling: Tiling | None = None
    double_buffer: bool = True


@dataclass
class OpResult:
    out: np.ndarray
    insns: int
    cycles: int | None
    syncs: int
    tiling: Tiling
    stats: dict[str, Any] = field(default_factory=dict)


def _mem_bytes(jobs: list[OpJob]) -> int:
    total = 0
    for j in jobs:
        total += sum(a.nbytes for a in j.inputs.values()) * 2 + (1 << 16)
    total += 16 << 20
    return 1 << max(24, (total - 1).bit_length())


def run_jobs_on(dev: Any, jobs: list[OpJob]) -> list[OpResult]:
    """Run each job on an open device with a fresh runtime (one sync per job)."""
    cfg = dev.cfg
    results = []
    for j in jobs:
        op = compile_op(j.spec, cfg, tiling=j.tiling, double_buffer=j.double_buffer)
        rt = Runtime(dev, sync="batch")
        out = op.run(rt, j.inputs)
        stats = {}
        if rt.stats.run_results:
            stats = dict(rt.stats.run_results[-1].stats)
        results.append(OpResult(out, rt.stats.insns, rt.stats.cycles(), rt.stats.syncs, op.tiling,
                                {k: v for k, v in stats.items() if isinstance(v, (int, float))}))
        rt.close()
    return results


def _rtl_entry(cfg_name: str, jobs: list[OpJob], mem_bytes: int) -> list[OpResult]:
    from vtabench.config import load_config

    cfg = load_config(cfg_name)
    with open_device("rtl", cfg, mem_bytes) as dev:
        return run_jobs_on(dev, jobs)


def run_ops(target: str, cfg: Config, jobs: list[OpJob], **dev_opts: Any) -> list[OpResult]:
    mem = _mem_bytes(jobs)
    if target == "rtl":
        from vtabench.drivers.rtl_backend import run_in_simulator

        return run_in_simulator(cfg, _rtl_entry, (cfg.name, jobs, mem), **dev_opts)
    with open_device(target, cfg, mem) as dev:
        return run_jobs_on(dev, jobs)
