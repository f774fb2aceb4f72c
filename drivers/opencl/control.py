"""What a launch reports: the counters of a control block (ocl_control.json) and the time the
OpenCL profiler measured for the kernel."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyopencl as cl

from vtabench.spec.contracts import ocl_control as C


def kernel_seconds(evt: Any) -> float | None:
    """OpenCL profiling time of a completed kernel launch, when the queue profiles."""
    try:
        return float((evt.profile.end - evt.profile.start) * 1e-9)
    except cl.Error:
        return None


def ctrl_stats(ctrl: np.ndarray) -> dict[str, int]:
    """The counters of a control block."""
    return dict(
        executed=int(ctrl[C.CTRL_EXECUTED]), load_insns=int(ctrl[C.CTRL_N_LOAD]),
        compute_insns=int(ctrl[C.CTRL_N_COMPUTE]), store_insns=int(ctrl[C.CTRL_N_STORE]),
        gemm_uop_iters=int(ctrl[C.CTRL_GEMM_ITERS_LO]) | int(ctrl[C.CTRL_GEMM_ITERS_HI]) << 32,
        alu_uop_iters=int(ctrl[C.CTRL_ALU_ITERS_LO]) | int(ctrl[C.CTRL_ALU_ITERS_HI]) << 32,
        scheduler_passes=int(ctrl[C.CTRL_PASSES]),
        work_units=int(ctrl[C.CTRL_WORK_LO]) | int(ctrl[C.CTRL_WORK_HI]) << 32)



def exec_status_name(st: int) -> str:
    names = {cl.command_execution_status.QUEUED: "QUEUED",
             cl.command_execution_status.SUBMITTED: "SUBMITTED",
             cl.command_execution_status.RUNNING: "RUNNING",
             cl.command_execution_status.COMPLETE: "COMPLETE"}
    return "CL_" + names.get(st, str(st))

