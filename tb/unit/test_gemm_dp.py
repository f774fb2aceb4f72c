"""Unit bench: vta_gemm_dp (BATCH x BLOCK_IN x BLOCK_OUT int8 MACs per cycle, pipelined).
Directed extremes (all -128, all 127, mixed signs: the int32 sums of the largest magnitude) and
random tiles, one new operand pair per cycle with gaps, checked against numpy; each pair's tag
comes out with valid_o one cycle ahead of its dot_o."""

from __future__ import annotations

import cocotb
import numpy as np
import pytest

from vtabench.tb.unit.clocked_tb import ClockedTB, config, val
from vtabench.tb.unit.runner import bench_seed, configs, run_bench


def pack(arr: np.ndarray) -> int:
    return int.from_bytes(np.ascontiguousarray(arr).tobytes(), "little")


def unpack_i32(value: int, n: int) -> np.ndarray:
    return np.frombuffer(value.to_bytes(4 * n, "little"), dtype="<i4")


class GemmTB(ClockedTB):
    def __init__(self, dut) -> None:
        super().__init__(dut)
        cfg = config()
        self.b, self.bi, self.bo = cfg.batch, cfg.block_in, cfg.block_out
        self.np_rng = np.random.default_rng(self.rng.randrange(2**32))

    def expect(self, inp: np.ndarray, wgt: np.ndarray) -> np.ndarray:
        return (inp.astype(np.int64) @ wgt.astype(np.int64).T).astype(np.int64)

    async def run(self, pairs: list[tuple[np.ndarray, np.ndarray]], gaps: float = 0.0) -> None:
        """Feed the pairs (tag = their index), one per cycle or with random gaps; check every
        pair's dot_o the cycle after valid_o showed its tag, and that every pair came out."""
        d = self.dut
        todo = list(enumerate(pairs))
        due: int | None = None      # tag whose dot_o is at the output this cycle
        seen = []
        idle = 0
        while todo or due is not None or idle < 12:
            if todo and self.rng.random() >= gaps:
                tag, (inp, wgt) = todo.pop(0)
                d.inp_i.value = pack(inp.astype(np.int8))
                d.wgt_i.value = pack(wgt.astype(np.int8))
                d.tag_i.value = tag
                d.valid_i.value = 1
            else:
                d.valid_i.value = 0
            await self.settle()
            if due is not None:
                got = unpack_i32(val(d.dot_o), self.b * self.bo).reshape(self.b, self.bo)
                want = self.expect(*pairs[due])
                assert np.array_equal(got, (want + 2**31) % 2**32 - 2**31), \
                    f"pair {due}: dot mismatch\ngot  {got}\nwant {want}"
                seen.append(due)
            due = val(d.tag_o) if val(d.valid_o) else None
            idle = idle + 1 if not todo and due is None else 0
            await self.cycle()
        assert seen == list(range(len(pairs))), f"pairs out: {seen}"


@cocotb.test()
async def directed_extremes(dut):
    tb = GemmTB(dut)
    await tb.start({"valid_i": 0, "tag_i": 0})
    b, bi, bo = tb.b, tb.bi, tb.bo
    full = lambda v, shape: np.full(shape, v, dtype=np.int64)  # noqa: E731
    pairs = [
        (full(-128, (b, bi)), full(-128, (bo, bi))),   # largest positive sum
        (full(-128, (b, bi)), full(127, (bo, bi))),    # largest negative sum
        (full(127, (b, bi)), full(127, (bo, bi))),
        (full(0, (b, bi)), full(-128, (bo, bi))),
    ]
    eye = np.eye(bo, bi, dtype=np.int64)
    pairs.append((np.arange(b * bi).reshape(b, bi) % 256 - 128, eye))  # identity: a copy
    await tb.run(pairs)


@cocotb.test()
async def randomised(dut):
    tb = GemmTB(dut)
    await tb.start({"valid_i": 0, "tag_i": 0})
    pairs = [(tb.np_rng.integers(-128, 128, (tb.b, tb.bi)),
              tb.np_rng.integers(-128, 128, (tb.bo, tb.bi))) for _ in range(300)]
    await tb.run(pairs[:200])
    await tb.run(pairs[200:], gaps=0.3)


# ------------------------------------------------------------------------------ pytest runner


@pytest.mark.rtl
@pytest.mark.parametrize("config", configs())
def test_gemm_dp(config: str) -> None:
    run_bench("gemm_dp", "vta_gemm_dp", ["vta_gemm_dp.sv"], config=config, params={"TagW": 16},
              seed=bench_seed())
