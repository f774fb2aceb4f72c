"""Unit bench: vta_store, the store stage (STORE: take, pop g2s, copy out-buffer rows to DRAM,
push s2g), reading the out buffer (vta_buf_out) and writing through the memory engine as in
vta_core (top tb/unit/vta_store_tb.sv), into cocotbext-axi's AxiRamWrite on the AXI4 write
channels.

The out buffer is filled with random elements through its element port (the compute stage's);
DRAM starts as 0xEE everywhere, so stray and missing writes both show. After each stream the
whole DRAM is compared with the spec's STORE semantics (docs/isa.md section 4: y_size rows of
x_size elements, x_stride apart, overlapping rows landing in order) applied to a copy. Tokens
follow a model of the two queues: g2s popped only when offered and once per instruction with
pop_prev_dep; s2g pushed exactly at the retire of an instruction with push_prev_dep, never into
a full queue; one retire per instruction, in order. Stimulus: random STOREs (sizes, strides
below and above the row, token flags), command-queue gaps, late g2s tokens, s2g room that comes
and goes, AW / W / B stalls, no-ops. Each error of a STORE (a pad, past the out buffer, past
the DRAM) at a random index: err_o and err_idx_o name it, nothing of it is written, nothing
after it runs, clr_i clears it.
"""

from __future__ import annotations

from pathlib import Path

import cocotb
import pytest
from cocotbext.axi import AxiRamWrite, AxiWriteBus

from vtabench.spec.contracts.errors import ErrorCode
from vtabench.spec.isa import Insn, MemType, Opcode, encode_program
from vtabench.tb.unit.clocked_tb import ClockedTB, config, val
from vtabench.tb.unit.runner import bench_seed, configs, run_bench
from vtabench.tb.unit.stage_tokens import StageTokens

DRAM_OFF = 0x10000
DRAM_BYTES = 1 << 16
INSN_BITS = 128


