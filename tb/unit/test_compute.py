"""Unit bench: vta_compute, the compute stage (LOAD UOP / ACC / ACC_8BIT, GEMM, ALU, FINISH: take,
pop l2g / s2g, run, push g2l / g2s), between the buffers it uses in vta_core and behind the
memory engine (top tb/unit/vta_compute_tb.sv), reading DRAM from cocotbext-axi's AxiRamRead.

Programs are whole VTA programs (so that fsim, vtabench.fsim, runs them): every directed program
of vtabench.verify.directed whose inp / wgt elements are each loaded at most once (every ALU op
with immediates and tensors, GEMM loops, resets and dst repeats, ALU hazards, padded ACC /
ACC_8BIT loads), and random compute programs (random GEMM loops and resets, every ALU op with
random immediates, SHR with every class of shift amount, MUL, tensor operands, LOAD ACC /
ACC_8BIT with pads and strides, empty loops; half the loops on three acc elements, so that
iterations read what the one to three before them wrote). The programs run in a row, each from
the buffers the last left (fsim starts from them too). The bench fills the inp and wgt buffers with
fsim's final inp / wgt (the only load-stage writes they get) and feeds the stage the
instructions fetch routes to it, each as {program index, word} with the program's don't-care
fields and reserved bits random (vtabench.verify.random_program.randomize_ignored) and random
token flags (the peers' queues, tb/unit/stage_tokens.py, offer and drain tokens at random: a pop
only of an offered token, once per instruction that asks, a push exactly at its retire, never
into a full queue; one retire per instruction, in order). Scoreboard: the stage's buffer
writes (uop / acc window writes of its DMA, acc + out element writes of its loops) applied to
models of the uop, acc and out buffers, compared with fsim's buffers after the stream.
Stimulus: command gaps, late tokens, room that comes and goes, AR / R stalls. Errors, after a
few random instructions: a GEMM or an ALU index past its buffer on the instruction's second
outer iteration (the first one writes, as the shorter loop does in fsim; nothing after it runs),
a micro-op range past the uop buffer (nothing written); err_o / err_idx_o name it; clr_i clears
it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import cocotb
import numpy as np
import pytest
from cocotbext.axi import AxiRamRead, AxiReadBus

from vtabench.fsim import Fsim
from vtabench.spec.config import Config
from vtabench.spec.contracts.errors import ErrorCode
from vtabench.spec.contracts.stages import Stage
from vtabench.spec.isa import INSN_BYTES, Insn, MemType, Opcode, mem_elem_bytes
from vtabench.spec.isa.layout import AluOp, insn_layout
from vtabench.spec.program import Program
from vtabench.spec.tokens import stage_of
from vtabench.tb.unit.clocked_tb import ClockedTB, config, val
from vtabench.tb.unit.runner import bench_seed, configs, run_bench, unit_sources
from vtabench.tb.unit.stage_tokens import StageTokens
from vtabench.verify.builder import ProgramBuilder, Tokens, extreme_acc, random_tiles
from vtabench.verify.directed import SHIFT_AMOUNTS, directed_programs
from vtabench.verify.random_program import randomize_ignored

INSN_BITS = 8 * INSN_BYTES
#: where the program's image sits on the AXI bus (the stage adds it: dram_off_i)
DRAM_OFF = 0x4000
TOKEN_FLAGS = ("pop_prev_dep", "pop_next_dep", "push_prev_dep", "push_next_dep")


def loaded_once(prog: Program) -> bool:
    """Every inp / wgt element is written by at most one LOAD (pads included), so fsim's final
    inp and wgt are what each GEMM of the program reads."""
    seen: dict[MemType, set[int]] = {MemType.INP: set(), MemType.WGT: set()}
    for insn in prog.insns:
        if stage_of(insn) != Stage.LOAD or insn.opcode != Opcode.LOAD or not insn.x_size:
            continue
        n = (insn.y_pad_0 + insn.y_size + insn.y_pad_1) * (insn.x_pad_0 + insn.x_size
                                                          + insn.x_pad_1)
        span = set(range(insn.sram_base, insn.sram_base + n))
        if span & seen[insn.memory_type]:
            return False
        seen[insn.memory_type] |= span
    return True


def _loop_bound(rng: np.random.Generator, limit: int, iters: tuple[int, int]
                ) -> tuple[tuple[int, int], int]:
    """Random (out, in) factors for a loop of ``iters`` and the bound its micro-op indices must
    stay under so that every index is below ``limit``."""
    for _ in range(8):
        f = (int(rng.integers(0, 4)), int(rng.integers(0, 4)))
        bound = limit - (iters[0] - 1) * f[0] - (iters[1] - 1) * f[1]
        if bound > 0:
            return f, bound
    return (0, 0), limit


class RandomCompute:
    """Random programs for the compute stage: inp / wgt loaded once (the load stage), then acc
    and micro-op loads, GEMMs (reset or not), ALUs of every op with immediates or tensors, loops
    with no iteration; half the loops on a few acc elements, so that iterations read what the
    one, two or three before them wrote (the pipeline's forwarding)."""

    def __init__(self, cfg: Config, rng: np.random.Generator) -> None:
        self.cfg, self.rng = cfg, rng
        self.p = p = ProgramBuilder(cfg)
        self.n_inp, self.n_wgt = min(cfg.inp_depth, 16), min(cfg.wgt_depth, 4)
        self.n_acc = n_acc = min(cfg.acc_depth, 24)
        p.load(MemType.INP, 0, p.data(MemType.INP, random_tiles(cfg, rng, MemType.INP,
                                                                self.n_inp)), 1, self.n_inp)
        p.load(MemType.WGT, 0, p.data(MemType.WGT, random_tiles(cfg, rng, MemType.WGT,
                                                                self.n_wgt)), 1, self.n_wgt,
               tok=Tokens(push_next=True))
        p.load(MemType.ACC, 0, p.data(MemType.ACC, extreme_acc(cfg, rng, n_acc)), 1, n_acc,
               tok=Tokens(pop_prev=True))
        self.imm = insn_layout(cfg, Opcode.ALU).field("imm").value_range
        self.uop_next = 0

    def uops(self, dst: object, src: object, wgt: object) -> tuple[int, int]:
        n = np.size(dst)
        if self.uop_next + n > self.cfg.uop_depth:
            self.uop_next = 0
        span = self.p.load_uops(self.uop_next, dst, src, wgt)
        self.uop_next = span[1]
        return span

    def acc_load(self) -> None:
        cfg, rng, p = self.cfg, self.rng, self.p
        mem = MemType.ACC_8BIT if rng.random() < 0.5 else MemType.ACC
        y, x = int(rng.integers(1, 3)), int(rng.integers(1, 5))
        pads = tuple(int(rng.integers(0, 2)) for _ in range(4))
        size = (pads[0] + y + pads[1]) * (pads[2] + x + pads[3])
        tiles = (random_tiles(cfg, rng, mem, (y + 1) * (x + 2)) if mem == MemType.ACC_8BIT
                 else extreme_acc(cfg, rng, (y + 1) * (x + 2)))
        p.load(mem, int(rng.integers(0, self.n_acc - size + 1)), p.data(mem, tiles), y, x,
               int(rng.integers(x, x + 3)), pads)

    def op(self) -> None:
        """One random acc load, GEMM, reset GEMM, immediate or tensor ALU, or an empty loop."""
        rng = self.rng
        kind = rng.choice(["gemm", "reset", "alu_imm", "alu", "acc", "empty"])
        if kind == "acc":
            self.acc_load()
            return
        if kind == "empty":  # no iteration: no micro-op, or an iteration count of 0
            span = (self.uop_next, self.uop_next) if rng.random() < 0.5 else self.uops(0, 0, 0)
            iters = (1, 1) if span[0] == span[1] else rng.permutation([0, 2]).tolist()
            if rng.random() < 0.5:
                self.p.gemm(span, tuple(iters))
            else:
                self.p.alu(AluOp.ADD, span, tuple(iters), imm=1)
            return
        iters = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        nu = int(rng.integers(1, 5))
        dst_f, dst_b = _loop_bound(rng, self.n_acc, iters)
        src_f, src_b = _loop_bound(rng, self.n_inp if kind == "gemm" else self.n_acc, iters)
        wgt_f, wgt_b = _loop_bound(rng, self.n_wgt, iters)
        if rng.random() < 0.5:  # a few acc elements: iterations depend on each other
            dst_b = min(dst_b, 3)
            src_b = src_b if kind == "gemm" else min(src_b, 3)
        uops = self.uops(rng.integers(0, dst_b, nu), rng.integers(0, src_b, nu),
                         rng.integers(0, wgt_b, nu))
        if kind in ("gemm", "reset"):
            self.p.gemm(uops, iters, dst_f, src_f, wgt_f, reset=kind == "reset")
            return
        op = AluOp(int(rng.integers(0, len(AluOp))))
        imm = None
        if kind == "alu_imm":
            imm = (int(rng.choice(SHIFT_AMOUNTS)) if op == AluOp.SHR and rng.random() < 0.6
                   else int(rng.integers(self.imm[0], self.imm[1] + 1)))
        self.p.alu(op, uops, iters, dst_f, src_f, imm=imm)

    def bad(self, kind: str) -> tuple[int, Insn | None, ErrorCode]:
        """An instruction that fails ``kind``'s index check on its second outer iteration (uop:
        its micro-op range, at its start); returns its index, the part of it that runs before
        the bad iteration (None: nothing) and its error."""
        cfg = self.cfg
        if kind == "uop":
            insn = Insn(Opcode.GEMM, uop_bgn=0, uop_end=cfg.uop_depth + 1, iter_out=1,
                        iter_in=1)
            return self.p.emit(insn), None, ErrorCode.SRAM_UOP
        span = self.uops([1], [1], [0])
        if kind == "gemm":  # src 1, then 1 + inp_depth - 1
            insn = Insn(Opcode.GEMM, uop_bgn=span[0], uop_end=span[1], iter_out=2, iter_in=1,
                        src_factor_out=cfg.inp_depth - 1)
            code = ErrorCode.SRAM_GEMM
        else:  # dst 1, then 1 + acc_depth - 1
            insn = Insn(Opcode.ALU, alu_opcode=AluOp.ADD, uop_bgn=span[0], uop_end=span[1],
                        iter_out=2, iter_in=1, dst_factor_out=cfg.acc_depth - 1, use_imm=1,
                        imm=3)
            code = ErrorCode.SRAM_ALU
        return self.p.emit(insn), replace(insn, iter_out=1), code


def random_compute(cfg: Config, rng: np.random.Generator) -> Program:
    r = RandomCompute(cfg, rng)
    for _ in range(int(rng.integers(6, 12))):
        r.op()
    r.p.finish()
    return r.p.build("random_compute")


class ComputeTB(ClockedTB):
    def __init__(self, dut: Any) -> None:
        super().__init__(dut)
        self.cfg = cfg = config()
        self.ram = AxiRamRead(AxiReadBus.from_prefix(dut, "m_axi"), dut.clk_i, dut.rst_ni,
                              reset_active_level=False, size=DRAM_OFF + (1 << 20))
        self.ram.log.setLevel("WARNING")
        self.win = cfg.acc8_win_beats * cfg.bus_bytes  # the stage's DMA window
        self.uop = bytearray(cfg.uop_depth * mem_elem_bytes(cfg, MemType.UOP))
        self.acc = bytearray(cfg.acc_depth * cfg.acc_elem_bytes)
        self.out = bytearray(cfg.out_depth * cfg.out_elem_bytes)
        self.inp = bytearray(cfg.inp_depth * mem_elem_bytes(cfg, MemType.INP))
        self.wgt = bytearray(cfg.wgt_depth * mem_elem_bytes(cfg, MemType.WGT))

    def stall(self, p: float) -> None:
        def pauses():
            while True:
                yield int(self.rng.random() < p)
        self.ram.ar_channel.set_pause_generator(pauses())
        self.ram.r_channel.set_pause_generator(pauses())

    async def fill(self, name: str, data: bytes) -> None:
        """Make the inp or wgt buffer (``name``) hold ``data``: the bus beats that differ from
        its model, one a cycle through the window port."""
        d, bb, model = self.dut, self.cfg.bus_bytes, getattr(self, name)
        port = getattr(d, f"pre_{name}_we_i")
        d.pre_mask_i.value = (1 << bb) - 1
        for a in range(0, len(data), bb):
            beat = data[a:a + bb]
            if beat == model[a:a + bb]:
                continue
            port.value = 1
            d.pre_addr_i.value = a
            d.pre_data_i.value = int.from_bytes(beat, "little")
            model[a:a + bb] = beat
            await self.cycle()
        port.value = 0

    def _window(self, buf: bytearray, width: int) -> None:
        d = self.dut
        base, mask = val(d.w_addr_o), val(d.w_mask_o)
        data = val(d.w_data_o).to_bytes(self.win, "little")
        for i in range(width):
            if mask >> i & 1:
                buf[(base + i) % len(buf)] = data[i]

    def _element(self) -> None:
        d, cfg = self.dut, self.cfg
        i = val(d.res_idx_o)
        ab, ob = cfg.acc_elem_bytes, cfg.out_elem_bytes
        self.acc[i * ab:(i + 1) * ab] = val(d.res_acc_o).to_bytes(ab, "little")
        self.out[i * ob:(i + 1) * ob] = val(d.res_out_o).to_bytes(ob, "little")

    async def run(self, words: list[tuple[int, int]], insns: list[Insn], *, p_cmd: float = 0.7,
                  p_tok: float = 0.3, p_room: float = 0.6, max_cycles: int = 200000) -> int:
        """Feed ``words`` ({program index, word}; ``insns`` as the stage sees them), model the
        tokens, apply the buffer writes; returns the number retired when the stream is done or
        the stage stopped on an error."""
        d = self.dut
        sent = retired = quiet = 0
        prev = StageTokens(d, self.rng, "l2g", "g2l", "pop_prev_dep", "push_prev_dep")
        nxt = StageTokens(d, self.rng, "s2g", "g2s", "pop_next_dep", "push_next_dep")
        for cyc in range(max_cycles):
            offer = sent < len(words) and self.rng.random() < p_cmd
            d.cmd_valid_i.value = int(offer)
            d.cmd_i.value = (words[sent][0] << INSN_BITS) | words[sent][1] if offer else 0
            prev.offer(p_tok)
            nxt.offer(p_tok)
            await self.settle()
            cur = retired
            prev.check_pop(cyc, insns, cur)
            nxt.check_pop(cyc, insns, cur)
            uop_we, acc_we, res_we = val(d.uop_we_o), val(d.acc_win_we_o), val(d.res_we_o)
            if uop_we or acc_we or res_we:
                assert uop_we + acc_we + res_we == 1, f"cycle {cyc}: two buffer writes at once"
                assert prev.has_token(insns, cur) and nxt.has_token(insns, cur), \
                    f"instruction {cur} wrote before its tokens"
                if uop_we:
                    self._window(self.uop, self.cfg.bus_bytes)
                elif acc_we:
                    self._window(self.acc, self.win)
                else:
                    self._element()
            retiring = bool(val(d.retire_o))
            prev.check_push(cyc, insns, cur, retiring, p_room)
            nxt.check_push(cyc, insns, cur, retiring, p_room)
            retired += retiring
            if offer and val(d.cmd_ready_o):
                sent += 1
            stopped = retired == len(words) or val(d.err_o)
            quiet = quiet + 1 if stopped else 0
            await self.cycle()
            if quiet > 40:
                break
        else:
            raise AssertionError(f"{retired} of {len(words)} retired in {max_cycles} cycles")
        d.cmd_valid_i.value = 0
        return retired

    async def prepare(self, prog: Program) -> Fsim:
        """Run ``prog`` on fsim from the bench's buffers (what the last program left), put its
        image in DRAM and fill the inp / wgt buffers with fsim's final ones (beats that
        changed); returns fsim with the buffers the stage must leave."""
        fsim = Fsim(self.cfg)
        for name, dtype in (("uop", "<u4"), ("acc", "<i4"), ("out", np.int8), ("inp", np.int8),
                            ("wgt", np.int8)):
            arr = getattr(fsim, name)
            arr[...] = np.frombuffer(bytes(getattr(self, name)), dtype).reshape(arr.shape)
        fsim.run(prog.insns, prog.dram.copy())
        for name in ("inp", "wgt"):
            await self.fill(name, getattr(fsim, name).tobytes())
        self.ram.write(DRAM_OFF, prog.dram.tobytes())
        self.dut.dram_size_i.value = len(prog.dram)
        return fsim

    def check(self, fsim: Fsim, what: str) -> None:
        """The buffer models against fsim's buffers."""
        for name, model, want in (("uop", self.uop, fsim.uop), ("acc", self.acc, fsim.acc),
                                  ("out", self.out, fsim.out)):
            ref = want.tobytes()
            if model != ref:
                eb = len(ref) // len(want)
                diff = sorted({i // eb for i in range(len(ref)) if model[i] != ref[i]})
                raise AssertionError(f"{what}: {name} elements {diff[:8]} differ from fsim "
                                     f"({len(diff)} in all)")


def stage_words(cfg: Config, prog: Program, rng: np.random.Generator
                ) -> tuple[list[tuple[int, int]], list[Insn]]:
    """The compute stage's share of ``prog`` as fetch routes it ({index, word}), with random
    don't-care fields, reserved bits and token flags (FINISH keeps its zeros)."""
    picked = [(i, insn) for i, insn in enumerate(prog.insns) if stage_of(insn) == Stage.COMPUTE]
    insns = []
    for _, insn in picked:
        if insn.opcode != Opcode.FINISH:
            insn = replace(insn, **{f: int(rng.random() < 0.3) for f in TOKEN_FLAGS})
        insns.append(insn)
    code = randomize_ignored(cfg, insns, rng)
    words = [(i, int.from_bytes(code[k * INSN_BYTES:(k + 1) * INSN_BYTES], "little"))
             for k, (i, _) in enumerate(picked)]
    return words, insns


async def start(dut: Any) -> ComputeTB:
    tb = ComputeTB(dut)
    await tb.start({"clr_i": 0, "halt_i": 0, "dram_off_i": DRAM_OFF, "dram_size_i": 0,
                    "cmd_valid_i": 0, "cmd_i": 0, "l2g_valid_i": 0, "s2g_valid_i": 0,
                    "g2l_ready_i": 0, "g2s_ready_i": 0, "pre_inp_we_i": 0, "pre_wgt_we_i": 0,
                    "pre_addr_i": 0, "pre_mask_i": 0, "pre_data_i": 0})
    return tb


async def run_programs(tb: ComputeTB, progs: Iterable[Program]) -> int:
    """Run each program's compute stream on the bench (buffers carried over from the last, as
    fsim's are within one program: each program starts from the state the last left)."""
    rng = np.random.default_rng(tb.rng.randrange(2**32))
    n = 0
    for j, prog in enumerate(progs):
        fsim = await tb.prepare(prog)
        tb.stall((0.0, 0.2, 0.5)[j % 3])
        words, insns = stage_words(tb.cfg, prog, rng)
        assert await tb.run(words, insns, p_tok=(1.0, 0.3)[j % 2]) == len(words)
        assert val(tb.dut.err_o) == ErrorCode.NONE
        assert val(tb.dut.finish_o), f"{prog.name}: finish_o not set after FINISH"
        tb.check(fsim, prog.name)
        tb.dut.clr_i.value = 1  # the next program's start (vta_core: clr_i = start)
        await tb.cycle()
        tb.dut.clr_i.value = 0
        assert not val(tb.dut.finish_o), "clr_i left finish_o set"
        n += 1
    return n


@cocotb.test()
async def directed(dut):
    """The directed programs whose inp / wgt are loaded once, in a row."""
    tb = await start(dut)
    progs = [p for p in directed_programs(tb.cfg) if loaded_once(p)]
    assert len(progs) >= 15, f"only {len(progs)} directed programs fit the bench"
    await run_programs(tb, progs)


@cocotb.test()
async def random_programs(dut):
    """Random compute programs, in a row."""
    tb = await start(dut)
    rng = np.random.default_rng(tb.rng.randrange(2**32))
    await run_programs(tb, [random_compute(tb.cfg, rng) for _ in range(8)])


@cocotb.test()
async def index_errors(dut):
    """A GEMM / ALU index past its buffer, a micro-op range past the uop buffer, after random
    instructions: named, the bad iteration and everything after it write nothing (fsim: the
    instruction's iterations before it, as a shorter loop), clr_i clears the error."""
    tb = await start(dut)
    rng = np.random.default_rng(tb.rng.randrange(2**32))
    for kind in ("gemm", "alu", "uop"):
        r = RandomCompute(tb.cfg, rng)
        for _ in range(int(rng.integers(1, 6))):
            r.op()
        k, good, code = r.bad(kind)
        r.op()
        r.p.finish()
        prog = r.p.build(f"{kind}_error")
        expect = prog.insns[:k] + ([good] if good else []) + [Insn(Opcode.FINISH)]
        fsim = await tb.prepare(replace(prog, insns=expect))
        words, stage = stage_words(tb.cfg, prog, rng)
        at = [i for i, _ in words].index(k)
        assert await tb.run(words, stage) == at, f"{kind}: retired past the error"
        assert (val(dut.err_o), val(dut.err_idx_o)) == (code, k), \
            f"{kind}: err {val(dut.err_o):#x} at {val(dut.err_idx_o)}, want {code:#x} at {k}"
        tb.check(fsim, f"{kind} error at {k}")
        dut.clr_i.value = 1
        await tb.cycle()
        dut.clr_i.value = 0
        assert val(dut.err_o) == ErrorCode.NONE, "clr_i left the error"


# ------------------------------------------------------------------------------ pytest runner

#: the stage, its buffers and the memory engine, and the bench's top around them
SOURCES = [*unit_sources("vta_compute", "vta_buf", "vta_mem_engine"),
           Path(__file__).with_name("vta_compute_tb.sv")]


@pytest.mark.rtl
@pytest.mark.parametrize("config", configs())
def test_compute(config: str) -> None:
    run_bench("compute", "vta_compute_tb", SOURCES, config=config, seed=bench_seed(),
              dut="vta_compute")
