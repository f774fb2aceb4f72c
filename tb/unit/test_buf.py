"""Unit bench: vta_buf, an on-chip tile buffer (uop, inp, wgt, acc): banks of vta_sram storing
one write window (a bus beat, or ACC8_WIN_BEATS beats for the acc buffer) or one whole element
per cycle, with NumRd element reads of one cycle latency.

The scoreboard is the buffer as chunks of min(ElemBytes, BusBytes) bytes (the module's contract:
window lanes enabled at chunk granularity, the window's chunks wrap at the buffer's end). A
window write (chunk-aligned byte address, a random lane mask), or else an element write, lands in
the model; every read port's element is checked one cycle after its index against the model as
it was before that cycle's write (chunks never written are not compared: the RAM has no reset).
Directed: the first and last windows (the wrap), every lane alone, full and empty masks, each
element of a window read back at once, a read of the element being written. Random: writes and
reads anywhere, reads mostly of elements written lately, data with all-ones and all-zeros.

The runner builds the core's four instances of each configuration (vta_core.sv's parameters).
"""

from __future__ import annotations

import cocotb
import pytest

from vtabench.tb.unit.clocked_tb import ClockedTB, params, val
from vtabench.tb.unit.runner import bench_seed, configs, run_bench


class BufTB(ClockedTB):
    def __init__(self, dut) -> None:
        super().__init__(dut, has_reset=False)
        p = params()
        self.eb, self.depth = p["ElemBytes"], p["Depth"]
        self.bus = p["BusBytes"]
        self.win = p.get("WinBytes", self.bus)
        self.nrd = p.get("NumRd", 1)
        self.cb = min(self.eb, self.bus)               # chunk bytes
        self.lanes = self.win // self.cb
        self.slices = self.eb // self.cb
        self.chunks = self.depth * self.slices
        self.idxw = (self.depth - 1).bit_length()
        self.model: dict[int, int] = {}                # chunk -> value (written chunks only)
        self.due: list[int] | None = None              # element indices read last cycle
        self.due_model: list[tuple[int | None, ...]] = []
        self.recent: list[int] = [0]
        self.checked = 0

    def data(self, nbytes: int) -> int:
        pick = self.rng.random()
        return ((1 << 8 * nbytes) - 1 if pick < 0.1 else 0 if pick < 0.2
                else self.rng.getrandbits(8 * nbytes))

    def elem_chunks(self, idx: int) -> tuple[int | None, ...]:
        return tuple(self.model.get(idx * self.slices + s) for s in range(self.slices))

    async def step(self, *, win: tuple[int, int] | None = None, elem: int | None = None,
                   reads: list[int] | None = None) -> None:
        """win: (first chunk, lane mask) of a window write; elem: an element write's index."""
        d = self.dut
        reads = reads if reads is not None else [self.read_idx() for _ in range(self.nrd)]
        wdata, edata = self.data(self.win), self.data(self.eb)
        c0, lanes_on = win if win is not None else (self.rng.randrange(self.chunks), 0)
        mask = 0
        for lane in range(self.lanes):
            if lanes_on >> lane & 1:
                mask |= ((1 << self.cb) - 1) << (lane * self.cb)
        d.win_we_i.value = int(win is not None)
        d.win_addr_i.value = c0 * self.cb
        d.win_mask_i.value = mask
        d.win_data_i.value = wdata
        d.elem_we_i.value = int(elem is not None)
        d.elem_idx_i.value = elem if elem is not None else self.rng.randrange(self.depth)
        d.elem_data_i.value = edata
        d.rd_idx_i.value = sum(ix << (r * self.idxw) for r, ix in enumerate(reads))
        await self.settle()
        if self.due is not None:
            got = val(d.rd_data_o)
            for r, want in enumerate(self.due_model):
                word = got >> (r * 8 * self.eb)
                for s, chunk in enumerate(want):
                    piece = (word >> (s * 8 * self.cb)) & ((1 << 8 * self.cb) - 1)
                    if chunk is not None:
                        assert piece == chunk, (f"port {r} element {self.due[r]} slice {s}: "
                                                f"{piece:#x}, model {chunk:#x}")
                        self.checked += 1
        self.due, self.due_model = reads, [self.elem_chunks(ix) for ix in reads]
        if elem is not None:
            for s in range(self.slices):
                self.model[elem * self.slices + s] = (edata >> (s * 8 * self.cb)) & \
                    ((1 << 8 * self.cb) - 1)
            self.recent.append(elem)
        elif win is not None:
            for lane in range(self.lanes):
                if lanes_on >> lane & 1:
                    c = (c0 + lane) % self.chunks
                    self.model[c] = (wdata >> (lane * 8 * self.cb)) & ((1 << 8 * self.cb) - 1)
                    self.recent.append(c // self.slices)
        self.recent = self.recent[-64:]
        await self.cycle()

    def read_idx(self) -> int:
        return (self.rng.choice(self.recent) if self.rng.random() < 0.7
                else self.rng.randrange(self.depth))

    def all_lanes(self) -> int:
        return (1 << self.lanes) - 1

    def window_elems(self, c0: int) -> list[int]:
        return sorted({(c0 + k) % self.chunks // self.slices for k in range(self.lanes)})


async def start(dut) -> BufTB:
    tb = BufTB(dut)
    await tb.start({"win_we_i": 0, "win_addr_i": 0, "win_mask_i": 0, "win_data_i": 0,
                    "elem_we_i": 0, "elem_idx_i": 0, "elem_data_i": 0, "rd_idx_i": 0})
    return tb


@cocotb.test()
async def directed(dut):
    tb = await start(dut)
    step = tb.lanes                              # window-aligned chunks
    for c0 in (0, step, tb.chunks - step, tb.chunks - 1, tb.slices):
        await tb.step(win=(c0, tb.all_lanes()))
        for ix in tb.window_elems(c0):           # each element of the window read back
            await tb.step(reads=[ix] * tb.nrd)
    for lane in range(tb.lanes):                 # every lane alone, then an empty mask
        await tb.step(win=(step, 1 << lane))
        await tb.step(reads=[tb.window_elems(step)[0]] * tb.nrd)
    await tb.step(win=(step, 0))
    for ix in (0, 1, tb.depth - 1, tb.depth // 2):
        await tb.step(elem=ix, reads=[ix] * tb.nrd)   # read while writing: the old element
        await tb.step(reads=[ix] * tb.nrd)
    await tb.step(reads=[0] * tb.nrd)
    assert tb.checked > 0


@cocotb.test()
async def randomised(dut):
    tb = await start(dut)
    for _ in range(3000):
        pick = tb.rng.random()
        if pick < 0.45:
            c0 = tb.rng.randrange(tb.chunks)
            if tb.rng.random() < 0.5:
                c0 -= c0 % tb.lanes                 # aligned windows, as a bus beat lands
            lanes = tb.all_lanes() if tb.rng.random() < 0.5 else tb.rng.getrandbits(tb.lanes)
            await tb.step(win=(c0, lanes))
        elif pick < 0.7:
            await tb.step(elem=tb.rng.randrange(tb.depth))
        else:
            await tb.step()
    assert tb.checked > 1000, f"only {tb.checked} chunks compared"


# ------------------------------------------------------------------------------ pytest runner


def instance(config: str, buf: str) -> dict[str, int]:
    """vta_core's parameters of buffer ``buf`` in ``config``."""
    from vtabench.spec.config import load_config

    cfg = load_config(config)
    elem = {"uop": cfg.uop_elem_bytes, "inp": cfg.inp_elem_bytes, "wgt": cfg.wgt_elem_bytes,
            "acc": cfg.acc_elem_bytes}[buf]
    depth = {"uop": cfg.uop_depth, "inp": cfg.inp_depth, "wgt": cfg.wgt_depth,
             "acc": cfg.acc_depth}[buf]
    p = {"ElemBytes": elem, "Depth": depth, "BusBytes": cfg.bus_bytes, "NumRd": 1}
    if buf == "acc":
        p.update(WinBytes=cfg.acc8_win_beats * cfg.bus_bytes, NumRd=2)
    return p


@pytest.mark.rtl
@pytest.mark.parametrize("buf", ["acc", pytest.param("inp", marks=pytest.mark.slow),
                                 pytest.param("wgt", marks=pytest.mark.slow),
                                 pytest.param("uop", marks=pytest.mark.slow)])
@pytest.mark.parametrize("config", configs())
def test_buf(config: str, buf: str) -> None:
    run_bench("buf", "vta_buf", ["vta_sram.sv", "vta_buf.sv"], config=config,
              params=instance(config, buf), seed=bench_seed())
