"""Unit bench: vta_load, the load stage (LOAD INP / WGT: take, pop g2l, load with padding, push
l2g), behind the memory engine as in vta_core (top tb/unit/vta_load_tb.sv), reading DRAM from
cocotbext-axi's AxiRamRead on the AXI4 read channels.

Scoreboards: the buffer write port is applied to models of the inp and wgt buffers (pre-filled
with 0xEE, so stray and missing writes both show) and compared, after the stream, with the spec's
LOAD semantics (docs/isa.md section 4: padding writes zero) applied in order; the tokens follow a
model of the two queues: g2l popped only when offered and once per instruction with
pop_next_dep, before any of its writes; l2g pushed exactly with the retire of an instruction with
push_next_dep, never into a full queue; one retire per instruction, in order. Stimulus: random
LOADs (sizes, strides, pads on INP, token flags, don't-care fields of the other kind random),
random command-queue gaps, g2l tokens that arrive late, l2g room that comes and goes, AR / R
stalls. An SRAM range error at a random index: err_o and err_idx_o name it, it writes nothing,
and nothing after it runs; clr_i clears it.
"""

from __future__ import annotations

from pathlib import Path

import cocotb
import pytest
from cocotbext.axi import AxiRamRead, AxiReadBus

from vtabench.spec.contracts.errors import ErrorCode
from vtabench.spec.isa import Insn, MemType, Opcode, encode_program, mem_depth, mem_elem_bytes
from vtabench.tb.unit.clocked_tb import ClockedTB, config, val
from vtabench.tb.unit.runner import bench_seed, configs, run_bench
from vtabench.tb.unit.stage_tokens import StageTokens

DRAM_OFF = 0x10000
DRAM_BYTES = 1 << 18
INSN_BITS = 128


