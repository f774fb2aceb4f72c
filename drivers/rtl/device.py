"""The rtl target of the driver API: the VTA shell RTL behind the modeled PCIe platform.

``open_device("rtl", cfg)`` starts a simulator process for the configuration
(:func:`.launcher.start_server`: Verilator + cocotb, the platform model around the shell) and
drives it over a Unix socket (:mod:`.protocol`); ``open_device("rtl", cfg, attach=PATH)`` drives
one that ``vtabench serve`` runs. The device DRAM is a file both processes map, so a DMA is one
request (simulated time by the link model) and a memory copy here. Several devices may be open in
one process, each with its own simulator; the simulator ends with its driver.

What the driver does (docs/platform.md), each step one request:

- open: reset the card with ``mem_bytes`` of DRAM, read VERSION and CONFIG_ID and refuse a
  mismatch (:class:`DeviceMismatchError`), write DRAM_BASE = 0, DRAM_SIZE = mem_bytes, the upstream
  pointer registers 0, enable the finish and error interrupts;
- write / read: one DMA each; an injected DMA error raises :class:`DmaError`, a DMA later than
  the link model's time plus ``dma_timeout_ns`` raises :class:`DmaTimeoutError` (the transfer is
  aborted); both carry the status registers;
- run: clear IRQ_STATUS, write INSN_COUNT / INSN_BASE, write CTRL.LAUNCH (one MMIO batch), then
  wait for the MSI in slices of ``poll_interval_ns`` of simulated time; after a slice without an
  MSI the driver reads STATUS (polling), so a lost interrupt costs at most one slice
  (``irq_recovered_by_poll`` in the stats). Timeouts: ``timeout_s`` (wall clock, the API's) and
  ``run_timeout_ns`` (simulated) raise :class:`RunTimeoutError` with the status registers; the core
  keeps running (:meth:`RtlDevice.wait_idle`). A core error (ERROR_CODE != 0) raises
  :class:`DeviceRunError`;
- MMIO reads returning 0xFFFFFFFF are re-read (``mmio_retries``); a register with undefined bits
  that keeps reading all ones means the device is gone (:class:`DeviceLostError`);
- a simulator that ends or drops the connection raises :class:`SimulatorGoneError` (never a hang).
"""

from __future__ import annotations

import json
import mmap
import socket
import sys
import time
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from vtabench.drivers.api import DEFAULT_MEM_BYTES, Device, DeviceError, RunResult, RunTimeoutError
from vtabench.drivers.rtl.errors import (
    DeviceLostError,
    DeviceMismatchError,
    DeviceRunError,
    DmaError,
    DmaTimeoutError,
    SimulatorGoneError,
)
from vtabench.drivers.rtl.launcher import ServerProcess, connect, start_server
from vtabench.tb.platform.protocol import (
    NO_LIMIT,
    PROTOCOL_VERSION,
    REPLY,
    REQUEST,
    Op,
    PeerGone,
    Reply,
    Status,
    call_payload,
    pack_mmio,
    recv_exact,
)
from vtabench.spec.contracts import regs as R
from vtabench.spec.contracts.errors import describe
from vtabench.tb.platform.link import LinkModel, preset
from vtabench.rtl.simjob import pick_seed, waves_file

if TYPE_CHECKING:
    from vtabench.spec.config import Config

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


