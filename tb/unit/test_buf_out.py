"""Unit bench: vta_buf_out, the out buffer: the compute stage writes one element per cycle, the
store stage reads one bus-wide window per cycle (byte address of lane 0, one cycle latency).

The scoreboard is the buffer as chunks of min(ElemBytes, BusBytes) bytes. Every element write
lands in the model; every window read is checked one cycle later, lane by lane, against the model
as it was before that cycle's write: lane j holds chunk c0 + j. Lanes past the buffer's end are
don't-care (the store masks them with strobes) and chunks never written are not compared (no
reset). Directed: the first and last windows, windows at every chunk offset inside a bus beat,
a read of the element being written. Random: writes anywhere, reads mostly near recent writes,
data with all-ones and all-zeros.

The runner builds the core's instance of each configuration (vta_core.sv's parameters).
"""

from __future__ import annotations

import cocotb
import pytest

from vtabench.tb.unit.clocked_tb import ClockedTB, params, val
from vtabench.tb.unit.runner import bench_seed, configs, run_bench


class BufOutTB(ClockedTB):
    def __init__(self, dut) -> None:
        super().__init__(dut, has_reset=False)
        p = params()
        self.eb, self.depth, self.bus = p["ElemBytes"], p["Depth"], p["BusBytes"]
        self.cb = min(self.eb, self.bus)
        self.lanes = self.bus // self.cb
        self.slices = self.eb // self.cb
        self.chunks = self.depth * self.slices
        self.model: dict[int, int] = {}              # chunk -> value (written chunks only)
        self.due: tuple[int, list[int | None]] | None = None
        self.recent = [0]
        self.checked = 0

    def data(self) -> int:
        pick = self.rng.random()
        return ((1 << 8 * self.eb) - 1 if pick < 0.1 else 0 if pick < 0.2
                else self.rng.getrandbits(8 * self.eb))

    async def step(self, *, elem: int | None = None, read: int | None = None) -> None:
        """elem: an element write's index; read: a window read's first chunk."""
        d = self.dut
        c0 = read if read is not None else self.read_chunk()
        edata = self.data()
        d.elem_we_i.value = int(elem is not None)
        d.elem_idx_i.value = elem if elem is not None else self.rng.randrange(self.depth)
        d.elem_data_i.value = edata
        d.win_addr_i.value = c0 * self.cb
        await self.settle()
        if self.due is not None:
            got, (first, want) = val(d.win_data_o), self.due
            for j, chunk in enumerate(want):
                piece = (got >> (j * 8 * self.cb)) & ((1 << 8 * self.cb) - 1)
                if chunk is not None:
                    assert piece == chunk, (f"window at chunk {first} lane {j}: {piece:#x}, "
                                            f"model {chunk:#x}")
                    self.checked += 1
        self.due = (c0, [self.model.get(c0 + j) if c0 + j < self.chunks else None
                         for j in range(self.lanes)])
        if elem is not None:
            for s in range(self.slices):
                self.model[elem * self.slices + s] = (edata >> (s * 8 * self.cb)) & \
                    ((1 << 8 * self.cb) - 1)
            self.recent = [*self.recent[-63:], elem * self.slices]
        await self.cycle()

    def read_chunk(self) -> int:
        if self.rng.random() < 0.7:
            return max(0, self.rng.choice(self.recent) - self.rng.randrange(self.lanes))
        return self.rng.randrange(self.chunks)


async def start(dut) -> BufOutTB:
    tb = BufOutTB(dut)
    await tb.start({"elem_we_i": 0, "elem_idx_i": 0, "elem_data_i": 0, "win_addr_i": 0})
    return tb


@cocotb.test()
async def directed(dut):
    tb = await start(dut)
    ends = list(range(2 * tb.lanes)) + list(range(tb.depth - 2 * tb.lanes, tb.depth))
    for ix in ends:                              # the first and last elements
        await tb.step(elem=ix, read=ix * tb.slices)   # read while writing: the old chunks
    for c0 in range(2 * tb.lanes):               # windows at every offset inside a beat
        await tb.step(read=c0)
    for c0 in range(tb.chunks - 2 * tb.lanes, tb.chunks):   # the last windows (lanes past the end)
        await tb.step(read=c0)
    await tb.step(read=0)
    assert tb.checked > 0


@cocotb.test()
async def randomised(dut):
    tb = await start(dut)
    for _ in range(3000):
        if tb.rng.random() < 0.5:
            await tb.step(elem=tb.rng.randrange(tb.depth))
        else:
            await tb.step()
    assert tb.checked > 1000, f"only {tb.checked} chunks compared"


# ------------------------------------------------------------------------------ pytest runner


@pytest.mark.rtl
@pytest.mark.parametrize("config", configs())
def test_buf_out(config: str) -> None:
    from vtabench.spec.config import load_config

    cfg = load_config(config)
    run_bench("buf_out", "vta_buf_out", ["vta_sram.sv", "vta_buf_out.sv"], config=config,
              params={"ElemBytes": cfg.out_elem_bytes, "Depth": cfg.out_depth,
                      "BusBytes": cfg.bus_bytes}, seed=bench_seed())
