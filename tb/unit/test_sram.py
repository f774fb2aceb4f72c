"""Unit bench: vta_sram (one write port, NumRd synchronous read ports; a read and a write of the
same address in one cycle return the old word).

A scoreboard (a list of words) takes every write; each read port's word, one cycle after its
address, is checked against the model as it was before that cycle's write. The memory is first
written in full (every address, all-ones and all-zeros words among them), then random writes and
reads with collisions (a read of the address being written) on purpose.

The runner builds it as vta_buf's banks in each configuration: a bus beat wide, with one read
port (the uop, inp, wgt buffers) and two (the acc buffer).
"""

from __future__ import annotations

import cocotb
import pytest

from vtabench.tb.unit.clocked_tb import ClockedTB, params, val
from vtabench.tb.unit.runner import bench_seed, configs, run_bench


class SramTB(ClockedTB):
    def __init__(self, dut) -> None:
        super().__init__(dut, has_reset=False)
        p = params()
        self.width = p.get("Width", 32)
        self.depth = p.get("Depth", 16)
        self.nrd = p.get("NumRd", 1)
        self.aw = max(1, (self.depth - 1).bit_length())
        # None: not written by this test (the RAM has no reset; an earlier test left words)
        self.model: list[int | None] = [None] * self.depth
        self.due: list[int | None] = []     # words the read ports show after this edge
        self.checked = 0

    def word(self) -> int:
        pick = self.rng.random()
        return ((1 << self.width) - 1 if pick < 0.1 else 0 if pick < 0.2
                else self.rng.getrandbits(self.width))

    async def step(self, we: bool, waddr: int, raddrs: list[int]) -> None:
        d = self.dut
        wdata = self.word()
        d.we_i.value = int(we)
        d.waddr_i.value = waddr
        d.wdata_i.value = wdata
        d.raddr_i.value = sum(a << (r * self.aw) for r, a in enumerate(raddrs))
        await self.settle()
        got = val(d.rdata_o)
        for r, want in enumerate(self.due):
            word = (got >> (r * self.width)) & ((1 << self.width) - 1)
            if want is not None:
                assert word == want, f"port {r}: {word:#x}, model {want:#x}"
                self.checked += 1
        self.due = [self.model[a] for a in raddrs]   # old data on a collision
        if we:
            self.model[waddr] = wdata
        await self.cycle()


async def start(dut) -> SramTB:
    tb = SramTB(dut)
    await tb.start({"we_i": 0, "waddr_i": 0, "wdata_i": 0, "raddr_i": 0})
    for a in range(tb.depth):          # every word written: the model knows the whole memory
        await tb.step(True, a, [a] * tb.nrd)
    return tb


@cocotb.test()
async def collisions(dut):
    """Each address written while every port reads it: the old word, then the new one."""
    tb = await start(dut)
    for a in list(range(tb.depth)) * 2:
        await tb.step(True, a, [a] * tb.nrd)
        await tb.step(False, a, [a] * tb.nrd)
    assert tb.checked >= 2 * tb.depth * tb.nrd


@cocotb.test()
async def randomised(dut):
    tb = await start(dut)
    for _ in range(3000):
        waddr = tb.rng.randrange(tb.depth)
        raddrs = [waddr if tb.rng.random() < 0.2 else tb.rng.randrange(tb.depth)
                  for _ in range(tb.nrd)]
        await tb.step(tb.rng.random() < 0.6, waddr, raddrs)


# ------------------------------------------------------------------------------ pytest runner


@pytest.mark.rtl
@pytest.mark.parametrize("num_rd", [2, pytest.param(1, marks=pytest.mark.slow)])
@pytest.mark.parametrize("config", configs())
def test_sram(config: str, num_rd: int) -> None:
    from vtabench.spec.config import load_config

    width = load_config(config).bus_bytes * 8
    run_bench("sram", "vta_sram", ["vta_sram.sv"], config=config, seed=bench_seed(),
              params={"Width": width, "Depth": 32, "NumRd": num_rd})