class Channel:
    """The driver's end of the socket: one request, one reply. A closed or failed connection
    raises :class:`SimulatorGoneError` now and on every later request."""

    def __init__(self, sock: socket.socket, server: ServerProcess | None, where: str) -> None:
        self.sock = sock
        self.server = server
        self.where = where
        self.now_ns = 0.0
        self.gone: str | None = None

    def request(self, op: Op, *, addr: int = 0, nbytes: int = 0, ns: float | None = None,
                payload: bytes = b"") -> Reply:
        if self.gone is not None:
            raise SimulatorGoneError(self.gone)
        try:
            self.sock.sendall(REQUEST.pack(op, len(payload), addr, nbytes,
                                           NO_LIMIT if ns is None else float(ns)) + payload)
            status, count, value, op_ns, now = REPLY.unpack(recv_exact(self.sock, REPLY.size))
            data = recv_exact(self.sock, count) if count else b""
        except (PeerGone, OSError) as exc:
            self.gone = self._gone_message(op, exc)
            self.close()
            raise SimulatorGoneError(self.gone) from None
        except BaseException:  # KeyboardInterrupt mid-message: the stream is out of step
            self.gone = (f"the connection to the rtl simulator ({self.where}) was interrupted "
                         f"during {op.name}; open the device again")
            self.close()
            raise
        self.now_ns = now
        if status == Status.FAILED:
            raise DeviceError(f"rtl simulator refused {op.name}: {data.decode(errors='replace')}")
        return Reply(Status(status), value, op_ns, now, data)

    def call(self, fn: str, **kwargs: Any) -> Any:
        return json.loads(self.request(Op.CALL, payload=call_payload(fn, **kwargs)).payload)

    def _gone_message(self, op: Op, exc: BaseException) -> str:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        msg = f"the rtl simulator ({self.where}) is gone: connection lost during {op.name} ({why})"
        if self.server is not None:
            self.server.stop(10.0)
            msg += f": {self.server.cause()}"
        return msg

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


def _release(channel: Channel, server: ServerProcess | None, maps: list[mmap.mmap]) -> None:
    """Leave the simulator: BYE, close the socket, unmap the DRAM, wait for a simulator started
    for this device to end."""
    if channel.gone is None:
        try:
            channel.request(Op.BYE)
        except DeviceError:
            pass
    channel.close()
    for m in maps:
        try:
            m.close()
        except BufferError:
            pass  # a view of it is still alive; the mapping goes with it
    if server is not None:
        server.stop()


class FaultHooks:
    """The platform's fault injection (:class:`vtabench.tb.platform.faults.FaultPlan`)
    armed from the driver's process; each call is one request. docs/platform.md lists what each
    fault does and what the driver does about it."""

    def __init__(self, channel: Channel) -> None:
        self._channel = channel

    def dma_late(self, delay_ns: float, direction: str | None = None, nth: int = 0) -> None:
        self._channel.call("dma_late", delay_ns=float(delay_ns), direction=direction, nth=nth)

    def dma_error(self, direction: str | None = None, nth: int = 0, after_bytes: int = 0) -> None:
        self._channel.call("dma_error", direction=direction, nth=nth, after_bytes=after_bytes)

    def lose_irq(self, count: int = 1) -> None:
        self._channel.call("lose_irq", count=count)

    def mmio_all_ones(self, count: int = 1, offset: int | None = None) -> None:
        self._channel.call("mmio_all_ones", count=count, offset=offset)

    def clear(self) -> None:
        self._channel.call("clear")

    @property
    def fired(self) -> list[str]:
        """The faults that fired so far, in order (``dma_error:h2d``, ``lost_irq``...)."""
        return list(self._channel.call("fired"))


