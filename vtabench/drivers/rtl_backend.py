"""rtl backend of the driver API: the VTA shell RTL behind the modeled PCIe platform.

The device is the simulator top ``vta_pcie_top`` (VTA shell + core + DPI DRAM) driven by
``vtabench.targets.rtl.platform.model.Platform``. The synchronous driver runs in a thread of the cocotb
process (``cocotb.task.bridge``); every driver operation is ONE coarse call into the simulator
(``cocotb.task.resume``): a batch of MMIO accesses, one DMA, or one wait for the interrupt. So a
program run costs a handful of thread switches, not one per register.

Use it through :func:`run_in_simulator`, which builds the simulator (once per configuration),
starts it and runs a function of yours in its driver thread; inside it ``open_device("rtl", cfg)``
works like any other target::

    def work(cfg, image, program):
        with open_device("rtl", cfg, mem_bytes=1 << 22) as dev:
            ...  # alloc / write / run / read, exactly as on fsim
            return dev.read(...), dev.pcie_stats()

    out, pcie = run_in_simulator(cfg, work, (cfg, image, program), link="gen3x16")

What the driver does (docs/platform.md):

- open: reset the card with ``mem_bytes`` of DRAM, read VERSION and CONFIG_ID and refuse a
  mismatch (:class:`DeviceMismatchError`), write DRAM_BASE = 0, DRAM_SIZE = mem_bytes, the upstream
  pointer registers 0, enable the finish and error interrupts;
- write / read: one DMA each through the platform's cost model; an injected DMA error raises
  :class:`DmaError`, a DMA later than ``dma_timeout_ns`` raises :class:`DmaTimeoutError` (the
  transfer is aborted); both carry the status registers;
- run: clear IRQ_STATUS, write INSN_COUNT / INSN_BASE, write CTRL.LAUNCH (one MMIO batch), then
  wait for the MSI in slices of ``poll_interval_ns`` of simulated time; after a slice without an
  MSI the driver reads STATUS (polling), so a lost interrupt costs at most one slice
  (``irq_recovered_by_poll`` in the stats). Timeouts: ``timeout_s`` (wall clock, the API's) and
  ``run_timeout_ns`` (simulated) raise :class:`RunTimeoutError` with the status registers; the core
  keeps running (:meth:`RtlDevice.wait_idle`). A core error (ERROR_CODE != 0) raises
  :class:`DeviceRunError`;
- MMIO reads returning 0xFFFFFFFF are re-read (``mmio_retries``); a register with undefined bits
  that keeps reading all ones means the device is gone (:class:`DeviceLostError`).
"""

from __future__ import annotations

import copyreg
import pickle
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from vtabench.drivers.api import (
    DEFAULT_MEM_BYTES,
    Device,
    DeviceError,
    RunResult,
    RunTimeoutError,
)
from vtabench.targets.rtl.platform.model import DmaStatusError, DmaTimeout, current_platform

from vtabench.spec.contracts import regs as R

if TYPE_CHECKING:
    from vtabench.spec.config import Config

#: Core error codes (hdl/vta_err_pkg.sv) for messages.
CORE_ERRORS = {0x01: "illegal opcode", 0x02: "illegal memory type / routing / token flag / pad",
               0x03: "illegal ALU opcode", 0x04: "FINISH misuse", 0x05: "misaligned base",
               0x10: "LOAD past its SRAM buffer", 0x11: "STORE past the out buffer",
               0x12: "micro-op range", 0x13: "GEMM index out of range",
               0x14: "ALU index out of range", 0x20: "DRAM access beyond DRAM_SIZE",
               0x30: "AXI read error", 0x31: "AXI write error"}

#: Registers a status snapshot (exceptions, timeouts) contains.
STATUS_REGS = ("CTRL", "STATUS", "ERROR_CODE", "ERROR_INSN", "IRQ_ENABLE", "IRQ_STATUS", "CYCLES",
               "LOAD_INSNS", "COMPUTE_INSNS", "STORE_INSNS", "LOAD_BUSY_CYCLES",
               "COMPUTE_BUSY_CYCLES", "STORE_BUSY_CYCLES", "ACC_WRITES", "INSN_COUNT")
