"""Unit bench: vta_fifo (first-word-fall-through FIFO on a RAM with a registered read port and a
bypass register for a word pushed into a FIFO that is empty after this cycle's pop).

A scoreboard (a deque) follows every push, pop and clear, and each cycle, on settled values
before the edge, the bench checks wready_o (room), rvalid_o (a word), count_o and rdata_o (the
head, whenever rvalid_o). The stimulus is random pushes, pops and rare clears in phases that
fill, drain and hover at empty and full (the bypass case, push and pop together at both ends),
with wvalid_i also raised into a full FIFO and rready_i into an empty one (both must be
ignored). The data is random with all-ones and all-zeros words mixed in (toggles).

The runner builds it with the core's instance widths of each configuration (the fetch beat
buffer: a bus beat wide; the command queues: an index and an instruction) at depths 1..16, block
RAM and LUT RAM styles.
"""

from __future__ import annotations

from collections import deque

import cocotb
import pytest

from vtabench.tb.unit.clocked_tb import ClockedTB, params, val
from vtabench.tb.unit.runner import bench_seed, configs, run_bench


class FifoTB(ClockedTB):
    def __init__(self, dut) -> None:
        super().__init__(dut)
        p = params()
        self.width = p.get("Width", 32)
        self.depth = p.get("Depth", 4)
        self.model: deque[int] = deque()
        self.pushed = 0

    def word(self) -> int:
        pick = self.rng.random()
        if pick < 0.1:
            return (1 << self.width) - 1
        if pick < 0.2:
            return 0
        return self.rng.getrandbits(self.width)

    async def step(self, push: bool, pop: bool, clr: bool = False) -> None:
        d = self.dut
        data = self.word()
        d.wvalid_i.value = int(push)
        d.wdata_i.value = data
        d.rready_i.value = int(pop)
        d.clr_i.value = int(clr)
        await self.settle()
        n = len(self.model)
        assert val(d.count_o) == n, f"count_o {val(d.count_o)}, model {n}"
        assert val(d.wready_o) == (n < self.depth), f"wready_o at count {n}"
        assert val(d.rvalid_o) == (n > 0), f"rvalid_o at count {n}"
        if n:
            assert val(d.rdata_o) == self.model[0], \
                f"head {val(d.rdata_o):#x}, model {self.model[0]:#x} (word {self.pushed - n})"
        if clr:
            self.model.clear()
        else:
            if pop and n:
                self.model.popleft()
            if push and n < self.depth:
                self.model.append(data)
                self.pushed += 1
        await self.cycle()


async def start(dut) -> FifoTB:
    tb = FifoTB(dut)
    await tb.start({"clr_i": 0, "wvalid_i": 0, "wdata_i": 0, "rready_i": 0})
    return tb


@cocotb.test()
async def directed(dut):
    """Fill to full (one push too many ignored), drain to empty (one pop too many ignored), push
    and pop together at one word (the bypass) and at full, clear when full."""
    tb = await start(dut)
    for _ in range(tb.depth + 1):
        await tb.step(True, False)
    await tb.step(True, True)          # full: the pop makes no room this cycle
    for _ in range(tb.depth + 1):
        await tb.step(False, True)
    for _ in range(5):                 # push into empty, then push + pop at one word
        await tb.step(True, False)
        await tb.step(True, True)
        await tb.step(False, True)
    for _ in range(tb.depth):
        await tb.step(True, False)
    await tb.step(True, False, clr=True)
    await tb.step(False, True)
    await tb.step(True, True)
    await tb.step(False, True)


@cocotb.test()
async def randomised(dut):
    tb = await start(dut)
    for i in range(4000):
        phase = (i // 200) % 4             # fill, drain, hover at empty, hover at full
        p_push, p_pop = ((0.8, 0.3), (0.3, 0.8), (0.5, 0.9), (0.9, 0.5))[phase]
        await tb.step(tb.rng.random() < p_push, tb.rng.random() < p_pop,
                      clr=tb.rng.random() < 0.003)


# ------------------------------------------------------------------------------ pytest runner


def instance_widths(config: str) -> dict[str, int]:
    """The widths vta_core gives its FIFOs in ``config``: the fetch beat buffer and the stage
    command queues (an instruction index and an instruction)."""
    from vtabench.spec.config import load_config
    from vtabench.spec.isa import INSN_BYTES

    return {"beat": load_config(config).bus_bytes * 8, "cmd": 32 + INSN_BYTES * 8}


#: (Depth, LutRam): `make test` runs the first at the default configuration, the rest are slow
VARIANTS = [pytest.param(16, 0, id="Depth16-ram"),
            pytest.param(16, 1, id="Depth16-lutram", marks=pytest.mark.slow),
            pytest.param(2, 1, id="Depth2-lutram", marks=pytest.mark.slow),
            pytest.param(4, 0, id="Depth4-ram", marks=pytest.mark.slow),
            # Depth 1: a one-word FIFO whose pointers stay at slot 0 (its 1-bit pointers once
            # addressed a second slot that does not exist and lost every second word)
            pytest.param(1, 1, id="Depth1-lutram", marks=pytest.mark.slow)]


@pytest.mark.rtl
@pytest.mark.parametrize("depth,lut_ram", VARIANTS)
@pytest.mark.parametrize("config", configs())
def test_fifo(config: str, depth: int, lut_ram: int) -> None:
    width = instance_widths(config)["beat" if depth > 2 else "cmd"]
    run_bench("fifo", "vta_fifo", ["vta_fifo.sv"], config=config, seed=bench_seed(),
              params={"Width": width, "Depth": depth, "LutRam": lut_ram})
