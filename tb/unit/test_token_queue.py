"""Unit bench: vta_token_queue (dependency-token counter). Directed fill / drain / clear and a
randomised push / pop sequence checked every cycle against a counting model. The stimulus keeps
the queue's contract (push only when ready_o, pop only when valid_o): a push past full or a pop
of an empty queue fires the module's assertions (unit/test_token_queue_misuse.py)."""

from __future__ import annotations

import cocotb
import pytest

from vtabench.tb.unit.clocked_tb import ClockedTB, params, val
from vtabench.tb.unit.runner import bench_seed, run_bench

TOP, SOURCES = "vta_token_queue", ["vta_token_queue.sv"]


class TokenQueueTB(ClockedTB):
    def __init__(self, dut) -> None:
        super().__init__(dut)
        self.depth = params().get("Depth", 256)
        self.count = 0

    async def step(self, push: int, pop: int, clr: int = 0) -> None:
        d = self.dut
        d.push_i.value = push
        d.pop_i.value = pop
        d.clr_i.value = clr
        await self.settle()
        assert val(d.ready_o) == (self.count < self.depth), f"ready_o at count {self.count}"
        assert val(d.valid_o) == (self.count > 0), f"valid_o at count {self.count}"
        assert val(d.count_o) == self.count
        if clr:
            self.count = 0
        else:
            self.count += (push and self.count < self.depth) - (pop and self.count > 0)
        await self.cycle()


@cocotb.test()
async def directed(dut):
    tb = TokenQueueTB(dut)
    await tb.start({"push_i": 0, "pop_i": 0, "clr_i": 0})
    for _ in range(tb.depth):              # fill to full
        await tb.step(1, 0)
    assert tb.count == tb.depth
    await tb.step(0, 1)                    # full: a pop makes room
    await tb.step(1, 1)                    # push and pop together keep the count
    await tb.step(1, 0)
    assert tb.count == tb.depth
    for _ in range(tb.depth):              # drain to empty
        await tb.step(0, 1)
    assert tb.count == 0
    await tb.step(1, 0)
    await tb.step(1, 1)
    assert tb.count == 1
    await tb.step(1, 0)
    await tb.step(0, 0, clr=1)             # clear
    await tb.step(0, 0)
    assert tb.count == 0


@cocotb.test()
async def randomised(dut):
    tb = TokenQueueTB(dut)
    await tb.start({"push_i": 0, "pop_i": 0, "clr_i": 0})
    for i in range(3000):
        bias = 0.7 if (i // 300) % 2 == 0 else 0.3   # phases that fill and that drain
        push = int(tb.rng.random() < bias and tb.count < tb.depth)
        pop = int(tb.rng.random() < 1 - bias and tb.count > 0)
        await tb.step(push, pop, clr=int(tb.rng.random() < 0.002))


# ------------------------------------------------------------------------------ pytest runner


@pytest.mark.rtl
@pytest.mark.parametrize("depth", [16, pytest.param(256, marks=pytest.mark.slow)])
def test_token_queue(depth: int) -> None:
    """Depth 256: the core's queues (TOKEN_QUEUE_DEPTH, the same in every configuration)."""
    run_bench("token_queue", TOP, SOURCES, params={"Depth": depth}, seed=bench_seed())
