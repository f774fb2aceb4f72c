"""OpenCL backend of the driver API: the VTA kernel of opencl on any OpenCL device.

* Two kernel variants (docs/opencl.md): ``group`` (opencl/vta_group.cl, one work-group per
  program, for GPUs and CPUs) and ``item`` (vta.cl, one work-item, upstream's FPGA ABI). The
  device type picks one (GPU, CPU: group; accelerators: item); ``variant=`` /
  ``VTA_OPENCL_VARIANT`` override it. The group variant also runs many programs per launch
  (:meth:`OpenCLDevice.run_programs`).

* Platform and device are chosen by case-insensitive name substring: the ``platform=`` /
  ``device=`` options, else the environment variables ``VTA_OPENCL_PLATFORM`` /
  ``VTA_OPENCL_DEVICE``, else the first platform that has a device. Nothing matching is an
  :class:`OpenCLError` that lists every platform and device there is.
* The kernel is built from source (the variant's file with the configuration's generated header,
  the contracts header opencl/gen/vta_contracts.h and the shared vta_isa.h prepended) or loaded
  from a prebuilt binary (``binary=PATH`` or ``VTA_OPENCL_BINARY``; see docs/opencl.md for aoc /
  v++). A build failure is a :class:`KernelBuildError` carrying the build log.
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
  :class:`RunTimeoutError` naming the instruction reached (docs/opencl-gpu.md "Timeouts"). OpenCL
  failures carry the status name (``CL_OUT_OF_RESOURCES`` ...).

This module imports numpy, pyopencl and numpy-only parts of vtabench (it is what runs on the
accelerator machine, where nothing else is installed). ``run_raw`` serves
``vtabench exec --target opencl``.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyopencl as cl

from vtabench.drivers.api import (DEFAULT_MEM_BYTES, Device, DeviceError, RunResult,
                                  RunTimeoutError, mem_bytes_for, run_program)
from vtabench.sources import OPENCL_DIR
from vtabench.spec.contracts import ocl_control as C
from vtabench.spec.contracts.errors import ErrorCode, describe
from vtabench.spec.contracts.stages import TokenQueue

if TYPE_CHECKING:
    from vtabench.spec.config import Config
    from vtabench.spec.isa.insn import Insn

    #: A raw program: its encoded instruction stream, or instructions to encode.
    Program = bytes | np.ndarray | Sequence[Insn]

KERNEL_DIR = OPENCL_DIR
KERNEL_PATH = KERNEL_DIR / "vta.cl"  # the item variant (upstream's FPGA ABI)
GROUP_KERNEL_PATH = KERNEL_DIR / "vta_group.cl"  # the group variant (GPUs, CPUs)
ISA_HEADER = KERNEL_DIR / "vta_isa.h"  # what both share
KERNEL_NAME = "vta_core"
BATCH_KERNEL_NAME = "vta_batch"  # group variant only: one program per work-group
VARIANTS = ("group", "item")
ENV_PLATFORM = "VTA_OPENCL_PLATFORM"
ENV_DEVICE = "VTA_OPENCL_DEVICE"
ENV_BINARY = "VTA_OPENCL_BINARY"
ENV_VARIANT = "VTA_OPENCL_VARIANT"
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
#: Work-items per work-group of the group variant by device type. One program runs on one
#: compute unit, so a GPU's group is as large as it can be (latency hiding: on the H100, ResNet-18
#: takes 63 ms with 256, 35 ms with 1024). PoCL 3.0 crashes at 256; 64 is as fast there.
GROUP_SIZE_GPU = 1024
GROUP_SIZE_CPU = 64
#: Resident programs per compute unit in a batch launch (GPUs hide latency with several).
BATCH_GROUPS_PER_CU_GPU = 4
#: Device memory of one batch launch at most; larger batches go in several launches.
BATCH_MAX_BYTES = 1 << 30


class OpenCLError(DeviceError):
    """An OpenCL call failed; ``status`` is the OpenCL status name (``CL_...``) when known."""

    def __init__(self, message: str, status: str | None = None) -> None:
        super().__init__(message)
        self.status = status


class KernelBuildError(OpenCLError):
    """The kernel did not build; ``log`` is the compiler's build log."""

    def __init__(self, message: str, log: str) -> None:
        super().__init__(message, "CL_BUILD_PROGRAM_FAILURE")
        self.log = log


