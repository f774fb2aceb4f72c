"""Unit bench: vta_alu (BATCH x BLOCK_OUT int32 lanes; MIN / MAX / ADD / SHR combinational on
y_o, MUL on mul_o one cycle after its operands). Every opcode with directed edge operands
(INT32_MIN / MAX, 0, -1) and random ones; SHR with every amount from -40 to 40 plus the int32
extremes, against the spec's saturating rule (docs/isa.md, Decision (shift amounts)): 0..31
arithmetic right, >= 32 -> A >>> 31, -31..-1 left by -B, <= -32 -> 0."""

from __future__ import annotations

import cocotb
import numpy as np

import pytest
from cocotb.triggers import RisingEdge, Timer

from vtabench.tb.unit.clocked_tb import ClockedTB, config, seed_rng, val
from vtabench.tb.unit.runner import bench_seed, configs, run_bench

MIN, MAX, ADD, SHR, MUL = 0, 1, 2, 3, 4
I32_MIN, I32_MAX = -2**31, 2**31 - 1


def wrap(x: int) -> int:
    return (x + 2**31) % 2**32 - 2**31


def ref(op: int, a: int, b: int) -> int:
    if op == MIN:
        return min(a, b)
    if op == MAX:
        return max(a, b)
    if op == ADD:
        return wrap(a + b)
    if op == MUL:
        return wrap(a * b)
    if op == SHR:
        if b >= 32:
            return a >> 31
        if b >= 0:
            return a >> b
        if b >= -31:
            return wrap(a << -b)
        return 0
    return a


def pack(vals: list[int]) -> int:
    return int.from_bytes(np.array(vals, dtype="<i8").astype("<i4").tobytes(), "little")


def unpack(value: int, n: int) -> list[int]:
    return [int(x) for x in np.frombuffer(value.to_bytes(4 * n, "little"), dtype="<i4")]


async def check(dut, op: int, a: list[int], b: list[int]) -> None:
    """Apply the operands; MUL's result is read 1 ns after the rising edge that takes them."""
    dut.op_i.value = op
    dut.a_i.value = pack(a)
    dut.b_i.value = pack(b)
    await Timer(1, unit="ns")
    if op == MUL:
        await RisingEdge(dut.clk_i)
        await Timer(1, unit="ns")
    got = unpack(val(dut.mul_o if op == MUL else dut.y_o), len(a))
    want = [ref(op, x, y) for x, y in zip(a, b, strict=True)]
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g == w, f"op {op} lane {i}: A={a[i]} B={b[i]} got {g} want {w}"


@cocotb.test()
async def all_ops(dut):
    tb = ClockedTB(dut, has_reset=False)
    await tb.start()
    rng = seed_rng()
    cfg = config()
    lanes = cfg.batch * cfg.block_out
    edges = [I32_MIN, I32_MIN + 1, -1, 0, 1, I32_MAX - 1, I32_MAX, 255, -256]
    pairs = [(x, y) for x in edges for y in edges]
    shifts = list(range(-40, 41)) + [I32_MIN, I32_MIN + 1, I32_MAX, 1 << 16, -(1 << 16)]
    for op in (MIN, MAX, ADD, MUL, SHR):
        work = list(pairs)
        if op == SHR:
            work += [(rng.choice(edges + [rng.randrange(-2**31, 2**31)]), s) for s in shifts
                     for _ in range(3)]
        work += [(rng.randrange(-2**31, 2**31), rng.randrange(-2**31, 2**31)) for _ in range(400)]
        work += [(rng.randrange(-300, 300), rng.randrange(-40, 40)) for _ in range(200)]
        for i in range(0, len(work), lanes):
            chunk = work[i:i + lanes]
            chunk += [(0, 0)] * (lanes - len(chunk))
            await check(dut, op, [p[0] for p in chunk], [p[1] for p in chunk])


# ------------------------------------------------------------------------------ pytest runner


@pytest.mark.rtl
@pytest.mark.parametrize("config", configs())
def test_alu(config: str) -> None:
    run_bench("alu", "vta_alu", ["vta_alu.sv"], config=config, seed=bench_seed())