class StoreTB(ClockedTB):
    def __init__(self, dut) -> None:
        super().__init__(dut)
        self.cfg = config()
        self.eb, self.depth = self.cfg.out_elem_bytes, self.cfg.out_depth
        self.ram = AxiRamWrite(AxiWriteBus.from_prefix(dut, "m_axi"), dut.clk_i, dut.rst_ni,
                               reset_active_level=False, size=DRAM_OFF + DRAM_BYTES)
        self.ram.write(DRAM_OFF, b"\xee" * DRAM_BYTES)
        self.dram = bytearray(b"\xee" * DRAM_BYTES)   # the model
        self.out = self.rng.randbytes(self.eb * self.depth)

    def stall(self, p: float) -> None:
        def pauses():
            while True:
                yield int(self.rng.random() < p)
        for ch in (self.ram.aw_channel, self.ram.w_channel, self.ram.b_channel):
            ch.set_pause_generator(pauses())

    async def fill(self) -> None:
        """The out buffer's elements, one per cycle through its element port."""
        d = self.dut
        d.elem_we_i.value = 1
        for i in range(self.depth):
            d.elem_idx_i.value = i
            d.elem_data_i.value = int.from_bytes(self.out[i * self.eb:(i + 1) * self.eb],
                                                  "little")
            await self.cycle()
        d.elem_we_i.value = 0

    def random_store(self) -> Insn:
        r = self.rng
        y, x = r.randrange(1, 5), r.randrange(1, 9)
        stride = r.randrange(max(1, x - 2), x + 6)
        if r.random() < 0.1:               # a no-op: nothing written, tokens as usual
            y, x = r.choice([(0, x), (y, 0)])
        return Insn(Opcode.STORE, memory_type=MemType.OUT,
                    sram_base=r.randrange(0, self.depth - y * x + 1),
                    dram_base=r.randrange(0, DRAM_BYTES // self.eb - (y * stride + x)),
                    y_size=y, x_size=x, x_stride=stride, pop_prev_dep=int(r.random() < 0.5),
                    push_prev_dep=int(r.random() < 0.5))

    def apply(self, insn: Insn) -> None:
        """The spec's STORE on the DRAM model."""
        eb = self.eb
        for y in range(insn.y_size):
            for x in range(insn.x_size):
                src = (insn.sram_base + y * insn.x_size + x) * eb
                dst = (insn.dram_base + y * insn.x_stride + x) * eb
                self.dram[dst:dst + eb] = self.out[src:src + eb]

    async def run(self, insns: list[Insn], *, p_cmd: float = 0.7, p_tok: float = 0.3,
                  p_room: float = 0.6, max_cycles: int = 60000) -> int:
        """Feed ``insns`` (index = position), model the tokens; returns the number retired when
        the stream is done (and the engine idle) or the stage stopped on an error."""
        d = self.dut
        words = [int.from_bytes(encode_program(self.cfg, [i]), "little") for i in insns]
        sent = retired = 0
        tokens = StageTokens(d, self.rng, "g2s", "s2g", "pop_prev_dep", "push_prev_dep")
        quiet = 0
        for cyc in range(max_cycles):
            offer = sent < len(insns) and self.rng.random() < p_cmd
            d.cmd_valid_i.value = int(offer)
            d.cmd_i.value = (sent << INSN_BITS) | words[sent] if offer else 0
            tokens.offer(p_tok)
            await self.settle()
            cur = retired
            tokens.check_pop(cyc, insns, cur)
            retiring = bool(val(d.retire_o))
            tokens.check_push(cyc, insns, cur, retiring, p_room)
            if retiring:
                self.apply(insns[cur])
                retired += 1
            if offer and val(d.cmd_ready_o):
                sent += 1
            stopped = (retired == len(insns) and val(d.wr_idle_o)) or val(d.err_o)
            quiet = quiet + 1 if stopped else 0
            await self.cycle()
            if quiet > 40:
                break
        else:
            raise AssertionError(f"{retired} of {len(insns)} retired in {max_cycles} cycles")
        d.cmd_valid_i.value = 0
        return retired

    def compare(self) -> None:
        got = self.ram.read(DRAM_OFF, DRAM_BYTES)
        diff = [i for i in range(DRAM_BYTES) if got[i] != self.dram[i]]
        assert not diff, (f"DRAM: {len(diff)} bytes differ, first at {[hex(a) for a in diff[:8]]}"
                          f" (got {got[diff[0]]:#x}, model {self.dram[diff[0]]:#x})")


async def start(dut) -> StoreTB:
    tb = StoreTB(dut)
    await tb.start({"clr_i": 0, "halt_i": 0, "dram_off_i": DRAM_OFF, "dram_size_i": DRAM_BYTES,
                    "cmd_valid_i": 0, "cmd_i": 0, "g2s_valid_i": 0, "s2g_ready_i": 0,
                    "elem_we_i": 0, "elem_idx_i": 0, "elem_data_i": 0})
    await tb.fill()
    return tb


@cocotb.test()
async def streams(dut):
    """Random STORE streams under token, room, command and bus stalls."""
    tb = await start(dut)
    for n, p_axi, p_tok in [(12, 0.0, 1.0), (30, 0.3, 0.2), (30, 0.1, 0.6)]:
        tb.stall(p_axi)
        assert await tb.run([tb.random_store() for _ in range(n)], p_tok=p_tok) == n
        assert val(dut.err_o) == ErrorCode.NONE
        tb.compare()


@cocotb.test()
async def errors(dut):
    """A STORE with a pad, past the out buffer's end, past the DRAM's end, each at a random
    index: named, nothing of it written, nothing after it run; clr_i clears it."""
    tb = await start(dut)
    tb.stall(0.1)
    bad = {ErrorCode.MEM_TYPE: dict(y_size=1, x_size=2, x_stride=2, x_pad_1=1),
           ErrorCode.SRAM_STORE: dict(sram_base=tb.depth - 2, y_size=1, x_size=3, x_stride=3),
           ErrorCode.DRAM_RANGE: dict(dram_base=DRAM_BYTES // tb.eb - 1, y_size=1, x_size=3,
                                      x_stride=3)}
    for code, fields in bad.items():
        insns = [tb.random_store() for _ in range(10)]
        k = tb.rng.randrange(10)
        insns[k] = Insn(Opcode.STORE, memory_type=MemType.OUT, **fields)
        assert await tb.run(insns) == k
        assert (val(dut.err_o), val(dut.err_idx_o)) == (code, k), \
            f"err_o {val(dut.err_o):#x} at {val(dut.err_idx_o)}, expected {int(code):#x} at {k}"
        for _ in range(40):                # bursts in flight complete
            await tb.cycle()
        tb.compare()
        dut.clr_i.value = 1
        await tb.cycle()
        dut.clr_i.value = 0
        assert val(dut.err_o) == ErrorCode.NONE


# ------------------------------------------------------------------------------ pytest runner


@pytest.mark.rtl
@pytest.mark.parametrize("config", configs())
def test_store(config: str) -> None:
    run_bench("store", "vta_store_tb",
              ["vta_fifo.sv", "vta_span_mask.sv", "vta_stage_ctrl.sv", "vta_store.sv",
               "vta_sram.sv", "vta_buf_out.sv", "vta_mem_engine.sv",
               Path(__file__).with_name("vta_store_tb.sv")],
              config=config, seed=bench_seed(), dut="vta_store")
