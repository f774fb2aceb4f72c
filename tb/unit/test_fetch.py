"""Unit bench: vta_fetch, behind the memory engine as in vta_core (top tb/unit/vta_fetch_tb.sv),
reading from cocotbext-axi's AxiRamRead on the AXI4 read channels.

Programs are random instruction words that fetch must route: every field random (reserved bits
too: fetch must ignore them) except what routing looks at, set legal per kind (opcode, memory
type, the token flags a stage must not use, ALU opcode and reset_reg), and a FINISH with no other
bit set last. The scoreboard is the stream itself: every command-queue handshake must be the
next instruction in program order ({index, word}) on the queue of the stage the spec routes it to
(vtabench.spec.tokens.stage_of); at most one queue is offered an instruction at a time; done_o
once the last is routed. Each fetch-level error of the spec (illegal opcode, memory type or token
flags of LOAD / STORE, ALU opcode or reset_reg, FINISH not last or with other bits set, a last
instruction that is not FINISH, no instructions, a misaligned base) is injected at a random
index: err_o and err_idx_o must name it, everything before it routed and nothing after. Random
queue back-pressure and AR / R stalls; bases anywhere 16-byte aligned (bursts split at 4 KiB);
programs longer than fetch's beat buffer; a halt in mid-stream, then a fresh start. As in
vta_core, an error (or the halt) holds halt_i up to and including the next start's cycle, and
the next start waits for the engine to drain the reads fetch asked for ahead. (Without the halt
in the start's cycle, the engine takes the request fetch still presents from the last program
at that edge, and its beats are routed as the new program's: seen on edge8,
COCOTB_RANDOM_SEED=1166880644; vta_core keeps halt up then, its error is cleared by the start.)
"""

from __future__ import annotations

from pathlib import Path

import cocotb
import pytest
from cocotbext.axi import AxiRamRead, AxiReadBus

from vtabench.spec.contracts.errors import ErrorCode
from vtabench.spec.contracts.stages import Stage
from vtabench.spec.isa import INSN_BYTES, Insn, MemType, Opcode
from vtabench.spec.isa.layout import AluOp, insn_layout
from vtabench.spec.tokens import stage_of
from vtabench.tb.unit.clocked_tb import ClockedTB, config, val
from vtabench.tb.unit.runner import bench_seed, configs, run_bench

INSN_BITS = 8 * INSN_BYTES
MEM_BYTES = 1 << 20
#: (opcode, memory type) of the kinds fetch routes
KINDS = [(Opcode.LOAD, MemType.INP), (Opcode.LOAD, MemType.WGT), (Opcode.LOAD, MemType.UOP),
         (Opcode.LOAD, MemType.ACC), (Opcode.LOAD, MemType.ACC_8BIT),
         (Opcode.STORE, MemType.OUT), (Opcode.GEMM, None), (Opcode.ALU, None)]
#: fetch-level errors: name -> the code err_o must show
ERRORS = {"opcode": ErrorCode.OPCODE, "load_mem": ErrorCode.MEM_TYPE,
          "load_flags": ErrorCode.MEM_TYPE, "store_mem": ErrorCode.MEM_TYPE,
          "store_flags": ErrorCode.MEM_TYPE, "alu_op": ErrorCode.ALU_OP,
          "alu_reset": ErrorCode.ALU_OP, "finish_early": ErrorCode.FINISH,
          "finish_bits": ErrorCode.FINISH, "no_finish": ErrorCode.FINISH}
QUEUES = {Stage.LOAD: "ld", Stage.COMPUTE: "cp", Stage.STORE: "st"}


