"""A bench of vta_mem_engine without Python protocol checks: one read of 128 bytes from 0xfc0
(it must split at the 4 KiB boundary) and one two-beat write, with an always-ready slave. It lets
the RTL's own AXI assertions judge the engine (tests/test_rtl_assertions.py runs it on mutants:
the assertions must stop the simulation)."""

from __future__ import annotations

import cocotb

from vtabench.tb.unit.test_mem_engine import MemTB


@cocotb.test()
async def read_and_write(dut):
    tb = MemTB(dut)
    await tb.start_engine()
    d = dut
    d.m_axi_arready_i.value = 1
    d.m_axi_awready_i.value = 1
    d.m_axi_wready_i.value = 1
    d.rd_req_valid_i.value = 1            # client 0: 0xfc0 + 128 bytes
    d.rd_req_addr_i.value = 0xFC0
    d.rd_req_len_i.value = 128
    d.wr_req_valid_i.value = 1
    d.wr_req_addr_i.value = 0x2000
    d.wr_req_len_i.value = 2 * 64
    d.wr_valid_i.value = 1
    d.wr_strb_i.value = (1 << 64) - 1
    await tb.cycle()
    d.rd_req_valid_i.value = 0
    d.wr_req_valid_i.value = 0
    for _ in range(20):
        await tb.cycle()
    d.wr_valid_i.value = 0
