"""Many programs per launch on the OpenCL group kernel (``vta_batch`` of vta_group.cl).

Each program gets a window of device memory of its own: its DRAM image at the window's byte 0
(the program addresses DRAM from 0, as with :func:`~vtabench.drivers.api.run_program`), its
instructions after it, both 4 KiB aligned. The kernel runs one program per work-group; each of
the ``batch_groups`` work-groups keeps its on-chip buffers in a scratch slot of its own and takes
programs g, g + groups, ... Every program has its own control block, checked like a single run's.

Numpy and pyopencl only (this runs on the accelerator machine).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyopencl as cl

from vtabench.drivers.api import PAGE_BYTES, DeviceError, RunResult, mem_bytes_for
from vtabench.drivers.opencl.control import ctrl_stats, kernel_seconds
from vtabench.drivers.opencl.errors import cl_error
from vtabench.drivers.opencl.kernel import BATCH_KERNEL_NAME
from vtabench.spec.contracts import ocl_control as C

if TYPE_CHECKING:
    from vtabench.drivers.opencl.device import OpenCLDevice
    from vtabench.spec.program import Program

#: Words of a program's entry in the kernel's table: insn_count, insns_offset (16-byte units from
#: the window), window byte offset (low, high word).
ENTRY_WORDS = 4
SLOT_ALIGN = 256  # VTA_SLOT_BYTES in vta_group.cl: scratch bytes rounded up to this
#: Device memory of one batch launch at most; larger batches go in several launches.
BATCH_MAX_BYTES = 1 << 30


def slot_bytes(scratch_bytes: int) -> int:
    return -(-scratch_bytes // SLOT_ALIGN) * SLOT_ALIGN


def _align(n: int) -> int:
    return -(-max(n, 1) // PAGE_BYTES) * PAGE_BYTES


def run_batch(dev: OpenCLDevice, programs: Sequence[Program],
              timeout_s: float | None) -> list[RunResult | DeviceError]:
    """:meth:`~vtabench.drivers.opencl.device.OpenCLDevice.run_programs` on the group variant:
    launches of at most BATCH_MAX_BYTES of windows each."""
    codes = [np.frombuffer(p.encoded(dev.cfg), np.uint8) for p in programs]
    sizes = [mem_bytes_for(p.dram.size, c.size) for c, p in zip(codes, programs)]
    results: list[RunResult | DeviceError] = []
    start = 0
    while start < len(programs):
        end, total = start, 0
        while end < len(programs) and (end == start or total + sizes[end] <= BATCH_MAX_BYTES):
            total += sizes[end]
            end += 1
        results += _launch(dev, codes[start:end], [p.dram for p in programs[start:end]],
                           sizes[start:end], timeout_s)
        start = end
    return results


def _launch(dev: OpenCLDevice, codes: list[np.ndarray], drams: list[np.ndarray],
            sizes: list[int], timeout_s: float | None) -> list[RunResult | DeviceError]:
    n = len(codes)
    bases = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    image = np.zeros(int(bases[-1]), np.uint8)
    table = np.zeros((n, ENTRY_WORDS), np.uint32)
    ctrl = np.zeros((n, C.CTRL_WORDS), np.uint32)
    for k, (code, dram) in enumerate(zip(codes, drams)):
        base, insns = int(bases[k]), int(bases[k]) + _align(dram.size)
        image[base:base + dram.size] = dram.reshape(-1).view(np.uint8)
        image[insns:insns + code.size] = code
        table[k] = (code.size // 16, (insns - base) // 16, base & 0xFFFFFFFF, base >> 32)
        ctrl[k, C.CTRL_DRAM_LO] = sizes[k] & 0xFFFFFFFF
        ctrl[k, C.CTRL_DRAM_HI] = sizes[k] >> 32
    budget = dev.budget(timeout_s, n)
    ctrl[:, C.CTRL_BUDGET_LO] = budget & 0xFFFFFFFF
    ctrl[:, C.CTRL_BUDGET_HI] = budget >> 32
    groups = min(n, dev.batch_groups)
    slots = groups * slot_bytes(dev.scratch_bytes)
    what = f"batch of {n} programs"
    t0 = time.perf_counter()
    try:
        flags = cl.mem_flags
        mem = cl.Buffer(dev.context, flags.READ_WRITE | flags.COPY_HOST_PTR, hostbuf=image)
        table_buf = cl.Buffer(dev.context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=table)
        ctrl_buf = cl.Buffer(dev.context, flags.READ_WRITE | flags.COPY_HOST_PTR, hostbuf=ctrl)
        scratch = cl.Buffer(dev.context, flags.READ_WRITE, slots)
        kernel = cl.Kernel(dev.program, BATCH_KERNEL_NAME)
        kernel.set_args(np.uint32(n), table_buf, mem, ctrl_buf, scratch)
        evt = cl.enqueue_nd_range_kernel(dev.queue, kernel, (groups * dev.group_size,),
                                         (dev.group_size,))
        dev.queue.flush()
    except cl.Error as exc:
        raise cl_error(exc, f"launching a {what} ({image.size} bytes of memory, {slots} of "
                             f"scratch)") from None
    dev.wait(evt, what, timeout_s, t0)
    try:
        cl.enqueue_copy(dev.queue, image, mem, is_blocking=True)
        cl.enqueue_copy(dev.queue, ctrl, ctrl_buf, is_blocking=True)
    except cl.Error as exc:
        raise cl_error(exc, f"reading back the {what}") from None
    wall = time.perf_counter() - t0
    shared: dict[str, Any] = {"device": dev.name, "batch_programs": n,
                              "batch_kernel_s": kernel_seconds(evt), "batch_wall_s": wall}
    results: list[RunResult | DeviceError] = []
    for k, (code, dram) in enumerate(zip(codes, drams)):
        base = int(bases[k])
        dram.reshape(-1).view(np.uint8)[:] = image[base:base + dram.size]
        try:
            dev.check_status(ctrl[k], code.size // 16, timeout_s)
        except DeviceError as exc:
            results.append(exc)
            continue
        results.append(RunResult(code.size // 16, wall, {**shared, **ctrl_stats(ctrl[k])}))
    for buf in (mem, table_buf, ctrl_buf, scratch):
        buf.release()
    return results