class KernelRunError(DeviceError):
    """The kernel stopped on a program error; ``code``, ``index`` (instruction), ``arg``."""

    def __init__(self, message: str, code: int, index: int, arg: int) -> None:
        super().__init__(message)
        self.code = code
        self.index = index
        self.arg = arg


def status_name(code: int) -> str:
    try:
        return "CL_" + cl.status_code.to_string(code)
    except Exception:  # noqa: BLE001 - an unknown code is still worth printing
        return f"CL status {code}"


def _cl_error(exc: cl.Error, what: str) -> OpenCLError:
    """An OpenCLError naming the failed step, the OpenCL status name and the routine."""
    code = getattr(exc, "code", None)
    name = status_name(code) if isinstance(code, int) else None
    routine = getattr(exc, "routine", "") or ""
    detail = ""
    record = exc.args[0] if exc.args else None
    if record is not None and callable(getattr(record, "what", None)):
        detail = str(record.what() or "").strip()
    elif record is not None:
        detail = str(record).strip()
    msg = f"{what} failed: {name or type(exc).__name__}"
    if routine:
        msg += f" (in {routine})"
    if detail and detail not in (name, (name or "")[3:]):
        msg += f": {detail}"
    return OpenCLError(msg, name)


# ---------------------------------------------------------------------------------------------
# Platform and device selection
# ---------------------------------------------------------------------------------------------

def _platforms() -> list[Any]:
    try:
        return list(cl.get_platforms())
    except cl.Error as exc:  # e.g. CL_PLATFORM_NOT_FOUND_KHR: the ICD loader found nothing
        code = getattr(exc, "code", None)
        vendors = os.environ.get("OCL_ICD_VENDORS", "/etc/OpenCL/vendors")
        raise OpenCLError(f"no OpenCL platform is installed ({status_name(code) if code else exc});"
                          f" the ICD loader looked in OCL_ICD_VENDORS={vendors}",
                          status_name(code) if isinstance(code, int) else None) from None


def _devices(platform: Any) -> list[Any]:
    try:
        return list(platform.get_devices())
    except cl.Error:
        return []


def available() -> list[tuple[str, list[str]]]:
    """(platform name, [device names]) of everything the ICD loader sees."""
    return [(p.name.strip(), [d.name.strip() for d in _devices(p)]) for p in _platforms()]


def describe_available() -> str:
    try:
        found = available()
    except OpenCLError as exc:
        return str(exc)
    if not found:
        return "no OpenCL platforms"
    return "; ".join(f"platform {p!r} (devices: {', '.join(repr(d) for d in ds) or 'none'})"
                     for p, ds in found)


def select_device(platform: str | None = None, device: str | None = None) -> tuple[Any, Any]:
    """The (platform, device) whose names contain the given substrings (case-insensitive)."""
    platform = platform if platform is not None else os.environ.get(ENV_PLATFORM) or None
    device = device if device is not None else os.environ.get(ENV_DEVICE) or None
    plats = _platforms()
    if platform:
        plats = [p for p in plats if platform.lower() in p.name.lower()]
    candidates = [(p, d) for p in plats for d in _devices(p)
                  if not device or device.lower() in d.name.strip().lower()]
    if not candidates:
        wanted = " and ".join(x for x in (f"platform {platform!r}" if platform else "",
                                           f"device {device!r}" if device else "") if x)
        raise OpenCLError(f"no OpenCL device matches {wanted or 'any platform'}; available: "
                          f"{describe_available()} (choose with --platform/--device or "
                          f"{ENV_PLATFORM}/{ENV_DEVICE}, a case-insensitive name substring)")
    return candidates[0]


# ---------------------------------------------------------------------------------------------
# Kernel source and program build
# ---------------------------------------------------------------------------------------------

def kernel_source(cfg: Config, source: str | os.PathLike[str] | None = None,
                  variant: str = "group", isa_header: str | None = None) -> str:
    """The kernel text: the configuration's generated header, the contracts header and vta_isa.h
    (or the text ``isa_header``), then the variant's file or ``source`` (a path or the text of
    another kernel: tests use it for a kernel that does not build, mutation runs for mutants)."""
    from vtabench.hwgen.constants import c_header
    from vtabench.hwgen.contracts import C_HEADER

    if source is None:
        path = GROUP_KERNEL_PATH if variant == "group" else KERNEL_PATH
        body, name = path.read_text(), path.name
    elif isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source
                                             and Path(source).exists()):
        body, name = Path(source).read_text(), Path(source).name
    else:
        body, name = str(source), "<source>"
    isa = ISA_HEADER.read_text() if isa_header is None else isa_header
    return (f'{c_header(cfg)}\n{C_HEADER.read_text()}\n#line 1 "{ISA_HEADER.name}"\n{isa}\n'
            f'#line 1 "{name}"\n{body}')


