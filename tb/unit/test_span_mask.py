"""Unit bench: vta_span_mask (combinational: the lanes of a bus window inside a span, the DMA byte
masks and write strobes). Lane i sits at off_i + i relative to the span's start; mask_o[i] is
set when 0 <= off_i + i < len_i, last_o when len_i - off_i <= Lanes. Checked against a Python
model of that definition (per lane, no clamping: not the module's method):
  - directed: offsets and lengths at every boundary (the most negative and positive offsets,
    -Lanes - 1 .. -Lanes + 1, -1 .. 1, Lanes - 1 .. Lanes + 1, len - Lanes +- 1, len +- 1, the
    same around the power of two P >= Lanes; len 0, 1, Lanes - 1 .. Lanes + 1, P +- 1,
    2 * Lanes, the widest lengths), every pair of them;
  - exhaustive: every (off_i, len_i) when the widths allow at most 2^16 pairs (the narrow
    instances of tests/test_rtl_units.py: a lane count that is not a power of two among them),
    else every pair with -3 Lanes <= off_i <= 3 Lanes + 1 and len_i <= 3 Lanes;
  - randomised: offsets near the span's two ends and anywhere, lengths small and anywhere.
The seed is cocotb's (printed at start)."""

from __future__ import annotations

import cocotb
import pytest
from cocotb.triggers import Timer

from vtabench.tb.unit.clocked_tb import params, seed_rng, val
from vtabench.tb.unit.runner import bench_seed, run_bench


def model(off: int, length: int, lanes: int) -> tuple[int, int]:
    """(mask, last) by the definition, lane by lane."""
    mask = sum(1 << i for i in range(lanes) if 0 <= off + i < length)
    return mask, int(length - off <= lanes)


class SpanMaskTB:
    """Drives off_i / len_i and checks mask_o / last_o 1 ns later (no clock: combinational)."""

    def __init__(self, dut) -> None:
        p = params()
        self.dut = dut
        self.lanes = p.get("Lanes", 64)
        self.offw = p.get("OffWidth", 34)
        self.lenw = p.get("LenWidth", 32)
        self.off_min, self.off_max = -(1 << (self.offw - 1)), (1 << (self.offw - 1)) - 1
        self.len_max = (1 << self.lenw) - 1
        self.rng = seed_rng()
        self.checked = 0

    def off(self, x: int) -> int:
        return min(max(x, self.off_min), self.off_max)

    def length(self, x: int) -> int:
        return min(max(x, 0), self.len_max)

    async def check(self, off: int, length: int) -> None:
        assert self.off_min <= off <= self.off_max and 0 <= length <= self.len_max
        self.dut.off_i.value = off & ((1 << self.offw) - 1)
        self.dut.len_i.value = length
        await Timer(1, unit="ns")
        want_mask, want_last = model(off, length, self.lanes)
        got_mask, got_last = val(self.dut.mask_o), val(self.dut.last_o)
        where = f"off_i={off} len_i={length} (Lanes={self.lanes})"
        assert got_mask == want_mask, (f"{where}: mask_o {got_mask:0{self.lanes}b}, "
                                       f"want {want_mask:0{self.lanes}b}")
        assert got_last == want_last, f"{where}: last_o {got_last}, want {want_last}"
        self.checked += 1

    def corner_lengths(self) -> list[int]:
        n, p = self.lanes, 1 << (self.lanes - 1).bit_length()  # p: a power of two >= Lanes
        cands = [0, 1, 2, n - 1, n, n + 1, 2 * n - 1, 2 * n, 2 * n + 1, 3 * n + 5, p - 1, p, p + 1,
                 self.len_max, self.len_max - 1, self.len_max - n, 1 << (self.lenw - 1)]
        return sorted({self.length(x) for x in cands})

    def corner_offsets(self, length: int) -> list[int]:
        n, p = self.lanes, 1 << (self.lanes - 1).bit_length()
        cands = [self.off_min, self.off_min + 1, self.off_max, self.off_max - 1,
                 -n - 1, -n, -n + 1, -n // 2, -2, -1, 0, 1, 2, n - 1, n, n + 1,
                 -p - 1, -p, -p + 1, p - 1, p, p + 1,
                 length - n - 1, length - n, length - n + 1, length - 1, length, length + 1,
                 -(1 << (self.lenw)), 1 << self.lenw]
        return sorted({self.off(x) for x in cands})


@cocotb.test()
async def directed(dut):
    tb = SpanMaskTB(dut)
    lengths = tb.corner_lengths()
    offsets = sorted({o for ln in lengths for o in tb.corner_offsets(ln)})
    for length in lengths:
        for off in offsets:
            await tb.check(off, length)
    dut._log.info("directed: %d (off_i, len_i) pairs", tb.checked)


@cocotb.test()
async def exhaustive(dut):
    tb = SpanMaskTB(dut)
    if tb.offw + tb.lenw <= 16:
        for length in range(tb.len_max + 1):
            for off in range(tb.off_min, tb.off_max + 1):
                await tb.check(off, length)
        dut._log.info("exhaustive: all %d (off_i, len_i) pairs", tb.checked)
        return
    # too wide for all pairs: every pair of small values, -3 Lanes <= off_i <= 3 Lanes + 1,
    # 0 <= len_i <= 3 Lanes
    n = tb.lanes
    for length in range(tb.length(3 * n) + 1):
        for off in range(tb.off(-3 * n), tb.off(3 * n + 1) + 1):
            await tb.check(off, length)
    dut._log.info("exhaustive: %d pairs of small values", tb.checked)


@cocotb.test()
async def randomised(dut):
    tb = SpanMaskTB(dut)
    rng, n = tb.rng, tb.lanes
    for _ in range(20000):
        kind = rng.randrange(4)
        if kind == 0:                          # anywhere
            length = rng.randrange(tb.len_max + 1)
            off = rng.randrange(tb.off_min, tb.off_max + 1)
        else:
            length = tb.length(rng.choice([rng.randrange(4 * n), rng.randrange(tb.len_max + 1)]))
            # around the start (kind 1), the end (kind 2), or inside a long span (kind 3)
            base = {1: 0, 2: length, 3: rng.randrange(length + 1)}[kind]
            off = tb.off(base + rng.randrange(-2 * n, 2 * n + 1))
        await tb.check(off, length)
    dut._log.info("randomised: %d (off_i, len_i) pairs", tb.checked)


# ------------------------------------------------------------------------------ pytest runner


@pytest.mark.rtl
@pytest.mark.parametrize("lanes,off_width,len_width", [
    (64, 34, 32),   # the DMA's bus-beat instance (directed and random)
    (8, 6, 5),      # narrow ones, checked exhaustively; one lane count not a power of two
    (6, 5, 4)])
def test_span_mask(lanes: int, off_width: int, len_width: int) -> None:
    run_bench("span_mask", "vta_span_mask", ["vta_span_mask.sv"], seed=bench_seed(),
              params={"Lanes": lanes, "OffWidth": off_width, "LenWidth": len_width})