COUNTER_REGS = ("CYCLES", "LOAD_BUSY_CYCLES", "COMPUTE_BUSY_CYCLES", "STORE_BUSY_CYCLES",
                "LOAD_INSNS", "COMPUTE_INSNS", "STORE_INSNS", "ACC_WRITES", "ERROR_CODE",
                "ERROR_INSN", "STATUS")
ALL_ONES = 0xFFFFFFFF
#: IRQ_STATUS write that acknowledges both interrupt sources (write one to clear).
IRQ_CLEAR = R.IRQ_STATUS_FINISH | R.IRQ_STATUS_ERROR


# ------------------------------------------------------------------------------------------------
# Exceptions (picklable with their attributes: they travel from the simulator process)
# ------------------------------------------------------------------------------------------------
def _rebuild_exc(cls: type, args: tuple, attrs: dict[str, Any]) -> BaseException:
    exc = cls.__new__(cls)
    exc.args = args
    exc.__dict__.update(attrs)
    return exc  # type: ignore[no-any-return]


def _reduce_exc(exc: BaseException) -> tuple:
    return (_rebuild_exc, (type(exc), exc.args, dict(exc.__dict__)))


copyreg.pickle(RunTimeoutError, _reduce_exc)


class _PicklableError(DeviceError):
    def __reduce__(self) -> tuple:
        return _reduce_exc(self)


class DeviceMismatchError(_PicklableError):
    """VERSION or CONFIG_ID of the device differs from what the driver expects."""


class DeviceLostError(_PicklableError):
    """MMIO reads keep returning all ones (completion timeout / surprise removal)."""


class DeviceRunError(_PicklableError):
    """The core stopped with a nonzero ERROR_CODE. ``code``, ``insn`` and ``status``."""

    def __init__(self, message: str, code: int, insn: int, status: dict[str, Any]):
        super().__init__(message)
        self.code = code
        self.insn = insn
        self.status = status


class DmaError(_PicklableError):
    """A DMA completed with an error. ``direction`` ("h2d"/"d2h"), ``addr``, ``nbytes``,
    ``landed`` (bytes that did reach the target), ``status`` (device registers)."""

    def __init__(self, message: str, direction: str, addr: int, nbytes: int, landed: int,
                 status: dict[str, Any]):
        super().__init__(message)
        self.direction = direction
        self.addr = addr
        self.nbytes = nbytes
        self.landed = landed
        self.status = status


class DmaTimeoutError(DmaError, TimeoutError):
    """A DMA did not complete within ``dma_timeout_ns``; it was aborted (nothing landed)."""


def _call(coro_fn: Callable[..., Any], *args: Any) -> Any:
    """Run a platform coroutine from the driver thread; blocks until it finishes."""
    from cocotb.task import resume

    return resume(coro_fn)(*args)