def choose_variant(dev: Any, variant: str | None, options: list[str]) -> str:
    """The kernel variant to build: ``variant``, else $VTA_OPENCL_VARIANT, else by device type
    (GPU and CPU: group; accelerators such as FPGAs: item). -DVTA_ONCHIP is an item build."""
    variant = variant or os.environ.get(ENV_VARIANT) or None
    if variant is not None and variant not in VARIANTS:
        raise OpenCLError(f"unknown kernel variant {variant!r}; expected one of "
                          f"{', '.join(VARIANTS)}")
    onchip = "-DVTA_ONCHIP" in options
    if variant == "group" and onchip:
        raise OpenCLError("-DVTA_ONCHIP builds the item variant (upstream's eight-argument ABI); "
                          "the group variant keeps its buffers in scratch")
    if variant is not None:
        return variant
    if onchip:
        return "item"
    return "group" if dev.type & (cl.device_type.GPU | cl.device_type.CPU) else "item"


def group_local_bytes(cfg: Config, group_size: int) -> int:
    """Local memory of the group variant's work area (vta_work_t in vta_group.cl)."""
    acc = cfg.acc_depth
    run_ix = 2 if cfg.uop_depth < 65536 else 4
    return (4 * acc + run_ix * (acc + 1) + 4 * group_size + 4 * min(group_size, 16)
            + 4 * 16 + 4 * 9 + 64)  # tags, runs, counts, parts, decoded GEMM/ALU, scalars, slack


def group_build_options(dev: Any, cfg: Config, group_size: int | None) -> list[str]:
    """Build options of the group variant on ``dev``: the work-group size (a power of two), the
    micro-op buffer in local memory where it fits beside the work area, dp4a on NVIDIA GPUs."""
    gpu = bool(dev.type & cl.device_type.GPU)
    n = group_size or (GROUP_SIZE_GPU if gpu else GROUP_SIZE_CPU)
    if n < 1 or n & (n - 1):
        raise OpenCLError(f"group_size must be a power of two, got {n}")
    while n > dev.max_work_group_size:
        n //= 2
    need = group_local_bytes(cfg, n)
    if need > dev.local_mem_size:
        raise OpenCLError(f"the group variant needs {need} bytes of local memory for "
                          f"configuration {cfg.name}; {dev.name.strip()} has "
                          f"{dev.local_mem_size} (use variant='item')")
    opts = [f"-DVTA_GROUP_SIZE={n}"]
    if need + cfg.uop_depth * cfg.uop_elem_bytes <= dev.local_mem_size:
        opts.append("-DVTA_LOCAL_UOP")
    if "NVIDIA" in dev.platform.name.upper() and _compute_capability(dev) >= (6, 1):
        opts.append("-DVTA_DP4A")
    return opts


def _compute_capability(dev: Any) -> tuple[int, int]:
    try:
        return (int(dev.compute_capability_major_nv), int(dev.compute_capability_minor_nv))
    except (cl.Error, AttributeError):
        return (0, 0)


_CONTEXTS: dict[tuple[str, str], tuple[Any, Any, Any]] = {}
_PROGRAMS: dict[tuple[int, str], Any] = {}


def _context(platform: str | None, device: str | None) -> tuple[Any, Any, Any]:
    plat, dev = select_device(platform, device)
    key = (plat.name, dev.name + str(dev.int_ptr))
    if key not in _CONTEXTS:
        try:
            ctx = cl.Context([dev])
        except cl.Error as exc:
            raise _cl_error(exc, f"creating an OpenCL context on {dev.name.strip()}") from None
        _CONTEXTS[key] = (plat, dev, ctx)
    return _CONTEXTS[key]


