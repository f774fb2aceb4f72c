"""Unit bench: vta_dma_rd, the load/padding path (LOAD UOP / INP / WGT / ACC / ACC_8BIT).

A Python model of the memory engine answers row requests with bus beats (configurable latency,
random request back-pressure and beat gaps) from a random DRAM image; a monitor applies the
module's byte-window buffer writes to a model of the target buffer (pre-filled with 0xEE, so
stray and missing writes both show). The result is compared with the spec's LOAD semantics
(docs/isa.md section 4: padding writes zero, ACC_8BIT sign-extends). Directed cases cover every
memory type, all four pads, unaligned rows, overlapping rows, no-ops and the error checks (pads on
WGT / UOP, SRAM range, DRAM range); random cases vary everything; a long row checks the
throughput (one beat per cycle)."""

from __future__ import annotations

from collections import deque

import cocotb
import numpy as np
import pytest

from vtabench.tb.unit.clocked_tb import ClockedTB, config, params, val
from vtabench.tb.unit.runner import bench_seed, configs, run_bench
from vtabench.spec.contracts.errors import ErrorCode
from vtabench.spec.isa import Insn, MemType, Opcode, encode_program, mem_depth, mem_elem_bytes

BUS = params().get("BusBytes", 64)   # bytes of a beat: the configuration's bus
WIN = params().get("WinBytes", BUS)   # buffer write window (ACC8_WIN_BEATS beats: compute's DMA)
DRAM_OFF = 0x2000
DRAM_BYTES = 1 << 18
ERR_MEM_TYPE, ERR_SRAM_LOAD, ERR_SRAM_UOP, ERR_DRAM_RANGE = (
    ErrorCode.MEM_TYPE, ErrorCode.SRAM_LOAD, ErrorCode.SRAM_UOP, ErrorCode.DRAM_RANGE)