class LoadTB(ClockedTB):
    def __init__(self, dut) -> None:
        super().__init__(dut)
        self.cfg = config()
        self.ram = AxiRamRead(AxiReadBus.from_prefix(dut, "m_axi"), dut.clk_i, dut.rst_ni,
                              reset_active_level=False, size=DRAM_OFF + DRAM_BYTES)
        self.dram = self.rng.randbytes(DRAM_BYTES)
        self.ram.write(DRAM_OFF, self.dram)
        self.bufs = {m: bytearray(b"\xee" * mem_elem_bytes(self.cfg, m) * mem_depth(self.cfg, m))
                     for m in (MemType.INP, MemType.WGT)}

    def stall(self, p: float) -> None:
        def pauses():
            while True:
                yield int(self.rng.random() < p)
        self.ram.ar_channel.set_pause_generator(pauses())
        self.ram.r_channel.set_pause_generator(pauses())

    def random_load(self) -> Insn:
        r = self.rng
        mem = r.choice([MemType.INP, MemType.WGT])
        pads = [r.randrange(0, 3) if mem == MemType.INP and r.random() < 0.5 else 0
                for _ in range(4)]
        y, x = r.randrange(1, 5), r.randrange(1, 9)
        stride = r.randrange(max(1, x - 2), x + 6)
        eb, depth = mem_elem_bytes(self.cfg, mem), mem_depth(self.cfg, mem)
        size = (pads[0] + y + pads[1]) * (pads[2] + x + pads[3])
        return Insn(Opcode.LOAD, memory_type=mem, sram_base=r.randrange(0, depth - size + 1),
                    dram_base=r.randrange(0, DRAM_BYTES // eb - (y * stride + x)),
                    y_size=y, x_size=x, x_stride=stride, y_pad_0=pads[0], y_pad_1=pads[1],
                    x_pad_0=pads[2], x_pad_1=pads[3], pop_next_dep=int(r.random() < 0.5),
                    push_next_dep=int(r.random() < 0.5))

    def expected(self, insns: list[Insn]) -> dict[MemType, bytearray]:
        """The buffers after ``insns``, by the spec."""
        out = {m: bytearray(b"\xee" * len(b)) for m, b in self.bufs.items()}
        for insn in insns:
            eb = mem_elem_bytes(self.cfg, insn.memory_type)
            buf = out[insn.memory_type]
            row = insn.x_pad_0 + insn.x_size + insn.x_pad_1
            for yy in range(insn.y_pad_0 + insn.y_size + insn.y_pad_1):
                for xx in range(row):
                    e = insn.sram_base + yy * row + xx
                    y, x = yy - insn.y_pad_0, xx - insn.x_pad_0
                    if 0 <= y < insn.y_size and 0 <= x < insn.x_size:
                        a = (insn.dram_base + y * insn.x_stride + x) * eb
                        buf[e * eb:(e + 1) * eb] = self.dram[a:a + eb]
                    else:
                        buf[e * eb:(e + 1) * eb] = bytes(eb)
        return out

    async def run(self, insns: list[Insn], *, p_cmd: float = 0.7, p_tok: float = 0.3,
                  p_room: float = 0.6, max_cycles: int = 60000) -> int:
        """Feed ``insns`` (index = position) and model the tokens; returns the number retired
        when the stream is done or the stage stopped on an error."""
        d = self.dut
        words = [int.from_bytes(encode_program(self.cfg, [i]), "little") for i in insns]
        sent = retired = 0
        tokens = StageTokens(d, self.rng, "g2l", "l2g", "pop_next_dep", "push_next_dep")
        quiet = 0
        for cyc in range(max_cycles):
            offer = sent < len(insns) and self.rng.random() < p_cmd
            d.cmd_valid_i.value = int(offer)
            d.cmd_i.value = (sent << INSN_BITS) | words[sent] if offer else 0
            tokens.offer(p_tok)
            await self.settle()
            cur = retired                  # the instruction the stage works on (in order)
            tokens.check_pop(cyc, insns, cur)
            if val(d.inp_we_o) or val(d.wgt_we_o):
                assert val(d.inp_we_o) + val(d.wgt_we_o) == 1
                mem = MemType.INP if val(d.inp_we_o) else MemType.WGT
                assert mem == insns[cur].memory_type, f"instruction {cur} wrote {mem.name}"
                assert tokens.has_token(insns, cur), \
                    f"instruction {cur} wrote before its g2l token"
                buf, base, mask = self.bufs[mem], val(d.w_addr_o), val(d.w_mask_o)
                data = val(d.w_data_o).to_bytes(self.cfg.bus_bytes, "little")
                for i in range(self.cfg.bus_bytes):
                    if mask >> i & 1:
                        buf[(base + i) % len(buf)] = data[i]
            retiring = bool(val(d.retire_o))
            tokens.check_push(cyc, insns, cur, retiring, p_room)
            retired += retiring
            if offer and val(d.cmd_ready_o):
                sent += 1
            stopped = retired == len(insns) or val(d.err_o)
            quiet = quiet + 1 if stopped else 0
            await self.cycle()
            if quiet > 40:
                break
        else:
            raise AssertionError(f"{retired} of {len(insns)} retired in {max_cycles} cycles")
        d.cmd_valid_i.value = 0
        return retired


async def start(dut) -> LoadTB:
    tb = LoadTB(dut)
    await tb.start({"clr_i": 0, "halt_i": 0, "dram_off_i": DRAM_OFF, "dram_size_i": DRAM_BYTES,
                    "cmd_valid_i": 0, "cmd_i": 0, "g2l_valid_i": 0, "l2g_ready_i": 0})
    return tb


@cocotb.test()
async def streams(dut):
    """Random LOAD streams under token, room, command and memory stalls."""
    tb = await start(dut)
    done: list[Insn] = []
    for n, p_axi, p_tok in [(12, 0.0, 1.0), (30, 0.3, 0.2), (30, 0.1, 0.6)]:
        tb.stall(p_axi)
        insns = [tb.random_load() for _ in range(n)]
        assert await tb.run(insns, p_tok=p_tok) == n
        assert val(dut.err_o) == ErrorCode.NONE
        done += insns
    want = tb.expected(done)
    for mem, buf in tb.bufs.items():
        diff = [i for i in range(len(buf)) if buf[i] != want[mem][i]]
        assert not diff, f"{mem.name}: {len(diff)} bytes differ, first at {diff[:8]}"


@cocotb.test()
async def range_error(dut):
    """An INP load past the buffer's end at a random index: named, writes nothing, stops the
    stream; clr_i clears the error."""
    tb = await start(dut)
    tb.stall(0.1)
    insns = [tb.random_load() for _ in range(10)]
    k = tb.rng.randrange(10)
    depth = mem_depth(tb.cfg, MemType.INP)
    insns[k] = Insn(Opcode.LOAD, memory_type=MemType.INP, sram_base=depth - 2, y_size=1,
                    x_size=3, x_stride=3)
    assert await tb.run(insns) == k
    assert (val(dut.err_o), val(dut.err_idx_o)) == (ErrorCode.SRAM_LOAD, k)
    want = tb.expected(insns[:k])
    for mem, buf in tb.bufs.items():
        assert buf == want[mem], f"{mem.name} differs after the error"
    dut.clr_i.value = 1
    await tb.cycle()
    dut.clr_i.value = 0
    assert val(dut.err_o) == ErrorCode.NONE


# ------------------------------------------------------------------------------ pytest runner


@pytest.mark.rtl
@pytest.mark.parametrize("config", configs())
def test_load(config: str) -> None:
    run_bench("load", "vta_load_tb",
              ["vta_fifo.sv", "vta_span_mask.sv", "vta_dma_rd.sv", "vta_stage_ctrl.sv",
               "vta_load.sv", "vta_mem_engine.sv", Path(__file__).with_name("vta_load_tb.sv")],
              config=config, seed=bench_seed(), dut="vta_load")