def build_program(ctx: Any, dev: Any, cfg: Config, *, source: str | os.PathLike[str] | None = None,
                  binary: str | os.PathLike[str] | bytes | None = None,
                  options: str | list[str] = (), variant: str = "group",
                  isa_header: str | None = None) -> Any:
    """Build (or load) the program; cached per context, text and options within this process."""
    opts = [options] if isinstance(options, str) else list(options)
    if binary is not None:
        data = binary if isinstance(binary, bytes) else Path(binary).read_bytes()
        key = (id(ctx), "bin:" + hashlib.sha256(data).hexdigest() + repr(opts))
    else:
        text = kernel_source(cfg, source, variant, isa_header)
        key = (id(ctx), "src:" + hashlib.sha256(text.encode()).hexdigest() + repr(opts))
    if key in _PROGRAMS:
        return _PROGRAMS[key]
    where = f"{dev.name.strip()} ({dev.platform.name.strip()})"
    try:
        if binary is not None:
            prg = cl.Program(ctx, [dev], [data])
        else:
            prg = cl.Program(ctx, text)
    except cl.Error as exc:
        raise _cl_error(exc, f"creating the program on {where}") from None
    try:
        prg.build(options=opts)
    except cl.Error as exc:
        log = ""
        try:
            log = prg.get_build_info(dev, cl.program_build_info.LOG)
        except cl.Error:
            pass
        log = (log or "").strip() or str(exc).strip()
        kind = "binary" if binary is not None else "kernel"
        name = status_name(exc.code) if isinstance(getattr(exc, "code", None), int) else \
            "CL_BUILD_PROGRAM_FAILURE"
        raise KernelBuildError(f"OpenCL {kind} build failed on {where} ({name}); build log:\n"
                               f"{log}", log) from None
    _PROGRAMS[key] = prg
    return prg


def scratch_bytes(cfg: Config) -> int:
    """Bytes of the scratch buffer: control block + uop, inp, wgt, acc, out buffers."""
    return (C.CTRL_BYTES + cfg.uop_depth * cfg.uop_elem_bytes + cfg.inp_depth * cfg.inp_elem_bytes
            + cfg.wgt_depth * cfg.wgt_elem_bytes + cfg.acc_depth * cfg.acc_elem_bytes
            + cfg.out_depth * cfg.out_elem_bytes)


# ---------------------------------------------------------------------------------------------
# The device
# ---------------------------------------------------------------------------------------------