# ------------------------------------------------------------------------------------------------
# The device
# ------------------------------------------------------------------------------------------------
class RtlDevice(Device):
    """The rtl target: open inside :func:`run_in_simulator` (or any cocotb test that made a
    :class:`~vtabench.targets.rtl.platform.model.Platform` current and runs the driver in a bridged
    thread).

    Options: ``poll_interval_ns`` (MSI wait slice, then a STATUS poll; default 50 us),
    ``run_timeout_ns`` (simulated run limit; default none), ``dma_timeout_ns`` (default 1 ms),
    ``use_irq`` (False: poll only), ``mmio_retries`` (re-reads of an all-ones value; default 3).
    """

    target = "rtl"

    def __init__(self, cfg: Config, mem_bytes: int = DEFAULT_MEM_BYTES, *,
                 poll_interval_ns: float = 50_000.0, run_timeout_ns: float | None = None,
                 dma_timeout_ns: float | None = 1_000_000.0, use_irq: bool = True,
                 mmio_retries: int = 3, **_: Any) -> None:
        plat = current_platform()
        if plat is None:
            raise DeviceError("the rtl target runs inside the platform simulator: call your code "
                              "through vtabench.drivers.rtl_backend.run_in_simulator(cfg, fn)")
        super().__init__(cfg, mem_bytes)
        self.platform = plat
        self.faults = plat.faults
        self.poll_interval_ns = float(poll_interval_ns)
        self.run_timeout_ns = run_timeout_ns
        self.dma_timeout_ns = dma_timeout_ns
        self.use_irq = bool(use_irq)
        self.mmio_retries = int(mmio_retries)
        self.counters = {"runs": 0, "irq_recovered_by_poll": 0, "mmio_all_ones_retries": 0,
                         "polls": 0}
        _call(plat.attach_memory, self.mem_bytes)
        version, cfg_id = self._regs("VERSION", "CONFIG_ID")
        if version == ALL_ONES:
            raise DeviceLostError(f"VERSION read 0xFFFFFFFF {self.mmio_retries + 1} times: no "
                                  "device answers on BAR0")
        if version != R.VERSION_EXPECTED:
            raise DeviceMismatchError(
                f"device VERSION {version:#010x}, driver expects {R.VERSION_EXPECTED:#010x} "
                f"(register map revision {version >> 24} vs {R.REGMAP_REVISION})")
        if cfg_id != cfg.config_id:
            raise DeviceMismatchError(
                f"device CONFIG_ID {cfg_id:#010x} is not configuration {cfg.name!r} "
                f"({cfg.config_id:#010x}): the simulator was built for another configuration")
        ops: list[tuple] = [("w", R.DRAM_BASE_LO, 0), ("w", R.DRAM_BASE_HI, 0),
                            ("w", R.DRAM_SIZE_LO, self.mem_bytes & ALL_ONES),
                            ("w", R.DRAM_SIZE_HI, self.mem_bytes >> 32)]
        for name in ("UOP", "INP", "WGT", "ACC", "OUT"):
            ops += [("w", R.REGISTERS[f"{name}_BASE_LO"], 0),
                    ("w", R.REGISTERS[f"{name}_BASE_HI"], 0)]
        ops += [("w", R.IRQ_STATUS, IRQ_CLEAR),
                ("w", R.IRQ_ENABLE, (R.IRQ_ENABLE_FINISH | R.IRQ_ENABLE_ERROR)
                 if self.use_irq else 0)]
        _call(plat.mmio, ops)

    @property
    def name(self) -> str:
        return f"rtl ({self.cfg.name}, {self.platform.link.name}, {self.platform.clock_mhz:g} MHz)"

    # --- registers ------------------------------------------------------------------------------
    def _regs(self, *names: str) -> list[int]:
        """Read registers in one MMIO batch; all-ones values are re-read (see module doc)."""
        offs = [R.REGISTERS[n] for n in names]
        vals = list(_call(self.platform.mmio, [("r", o) for o in offs]))
        for i, n in enumerate(names):
            tries = 0
            while vals[i] == ALL_ONES and tries < self.mmio_retries:
                tries += 1
                self.counters["mmio_all_ones_retries"] += 1
                vals[i] = _call(self.platform.mmio_read, offs[i])
            if vals[i] == ALL_ONES and R.DEFINED_BITS[n] != ALL_ONES:
                raise DeviceLostError(f"register {n} read 0xFFFFFFFF {tries + 1} times: the "
                                      f"device does not answer MMIO reads")
        return vals

    def registers(self, names: Sequence[str] = STATUS_REGS) -> dict[str, int]:
        """A snapshot of device registers (one MMIO batch)."""
        try:
            return dict(zip(names, self._regs(*names)))
        except DeviceLostError as exc:
            return {"lost": str(exc)}  # type: ignore[dict-item]

    def pcie_stats(self) -> dict[str, Any]:
        """Modeled PCIe traffic and time since the platform started (cumulative)."""
        s = self.platform.stats.as_dict()
        s["link"] = self.platform.link.name
        s["dma_ns"] = s["h2d_ns"] + s["d2h_ns"]
        return s

    # --- memory ---------------------------------------------------------------------------------
    def _write(self, addr: int, data: np.ndarray) -> None:
        try:
            _call(self.platform.dma_h2d, data, addr, self.dma_timeout_ns)
        except (DmaStatusError, DmaTimeout) as exc:
            raise self._dma_exc(exc, addr) from None

    def _read(self, addr: int, nbytes: int) -> np.ndarray:
        try:
            return _call(self.platform.dma_d2h, addr, nbytes,  # type: ignore[no-any-return]
                         self.dma_timeout_ns)
        except (DmaStatusError, DmaTimeout) as exc:
            raise self._dma_exc(exc, addr) from None

    def _dma_exc(self, exc: Exception, addr: int) -> DmaError:
        status = self.registers()
        if isinstance(exc, DmaTimeout):
            return DmaTimeoutError(f"{exc} (device address {addr:#x})", exc.direction, addr,
                                   exc.nbytes, 0, status)
        assert isinstance(exc, DmaStatusError)
        return DmaError(f"{exc} (device address {addr:#x})", exc.direction, addr, exc.nbytes,
                        exc.landed, status)

    # --- running --------------------------------------------------------------------------------
    def _run(self, insn_addr: int, insn_count: int, timeout_s: float | None) -> RunResult:
        plat = self.platform
        wall0 = time.perf_counter()
        (status,) = self._regs("STATUS")
        if status & R.STATUS_BUSY:
            raise DeviceError("the device is still busy with an earlier run (wait_idle())")
        while plat.take_msi():  # stale interrupts of earlier runs
            pass
        t_launch = plat.now_ns()
        _call(plat.mmio, [("w", R.IRQ_STATUS, IRQ_CLEAR),
                          ("w", R.INSN_COUNT, insn_count),
                          ("w", R.INSN_BASE_LO, insn_addr & ALL_ONES),
                          ("w", R.INSN_BASE_HI, insn_addr >> 32),
                          ("w", R.CTRL, R.CTRL_LAUNCH)])
        how = self._wait_done(t_launch, wall0, timeout_s)
        t_done = plat.now_ns()
        vals = dict(zip(COUNTER_REGS, self._regs(*COUNTER_REGS)))
        _call(plat.mmio, [("w", R.IRQ_STATUS, IRQ_CLEAR)])
        self.counters["runs"] += 1
        if vals["ERROR_CODE"]:
            code, insn = vals["ERROR_CODE"], vals["ERROR_INSN"]
            raise DeviceRunError(f"core error {code:#04x} ({CORE_ERRORS.get(code, '?')}) at "
                                 f"instruction {insn}", code, insn, self.registers())
        stats: dict[str, Any] = {
            "cycles": vals["CYCLES"],
            "load_busy_cycles": vals["LOAD_BUSY_CYCLES"],
            "compute_busy_cycles": vals["COMPUTE_BUSY_CYCLES"],
            "store_busy_cycles": vals["STORE_BUSY_CYCLES"],
            "load_insns": vals["LOAD_INSNS"], "compute_insns": vals["COMPUTE_INSNS"],
            "store_insns": vals["STORE_INSNS"], "acc_writes": vals["ACC_WRITES"],
            "completion": how,
            "run_ns": round(t_done - t_launch, 1),
            "core_ns": round(vals["CYCLES"] * 1000.0 / plat.clock_mhz, 1),
            **self.counters,
            "pcie": self.pcie_stats(),
        }
        return RunResult(insn_count, time.perf_counter() - wall0, stats)

    def _wait_done(self, t_launch: float, wall0: float, timeout_s: float | None) -> str:
        plat = self.platform
        while True:
            slice_ns = self.poll_interval_ns
            if self.run_timeout_ns is not None:
                left = self.run_timeout_ns - (plat.now_ns() - t_launch)
                slice_ns = max(1.0, min(slice_ns, left))
            got = _call(plat.wait_msi, slice_ns) if self.use_irq else (
                _call(plat.idle, slice_ns) and False)
            (status,) = self._regs("STATUS")
            self.counters["polls"] += 0 if got else 1
            if status & R.STATUS_DONE and not status & R.STATUS_BUSY:
                if got:
                    return "msi"
                if self.use_irq:
                    self.counters["irq_recovered_by_poll"] += 1
                    return "poll (interrupt lost)"
                return "poll"
            elapsed_ns = plat.now_ns() - t_launch
            if self.run_timeout_ns is not None and elapsed_ns >= self.run_timeout_ns:
                raise RunTimeoutError(
                    f"run not finished after {elapsed_ns:.0f} ns of simulated time "
                    f"(run_timeout_ns={self.run_timeout_ns:.0f}; STATUS {status:#x})",
                    timeout_s or 0.0, {"status_at_timeout": status, **self.registers()})
            if timeout_s is not None and time.perf_counter() - wall0 > timeout_s:
                raise RunTimeoutError(f"run not finished after {timeout_s} s (wall clock; "
                                      f"{elapsed_ns:.0f} ns simulated; STATUS {status:#x})",
                                      timeout_s, {"status_at_timeout": status,
                                                  **self.registers()})

    def wait_idle(self, max_ns: float = 1e9) -> bool:
        """After a timeout: wait (simulated time) until the core is no longer busy."""
        plat = self.platform
        t0 = plat.now_ns()
        while plat.now_ns() - t0 < max_ns:
            (status,) = self._regs("STATUS")
            if not status & R.STATUS_BUSY:
                while plat.take_msi():
                    pass
                _call(plat.mmio, [("w", R.IRQ_STATUS, IRQ_CLEAR)])
                return True
            _call(plat.idle, self.poll_interval_ns)
        return False

    def _close(self) -> None:
        try:
            _call(self.platform.mmio, [("w", R.IRQ_ENABLE, 0)])
        except Exception as exc:  # noqa: BLE001 - closing never raises
            self.platform.log.warning("rtl driver: disabling interrupts at close failed: %s", exc)


