"""A BAR0 master that breaks the AXI4-Lite rules on purpose (cocotb test on ``vta_pcie_top``):
the platform top's protocol assertions (``a_axil_*``, docs/platform.md) must stop it.

With BREADY held low the register block cannot hand back its write response, so AWREADY falls
once its one-entry buffer is full; the master then changes AWADDR while AWVALID waits for
AWREADY, which ``a_axil_aw_held`` forbids. Run by tests/test_rtl_device.py, which expects the
simulator to fail with that assertion named."""

from __future__ import annotations

from typing import Any

import cocotb
from cocotb.triggers import ClockCycles, FallingEdge, RisingEdge
from vtabench.tb.platform.model import Platform

from vtabench.spec.contracts import regs as R

#: Clock cycles to wait for AWREADY to fall before the bench gives up (it falls within three).
MAX_WAIT_CYCLES = 20


@cocotb.test()
async def aw_changed_before_awready(dut: Any) -> None:
    await Platform(dut, "/dev/null").start()
    d = dut
    await FallingEdge(d.clk_i)
    d.s_axil_bready_i.value = 0
    d.s_axil_awaddr_i.value = R.SCRATCH
    d.s_axil_wdata_i.value = 1
    d.s_axil_wstrb_i.value = 0xF
    d.s_axil_awvalid_i.value = 1
    d.s_axil_wvalid_i.value = 1
    for _ in range(MAX_WAIT_CYCLES):
        await FallingEdge(d.clk_i)
        if not int(d.s_axil_awready_o.value):
            break
    else:
        raise AssertionError(f"AWREADY still high after {MAX_WAIT_CYCLES} cycles with BREADY low")
    await RisingEdge(d.clk_i)  # the edge that sees AWVALID waiting: the payload must hold
    d.s_axil_awaddr_i.value = R.SCRATCH + 4
    await ClockCycles(d.clk_i, 4)
    raise AssertionError("the AW payload changed before AWREADY and no assertion stopped it")
