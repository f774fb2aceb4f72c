"""Broken stimulus for vta_token_queue: a push into a full queue and a pop of an empty one. Each
must stop the simulation with the module's assertion (a_no_overflow, a_no_underflow); the
pytest side (tests/test_rtl_assertions.py) runs one test per simulator and reads the log."""

from __future__ import annotations

import cocotb

from vtabench.tb.unit.test_token_queue import TokenQueueTB


@cocotb.test()
async def overflow(dut):
    tb = TokenQueueTB(dut)
    await tb.start({"push_i": 0, "pop_i": 0, "clr_i": 0})
    for _ in range(tb.depth):
        await tb.step(1, 0)
    await tb.step(1, 0)            # one push too many: the assertion ends the run here
    await tb.step(0, 0)


@cocotb.test()
async def underflow(dut):
    tb = TokenQueueTB(dut)
    await tb.start({"push_i": 0, "pop_i": 0, "clr_i": 0})
    await tb.step(1, 0)
    await tb.step(0, 1)
    await tb.step(0, 1)            # a pop of the empty queue
    await tb.step(0, 0)