# ------------------------------------------------------------------------------------------------
# Launcher: build the platform simulator and run a driver function inside it
# ------------------------------------------------------------------------------------------------
class SimulatorError(RuntimeError):
    """The simulator gave no result (crash, build failure); the message has the log tail."""


def _fn_ref(fn: Callable[..., Any]) -> tuple[str, str | None, str]:
    import inspect

    try:
        path = inspect.getsourcefile(fn)
    except TypeError:
        path = None
    return (fn.__module__, path, fn.__qualname__)


def run_in_simulator(cfg: Config | str, fn: Callable[..., Any], args: Sequence[Any] = (),
                     kwargs: dict[str, Any] | None = None, *, link: str | None = None,
                     clock_mhz: float = 250.0, stub: bool = False, seed: int | None = None,
                     waves: bool | str | Path = False, quiet: bool = True) -> Any:
    """Run ``fn(*args, **kwargs)`` in the driver thread of a platform simulation of ``cfg`` and
    return its result (an exception it raises is re-raised here). ``fn`` must be a module-level
    function; arguments and result travel by pickle. ``link``: PCIe preset (gen3x8, gen3x16,
    gen4x16). ``stub``: the bench's stand-in core (no VTA core needed; a memcpy engine).
    ``waves``: True or a path: an FST of the whole simulation (default
    results/waves/<config>-pcie-<seed>.fst; needs the lz4 headers), its path printed."""
    from vtabench.targets.rtl.platform.top import build_platform

    from vtabench.spec.config import load_config
    from vtabench.targets.rtl.simjob import SimJob, pick_seed, waves_file

    if isinstance(cfg, str):
        cfg = load_config(cfg)
    b = build_platform(cfg, stub=stub, waves=bool(waves))
    seed = pick_seed(seed)
    fst = waves_file(waves, f"{cfg.name}-pcie-{seed}.fst")
    with SimJob(f"vtabench-pcie-{cfg.name}-") as sim:
        job_dir = sim.dir
        dram_file = job_dir / "dram.bin"
        dram_file.write_bytes(b"")
        job = {"fn": _fn_ref(fn), "args": tuple(args), "kwargs": dict(kwargs or {}),
               "link": link, "clock_mhz": clock_mhz, "dram_file": str(dram_file),
               "result": str(job_dir / "result.pkl")}
        (job_dir / "job.pkl").write_bytes(pickle.dumps(job))
        sim.simulate(b, "vtabench.targets.rtl.platform.sim_main", seed=seed, fst=fst,
                     plusargs=[f"+vta_platform_job={job_dir / 'job.pkl'}",
                               f"+dram_file={dram_file}"])
        rpath = Path(job["result"])
        if not rpath.exists():
            raise SimulatorError(f"platform simulation of {cfg.name} gave no result (seed "
                                 f"{seed}); log tail:\n{sim.log_tail()}")
        outcome = pickle.loads(rpath.read_bytes())
        if fst is not None:
            print(f"rtl: waves written to {fst}", file=sys.stderr, flush=True)
        if not quiet and sim.log.exists():
            print(sim.log_tail(3000), file=sys.stderr)
        if outcome[0] == "err":
            exc = outcome[1]
            if isinstance(exc, BaseException):
                try:
                    exc.add_note(f"in the platform simulator (seed {seed}):\n{outcome[2]}")
                except AttributeError:
                    pass
                raise exc
            raise SimulatorError(str(exc))
        return outcome[1]