class FetchTB(ClockedTB):
    def __init__(self, dut) -> None:
        super().__init__(dut)
        self.cfg = config()
        self.ram = AxiRamRead(AxiReadBus.from_prefix(dut, "m_axi"), dut.clk_i, dut.rst_ni,
                              reset_active_level=False, size=MEM_BYTES)
        self.p_ready = 1.0

    def stall(self, p_axi: float, p_ready: float) -> None:
        """AR / R channels paused with probability ``p_axi`` per cycle; each queue ready with
        probability ``p_ready``."""
        def pauses():
            while True:
                yield int(self.rng.random() < p_axi)
        self.ram.ar_channel.set_pause_generator(pauses())
        self.ram.r_channel.set_pause_generator(pauses())
        self.p_ready = p_ready

    def put(self, word: int, op: Opcode, name: str, value: int) -> int:
        f = next(f for f in insn_layout(self.cfg, op).fields if f.name == name)
        mask = ((1 << f.width) - 1) << f.lsb
        return (word & ~mask) | ((value << f.lsb) & mask)

    def word(self, op: Opcode, mtype: MemType | None) -> int:
        """A random word fetch must route as (op, mtype)."""
        w = self.put(self.rng.getrandbits(INSN_BITS), op, "opcode", op)
        if mtype is not None:
            w = self.put(w, op, "memory_type", mtype)
        if op == Opcode.LOAD and mtype in (MemType.INP, MemType.WGT):
            w = self.put(self.put(w, op, "pop_prev_dep", 0), op, "push_prev_dep", 0)
        if op == Opcode.STORE:
            w = self.put(self.put(w, op, "pop_next_dep", 0), op, "push_next_dep", 0)
        if op == Opcode.ALU:
            w = self.put(self.put(w, op, "alu_opcode", self.rng.choice(list(AluOp))), op,
                         "reset_reg", 0)
        return w

    def program(self, n: int) -> list[tuple[int, Stage]]:
        """n - 1 random routable words and a FINISH, with the stage of each."""
        out = []
        for _ in range(n - 1):
            op, mtype = self.rng.choice(KINDS)
            out.append((self.word(op, mtype),
                        stage_of(Insn(opcode=op, memory_type=mtype or MemType.UOP))))
        out.append((int(Opcode.FINISH), Stage.COMPUTE))
        return out

    def broken(self, kind: str, n: int) -> tuple[list[tuple[int, Stage]], int]:
        """A program of n with the error ``kind`` at a random index; returns it and the index."""
        prog = self.program(n)
        k = self.rng.randrange(n - 1) if n > 1 else 0
        r = self.rng
        if kind == "opcode":
            w = self.put(prog[k][0], Opcode.LOAD, "opcode", r.choice([5, 6, 7]))
        elif kind == "load_mem":
            w = self.put(self.word(Opcode.LOAD, MemType.INP), Opcode.LOAD, "memory_type",
                         r.choice([int(MemType.OUT), 6, 7]))
        elif kind == "load_flags":
            w = self.put(self.word(Opcode.LOAD, r.choice([MemType.INP, MemType.WGT])),
                         Opcode.LOAD, r.choice(["pop_prev_dep", "push_prev_dep"]), 1)
        elif kind == "store_mem":
            w = self.put(self.word(Opcode.STORE, MemType.OUT), Opcode.STORE, "memory_type",
                         r.choice([m for m in range(8) if m != MemType.OUT]))
        elif kind == "store_flags":
            w = self.put(self.word(Opcode.STORE, MemType.OUT), Opcode.STORE,
                         r.choice(["pop_next_dep", "push_next_dep"]), 1)
        elif kind == "alu_op":
            w = self.put(self.word(Opcode.ALU, None), Opcode.ALU, "alu_opcode", r.choice([5, 6, 7]))
        elif kind == "alu_reset":
            w = self.put(self.word(Opcode.ALU, None), Opcode.ALU, "reset_reg", 1)
        elif kind == "finish_early":
            w = int(Opcode.FINISH)
        elif kind == "finish_bits":
            k = n - 1
            w = int(Opcode.FINISH) | (1 << r.randrange(3, INSN_BITS))
        else:  # no_finish
            k = n - 1
            op, mtype = r.choice(KINDS)
            w = self.word(op, mtype)
        prog[k] = (w, prog[k][1])
        return prog, k

    async def run(self, prog: list[tuple[int, Stage]], base: int, *, count: int | None = None,
                  halt_after: int | None = None) -> tuple[list[tuple[int, int, Stage]], int, int]:
        """Load ``prog`` at ``base`` and start fetch (``count``: the count it is given). Returns
        the routed (index, word, stage) in order and err_o / err_idx_o at the end. Checks every
        handshake against the program as it happens."""
        d = self.dut
        self.ram.write(base, b"".join(w.to_bytes(INSN_BYTES, "little") for w, _ in prog))
        d.insn_count_i.value = len(prog) if count is None else count
        d.insn_base_i.value = base
        d.start_i.value = 1
        await self.cycle()
        d.start_i.value = 0
        d.halt_i.value = 0            # the start clears the error, and with it the core's halt
        routed: list[tuple[int, int, Stage]] = []
        quiet = 0
        for cyc in range(40 * len(prog) + 400):
            for q in QUEUES.values():
                getattr(d, f"{q}_ready_i").value = int(self.rng.random() < self.p_ready)
            if halt_after is not None and len(routed) >= halt_after:
                d.halt_i.value = 1
            await self.settle()
            offered = [s for s, q in QUEUES.items() if val(getattr(d, f"{q}_valid_o"))]
            assert not (offered and val(d.halt_i)), f"cycle {cyc}: routing under halt_i"
            assert len(offered) <= 1, f"cycle {cyc}: instructions offered to {offered} at once"
            for stage in offered:
                if val(getattr(d, f"{QUEUES[stage]}_ready_i")):
                    data = val(d.q_data_o)
                    idx, word = data >> INSN_BITS, data & ((1 << INSN_BITS) - 1)
                    n = len(routed)
                    assert n < len(prog), f"instruction {idx} routed past the program's end"
                    assert (idx, word) == (n, prog[n][0]), \
                        f"routed {idx}: {word:#x}, expected instruction {n}: {prog[n][0]:#x}"
                    assert stage == prog[n][1], f"instruction {n} to {stage.name}, " \
                        f"expected {prog[n][1].name}"
                    routed.append((idx, word, stage))
            if val(d.err_o):          # as in vta_core: an error halts until the next start
                d.halt_i.value = 1
            finished = val(d.done_o) or val(d.err_o) or val(d.halt_i)
            quiet = quiet + 1 if finished else 0
            await self.cycle()
            if quiet > 30:            # nothing may follow the end
                break
        err, err_idx = val(d.err_o), val(d.err_idx_o)
        for _ in range(4000):         # the engine drains the reads fetch asked for ahead
            if val(d.idle_o):
                break
            await self.cycle()
        else:
            raise AssertionError("the memory engine did not go idle")
        return routed, err, err_idx

    def base(self) -> int:
        return self.rng.randrange(0, MEM_BYTES // 2, INSN_BYTES)


async def start(dut) -> FetchTB:
    tb = FetchTB(dut)
    await tb.start({"start_i": 0, "halt_i": 0, "insn_count_i": 0, "insn_base_i": 0,
                    "ld_ready_i": 0, "cp_ready_i": 0, "st_ready_i": 0})
    return tb


@cocotb.test()
async def programs(dut):
    """Random programs, short to longer than the beat buffer, with and without stalls."""
    tb = await start(dut)
    for n, p_axi, p_ready in [(1, 0.0, 1.0), (2, 0.0, 1.0), (37, 0.0, 1.0), (300, 0.0, 1.0),
                              (700, 0.3, 0.6), (64, 0.6, 0.2), (200, 0.1, 0.9)]:
        tb.stall(p_axi, p_ready)
        prog = tb.program(n)
        routed, err, _ = await tb.run(prog, tb.base())
        assert err == ErrorCode.NONE, f"{n} instructions: error {err:#x}"
        assert len(routed) == n and val(dut.done_o), f"{len(routed)} of {n} routed"
    base = 4096 - 3 * INSN_BYTES           # a program across a 4 KiB boundary
    tb.stall(0.2, 0.8)
    routed, err, _ = await tb.run(tb.program(50), base)
    assert err == ErrorCode.NONE and len(routed) == 50


@cocotb.test()
async def errors(dut):
    """Each fetch-level error at a random index: named, with everything before it routed."""
    tb = await start(dut)
    tb.stall(0.2, 0.7)
    for kind, code in ERRORS.items():
        for _ in range(2):
            n = tb.rng.randrange(2, 90)
            prog, k = tb.broken(kind, n)
            routed, err, idx = await tb.run(prog, tb.base())
            assert (err, idx) == (code, k), \
                f"{kind} at {k} of {n}: err_o {err:#x} at {idx}, expected {int(code):#x}"
            assert len(routed) == k, f"{kind} at {k}: {len(routed)} routed"
    routed, err, idx = await tb.run(tb.program(3), tb.base(), count=0)
    assert (err, routed) == (ErrorCode.FINISH, []), f"no instructions: err_o {err:#x}"
    routed, err, idx = await tb.run(tb.program(3), tb.base() + 8)
    assert (err, routed) == (ErrorCode.ALIGN, []), f"misaligned base: err_o {err:#x}"


@cocotb.test()
async def halt_then_start(dut):
    """A halt in mid-stream stops routing at once; the next start runs a program whole."""
    tb = await start(dut)
    tb.stall(0.2, 0.7)
    prog = tb.program(400)
    routed, err, _ = await tb.run(prog, tb.base(), halt_after=100)
    assert 100 <= len(routed) < 400 and err == ErrorCode.NONE, (len(routed), err)
    routed, err, _ = await tb.run(tb.program(120), tb.base())
    assert err == ErrorCode.NONE and len(routed) == 120


# ------------------------------------------------------------------------------ pytest runner


@pytest.mark.rtl
@pytest.mark.parametrize("config", configs())
def test_fetch(config: str) -> None:
    """Widths from the configuration's package: 512-bit bus (four instructions a beat) in
    default and cloud32, 128-bit (one) in edge8."""
    run_bench("fetch", "vta_fetch_tb",
              ["vta_fifo.sv", "vta_mem_engine.sv", "vta_fetch.sv",
               Path(__file__).with_name("vta_fetch_tb.sv")], config=config, seed=bench_seed(),
              dut="vta_fetch")
