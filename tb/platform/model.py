"""The host side of a PCIe card, as a vendor shell gives it to user logic (cocotb side).

:class:`Platform` drives the simulator top ``vta_pcie_top`` (tb/platform/vta_pcie_top.sv: the
VTA shell + the DPI DRAM model). It offers coroutines, each one coarse operation, which the device
server (:mod:`vtabench.tb.platform.server`) runs one per driver request:

- BAR0 MMIO (:meth:`mmio`): a batch of 32-bit reads/writes through the shell's AXI4-Lite slave,
  each paying the modeled PCIe latency (non-posted read round trip, posted write one way);
- DMA (:meth:`dma`): host memory <-> device DRAM. Simulated time advances by the cost model
  (:mod:`.link`) with one ``Timer``; the bytes move at memory speed, copied by the driver into or
  out of the DRAM file the DPI model has mapped (the same pages), as many as :meth:`dma` says
  landed;
- MSI (:meth:`wait_msi`): a watcher turns each rising edge of the shell's level interrupt into
  one MSI delivered ``msi_latency_ns`` later;
- fault injection (:attr:`faults`, :mod:`.faults`).

Python is never on the per-cycle path: the clock runs in C (cocotb Clock) and the core runs while
Python waits on a Timer or on the interrupt edge.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vtabench.tb.platform.faults import FaultPlan
from vtabench.tb.platform.link import D2H, H2D, LinkModel, LinkStats, preset

from vtabench.rtl.simjob import DRAM_KNOB_SIGNALS, DRAM_KNOBS

ALL_ONES = 0xFFFFFFFF
AXI_OKAY = 0


class DmaStatusError(Exception):
    """A DMA completed with an error status (the platform's view; the driver wraps it)."""

    def __init__(self, direction: str, nbytes: int, landed: int) -> None:
        super().__init__(f"DMA {direction} of {nbytes} bytes completed with an error after "
                         f"{landed} bytes")
        self.direction = direction
        self.nbytes = nbytes
        self.landed = landed


class DmaTimeout(Exception):
    """A DMA did not complete within the timeout it was given (it was aborted)."""

    def __init__(self, direction: str, nbytes: int, timeout_ns: float, due_ns: float) -> None:
        super().__init__(f"DMA {direction} of {nbytes} bytes not complete after {timeout_ns:.0f} "
                         f"ns (model: {due_ns:.0f} ns); aborted")
        self.direction = direction
        self.nbytes = nbytes
        self.timeout_ns = timeout_ns
        self.due_ns = due_ns


class MmioBusError(Exception):
    """The register block answered SLVERR/DECERR."""


class Platform:
    """Host + vendor shell around the VTA shell in the simulator (one per cocotb test)."""

    def __init__(self, dut: Any, dram_file: str | Path, *, link: str | LinkModel | None = None,
                 clock_mhz: float = 250.0) -> None:
        self.dut = dut
        self.dram_file = Path(dram_file)
        self.link = preset(link)
        self.clock_mhz = float(clock_mhz)
        self.clock_ps = round(1e6 / self.clock_mhz)
        self.stats = LinkStats()
        self.faults = FaultPlan()
        self.mem_bytes = 0  # device DRAM attached (attach_memory)
        self.log = dut._log
        self._msi_event: Any = None
        self._msi_count = 0

    # --- bring-up -------------------------------------------------------------------------------
    async def start(self) -> None:
        import cocotb
        from cocotb.clock import Clock
        from cocotb.triggers import ClockCycles, Event

        d = self.dut
        d.rst_ni.value = 0
        for name in ("s_axil_awvalid_i", "s_axil_wvalid_i", "s_axil_arvalid_i"):
            getattr(d, name).value = 0
        d.s_axil_bready_i.value = 1
        d.s_axil_rready_i.value = 1
        d.s_axil_awaddr_i.value = 0
        d.s_axil_araddr_i.value = 0
        d.s_axil_wdata_i.value = 0
        d.s_axil_wstrb_i.value = 0
        for knob, sig in DRAM_KNOB_SIGNALS.items():
            getattr(d, sig).value = DRAM_KNOBS[knob]
        d.dram_seed_i.value = 1
        Clock(d.clk_i, self.clock_ps, unit="ps").start(start_high=False)
        await ClockCycles(d.clk_i, 2)
        d.rst_ni.value = 1  # (the DRAM model maps its file once per reset: see attach_memory)
        await ClockCycles(d.clk_i, 2)
        self._msi_event = Event()
        cocotb.start_soon(self._msi_watcher())

    async def attach_memory(self, nbytes: int) -> None:
        """(Re)size device DRAM to ``nbytes`` zero bytes and reset the card (power-on)."""
        from cocotb.triggers import ClockCycles

        self.mem_bytes = 0
        d = self.dut
        d.rst_ni.value = 0  # stop the core (no DRAM access while the file changes size)
        await ClockCycles(d.clk_i, 2)
        with open(self.dram_file, "wb") as f:  # noqa: ASYNC230 - runs between clock edges
            f.truncate(int(nbytes))
        d.rst_ni.value = 1
        await ClockCycles(d.clk_i, 1)
        d.rst_ni.value = 0
        await ClockCycles(d.clk_i, 4)  # the DRAM model maps its file once per reset
        d.rst_ni.value = 1
        await ClockCycles(d.clk_i, 2)
        mapped = int(self.dut.dram_mapped_bytes_o.value)
        if mapped != nbytes:
            raise RuntimeError(f"DRAM model mapped {mapped} bytes, expected {nbytes}")
        self.mem_bytes = int(nbytes)

    # --- time -----------------------------------------------------------------------------------
    @staticmethod
    def now_ns() -> float:
        from cocotb.simtime import get_sim_time

        return float(get_sim_time("ps")) / 1000.0

    async def _delay(self, ns: float) -> None:
        from cocotb.triggers import Timer

        ps = round(ns * 1000)
        if ps > 0:
            await Timer(ps, unit="ps")

    # --- BAR0 MMIO ------------------------------------------------------------------------------
    async def mmio(self, ops: list[tuple]) -> list[int | None]:
        """Run a batch of MMIO operations in order: ``("r", off)``, ``("w", off, value)`` or
        ``("w", off, value, byte_enables)``. Returns one entry per op: the value read (or None
        for writes)."""
        out: list[int | None] = []
        for op in ops:
            if op[0] == "r":
                out.append(await self.mmio_read(op[1]))
            elif op[0] == "w":
                await self.mmio_write(op[1], op[2], op[3] if len(op) > 3 else 0xF)
                out.append(None)
            else:
                raise ValueError(f"bad MMIO op {op!r}")
        return out

    async def mmio_read(self, off: int) -> int:
        t0 = self.now_ns()
        await self._delay(self.link.mmio_read_ns / 2)
        value, resp = await self._axil_read(off)
        await self._delay(self.link.mmio_read_ns / 2)
        self.stats.mmio_reads += 1
        self.stats.mmio_ns += self.now_ns() - t0
        if self.faults.take_mmio_ones(off):
            self.stats.mmio_all_ones += 1
            return ALL_ONES
        if resp != AXI_OKAY:
            # A PCIe completer abort / UR shows up on the host as all ones, like a timeout.
            self.log.warning("MMIO read of %#x answered resp %d", off, resp)
            return ALL_ONES
        return value

    async def mmio_write(self, off: int, value: int, strb: int = 0xF) -> None:
        t0 = self.now_ns()
        await self._delay(self.link.mmio_write_ns)
        resp = await self._axil_write(off, value, strb)
        self.stats.mmio_writes += 1
        self.stats.mmio_ns += self.now_ns() - t0
        if resp != AXI_OKAY:
            self.log.warning("MMIO write of %#x to %#x answered resp %d (posted: dropped)",
                             value, off, resp)

    async def _axil_write(self, off: int, value: int, strb: int = 0xF) -> int:
        from cocotb.triggers import FallingEdge, RisingEdge

        d = self.dut
        await FallingEdge(d.clk_i)
        d.s_axil_awaddr_i.value = off
        d.s_axil_wdata_i.value = value & ALL_ONES
        d.s_axil_wstrb_i.value = strb & 0xF
        d.s_axil_awvalid_i.value = 1
        d.s_axil_wvalid_i.value = 1
        d.s_axil_bready_i.value = 1
        while True:
            await FallingEdge(d.clk_i)
            if int(d.s_axil_awready_o.value) and int(d.s_axil_wready_o.value):
                break
        await RisingEdge(d.clk_i)
        d.s_axil_awvalid_i.value = 0
        d.s_axil_wvalid_i.value = 0
        while True:
            await FallingEdge(d.clk_i)
            if int(d.s_axil_bvalid_o.value):
                resp = int(d.s_axil_bresp_o.value)
                break
        await RisingEdge(d.clk_i)  # B handshake (bready held high)
        return resp

    async def _axil_read(self, off: int) -> tuple[int, int]:
        from cocotb.triggers import FallingEdge, RisingEdge

        d = self.dut
        await FallingEdge(d.clk_i)
        d.s_axil_araddr_i.value = off
        d.s_axil_arvalid_i.value = 1
        d.s_axil_rready_i.value = 1
        while True:
            await FallingEdge(d.clk_i)
            if int(d.s_axil_arready_o.value):
                break
        await RisingEdge(d.clk_i)
        d.s_axil_arvalid_i.value = 0
        while True:
            await FallingEdge(d.clk_i)
            if int(d.s_axil_rvalid_o.value):
                value = int(d.s_axil_rdata_o.value)
                resp = int(d.s_axil_rresp_o.value)
                break
        await RisingEdge(d.clk_i)
        return value, resp

    # --- DMA ------------------------------------------------------------------------------------
    async def dma(self, direction: str, dev_addr: int, nbytes: int,
                  timeout_ns: float | None = None) -> tuple[int, float]:
        """One DMA of ``nbytes`` at device address ``dev_addr`` (``direction`` H2D or D2H):
        simulated time advances by the cost model (plus an injected delay). Returns (bytes that
        land, modeled ns); the caller moves them. Raises :class:`DmaTimeout` (nothing lands) or
        :class:`DmaStatusError` (its ``landed`` first bytes land)."""
        if direction not in (H2D, D2H):
            raise ValueError(f"DMA direction must be {H2D!r} or {D2H!r}, got {direction!r}")
        if not self.mem_bytes:
            raise RuntimeError("no device memory attached")
        if dev_addr < 0 or nbytes < 0 or dev_addr + nbytes > self.mem_bytes:
            raise ValueError(f"DMA {direction} [{dev_addr:#x}, +{nbytes}) outside device DRAM "
                             f"of {self.mem_bytes} bytes")
        ns = self.link.dma_ns(nbytes, direction)
        fault = self.faults.take_dma(direction)
        if fault is not None and fault.kind == "late":
            ns += fault.delay_ns
            self.stats.dma_late += 1
        if timeout_ns is not None and ns > timeout_ns:
            await self._delay(timeout_ns)
            self.stats.add_dma(direction, 0, timeout_ns)
            raise DmaTimeout(direction, nbytes, timeout_ns, ns)
        await self._delay(ns)
        landed = nbytes
        if fault is not None and fault.kind == "error":
            landed = min(fault.after_bytes, nbytes)
        self.stats.add_dma(direction, landed, ns)
        if landed != nbytes:
            self.stats.dma_errors += 1
            raise DmaStatusError(direction, nbytes, landed)
        return landed, ns

    # --- interrupts -----------------------------------------------------------------------------
    async def _msi_watcher(self) -> None:
        import cocotb
        from cocotb.triggers import RisingEdge

        while True:
            await RisingEdge(self.dut.irq_o)
            if self.faults.take_irq_loss():
                self.stats.msi_lost += 1
                self.log.info("platform: MSI lost (fault injection)")
                continue
            cocotb.start_soon(self._deliver_msi())

    async def _deliver_msi(self) -> None:
        await self._delay(self.link.msi_latency_ns)
        self.stats.msi_sent += 1
        self._msi_count += 1
        self._msi_event.set()

    def take_msi(self) -> bool:
        """Consume a delivered MSI, if any."""
        if self._msi_count:
            self._msi_count -= 1
            if not self._msi_count:
                self._msi_event.clear()
            return True
        return False

    async def wait_msi(self, max_ns: float) -> bool:
        """Wait up to ``max_ns`` of simulated time for an MSI; True when one was taken."""
        from cocotb.triggers import First, Timer

        if self.take_msi():
            return True
        ps = max(round(max_ns * 1000), 1)
        await First(self._msi_event.wait(), Timer(ps, unit="ps"))
        return self.take_msi()

    async def idle(self, ns: float) -> None:
        """Let simulated time pass (the host does something else)."""
        await self._delay(ns)

