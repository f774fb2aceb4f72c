"""The simulated card's side of the socket: a cocotb test that serves driver requests.

Started by :mod:`vtabench.drivers.rtl.launcher` (``vtabench serve``) in the platform simulator
(top ``vta_pcie_top``) with plusargs ``+vta_socket=PATH`` (where to listen), ``+vta_link=NAME``,
``+vta_clock_mhz=F``, ``+vta_watch_pid=PID`` (stop, while no driver is connected, once that
process is gone), ``+vta_serve_once`` (stop when the first driver leaves) and
``+vta_events=PATH`` (where the one-line reports of drivers attaching and leaving go, for
``vtabench serve`` to print; without it they go to the simulator's log).

The test starts the platform (clock, reset, MSI watcher), listens, and for each connection answers
requests one at a time (:mod:`.protocol`): each is one platform coroutine (an MMIO batch, a DMA, an
interrupt wait...). While it waits for the next request it blocks in ``recv`` on the simulator's
own thread, so simulated time stands still between requests and no thread switch is paid per
request. A driver that goes away (end of stream, a reset connection) ends its session; the card
keeps its state for the next driver (``vtabench serve``) or the simulation ends (serve once).
The PCIe statistics are each driver's own: they restart when a driver attaches.
"""

from __future__ import annotations

import itertools
import json
import os
import socket
import struct
import traceback
from pathlib import Path
from typing import Any, TextIO

import cocotb

from vtabench.tb.platform.protocol import (
    PROTOCOL_VERSION,
    REPLY,
    REQUEST,
    MmioKind,
    Op,
    PeerGone,
    Status,
    recv_exact,
    unpack_mmio,
)
from vtabench.spec.contracts import regs as R
from vtabench.tb.platform.link import D2H, H2D, LinkStats, format_pcie
from vtabench.tb.platform.model import DmaStatusError, DmaTimeout, Platform
from vtabench.processes import alive

#: Seconds between checks that the watched process is still there while no driver is connected.
WATCH_POLL_S = 1.0
#: Fault hooks a driver may call (FaultPlan methods), by name.
FAULT_HOOKS = ("dma_late", "dma_error", "lose_irq", "mmio_all_ones", "clear")
#: Largest DRAM a driver may attach (bytes).
MAX_MEM_BYTES = 1 << 36


class Refused(Exception):
    """A request the server answers with Status.FAILED and this message."""


class Events:
    """The one-line reports of drivers attaching and leaving: appended to ``path`` (flushed per
    line, for ``vtabench serve`` to print), or to the simulator's log without one."""

    def __init__(self, path: str | None, log: Any) -> None:
        self._file: TextIO | None = open(path, "a") if path else None  # noqa: SIM115
        self._log = log

    def say(self, line: str) -> None:
        if self._file is None:
            self._log.info("%s", line)
        else:
            self._file.write(line + "\n")
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()


def peer_pid(conn: socket.socket) -> int | None:
    """The process id of the driver at the other end of a Unix socket (SO_PEERCRED)."""
    try:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except (OSError, AttributeError):
        return None
    return int(struct.unpack("3i", creds)[0])