class OpenCLDevice(Device):
    """VTA on an OpenCL device. Options: ``platform``, ``device`` (name substrings), ``variant``
    ("group" or "item"; default by device type), ``binary`` (prebuilt program), ``source``
    (kernel path or text instead of the variant's file), ``isa_header`` (text instead of
    vta_isa.h), ``build_options``, ``group_size`` (work-items per group of the group variant),
    ``batch_groups`` (work-groups of a :meth:`run_programs` launch), ``budget_rate`` (work units
    a second of timeout allows: :data:`BUDGET_RATE`, :data:`BUDGET_RATE_GPU_ITEM`)."""

    target = "opencl"

    def __init__(self, cfg: Config, mem_bytes: int = DEFAULT_MEM_BYTES, *,
                 platform: str | None = None, device: str | None = None,
                 variant: str | None = None,
                 binary: str | os.PathLike[str] | bytes | None = None,
                 source: str | os.PathLike[str] | None = None, isa_header: str | None = None,
                 build_options: str | list[str] = (), group_size: int | None = None,
                 batch_groups: int | None = None, budget_rate: float | None = None,
                 **_: Any) -> None:
        super().__init__(cfg, mem_bytes)
        if binary is None and os.environ.get(ENV_BINARY):
            binary = os.environ[ENV_BINARY]
        self.platform, self.device, self.context = _context(platform, device)
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
            raise _cl_error(exc, f"setting up the kernel and memory on {where}") from None
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
        self.scratch = None
        self._pending: Any = None
        if not self.onchip:
            try:
                self.scratch = cl.Buffer(self.context, cl.mem_flags.READ_WRITE, self.scratch_bytes)
            except cl.Error as exc:
                raise _cl_error(exc, f"allocating {self.scratch_bytes} bytes of scratch on "
                                f"{where}") from None
            self._probe()

    @property
    def name(self) -> str:
        return f"{self.device.name.strip()} ({self.platform.name.strip()})"

    def info(self) -> dict[str, str]:
        d = self.device
        kernel = self.variant if self.variant == "item" else \
            f"group ({self.group_size} work-items)"
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
            raise _cl_error(exc, f"writing {data.size} bytes at {addr:#x}") from None

    def _read(self, addr: int, nbytes: int) -> np.ndarray:
        out = np.empty(nbytes, np.uint8)
        if nbytes == 0:
            return out
        self._wait_pending()
        try:
            cl.enqueue_copy(self.queue, out, self.arena, src_offset=addr, is_blocking=True)
        except cl.Error as exc:
            raise _cl_error(exc, f"reading {nbytes} bytes at {addr:#x}") from None
        return out

    # -- running ---------------------------------------------------------------------------
    def _set_args(self, insn_count: int, insns_offset: int) -> None:
        args: list[Any] = [np.uint32(insn_count), np.uint32(insns_offset)] + [self.arena] * 6
        if not self.onchip:
            args.append(self.scratch)
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
            raise _cl_error(exc, f"probing the kernel on {self.name}") from None
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
            self._set_args(insn_count, insn_addr // 16)
            evt = cl.enqueue_nd_range_kernel(self.queue, self.kernel, (self.group_size,),
                                             (self.group_size,))
            self.queue.flush()
        except cl.Error as exc:
            raise _cl_error(exc, f"launching {insn_count} instructions on {self.name}") from None
        self.wait(evt, f"run of {insn_count} instructions at {insn_addr:#x}", timeout_s, t0)
        wall = time.perf_counter() - t0
        stats: dict[str, Any] = {"device": self.name, "kernel_s": kernel_seconds(evt),
                                 "wall_s": wall}
        if not self.onchip:
            try:
                ctrl = self._read_ctrl()
            except cl.Error as exc:
                raise _cl_error(exc, f"reading the run status on {self.name}") from None
            self.check_status(ctrl, insn_count, timeout_s)
            stats.update(ctrl_stats(ctrl))
        return RunResult(insn_count, wall, stats)

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
                raise _cl_error(exc, f"polling the {what} on {self.name}") from None
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
                    {"execution_status": _exec_status_name(st)})
            time.sleep(pause)
            pause = min(pause * 2, 5e-3)

    def run_programs(self, programs: Sequence[tuple[Program, np.ndarray]],
                     timeout_s: float | None = None) -> list[RunResult | DeviceError]:
        """Run independent raw programs, each with its DRAM image at address 0 of a device memory
        of its own (as :func:`run_program` does); every image is updated in place. Returns, per
        program, its :class:`RunResult` or the :class:`DeviceError` it stopped with (a kernel
        error code; a timeout or an OpenCL failure of the whole launch raises). The group variant
        runs one program per work-group, all in one launch (a few for very large batches); the
        item variant runs them one after the other."""
        if self.variant == "group" and not self.onchip:
            from vtabench.drivers.opencl_batch import run_batch

            return run_batch(self, programs, timeout_s)
        results: list[RunResult | DeviceError] = []
        for program, dram in programs:
            try:
                results.append(run_program(self, program, dram, timeout_s))
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
        for buf in (self.arena, self.scratch):
            if buf is not None:
                try:
                    buf.release()
                except cl.Error:
                    pass

    def binary(self) -> bytes:
        """The device binary of the built program (load it later with ``binary=``)."""
        return bytes(self.program.get_info(cl.program_info.BINARIES)[0])


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


def _exec_status_name(st: int) -> str:
    names = {cl.command_execution_status.QUEUED: "QUEUED",
             cl.command_execution_status.SUBMITTED: "SUBMITTED",
             cl.command_execution_status.RUNNING: "RUNNING",
             cl.command_execution_status.COMPLETE: "COMPLETE"}
    return "CL_" + names.get(st, str(st))


# ---------------------------------------------------------------------------------------------
# `vtabench exec --target opencl`
# ---------------------------------------------------------------------------------------------

def run_raw(cfg: Config, insns: list[Insn], dram: np.ndarray, *, seed: int | None = None,
            waves: object = None, timeout_s: float | None = None, platform: str | None = None,
            device: str | None = None, **opts: Any) -> dict[str, object]:
    """Run a validated raw program on an OpenCL device; ``dram`` (uint8) is updated in place."""
    with OpenCLDevice(cfg, mem_bytes_for(dram.size, 16 * len(insns)), platform=platform,
                      device=device, **opts) as dev:
        result = run_program(dev, insns, dram, timeout_s)
    return {k: (f"{v:.6f}" if isinstance(v, float) else v) for k, v in result.stats.items()}