# ------------------------------------------------------------------------------------------------
# Raw programs through the driver (vtabench exec --target rtl, make sim)
# ------------------------------------------------------------------------------------------------
INSN_ALIGN = 4096


def _raw_job(cfg: Config, code: bytes, image: np.ndarray, timeout_s: float | None,
             dev_opts: dict[str, Any]) -> tuple[np.ndarray, dict[str, Any]]:
    from vtabench.drivers.api import mem_bytes_for, open_device, run_program

    mem = mem_bytes_for(image.size, len(code), guard=INSN_ALIGN)
    with open_device("rtl", cfg, mem_bytes=mem, **dev_opts) as dev:
        res = run_program(dev, code, image, timeout_s, insn_align=INSN_ALIGN)
        stats = dict(res.stats)
        stats["wall_s"] = round(res.wall_s, 4)
        stats["pcie"] = dev.pcie_stats()  # again: now with the image read back
        return image, stats


def run_raw(cfg: Config, insns: Any, dram: np.ndarray, *, seed: int | None = None,
            waves: bool | str | None = None, timeout_s: float | None = None,
            link: str | None = None, clock_mhz: float = 250.0, **opts: Any) -> dict[str, Any]:
    """Run one program on the RTL through the driver and the PCIe model: DMA the image and the
    instructions in, launch, wait for the MSI, DMA the image out (``dram`` updated in place).
    Same signature as the other targets' run_raw (docs/dev/interfaces.md); ``opts`` go to the
    device (poll_interval_ns, run_timeout_ns, use_irq...). Returns the run's statistics with the
    modeled PCIe bytes and time each way under ``pcie``."""
    if isinstance(insns, (bytes, bytearray)):
        code = bytes(insns)
    else:
        from vtabench.spec.isa import encode_program

        code = encode_program(cfg, list(insns))
    out, stats = run_in_simulator(cfg, _raw_job, (cfg, code, dram, timeout_s, opts), link=link,
                                  clock_mhz=clock_mhz, seed=seed, waves=waves or False)
    dram[:] = out
    return stats
