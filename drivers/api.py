"""The one driver API: open a device for a configuration, manage its memory, run programs.

User code, tests and the compiler runtime use :func:`open_device` and the :class:`Device` methods
and never know which target runs underneath::

    from vtabench.drivers import open_device
    with open_device("fsim", cfg, mem_bytes=1 << 24) as dev:
        a = dev.alloc(len(image), align=4096)
        dev.write(a, image)
        i = dev.alloc(len(program_bytes), align=16)
        dev.write(i, program_bytes)
        result = dev.run(i, len(program_bytes) // 16, timeout_s=10)
        out = dev.read(a, len(image))

Addresses are byte offsets into the device memory image; instructions address DRAM with absolute
element indices (``dram_base * element_bytes`` is the byte address; upstream's base-0 convention),
so data a program touches must be allocated with ``align`` a multiple of the element size.

This module imports numpy only (it is on the OpenCL smoke path, which runs where nothing else of
the project's dependencies is installed).
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from vtabench.drivers.alloc import Allocator, OutOfMemoryError
from vtabench.drivers.errors import DeviceError

if TYPE_CHECKING:
    from vtabench.spec.config import Config
    from vtabench.spec.isa.insn import Insn
    from vtabench.spec.program import Program

__all__ = ["BACKENDS", "Device", "DeviceError", "OutOfMemoryError", "RunResult",
           "RunTimeoutError", "Target", "mem_bytes_for", "open_device", "resolve", "run_on_bench",
           "run_program", "run_programs", "target"]

#: Default device memory size (bytes) when open_device is not given one.
DEFAULT_MEM_BYTES = 64 << 20
#: Alignment of a raw program's DRAM image (at byte 0) and of what follows it (run_program).
PAGE_BYTES = 4096

@dataclass(frozen=True)
class Target:
    """One target of the driver API: where its pieces live (``"module:attribute"``, imported on
    first use, so a target's dependencies load only when it is used).

    ``device``: its :class:`Device` class. ``options``: the device options the command line
    passes through (``vtabench exec``). ``cycles``: its runs report core cycles (a per-layer
    profiling run is worth its time). ``batch``: a function that runs many raw programs on the
    target in one go, ``(cfg, [Program], *, seed, **opts) -> problems`` (:func:`run_programs`);
    without one they run one after another on one device. ``bench``: a core bench that runs
    programs with their placement and memory-timing knobs (``(cfg, [Program], *, seed, **opts)
    -> [result dict]``, :func:`run_on_bench`); the regression runs the target there when it has
    one. Every reference names a module of this driver layer. ``server``: a
    function that serves one device on a socket for drivers in other processes (``vtabench
    serve``).
    """

    device: str
    options: tuple[str, ...] = ()
    cycles: bool = False
    batch: str | None = None
    bench: str | None = None
    server: str | None = None


#: The targets, by name: the one table every caller (graph, compiler, regression, CLI) goes
#: through. rtl's devices are the platform simulator behind PCIe; its bench is the core bench
#: (one simulator process for many programs, with DRAM knobs, placement, coverage and mutation
#: builds).
BACKENDS: dict[str, Target] = {
    "fsim": Target("vtabench.drivers.fsim_backend:FsimDevice"),
    "opencl": Target("vtabench.drivers.opencl.device:OpenCLDevice",
                     options=("platform", "device"),
                     batch="vtabench.drivers.opencl.device:run_raw_batch"),
    "rtl": Target("vtabench.drivers.rtl.device:RtlDevice", options=("seed", "waves", "link"),
                  cycles=True, bench="vtabench.drivers.rtl.bench:run_bench",
                  server="vtabench.drivers.rtl.launcher:serve"),
}


def target(name: str) -> Target:
    """The table entry of target ``name``; :class:`DeviceError` naming the known ones."""
    try:
        return BACKENDS[name]
    except KeyError:
        raise DeviceError(f"unknown target {name!r}; known: {', '.join(BACKENDS)}") from None


def resolve(ref: str) -> Any:
    """The attribute a ``"module:attribute"`` reference names (the module imported now)."""
    module_name, attr = ref.split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            raise DeviceError(f"{module_name} is not installed") from None
        raise
    return getattr(module, attr)


class RunTimeoutError(DeviceError, TimeoutError):
    """A run did not finish within its timeout. ``timeout_s`` and ``status`` (a dict of whatever
    the backend could read about the device's state) are attributes."""

    def __init__(self, message: str, timeout_s: float, status: dict[str, Any] | None = None):
        super().__init__(message)
        self.timeout_s = timeout_s
        self.status = status or {}


@dataclass
class RunResult:
    """What one run reports: instruction count, host wall time, and backend statistics
    (``stats``: cycles for cycle-level targets, kernel time for OpenCL, counters)."""

    insn_count: int
    wall_s: float
    stats: dict[str, Any] = field(default_factory=dict)


class Device(ABC):
    """A VTA device: ``mem_bytes`` of device memory managed by one :class:`Allocator`."""

    target: str = "?"

    def __init__(self, cfg: Config, mem_bytes: int = DEFAULT_MEM_BYTES) -> None:
        if mem_bytes <= 0 or mem_bytes % 16:
            raise DeviceError(f"mem_bytes must be a positive multiple of 16, got {mem_bytes}")
        self.cfg = cfg
        self.mem_bytes = int(mem_bytes)
        self.allocator = Allocator(self.mem_bytes)
        self._closed = False

    # -- memory ----------------------------------------------------------------------------
    def alloc(self, nbytes: int, align: int = 64) -> int:
        """Reserve ``nbytes`` of device memory aligned to ``align``; returns its address."""
        self._check_open()
        return self.allocator.alloc(nbytes, align)

    def free(self, addr: int) -> None:
        self._check_open()
        self.allocator.free(addr)

    def write(self, addr: int, data: bytes | bytearray | memoryview | np.ndarray) -> None:
        """Copy host bytes (any array is taken as its raw bytes) to device memory at ``addr``."""
        self._check_open()
        buf = _as_bytes(data)
        self._check_range(addr, buf.size, "write")
        self.allocator.check_access(addr, buf.size, "write")
        self._write(addr, buf)

    def read(self, addr: int, nbytes: int) -> np.ndarray:
        """Copy ``nbytes`` of device memory at ``addr`` to a new uint8 array."""
        self._check_open()
        self._check_range(addr, nbytes, "read")
        self.allocator.check_access(addr, nbytes, "read")
        return self._read(addr, nbytes)

    # -- running ---------------------------------------------------------------------------
    def run(self, insn_addr: int, insn_count: int, timeout_s: float | None = None) -> RunResult:
        """Run ``insn_count`` 16-byte instructions starting at byte address ``insn_addr`` and wait
        for FINISH (at most ``timeout_s`` seconds: :class:`RunTimeoutError` after that)."""
        self._check_open()
        if insn_addr % 16:
            raise DeviceError(f"instruction address {insn_addr:#x} is not 16-byte aligned")
        if insn_count <= 0:
            raise DeviceError(f"instruction count must be positive, got {insn_count}")
        self._check_range(insn_addr, insn_count * 16, "instruction fetch")
        return self._run(insn_addr, insn_count, timeout_s)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._close()

    @property
    def name(self) -> str:
        """Human-readable name of what runs the programs."""
        return self.target

    def modeled_ns(self) -> float | None:
        """The device model's clock (simulated ns) on targets that simulate time: on rtl the
        host's modeled time (PCIe transfers, MMIO, runs); None elsewhere."""
        return None

    def __enter__(self) -> Device:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- backend hooks ---------------------------------------------------------------------
    @abstractmethod
    def _write(self, addr: int, data: np.ndarray) -> None: ...

    @abstractmethod
    def _read(self, addr: int, nbytes: int) -> np.ndarray: ...

    @abstractmethod
    def _run(self, insn_addr: int, insn_count: int, timeout_s: float | None) -> RunResult: ...

    def _close(self) -> None:
        pass

    # -- helpers ---------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise DeviceError(f"{self.target} device is closed")

    def _check_range(self, addr: int, nbytes: int, what: str) -> None:
        if addr < 0 or nbytes < 0 or addr + nbytes > self.mem_bytes:
            raise DeviceError(f"{what} of {nbytes} bytes at {addr:#x} lies outside device memory "
                              f"[0, {self.mem_bytes:#x})")


def _as_bytes(data: bytes | bytearray | memoryview | np.ndarray) -> np.ndarray:
    if isinstance(data, np.ndarray):
        return np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    return np.frombuffer(bytes(data), dtype=np.uint8)


def open_device(target_name: str, cfg: Config | str, mem_bytes: int = DEFAULT_MEM_BYTES,
                **opts: Any) -> Device:
    """Open a device of target ``target_name`` (a key of :data:`BACKENDS`: "fsim", "opencl",
    "rtl") for configuration ``cfg`` (a Config or a configuration name). Backend options go in
    ``opts`` (e.g. ``platform=`` for opencl, ``link=`` or ``attach=`` for rtl); a backend
    ignores the options of the others."""
    if isinstance(cfg, str):
        from vtabench.spec.config import load_config

        cfg = load_config(cfg)
    cls = resolve(target(target_name).device)
    return cls(cfg, mem_bytes=mem_bytes, **opts)  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------------------
# A raw program on a device (vtabench exec, smoke, regress)
# ---------------------------------------------------------------------------------------------

def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def mem_bytes_for(dram_bytes: int, code_bytes: int, *, guard: int = 0) -> int:
    """Device memory :func:`run_program` needs for a DRAM image of ``dram_bytes`` and an
    instruction stream of ``code_bytes`` (each rounded up to 4 KiB), plus ``guard`` bytes."""
    return _align(max(dram_bytes, 1), PAGE_BYTES) + _align(code_bytes, PAGE_BYTES) + guard


def run_program(dev: Device, program: bytes | bytearray | memoryview | np.ndarray | Sequence[Insn],
                dram: np.ndarray, timeout_s: float | None = None, *, insn_align: int = 16
                ) -> RunResult:
    """Run a raw program whose DRAM image starts at device address 0 (instructions address DRAM
    with absolute element indices: upstream's base-0 convention); ``dram`` (1-D uint8) is updated
    in place with the image after the run. ``program``: the encoded instruction stream, or
    instructions to encode for the device's configuration. The device's allocator is reset
    first; the instructions go after the image, aligned to ``insn_align``."""
    if isinstance(program, (bytes, bytearray, memoryview, np.ndarray)):
        code = _as_bytes(program)
    else:
        from vtabench.spec.isa.insn import encode_program

        code = _as_bytes(encode_program(dev.cfg, list(program)))
    dev.allocator.reset()
    base = dev.alloc(dram.size, align=PAGE_BYTES)
    if base != 0:
        raise DeviceError(f"DRAM image placed at {base:#x}, not 0")
    iaddr = dev.alloc(code.size, align=insn_align)
    dev.write(base, dram)
    dev.write(iaddr, code)
    result = dev.run(iaddr, code.size // 16, timeout_s)
    dram[:] = dev.read(base, dram.size)
    return result


def run_programs(target_name: str, cfg: Config, programs: Sequence[Program], *,
                 seed: int | None = None, **opts: Any) -> list[str | None]:
    """Run programs on a target, each with its image at device address 0 (placement and DRAM
    knobs are a core bench's: :func:`run_on_bench`), each image (1-D uint8) updated in place;
    returns per program None or why it did not complete. The target's batch function runs them
    if it has one; otherwise one device (memory for the largest program) runs them one after
    another (``timeout_s`` in ``opts`` applies to each)."""
    t = target(target_name)
    if t.batch is not None:
        return resolve(t.batch)(cfg, programs, seed=seed, **opts)  # type: ignore[no-any-return]
    timeout_s = opts.pop("timeout_s", None)
    problems: list[str | None] = [None] * len(programs)
    codes = [p.encoded(cfg) for p in programs]
    mem = max((mem_bytes_for(p.dram.size, len(c)) for p, c in zip(programs, codes)), default=16)
    try:
        dev = open_device(target_name, cfg, mem, **opts)
    except DeviceError as exc:
        return [f"{target_name}: {exc}"] * len(programs)
    with dev:
        for k, (p, code) in enumerate(zip(programs, codes)):
            try:  # the allocator is reset for each program
                run_program(dev, code, p.dram, timeout_s)
            except DeviceError as exc:
                problems[k] = f"{target_name}: {exc}"
    return problems


def run_on_bench(target_name: str, cfg: Config, programs: Sequence[Program], *,
                 seed: int | None = None, **opts: Any) -> list[dict[str, Any]]:
    """Run programs on the target's core bench, each with its placement, DRAM knobs and cycle
    bound, each image updated in place; one result dict per program (``state``, ``error``,
    ``error_insn``, the bench's counters). :class:`DeviceError` when the target has no bench or
    the bench gave no results."""
    t = target(target_name)
    if t.bench is None:
        raise DeviceError(f"target {target_name} has no core bench; "
                          f"those with one: {', '.join(n for n, b in BACKENDS.items() if b.bench)}")
    return resolve(t.bench)(cfg, programs, seed=seed, **opts)  # type: ignore[no-any-return]