class Session:
    """One driver connection on the platform: driver ``number`` of this server."""

    def __init__(self, plat: Platform, conn: socket.socket, info: dict[str, Any], number: int,
                 events: Events) -> None:
        self.plat = plat
        self.conn = conn
        self.info = info
        pid = peer_pid(conn)
        self.who = f"driver {number}" + (f" (pid {pid})" if pid is not None else "")
        self.events = events
        self.attached = False

    async def serve(self) -> None:
        """Answer requests until the driver says BYE or goes away; one line when it leaves."""
        how = await self._requests()
        if how is not None:
            self._say_left(how)

    def _say_left(self, how: str) -> None:
        if self.attached:
            stats = {**self.plat.stats.as_dict(), "link": self.plat.link.name}
            self.events.say(f"rtl: {self.who} left ({how}); {format_pcie(stats)}")
        else:
            self.events.say(f"rtl: {self.who} left without attaching ({how})")

    async def _requests(self) -> str | None:
        """Serve requests; returns how the driver left, or None when its leaving was already
        reported (a BYE is reported before its reply, so that the line is written by the time
        the driver's close returns)."""
        while True:
            try:
                head = recv_exact(self.conn, REQUEST.size)
                op, count, addr, nbytes, ns = REQUEST.unpack(head)
                payload = recv_exact(self.conn, count) if count else b""
            except (PeerGone, ConnectionError):
                return "connection closed"
            try:
                status, value, op_ns, out = await self._handle(op, addr, nbytes, ns, payload)
            except Refused as exc:
                status, value, op_ns, out = Status.FAILED, 0, 0.0, str(exc).encode()
            except Exception as exc:  # noqa: BLE001 - reported to the driver, the card goes on
                self.plat.log.warning("request %d failed:\n%s", op, traceback.format_exc())
                status, value, op_ns = Status.FAILED, 0, 0.0
                out = f"{type(exc).__name__}: {exc}".encode()
            if op == Op.BYE:
                self._say_left("said goodbye")
            try:
                self.conn.sendall(REPLY.pack(status, len(out), value, op_ns, self.plat.now_ns())
                                  + out)
            except OSError:
                return None if op == Op.BYE else "connection lost"
            if op == Op.BYE:
                return None

    async def _handle(self, op: int, addr: int, nbytes: int, ns: float,
                      payload: bytes) -> tuple[Status, int, float, bytes]:
        plat = self.plat
        limit = None if ns < 0 else ns
        if op == Op.HELLO:
            return Status.OK, PROTOCOL_VERSION, 1000.0 / plat.clock_mhz, \
                str(plat.dram_file).encode()
        if op == Op.ATTACH:
            if not 0 < addr <= MAX_MEM_BYTES or addr % 16:
                raise Refused(f"DRAM size {addr} must be a positive multiple of 16 up to "
                              f"{MAX_MEM_BYTES}")
            await plat.attach_memory(addr)
            plat.stats = LinkStats()  # this driver's own, from here
            self.attached = True
            self.events.say(f"rtl: {self.who} attached with {addr} B of DRAM")
            return Status.OK, 0, 0.0, b""
        if op == Op.MMIO:
            ops = []
            for kind, off, value, strb in unpack_mmio(payload):
                if off % 4 or off >= R.BAR0_BYTES:
                    raise Refused(f"MMIO offset {off:#x} is not a 32-bit register of BAR0 "
                                  f"({R.BAR0_BYTES:#x} bytes)")
                ops.append(("r", off) if kind == MmioKind.READ else ("w", off, value, strb & 0xF))
            values = await plat.mmio(ops)
            return Status.OK, 0, 0.0, b"".join((v or 0).to_bytes(4, "little") for v in values)
        if op in (Op.DMA_H2D, Op.DMA_D2H):
            direction = H2D if op == Op.DMA_H2D else D2H
            try:
                landed, dma_ns = await plat.dma(direction, addr, nbytes, limit)
            except DmaTimeout as exc:
                return Status.DMA_TIMEOUT, 0, exc.timeout_ns, b""
            except DmaStatusError as exc:
                return Status.DMA_ERROR, exc.landed, 0.0, b""
            except ValueError as exc:
                raise Refused(str(exc)) from None
            return Status.OK, landed, dma_ns, b""
        if op == Op.WAIT_IRQ:
            return Status.OK, int(await plat.wait_msi(max(ns, 0.0))), 0.0, b""
        if op == Op.TAKE_IRQ:
            taken = 0
            while plat.take_msi():
                taken += 1
            return Status.OK, taken, 0.0, b""
        if op == Op.IDLE:
            await plat.idle(max(ns, 0.0))
            return Status.OK, 0, 0.0, b""
        if op == Op.CALL:
            request = json.loads(payload)
            return Status.OK, 0, 0.0, json.dumps(self._call(request["fn"],
                                                            request.get("kwargs", {}))).encode()
        if op == Op.BYE:
            return Status.OK, 0, 0.0, b""
        raise Refused(f"unknown request {op}")

    def _call(self, fn: str, kwargs: dict[str, Any]) -> Any:
        plat = self.plat
        if fn == "info":
            return {**self.info, "link": plat.link.name, "clock_mhz": plat.clock_mhz,
                    "pid": os.getpid()}
        if fn == "stats":
            return plat.stats.as_dict()
        if fn == "fired":
            return list(plat.faults.fired)
        if fn in FAULT_HOOKS:
            getattr(plat.faults, fn)(**kwargs)
            return None
        raise Refused(f"unknown call {fn!r}; known: info, stats, fired, {', '.join(FAULT_HOOKS)}")


def _listen(path: Path) -> socket.socket:
    """A listening socket at ``path``; a stale file there (no server behind it) is replaced."""
    if path.exists():
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(str(path))
        except OSError:
            path.unlink()
        else:
            probe.close()
            raise RuntimeError(f"another server listens on {path}")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    staging = path.with_name(path.name + ".new")
    staging.unlink(missing_ok=True)
    sock.bind(str(staging))
    sock.listen(1)
    staging.rename(path)  # the path appears once it accepts connections
    sock.settimeout(WATCH_POLL_S)
    return sock


def _accept(listener: socket.socket, watch_pid: int | None) -> socket.socket | None:
    """The next driver connection; None once the watched process is gone."""
    while True:
        if watch_pid is not None and not alive(watch_pid):
            return None
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            continue
        conn.settimeout(None)
        return conn


@cocotb.test()
async def serve(dut: Any) -> None:
    """Serve drivers on the socket until the watched process is gone (or, once, the first
    driver left)."""
    args = cocotb.plusargs
    path = Path(str(args["vta_socket"]))
    watch = int(args["vta_watch_pid"]) if "vta_watch_pid" in args else None
    plat = Platform(dut, str(args["dram_file"]), link=str(args.get("vta_link", "")) or None,
                    clock_mhz=float(args.get("vta_clock_mhz", 250.0)))
    await plat.start()
    info = {"config": str(args.get("vta_config", "")), "seed": int(os.environ.get(
        "COCOTB_RANDOM_SEED", "0"))}
    events = Events(str(args["vta_events"]) if "vta_events" in args else None, dut._log)
    listener = _listen(path)
    try:
        for number in itertools.count(1):
            conn = _accept(listener, watch)
            if conn is None:
                dut._log.info("server: process %d is gone; stopping", watch)
                return
            with conn:
                await Session(plat, conn, info, number, events).serve()
            if "vta_serve_once" in args:
                return
    finally:
        listener.close()
        path.unlink(missing_ok=True)
        events.close()
