"""OpenCL backend of the driver API: the kernel of opencl/vta.cl on any OpenCL device.

* Platform and device are chosen by case-insensitive name substring: the ``platform=`` /
  ``device=`` options, else the environment variables ``VTA_OPENCL_PLATFORM`` /
  ``VTA_OPENCL_DEVICE``, else the first platform that has a device. Nothing matching is an
  :class:`OpenCLError` that lists every platform and device there is.
* The kernel is built from source (opencl/vta.cl with the configuration's generated header and
  the contracts header opencl/gen/vta_contracts.h prepended) or loaded from a prebuilt binary
  (``binary=PATH`` or ``VTA_OPENCL_BINARY``; see docs/opencl.md for aoc / v++). A build failure
  is a :class:`KernelBuildError` carrying the build log.
* Device memory is one OpenCL buffer (the arena, managed by the shared
  :class:`~vtabench.drivers.alloc.Allocator`); every kernel pointer argument is that buffer, so
  byte address = element index x element bytes, as in fsim's DRAM image. The on-chip buffers and
  a control block live in a second buffer (``scratch``), zeroed before every run (reset state).
* :meth:`OpenCLDevice.run` polls the kernel's event and raises :class:`RunTimeoutError` when the
  timeout passes; OpenCL failures carry the status name (``CL_OUT_OF_RESOURCES`` ...).

This module imports numpy, pyopencl and numpy-only parts of vtabench (it is what runs on the
accelerator machine, where nothing else is installed). ``run_raw`` serves
``vtabench exec --target opencl``.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyopencl as cl

from vtabench.drivers.api import (DEFAULT_MEM_BYTES, Device, DeviceError, RunResult,
                                  RunTimeoutError, mem_bytes_for, run_program)
from vtabench.spec.contracts import ocl_control as C
from vtabench.spec.contracts.errors import ErrorCode, describe
from vtabench.spec.contracts.stages import TokenQueue

if TYPE_CHECKING:
    from vtabench.spec.config import Config
    from vtabench.spec.isa.insn import Insn

KERNEL_PATH = Path(__file__).resolve().parent.parent / "targets" / "opencl" / "vta.cl"
KERNEL_NAME = "vta_core"
ENV_PLATFORM = "VTA_OPENCL_PLATFORM"
ENV_DEVICE = "VTA_OPENCL_DEVICE"
ENV_BINARY = "VTA_OPENCL_BINARY"
DEFAULT_TIMEOUT_S = 600.0


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

def kernel_source(cfg: Config, source: str | os.PathLike[str] | None = None) -> str:
    """The kernel text with the configuration's generated header prepended. ``source`` is a path
    or the text of another kernel (tests use it for a kernel that does not build)."""
    from vtabench.hwgen.constants import c_header
    from vtabench.hwgen.contracts import C_HEADER

    if source is None:
        body, name = KERNEL_PATH.read_text(), KERNEL_PATH.name
    elif isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source
                                             and Path(source).exists()):
        body, name = Path(source).read_text(), Path(source).name
    else:
        body, name = str(source), "<source>"
    return f'{c_header(cfg)}\n{C_HEADER.read_text()}\n#line 1 "{name}"\n{body}'


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
                  options: str | list[str] = ()) -> Any:
    """Build (or load) the program; cached per context, text and options within this process."""
    opts = [options] if isinstance(options, str) else list(options)
    if binary is not None:
        data = binary if isinstance(binary, bytes) else Path(binary).read_bytes()
        key = (id(ctx), "bin:" + hashlib.sha256(data).hexdigest() + repr(opts))
    else:
        text = kernel_source(cfg, source)
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
    """VTA on an OpenCL device. Options: ``platform``, ``device`` (name substrings), ``binary``
    (prebuilt program), ``source`` (kernel path or text instead of opencl/vta.cl),
    ``build_options``."""

    target = "opencl"

    def __init__(self, cfg: Config, mem_bytes: int = DEFAULT_MEM_BYTES, *,
                 platform: str | None = None, device: str | None = None,
                 binary: str | os.PathLike[str] | bytes | None = None,
                 source: str | os.PathLike[str] | None = None,
                 build_options: str | list[str] = (), **_: Any) -> None:
        super().__init__(cfg, mem_bytes)
        if binary is None and os.environ.get(ENV_BINARY):
            binary = os.environ[ENV_BINARY]
        self.platform, self.device, self.context = _context(platform, device)
        self.program = build_program(self.context, self.device, cfg, source=source,
                                     binary=binary, options=build_options)
        where = self.name
        try:
            self.kernel = cl.Kernel(self.program, KERNEL_NAME)
            self.num_args = self.kernel.num_args
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
        return {"platform": self.platform.name.strip(), "platform_version": self.platform.version,
                "device": d.name.strip(), "device_version": d.version,
                "driver_version": d.driver_version,
                "opencl_c_version": getattr(d, "opencl_c_version", "?")}

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

    def _reset_ctrl(self) -> None:
        ctrl = np.zeros(C.CTRL_WORDS, np.uint32)
        ctrl[C.CTRL_DRAM_LO] = self.mem_bytes & 0xFFFFFFFF
        ctrl[C.CTRL_DRAM_HI] = self.mem_bytes >> 32
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
            cl.enqueue_nd_range_kernel(self.queue, self.kernel, (1,), (1,)).wait()
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
        """After a timed-out run the kernel may still be running: commands queue behind it."""
        if self._pending is not None:
            self._pending.wait()
            self._pending = None

    def _run(self, insn_addr: int, insn_count: int, timeout_s: float | None) -> RunResult:
        timeout = DEFAULT_TIMEOUT_S if timeout_s is None else float(timeout_s)
        self._wait_pending()
        t0 = time.perf_counter()
        try:
            if not self.onchip:
                self._reset_ctrl()
                cl.enqueue_fill_buffer(self.queue, self.scratch, np.uint8(0), C.CTRL_BYTES,
                                       self.scratch_bytes - C.CTRL_BYTES)
            self._set_args(insn_count, insn_addr // 16)
            evt = cl.enqueue_nd_range_kernel(self.queue, self.kernel, (1,), (1,))
            self.queue.flush()
        except cl.Error as exc:
            raise _cl_error(exc, f"launching {insn_count} instructions on {self.name}") from None
        deadline = t0 + timeout
        pause = 20e-6
        while True:
            try:
                st = evt.command_execution_status
            except cl.Error as exc:
                raise _cl_error(exc, f"polling the run on {self.name}") from None
            if st == cl.command_execution_status.COMPLETE:
                break
            if st < 0:
                raise OpenCLError(f"run of {insn_count} instructions on {self.name} failed: "
                                  f"{status_name(st)}", status_name(st))
            if time.perf_counter() >= deadline:
                self._pending = evt
                raise RunTimeoutError(
                    f"run of {insn_count} instructions at {insn_addr:#x} on {self.name} did not "
                    f"finish within {timeout:g} s (the kernel is still running; the device "
                    f"accepts new commands once it ends)", timeout,
                    {"execution_status": _exec_status_name(st)})
            time.sleep(pause)
            pause = min(pause * 2, 5e-3)
        wall = time.perf_counter() - t0
        stats: dict[str, Any] = {"device": self.name}
        try:
            stats["kernel_s"] = (evt.profile.end - evt.profile.start) * 1e-9
        except cl.Error:
            pass
        stats["wall_s"] = wall
        if not self.onchip:
            try:
                ctrl = self._read_ctrl()
            except cl.Error as exc:
                raise _cl_error(exc, f"reading the run status on {self.name}") from None
            self._check_status(ctrl, insn_count)
            stats.update(
                executed=int(ctrl[C.CTRL_EXECUTED]), load_insns=int(ctrl[C.CTRL_N_LOAD]),
                compute_insns=int(ctrl[C.CTRL_N_COMPUTE]),
                store_insns=int(ctrl[C.CTRL_N_STORE]),
                gemm_uop_iters=(int(ctrl[C.CTRL_GEMM_ITERS_LO])
                                | int(ctrl[C.CTRL_GEMM_ITERS_HI]) << 32),
                alu_uop_iters=int(ctrl[C.CTRL_ALU_ITERS_LO]) | int(ctrl[C.CTRL_ALU_ITERS_HI]) << 32,
                scheduler_passes=int(ctrl[C.CTRL_PASSES]))
        return RunResult(insn_count, wall, stats)

    def _check_status(self, ctrl: np.ndarray, insn_count: int) -> None:
        status, code = int(ctrl[C.CTRL_STATUS]), int(ctrl[C.CTRL_ERROR])
        index, arg = int(ctrl[C.CTRL_ERROR_INDEX]), int(ctrl[C.CTRL_ERROR_ARG])
        if status == C.STATUS_DONE and code == ErrorCode.NONE:
            return
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