class RtlDevice(Device):
    """The rtl target (see the module doc).

    Simulator options (a simulator started here; ``vtabench serve`` takes them for one it runs):
    ``link`` (PCIe preset: gen3x8, gen3x16, gen4x16), ``clock_mhz`` (250), ``seed`` (the
    simulator's random initialisation and the DRAM model; random when None, in :attr:`seed`),
    ``waves`` (True or a path: an FST of the whole simulation, written when the device closes),
    ``stub`` (the bench's stand-in core). ``attach``: the socket of a running simulator instead.

    Driver options: ``poll_interval_ns`` (MSI wait slice, then a STATUS poll; default 50 us),
    ``run_timeout_ns`` (simulated run limit; default none), ``dma_timeout_ns`` (how much later
    than the link model a DMA may complete; default 1 ms),
    ``use_irq`` (False: poll only), ``mmio_retries`` (re-reads of an all-ones value; default 3).
    """

    target = "rtl"

    def __init__(self, cfg: Config, mem_bytes: int = DEFAULT_MEM_BYTES, *,
                 attach: str | Path | None = None, link: str | None = None,
                 clock_mhz: float | None = None, seed: int | None = None,
                 waves: bool | str | Path = False, stub: bool = False,
                 poll_interval_ns: float = 50_000.0, run_timeout_ns: float | None = None,
                 dma_timeout_ns: float | None = 1_000_000.0, use_irq: bool = True,
                 mmio_retries: int = 3, **_: Any) -> None:
        super().__init__(cfg, mem_bytes)
        self.poll_interval_ns = float(poll_interval_ns)
        self.run_timeout_ns = run_timeout_ns
        self.dma_timeout_ns = dma_timeout_ns
        self.use_irq = bool(use_irq)
        self.mmio_retries = int(mmio_retries)
        self.counters = {"runs": 0, "irq_recovered_by_poll": 0, "mmio_all_ones_retries": 0,
                         "polls": 0}
        self.waves: Path | None = None
        server: ServerProcess | None = None
        if attach is None:
            seed = pick_seed(seed)
            self.waves = waves_file(waves, f"{cfg.name}-pcie-{seed}.fst")
            where = f"{cfg.name}, started here"
            server = start_server(cfg, link=link, clock_mhz=clock_mhz or 250.0, seed=seed,
                                  waves=self.waves, stub=stub)
            try:
                sock = server.connect()
            except BaseException:
                server.stop(0.0)
                raise
        else:
            given = [k for k, v in (("link", link), ("clock_mhz", clock_mhz), ("seed", seed),
                                    ("waves", waves), ("stub", stub)) if v]
            if given:
                raise DeviceError(f"{', '.join(given)}: set by the simulator you attach to "
                                  f"(vtabench serve options), not by the driver")
            where = f"serving on {attach}"
            sock = connect(attach)
        self._channel = Channel(sock, server, where)
        self._maps: list[mmap.mmap] = []  # the DRAM mapping, once made
        self._finalizer = weakref.finalize(self, _release, self._channel, server, self._maps)
        try:
            self._attach()
        except BaseException:
            self._finalizer()
            raise
        self.faults = FaultHooks(self._channel)

    def _attach(self) -> None:
        ch = self._channel
        hello = ch.request(Op.HELLO)
        if hello.value != PROTOCOL_VERSION:
            raise DeviceMismatchError(f"the simulator speaks protocol {hello.value}, this driver "
                                      f"{PROTOCOL_VERSION}")
        info = ch.call("info")
        self.link: LinkModel = preset(info["link"])
        self.clock_mhz = float(info["clock_mhz"])
        self.seed = int(info["seed"])
        self.sim_pid = int(info["pid"])
        ch.request(Op.ATTACH, addr=self.mem_bytes)
        with open(hello.payload.decode(), "r+b") as f:
            self._maps.append(mmap.mmap(f.fileno(), self.mem_bytes))
        self._dram = np.frombuffer(self._maps[0], dtype=np.uint8)
        version, cfg_id = self._regs("VERSION", "CONFIG_ID")
        if version == ALL_ONES:
            raise DeviceLostError(f"VERSION read 0xFFFFFFFF {self.mmio_retries + 1} times: no "
                                  "device answers on BAR0")
        if version != R.VERSION_EXPECTED:
            raise DeviceMismatchError(
                f"device VERSION {version:#010x}, driver expects {R.VERSION_EXPECTED:#010x} "
                f"(register map revision {version >> 24} vs {R.REGMAP_REVISION})")
        if cfg_id != self.cfg.config_id:
            raise DeviceMismatchError(
                f"device CONFIG_ID {cfg_id:#010x} is not configuration {self.cfg.name!r} "
                f"({self.cfg.config_id:#010x}): the simulator was built for another "
                f"configuration")
        ops: list[tuple] = [("w", R.DRAM_BASE_LO, 0), ("w", R.DRAM_BASE_HI, 0),
                            ("w", R.DRAM_SIZE_LO, self.mem_bytes & ALL_ONES),
                            ("w", R.DRAM_SIZE_HI, self.mem_bytes >> 32)]
        for name in ("UOP", "INP", "WGT", "ACC", "OUT"):
            ops += [("w", R.REGISTERS[f"{name}_BASE_LO"], 0),
                    ("w", R.REGISTERS[f"{name}_BASE_HI"], 0)]
        ops += [("w", R.IRQ_STATUS, IRQ_CLEAR),
                ("w", R.IRQ_ENABLE, (R.IRQ_ENABLE_FINISH | R.IRQ_ENABLE_ERROR)
                 if self.use_irq else 0)]
        self.mmio(ops)

    @property
    def name(self) -> str:
        return (f"rtl ({self.cfg.name}, {self.link.name}, {self.clock_mhz:g} MHz, seed "
                f"{self.seed})")

    # --- the card's primitives (one request each) ----------------------------------------------
    def mmio(self, ops: Sequence[tuple]) -> list[int]:
        """A batch of BAR0 accesses in order: ``("r", offset)``, ``("w", offset, value)`` or
        ``("w", offset, value, byte_enables)``; returns one value per op (0 for writes)."""
        self._check_open()
        data = self._channel.request(Op.MMIO, payload=pack_mmio(ops)).payload
        return list(np.frombuffer(data, dtype="<u4").tolist())

    def wait_irq(self, max_ns: float) -> bool:
        """Wait up to ``max_ns`` of simulated time for an MSI; True when one came (taken)."""
        return bool(self._channel.request(Op.WAIT_IRQ, ns=max_ns).value)

    def take_irq(self) -> int:
        """Take the MSIs that arrived and were not waited for; returns how many."""
        return int(self._channel.request(Op.TAKE_IRQ).value)

    def idle(self, ns: float) -> None:
        """Let ``ns`` of simulated time pass (the host does something else)."""
        self._channel.request(Op.IDLE, ns=ns)

    def modeled_ns(self) -> float:
        """Simulated time of the platform (ns since it started)."""
        return self._channel.now_ns

    def pcie_stats(self) -> dict[str, Any]:
        """Modeled PCIe traffic and time since this driver attached (cumulative)."""
        s: dict[str, Any] = self._channel.call("stats")
        s["link"] = self.link.name
        s["dma_ns"] = s["h2d_ns"] + s["d2h_ns"]
        return s

    # --- registers ------------------------------------------------------------------------------
    def _regs(self, *names: str) -> list[int]:
        """Read registers in one MMIO batch; all-ones values are re-read (see module doc)."""
        offs = [R.REGISTERS[n] for n in names]
        vals = self.mmio([("r", o) for o in offs])
        for i, n in enumerate(names):
            tries = 0
            while vals[i] == ALL_ONES and tries < self.mmio_retries:
                tries += 1
                self.counters["mmio_all_ones_retries"] += 1
                (vals[i],) = self.mmio([("r", offs[i])])
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

    # --- memory ---------------------------------------------------------------------------------
    def _write(self, addr: int, data: np.ndarray) -> None:
        r = self._channel.request(Op.DMA_H2D, addr=addr, nbytes=data.size,
                                  ns=self._dma_limit(data.size, "h2d"))
        self._dram[addr:addr + r.value] = data[:r.value]
        if r.status != Status.OK:
            raise self._dma_exc(r, "h2d", addr, data.size)

    def _read(self, addr: int, nbytes: int) -> np.ndarray:
        r = self._channel.request(Op.DMA_D2H, addr=addr, nbytes=nbytes,
                                  ns=self._dma_limit(nbytes, "d2h"))
        if r.status != Status.OK:
            raise self._dma_exc(r, "d2h", addr, nbytes)
        return self._dram[addr:addr + nbytes].copy()

    def _dma_limit(self, nbytes: int, direction: str) -> float | None:
        """A DMA's time limit: ``dma_timeout_ns`` past the link model's time for it."""
        if self.dma_timeout_ns is None:
            return None
        return self.dma_timeout_ns + self.link.dma_ns(nbytes, direction)

    def _dma_exc(self, r: Reply, direction: str, addr: int, nbytes: int) -> DmaError:
        status = self.registers()
        if r.status == Status.DMA_TIMEOUT:
            return DmaTimeoutError(f"DMA {direction} of {nbytes} bytes not complete after "
                                   f"{r.ns:.0f} ns; aborted (device address {addr:#x})",
                                   direction, addr, nbytes, 0, status)
        return DmaError(f"DMA {direction} of {nbytes} bytes completed with an error after "
                        f"{r.value} bytes (device address {addr:#x})", direction, addr, nbytes,
                        r.value, status)

    # --- running --------------------------------------------------------------------------------
    def _run(self, insn_addr: int, insn_count: int, timeout_s: float | None) -> RunResult:
        wall0 = time.perf_counter()
        (status,) = self._regs("STATUS")
        if status & R.STATUS_BUSY:
            raise DeviceError("the device is still busy with an earlier run (wait_idle())")
        self.take_irq()  # stale interrupts of earlier runs
        t_launch = self.modeled_ns()
        self.mmio([("w", R.IRQ_STATUS, IRQ_CLEAR), ("w", R.INSN_COUNT, insn_count),
                   ("w", R.INSN_BASE_LO, insn_addr & ALL_ONES),
                   ("w", R.INSN_BASE_HI, insn_addr >> 32), ("w", R.CTRL, R.CTRL_LAUNCH)])
        how = self._wait_done(t_launch, wall0, timeout_s)
        t_done = self.modeled_ns()
        vals = dict(zip(COUNTER_REGS, self._regs(*COUNTER_REGS)))
        self.mmio([("w", R.IRQ_STATUS, IRQ_CLEAR)])
        self.counters["runs"] += 1
        if vals["ERROR_CODE"]:
            code, insn = vals["ERROR_CODE"], vals["ERROR_INSN"]
            raise DeviceRunError(f"core error: {describe(code)} at instruction {insn}", code,
                                 insn, self.registers())
        stats: dict[str, Any] = {
            "cycles": vals["CYCLES"],
            "load_busy_cycles": vals["LOAD_BUSY_CYCLES"],
            "compute_busy_cycles": vals["COMPUTE_BUSY_CYCLES"],
            "store_busy_cycles": vals["STORE_BUSY_CYCLES"],
            "load_insns": vals["LOAD_INSNS"], "compute_insns": vals["COMPUTE_INSNS"],
            "store_insns": vals["STORE_INSNS"], "acc_writes": vals["ACC_WRITES"],
            "completion": how,
            "run_ns": round(t_done - t_launch, 1),
            "core_ns": round(vals["CYCLES"] * 1000.0 / self.clock_mhz, 1),
            **self.counters,
            "pcie": self.pcie_stats(),
        }
        return RunResult(insn_count, time.perf_counter() - wall0, stats)

    def _wait_done(self, t_launch: float, wall0: float, timeout_s: float | None) -> str:
        while True:
            slice_ns = self.poll_interval_ns
            if self.run_timeout_ns is not None:
                left = self.run_timeout_ns - (self.modeled_ns() - t_launch)
                slice_ns = max(1.0, min(slice_ns, left))
            if self.use_irq:
                got = self.wait_irq(slice_ns)
            else:
                self.idle(slice_ns)
                got = False
            (status,) = self._regs("STATUS")
            self.counters["polls"] += 0 if got else 1
            if status & R.STATUS_DONE and not status & R.STATUS_BUSY:
                if got:
                    return "msi"
                if self.use_irq:
                    self.counters["irq_recovered_by_poll"] += 1
                    return "poll (interrupt lost)"
                return "poll"
            elapsed_ns = self.modeled_ns() - t_launch
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
        t0 = self.modeled_ns()
        while self.modeled_ns() - t0 < max_ns:
            (status,) = self._regs("STATUS")
            if not status & R.STATUS_BUSY:
                self.take_irq()
                self.mmio([("w", R.IRQ_STATUS, IRQ_CLEAR)])
                return True
            self.idle(self.poll_interval_ns)
        return False

    def _close(self) -> None:
        if self._channel.gone is None:
            try:
                self._channel.request(Op.MMIO, payload=pack_mmio([("w", R.IRQ_ENABLE, 0)]))
            except DeviceError as exc:  # closing never raises
                print(f"rtl: disabling interrupts at close failed: {exc}", file=sys.stderr)
        del self._dram
        self._finalizer()
        if self.waves is not None:
            print(f"rtl: waves written to {self.waves}", file=sys.stderr, flush=True)
