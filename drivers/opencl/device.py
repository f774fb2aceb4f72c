"""The OpenCL device of the driver API (target ``opencl``) and the target's batch function.

* Device memory is one OpenCL buffer (the arena, managed by the shared
  :class:`~vtabench.drivers.alloc.Allocator`); every kernel pointer argument is that buffer, so
  byte address = element index x element bytes, as in fsim's DRAM image. The on-chip buffers and
  a control block live in a second buffer (``scratch``), zeroed before every run (reset state:
  by the driver for the item variant, by the kernel for the group variant).
* Timeouts: a kernel cannot be interrupted from the host, so the host gives it a work budget
  (control-block word BUDGET: the timeout times ``budget_rate``, work units a compute unit does
  per second at the least) and the kernel stops itself, status TIMEOUT, before
  the first instruction the budget does not cover. Either way - that status, or the kernel still
  running ``OVERRUN_S`` after the timeout - :meth:`OpenCLDevice.run` raises
  :class:`~vtabench.drivers.api.RunTimeoutError` naming the instruction reached
  (docs/opencl-gpu.md "Timeouts").
* The group variant runs one program on many work-groups of a GPU (``vta_grid``: at most one
  per compute unit, so that all are resident and can wait for each other; the ``grid`` option)
  and many programs per launch (:meth:`OpenCLDevice.run_programs`,
  :mod:`vtabench.drivers.opencl.batch`); :func:`run_raw_batch` is the target's batch function in
  the driver table.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyopencl as cl

from vtabench.drivers.api import (DEFAULT_MEM_BYTES, PAGE_BYTES, Device, DeviceError, RunResult,
                                  RunTimeoutError, mem_bytes_for, run_program)
from vtabench.drivers.opencl.batch import run_batch
from vtabench.drivers.opencl.control import ctrl_stats, exec_status_name, kernel_seconds
from vtabench.drivers.opencl.errors import (KernelBuildError, KernelRunError, OpenCLError,
                                            cl_error, status_name)
from vtabench.drivers.opencl.kernel import (BATCH_KERNEL_NAME, ENV_BINARY, GRID_KERNEL_NAME,
                                            KERNEL_NAME, build_program, choose_variant,
                                            group_build_options, scratch_bytes)
from vtabench.drivers.opencl.platforms import context
from vtabench.spec.contracts import ocl_control as C
from vtabench.spec.contracts.errors import ErrorCode, describe
from vtabench.spec.contracts.stages import TokenQueue

if TYPE_CHECKING:
    from vtabench.spec.config import Config
    from vtabench.spec.program import Program

DEFAULT_TIMEOUT_S = 600.0
#: Work units (ocl_control.json) per second of timeout that the kernel's budget allows, per compute
#: unit (the ``budget_rate`` option overrides it): below the slowest path measured (docs/opencl-
#: gpu.md "Timeouts": PoCL 3.0 on 2 loaded cores 3.8e8 units/s, the H100 2.8e8), so that a budget
#: runs out before its timeout, while a real program stays far below it (ResNet-18 takes 2e9
#: units; the default 600 s allow 6e10). The item variant on a GPU is one work-item of a
#: streaming multiprocessor: 10 times less (the H100: 2.8e7).
BUDGET_RATE = 1e8
BUDGET_RATE_GPU_ITEM = 1e7
#: Seconds the host waits past a run's timeout for the kernel to report that its budget ran out;
#: after that it raises RunTimeoutError itself (the kernel then ends when its budget does).
OVERRUN_S = 1.0
#: Resident programs per compute unit in a batch launch (GPUs hide latency with several).
BATCH_GROUPS_PER_CU_GPU = 4


class OpenCLDevice(Device):
    """VTA on an OpenCL device. Options: ``platform``, ``device`` (name substrings), ``variant``
    ("group" or "item"; default by device type), ``binary`` (prebuilt program), ``source``
    (kernel path or text instead of the variant's file), ``isa_header`` (text instead of
    vta_isa.h), ``build_options``, ``group_size`` (work-items per group of the group variant),
    ``batch_groups`` (work-groups of a :meth:`run_programs` launch), ``budget_rate`` (work units
    a second of timeout allows: :data:`BUDGET_RATE`, :data:`BUDGET_RATE_GPU_ITEM`), ``grid``
    (work-groups of one run on the group variant: by default the compute units of an NVIDIA GPU,
    1 on other devices; at most the compute units) and ``grid_parts`` (parts each instruction is
    split into, a multiple of ``grid``; more than ``grid``: the split without the concurrency,
    for tests on a CPU)."""

    target = "opencl"

    def __init__(self, cfg: Config, mem_bytes: int = DEFAULT_MEM_BYTES, *,
                 platform: str | None = None, device: str | None = None,
                 variant: str | None = None,
                 binary: str | os.PathLike[str] | bytes | None = None,
                 source: str | os.PathLike[str] | None = None, isa_header: str | None = None,
                 build_options: str | list[str] = (), group_size: int | None = None,
                 batch_groups: int | None = None, budget_rate: float | None = None,
                 grid: int | None = None, grid_parts: int | None = None, **_: Any) -> None:
        super().__init__(cfg, mem_bytes)
        if binary is None and os.environ.get(ENV_BINARY):
            binary = os.environ[ENV_BINARY]
        self.platform, self.device, self.context = context(platform, device)
        opts = [build_options] if isinstance(build_options, str) else list(build_options)
        chosen = "item"  # a binary: its kernels say which variant it is (below)
        if binary is None:
            chosen = choose_variant(self.device, variant, opts)
            if chosen == "group":
                opts += group_build_options(self.device, cfg, group_size)
        try:
            self.program = build_program(self.context, self.device, cfg, source=source,
                                         binary=binary, options=opts, variant=chosen,
                                         isa_header=isa_header)
        except KernelBuildError:
            if "-DVTA_DP4A" not in opts:
                raise
            opts.remove("-DVTA_DP4A")  # a compiler without inline PTX: portable dot products
            self.program = build_program(self.context, self.device, cfg, source=source,
                                         binary=binary, options=opts, variant=chosen,
                                         isa_header=isa_header)
        self.build_options = opts
        where = self.name
        try:
            self.kernel = cl.Kernel(self.program, KERNEL_NAME)
            self.num_args = self.kernel.num_args
            # The variant of what was built: a source or binary of the group variant has
            # vta_batch beside vta_core, and declares its work-group size.
            self.variant = ("group" if BATCH_KERNEL_NAME in
                            self.program.get_info(cl.program_info.KERNEL_NAMES).split(";")
                            else "item")
            self.group_size = 1
            if self.variant == "group":
                self.group_size = int(self.kernel.get_work_group_info(
                    cl.kernel_work_group_info.COMPILE_WORK_GROUP_SIZE, self.device)[0])
            props = cl.command_queue_properties.PROFILING_ENABLE
            self.queue = cl.CommandQueue(self.context, self.device, properties=props)
            self.arena = cl.Buffer(self.context, cl.mem_flags.READ_WRITE, self.mem_bytes)
        except cl.Error as exc:
            raise cl_error(exc, f"setting up the kernel and memory on {where}") from None
        if self.num_args not in (8, 9):
            raise OpenCLError(f"kernel {KERNEL_NAME} on {where} takes {self.num_args} arguments; "
                              f"the VTA ABI has 8 (on-chip build) or 9 (scratch build)")
        self.onchip = self.num_args == 8
        self.scratch_bytes = 0 if self.onchip else scratch_bytes(cfg)
        gpu = bool(self.device.type & cl.device_type.GPU)
        self.budget_rate = float(budget_rate or (BUDGET_RATE_GPU_ITEM if gpu and
                                                 self.variant == "item" else BUDGET_RATE))
        self.batch_groups = batch_groups or self.device.max_compute_units * (
            BATCH_GROUPS_PER_CU_GPU if gpu else 1)
        self.grid, self.grid_parts = self._grid_shape(grid, grid_parts)
        self.grid_kernel: Any = None
        self.grid_buf: Any = None
        self.scratch = None
        self._pending: Any = None
        if not self.onchip:
            try:
                self.scratch = cl.Buffer(self.context, cl.mem_flags.READ_WRITE, self.scratch_bytes)
            except cl.Error as exc:
                raise cl_error(exc, f"allocating {self.scratch_bytes} bytes of scratch on "
                                f"{where}") from None
            self._probe()
            if self.grid_parts > 1:
                self._grid_setup()

    def _grid_shape(self, grid: int | None, parts: int | None) -> tuple[int, int]:
        """Work-groups and parts of a run on ``vta_grid`` (1, 1: ``vta_core``, one work-group).
        By default a grid of one work-group per compute unit where the kernel has a device-wide
        fence (NVIDIA's inline PTX, which comes with -DVTA_DP4A: its OpenCL mem_fence orders a
        work-group only), else one work-group."""
        if self.variant != "group" or self.onchip:
            if (grid or 1) > 1 or (parts or 1) > 1:
                raise OpenCLError(f"grid= and grid_parts= need the group variant, not "
                                  f"{self.variant}")
            return 1, 1
        cus = int(self.device.max_compute_units)
        groups = grid or (cus if "-DVTA_DP4A" in self.build_options else 1)
        if not 1 <= groups <= cus:
            raise OpenCLError(f"grid must be 1 to {cus} (the compute units of {self.name}: all "
                              f"its work-groups must be resident at once), got {groups}")
        parts = parts or groups
        if parts < groups or parts % groups:
            raise OpenCLError(f"grid_parts must be a multiple of grid ({groups}), got {parts}")
        return groups, parts

    def _grid_setup(self) -> None:
        """The grid kernel and its words: the arrival count, part 0's error and, when the
        micro-op buffer is not in local memory, one micro-op buffer per work-group."""
        uop = 0 if "-DVTA_LOCAL_UOP" in self.build_options else \
            self.cfg.uop_depth * self.cfg.uop_elem_bytes
        try:
            self.grid_kernel = cl.Kernel(self.program, GRID_KERNEL_NAME)
            self.grid_buf = cl.Buffer(self.context, cl.mem_flags.READ_WRITE,
                                      C.CTRL_BYTES + self.grid * uop)
        except cl.Error as exc:
            raise cl_error(exc, f"setting up the grid of {self.grid} work-groups on "
                                f"{self.name}") from None

    @property
    def name(self) -> str:
        return f"{self.device.name.strip()} ({self.platform.name.strip()})"

    def info(self) -> dict[str, str]:
        d = self.device
        kernel = self.variant if self.variant == "item" else \
            f"group ({self.group_size} work-items)" if self.grid_parts == 1 else \
            f"grid ({self.grid} x {self.group_size} work-items, {self.grid_parts} parts)"
        return {"platform": self.platform.name.strip(), "platform_version": self.platform.version,
                "device": d.name.strip(), "device_version": d.version,
                "driver_version": d.driver_version,
                "opencl_c_version": getattr(d, "opencl_c_version", "?"), "kernel": kernel}

    # -- memory ----------------------------------------------------------------------------
    def _write(self, addr: int, data: np.ndarray) -> None:
        if data.size == 0:
            return
        self._wait_pending()
        try:
            cl.enqueue_copy(self.queue, self.arena, np.ascontiguousarray(data), dst_offset=addr,
                            is_blocking=True)
        except cl.Error as exc:
            raise cl_error(exc, f"writing {data.size} bytes at {addr:#x}") from None

    def _read(self, addr: int, nbytes: int) -> np.ndarray:
        out = np.empty(nbytes, np.uint8)
        if nbytes == 0:
            return out
        self._wait_pending()
        try:
            cl.enqueue_copy(self.queue, out, self.arena, src_offset=addr, is_blocking=True)
        except cl.Error as exc:
            raise cl_error(exc, f"reading {nbytes} bytes at {addr:#x}") from None
        return out

    # -- running ---------------------------------------------------------------------------
    def _set_args(self, insn_count: int, insns_offset: int, grid: bool = False) -> None:
        args: list[Any] = [np.uint32(insn_count), np.uint32(insns_offset)] + [self.arena] * 6
        if not self.onchip:
            args.append(self.scratch)
        if grid:
            self.grid_kernel.set_args(*args, self.grid_buf, np.uint32(self.grid_parts))
        else:
            self.kernel.set_args(*args)

    def budget(self, timeout_s: float | None, programs: int = 1) -> int:
        """The work budget of a run with this timeout: ``budget_rate`` units per second. Of a
        launch of ``programs`` programs, each one's share: the work-groups run one program
        after the other, ``batch_groups`` (at most one per program) side by side."""
        timeout = DEFAULT_TIMEOUT_S if timeout_s is None else max(float(timeout_s), 0.0)
        rounds = -(-programs // max(1, min(programs, self.batch_groups)))
        return min(int(timeout * self.budget_rate) // rounds, (1 << 64) - 1)

    def _reset_ctrl(self, budget: int = 0) -> None:
        ctrl = np.zeros(C.CTRL_WORDS, np.uint32)
        ctrl[C.CTRL_DRAM_LO] = self.mem_bytes & 0xFFFFFFFF
        ctrl[C.CTRL_DRAM_HI] = self.mem_bytes >> 32
        ctrl[C.CTRL_BUDGET_LO] = budget & 0xFFFFFFFF
        ctrl[C.CTRL_BUDGET_HI] = budget >> 32
        cl.enqueue_copy(self.queue, self.scratch, ctrl, is_blocking=True)

    def _read_ctrl(self) -> np.ndarray:
        ctrl = np.empty(C.CTRL_WORDS, np.uint32)
        cl.enqueue_copy(self.queue, ctrl, self.scratch, is_blocking=True)
        return ctrl

    def _probe(self) -> None:
        """Run the kernel with no instructions: it reports its build's configuration ID, scratch
        size and ABI version, which must match this driver's (a prebuilt binary for another
        configuration is refused here)."""
        try:
            self._reset_ctrl()
            self._set_args(0, 0)
            cl.enqueue_nd_range_kernel(self.queue, self.kernel, (self.group_size,),
                                       (self.group_size,)).wait()
            ctrl = self._read_ctrl()
        except cl.Error as exc:
            raise cl_error(exc, f"probing the kernel on {self.name}") from None
        got = (int(ctrl[C.CTRL_CONFIG_ID]), int(ctrl[C.CTRL_SCRATCH_BYTES]),
               int(ctrl[C.CTRL_ABI_VERSION]))
        want = (self.cfg.config_id, self.scratch_bytes, C.ABI_VERSION)
        if got != want:
            raise OpenCLError(f"kernel on {self.name} does not match configuration "
                              f"{self.cfg.name}: it reports config ID {got[0]:#010x}, scratch "
                              f"{got[1]} bytes, ABI {got[2]}; expected {want[0]:#010x}, "
                              f"{want[1]}, {want[2]} (a binary built for another configuration?)")

    def _wait_pending(self) -> None:
        """After a timed-out run the kernel may still be running (until its budget runs out):
        commands queue behind it. Polled, so that Ctrl-C still works."""
        if self._pending is not None:
            while self._pending.command_execution_status > 0:  # queued, submitted, running
                time.sleep(5e-3)
            self._pending = None

    def _run(self, insn_addr: int, insn_count: int, timeout_s: float | None) -> RunResult:
        self._wait_pending()
        t0 = time.perf_counter()
        try:
            if not self.onchip:
                self._reset_ctrl(self.budget(timeout_s))
                if self.variant == "item":  # the group variant zeroes its buffers itself
                    cl.enqueue_fill_buffer(self.queue, self.scratch, np.uint8(0), C.CTRL_BYTES,
                                           self.scratch_bytes - C.CTRL_BYTES)
            grid = self.grid_kernel is not None
            self._set_args(insn_count, insn_addr // 16, grid)
            if grid:
                cl.enqueue_fill_buffer(self.queue, self.grid_buf, np.uint32(0), 0, C.CTRL_BYTES)
                evt = cl.enqueue_nd_range_kernel(self.queue, self.grid_kernel,
                                                 (self.grid * self.group_size,),
                                                 (self.group_size,))
            else:
                evt = cl.enqueue_nd_range_kernel(self.queue, self.kernel, (self.group_size,),
                                                 (self.group_size,))
            self.queue.flush()
        except cl.Error as exc:
            raise cl_error(exc, f"launching {insn_count} instructions on {self.name}") from None
        self.wait(evt, f"run of {insn_count} instructions at {insn_addr:#x}", timeout_s, t0)
        wall = time.perf_counter() - t0
        stats: dict[str, Any] = {"device": self.name, "kernel_s": kernel_seconds(evt),
                                 "wall_s": wall}
        if not self.onchip:
            try:
                ctrl = self._read_ctrl()
            except cl.Error as exc:
                raise cl_error(exc, f"reading the run status on {self.name}") from None
            self.check_status(ctrl, insn_count, timeout_s)
            stats.update(ctrl_stats(ctrl))
            if grid:
                stats["grid_waits"] = self._grid_waits()
        return RunResult(insn_count, wall, stats)

    def _grid_waits(self) -> int:
        """How often the work-groups of the last grid run waited for each other."""
        count = np.empty(1, np.uint32)
        try:
            cl.enqueue_copy(self.queue, count, self.grid_buf, is_blocking=True)
        except cl.Error as exc:
            raise cl_error(exc, f"reading the grid's count on {self.name}") from None
        return int(count[0]) // self.grid

    def wait(self, evt: Any, what: str, timeout_s: float | None, t0: float) -> None:
        """Poll a launched kernel until it completes (a kernel whose budget ran out completes
        too); past ``timeout_s`` + ``OVERRUN_S`` seconds from ``t0`` a :class:`RunTimeoutError`
        (the kernel keeps running until its budget runs out: later commands queue behind it)."""
        timeout = DEFAULT_TIMEOUT_S if timeout_s is None else float(timeout_s)
        deadline = t0 + timeout + OVERRUN_S
        pause = 20e-6
        while True:
            try:
                st = evt.command_execution_status
            except cl.Error as exc:
                raise cl_error(exc, f"polling the {what} on {self.name}") from None
            if st == cl.command_execution_status.COMPLETE:
                return
            if st < 0:
                raise OpenCLError(f"{what} on {self.name} failed: {status_name(st)}",
                                  status_name(st))
            if time.perf_counter() >= deadline:
                self._pending = evt
                raise RunTimeoutError(
                    f"{what} on {self.name} did not finish within {timeout:g} s (the kernel is "
                    f"still running {OVERRUN_S:g} s later, slower than its work budget assumes: "
                    f"it ends when the budget runs out)", timeout,
                    {"execution_status": exec_status_name(st)})
            time.sleep(pause)
            pause = min(pause * 2, 5e-3)

    def run_programs(self, programs: Sequence[Program],
                     timeout_s: float | None = None) -> list[RunResult | DeviceError]:
        """Run independent programs, each with its DRAM image at address 0 of a device memory of
        its own (as :func:`~vtabench.drivers.api.run_program` does; placement and DRAM knobs are
        a core bench's); every program's ``dram`` is updated in place. Returns, per program, its
        :class:`RunResult` or the :class:`DeviceError` it stopped with (a kernel error code; a
        timeout or an OpenCL failure of the whole launch raises). The group variant runs one
        program per work-group, all in one launch (a few for very large batches); the item
        variant runs them one after the other."""
        if self.variant == "group" and not self.onchip:
            return run_batch(self, programs, timeout_s)
        results: list[RunResult | DeviceError] = []
        for p in programs:
            try:
                results.append(run_program(self, p.encoded(self.cfg), p.dram, timeout_s))
            except KernelRunError as exc:
                results.append(exc)
        return results

    def check_status(self, ctrl: np.ndarray, insn_count: int,
                     timeout_s: float | None = None) -> None:
        """Raise the error a control block reports (nothing when it reports a clean end): a
        :class:`KernelRunError`, or :class:`RunTimeoutError` when the budget ran out."""
        status, code = int(ctrl[C.CTRL_STATUS]), int(ctrl[C.CTRL_ERROR])
        index, arg = int(ctrl[C.CTRL_ERROR_INDEX]), int(ctrl[C.CTRL_ERROR_ARG])
        if status == C.STATUS_DONE and code == ErrorCode.NONE:
            return
        if status == C.STATUS_TIMEOUT:
            timeout = DEFAULT_TIMEOUT_S if timeout_s is None else float(timeout_s)
            stats = ctrl_stats(ctrl)
            budget = int(ctrl[C.CTRL_BUDGET_LO]) | int(ctrl[C.CTRL_BUDGET_HI]) << 32
            raise RunTimeoutError(
                f"run on {self.name} stopped before instruction {index}: the work budget of its "
                f"{timeout:g} s timeout ({budget} units, {self.budget_rate:.0e} a second) ran out "
                f"({stats['executed']} executed, {stats['work_units']} units spent)",
                timeout, {"insn_index": index, **stats})
        if status == C.STATUS_PENDING:
            raise DeviceError(f"kernel on {self.name} completed without reporting a status "
                              f"(status word 0): the scratch buffer or the kernel is broken")
        if code == ErrorCode.DEADLOCK:
            push = arg >= C.ERROR_ARG_PUSH
            q = arg - C.ERROR_ARG_PUSH if push else arg
            queue = TokenQueue(q).name.lower() if q < len(TokenQueue) else "?"
            how = "room in" if push else "a token in"
            detail = f"instruction {index} waits forever for {how} token queue {queue}"
        elif code == ErrorCode.FINISH and index == insn_count:
            detail = f"the stream ({insn_count} instructions) ends without FINISH"
        else:
            detail = f"instruction {index} (value {arg})"
        raise KernelRunError(f"kernel on {self.name} stopped: {describe(code)}: {detail}", code,
                             index, arg)

    def _close(self) -> None:
        try:
            self._wait_pending()
            self.queue.finish()
        except cl.Error:
            pass
        for buf in (self.arena, self.scratch, self.grid_buf):
            if buf is not None:
                try:
                    buf.release()
                except cl.Error:
                    pass

    def binary(self) -> bytes:
        """The device binary of the built program (load it later with ``binary=``)."""
        return bytes(self.program.get_info(cl.program_info.BINARIES)[0])


def run_raw_batch(cfg: Config, programs: Sequence[Program], *, seed: int | None = None,
                  **opts: Any) -> list[str | None]:
    """The opencl target's batch function of the driver API (:func:`~vtabench.drivers.api.
    run_programs`): one device, every program in one launch on the group variant (one after
    another on the item variant); per program None or why it did not complete. ``timeout_s``
    applies to the launch; ``seed`` and ``waves`` mean nothing here."""
    timeout_s = opts.pop("timeout_s", None)
    opts.pop("waves", None)
    mem = max((mem_bytes_for(p.dram.size, 16 * p.count) for p in programs), default=PAGE_BYTES)
    try:
        with OpenCLDevice(cfg, mem, **opts) as dev:
            results = dev.run_programs(programs, timeout_s)
    except DeviceError as exc:
        return [f"opencl: {exc}"] * len(programs)
    return [f"opencl: {r}" if isinstance(r, DeviceError) else None for r in results]