class DmaTB(ClockedTB):
    def __init__(self, dut) -> None:
        super().__init__(dut)
        self.cfg = config()
        np_rng = np.random.default_rng(self.rng.randrange(2**32))
        self.dram = np_rng.integers(0, 256, DRAM_BYTES, dtype=np.uint8)
        self.cycle_no = 0

    def sram_geometry(self, mem: MemType) -> tuple[int, int]:
        """(element bytes in the buffer, depth)"""
        if mem == MemType.ACC_8BIT:
            return mem_elem_bytes(self.cfg, MemType.ACC), mem_depth(self.cfg, MemType.ACC)
        return mem_elem_bytes(self.cfg, mem), mem_depth(self.cfg, mem)

    def expected(self, insn: Insn, sram: bytearray) -> None:
        mem = insn.memory_type
        deb = mem_elem_bytes(self.cfg, mem)
        seb, _ = self.sram_geometry(mem)
        row = insn.x_pad_0 + insn.x_size + insn.x_pad_1
        for y in range(insn.y_pad_0 + insn.y_size + insn.y_pad_1):
            for x in range(row):
                e = insn.sram_base + y * row + x
                yy, xx = y - insn.y_pad_0, x - insn.x_pad_0
                if 0 <= yy < insn.y_size and 0 <= xx < insn.x_size:
                    a = DRAM_OFF + (insn.dram_base + yy * insn.x_stride + xx) * deb
                    src = self.dram[a - DRAM_OFF + DRAM_OFF:a + deb] if False else \
                        self.dram[a:a + deb]
                    if mem == MemType.ACC_8BIT:
                        src = src.view(np.int8).astype("<i4").view(np.uint8)
                    sram[e * seb:(e + 1) * seb] = src.tobytes()
                else:
                    sram[e * seb:(e + 1) * seb] = bytes(seb)

    async def run(self, insn: Insn, *, latency: int = 4, p_req: float = 0.8, p_beat: float = 0.8,
                  max_cycles: int = 20000) -> tuple[int, bytearray, int]:
        """Run one LOAD; returns (err, buffer model, cycles from start to done)."""
        d = self.dut
        seb, depth = self.sram_geometry(insn.memory_type)
        sram = bytearray(b"\xee" * (seb * depth))
        code = encode_program(self.cfg, [insn])
        d.insn_i.value = int.from_bytes(code, "little")
        d.start_i.value = 1
        await self.cycle()
        d.start_i.value = 0
        beats: deque[tuple[int, int]] = deque()   # (cycle it may be sent, beat address)
        head = None
        for n in range(max_cycles):
            d.req_ready_i.value = int(self.rng.random() < p_req)
            if head is None and beats and beats[0][0] <= n and self.rng.random() < p_beat:
                head = beats.popleft()[1]
            if head is not None:
                d.r_valid_i.value = 1
                d.r_data_i.value = int.from_bytes(self.dram[head:head + BUS].tobytes(), "little")
            else:
                d.r_valid_i.value = 0
            await self.settle()
            if val(d.req_valid_o) and val(d.req_ready_i):
                addr, length = val(d.req_addr_o), val(d.req_len_o)
                assert length > 0
                assert DRAM_OFF <= addr and addr + length <= DRAM_OFF + DRAM_BYTES, \
                    f"request {addr:#x}+{length} outside the DRAM given to the core"
                for b in range(addr // BUS * BUS, addr + length, BUS):
                    beats.append((n + latency, b))
            if head is not None and val(d.r_ready_o):
                head = None
            if val(d.w_valid_o):
                base, mask = val(d.w_addr_o), val(d.w_mask_o)
                data = val(d.w_data_o).to_bytes(WIN, "little")
                for i in range(WIN):
                    if (mask >> i) & 1:
                        sram[(base + i) % len(sram)] = data[i]
            if val(d.done_o):
                err = val(d.err_o)
                await self.cycle()
                assert not beats and head is None, "done with beats still to come"
                return err, sram, n + 1
            await self.cycle()
        raise AssertionError(f"no done_o within {max_cycles} cycles")

    async def check(self, insn: Insn, **kw) -> int:
        err, sram, cycles = await self.run(insn, **kw)
        assert err == 0, f"unexpected error {err:#x} for {insn}"
        want = bytearray(b"\xee" * len(sram))
        self.expected(insn, want)
        if sram != want:
            diff = [i for i in range(len(sram)) if sram[i] != want[i]]
            raise AssertionError(f"{insn}: {len(diff)} bytes differ, first at {diff[:8]}")
        return cycles

    async def start_dma(self) -> None:
        await self.start({"halt_i": 0, "start_i": 0, "insn_i": 0, "dram_off_i": DRAM_OFF,
                          "dram_size_i": DRAM_BYTES, "req_ready_i": 0, "r_valid_i": 0,
                          "r_data_i": 0, "r_err_i": 0})


def load(mem, sram, dram, y, x, stride=None, pads=(0, 0, 0, 0)) -> Insn:
    return Insn(Opcode.LOAD, memory_type=mem, sram_base=sram, dram_base=dram, y_size=y,
                x_size=x, x_stride=x if stride is None else stride, y_pad_0=pads[0],
                y_pad_1=pads[1], x_pad_0=pads[2], x_pad_1=pads[3])


@cocotb.test()
async def directed(dut):
    tb = DmaTB(dut)
    await tb.start_dma()
    cases = [
        load(MemType.INP, 5, 3, 3, 5, 9, (2, 1, 1, 3)),      # all pads, unaligned rows
        load(MemType.INP, 0, 1, 4, 3, 2, (0, 0, 0, 0)),      # overlapping rows (stride < x)
        load(MemType.ACC, 7, 2, 2, 3, 4, (1, 2, 2, 1)),
        load(MemType.ACC_8BIT, 3, 5, 3, 6, 7, (1, 1, 2, 2)),  # sign extension + pads
        load(MemType.WGT, 2, 1, 2, 3, 5),                    # 2-D strided, 4 beats per tile
        load(MemType.UOP, 9, 3, 1, 37),                      # 1-D, 16 uops per beat, unaligned
        load(MemType.UOP, 0, 0, 3, 5, 11),
        load(MemType.INP, mem_depth(tb.cfg, MemType.INP) - 8, 0, 1, 8),   # up to the last
    ]
    for insn in cases:
        await tb.check(insn)
    # no-ops: no request, no write
    err, sram, _ = await tb.run(load(MemType.INP, 0, 0, 0, 5))
    assert err == 0 and set(sram) == {0xEE}
    err, sram, _ = await tb.run(load(MemType.WGT, 0, 0, 3, 0))
    assert err == 0 and set(sram) == {0xEE}


@cocotb.test()
async def errors(dut):
    tb = DmaTB(dut)
    await tb.start_dma()
    inp_depth = mem_depth(tb.cfg, MemType.INP)
    inp_eb, acc_eb = mem_elem_bytes(tb.cfg, MemType.INP), mem_elem_bytes(tb.cfg, MemType.ACC)
    cases = [
        (load(MemType.WGT, 0, 0, 1, 2, pads=(0, 0, 1, 0)), ERR_MEM_TYPE),   # pad on WGT
        (load(MemType.UOP, 0, 0, 1, 2, pads=(1, 0, 0, 0)), ERR_MEM_TYPE),   # pad on UOP
        (load(MemType.INP, 0, 0, 0, 2, pads=(1, 0, 0, 0)), ERR_MEM_TYPE),   # pad on a no-op
        (load(MemType.INP, inp_depth - 8, 0, 1, 9), ERR_SRAM_LOAD),          # past inp depth
        (load(MemType.INP, inp_depth - 8, 0, 1, 7, pads=(0, 0, 1, 1)), ERR_SRAM_LOAD),
        (load(MemType.UOP, mem_depth(tb.cfg, MemType.UOP) - 2, 0, 1, 3), ERR_SRAM_UOP),
        (load(MemType.ACC, 0, DRAM_BYTES // acc_eb - 2, 1, 3), ERR_DRAM_RANGE),  # past dram_size
        (load(MemType.INP, 0, 0, 3, 4, stride=DRAM_BYTES // inp_eb // 2), ERR_DRAM_RANGE),
    ]
    for insn, code in cases:
        err, sram, _ = await tb.run(insn)
        assert err == code, f"{insn}: error {err:#x}, expected {code:#x}"
        assert set(sram) == {0xEE}, "an instruction with an error wrote the buffer"


@cocotb.test()
async def randomised(dut):
    tb = DmaTB(dut)
    await tb.start_dma()
    r = tb.rng
    mems = [MemType.INP, MemType.WGT, MemType.ACC, MemType.ACC_8BIT, MemType.UOP]
    for _ in range(40):
        mem = r.choice(mems)
        padded = mem in (MemType.INP, MemType.ACC, MemType.ACC_8BIT)
        pads = tuple(r.randrange(0, 4) if padded else 0 for _ in range(4))
        y, x = r.randrange(1, 5), r.randrange(1, 9)
        stride = r.randrange(max(1, x - 2), x + 6)
        deb = mem_elem_bytes(tb.cfg, mem)
        _, depth = tb.sram_geometry(mem)
        size = (pads[0] + y + pads[1]) * (pads[2] + x + pads[3])
        sram = r.randrange(0, depth - size + 1)
        dram = r.randrange(0, (DRAM_BYTES - DRAM_OFF) // deb - (y * stride + x))
        await tb.check(load(mem, sram, dram, y, x, stride, pads), latency=r.randrange(1, 12),
                       p_req=r.choice([0.3, 1.0]), p_beat=r.choice([0.5, 1.0]))


@cocotb.test()
async def throughput(dut):
    """One beat per cycle when memory keeps up: a 256-tile INP row, a 64-tile WGT row, 16 rows
    of 16 INP tiles, and (with the 4-beat window) 256 tiles of ACC_8BIT (64 beats at default)."""
    tb = DmaTB(dut)
    await tb.start_dma()
    insns = [load(MemType.INP, 0, 0, 1, 256), load(MemType.WGT, 0, 0, 1, 64),
             load(MemType.INP, 0, 0, 16, 16)]
    if WIN == 4 * BUS:
        insns.append(load(MemType.ACC_8BIT, 0, 0, 1, 256))
    for insn in insns:
        beats = insn.y_size * insn.x_size * mem_elem_bytes(tb.cfg, insn.memory_type) // BUS
        cycles = await tb.check(insn, latency=4, p_req=1.0, p_beat=1.0)
        dut._log.info("%s x %d: %d beats in %d cycles", insn.memory_type.name, insn.x_size,
                      beats, cycles)
        assert cycles <= beats + 12, f"{beats} beats took {cycles} cycles"


# ------------------------------------------------------------------------------ pytest runner


@pytest.mark.rtl
@pytest.mark.parametrize("stage", ["load", "compute"])
@pytest.mark.parametrize("config", configs())
def test_dma_rd(config: str, stage: str) -> None:
    """The configuration's bus and buffers; a one-beat write window (the load stage's instance)
    and ACC8_WIN_BEATS beats (the compute stage's: ACC_8BIT at one beat per cycle when 4)."""
    from vtabench.spec.config import load_config

    cfg = load_config(config)
    params = {"BusBytes": cfg.bus_bytes}
    if stage == "compute":
        params["WinBytes"] = cfg.acc8_win_beats * cfg.bus_bytes
    run_bench("dma_rd", "vta_dma_rd", ["vta_fifo.sv", "vta_span_mask.sv", "vta_dma_rd.sv"],
              config=config, params=params, seed=bench_seed())
