"""Unit bench: vta_gemm_dp (BATCH x BLOCK_IN x BLOCK_OUT int8 MACs per cycle, registered).
Directed extremes (all -128, all 127, mixed signs: the int32 sums of the largest magnitude) and
random tiles, one new operand pair per cycle, checked against numpy."""

from __future__ import annotations

import cocotb
import numpy as np

from vtabench.targets.rtl.unit.clocked_tb import ClockedTB, val
from vtabench.spec.config import load_config


def pack(arr: np.ndarray) -> int:
    return int.from_bytes(np.ascontiguousarray(arr).tobytes(), "little")


def unpack_i32(value: int, n: int) -> np.ndarray:
    return np.frombuffer(value.to_bytes(4 * n, "little"), dtype="<i4")


class GemmTB(ClockedTB):
    def __init__(self, dut) -> None:
        super().__init__(dut, has_reset=False)
        cfg = load_config("default")
        self.b, self.bi, self.bo = cfg.batch, cfg.block_in, cfg.block_out
        self.np_rng = np.random.default_rng(self.rng.randrange(2**32))

    def expect(self, inp: np.ndarray, wgt: np.ndarray) -> np.ndarray:
        return (inp.astype(np.int64) @ wgt.astype(np.int64).T).astype(np.int64)

    async def run(self, pairs: list[tuple[np.ndarray, np.ndarray]]) -> None:
        """Feed one pair per cycle; dot_o shows pair k one cycle after it was applied."""
        d = self.dut
        prev = None
        for item in pairs + [None]:
            if item is not None:
                inp, wgt = item
                d.inp_i.value = pack(inp.astype(np.int8))
                d.wgt_i.value = pack(wgt.astype(np.int8))
                d.en_i.value = 1
            else:
                d.en_i.value = 0
            await self.settle()
            if prev is not None:
                got = unpack_i32(val(d.dot_o), self.b * self.bo).reshape(self.b, self.bo)
                want = self.expect(*prev)
                assert np.array_equal(got, (want + 2**31) % 2**32 - 2**31), \
                    f"dot mismatch\ngot  {got}\nwant {want}"
            prev = item
            await self.cycle()


@cocotb.test()
async def directed_extremes(dut):
    tb = GemmTB(dut)
    await tb.start()
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
    await tb.start()
    pairs = [(tb.np_rng.integers(-128, 128, (tb.b, tb.bi)),
              tb.np_rng.integers(-128, 128, (tb.bo, tb.bi))) for _ in range(300)]
    await tb.run(pairs)
