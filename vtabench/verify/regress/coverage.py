"""Functional coverage of the ISA and of how programs were run: which features a set exercised.

Bins are named ``group/bin``. A program is sampled statically (fields of every instruction, the
execution order the stage machine chose, how full it drove each token queue, DRAM read after
write), dynamically (the operand values of every ALU instruction, observed in fsim) and by its
run setup (memory timing class, alignment of the instruction stream and the image, the error a
target must report, the injected response error, the illegal-stream defect). Coverage is a set
of hit counts, mergeable across processes.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Sequence

import numpy as np

from vtabench.spec.config import CMD_QUEUE_DEPTH, FETCH_GROUP_BEATS, TOKEN_QUEUE_DEPTH
from vtabench.spec.contracts.errors import ErrorCode
from vtabench.spec.contracts.stages import TokenQueue
from vtabench.spec.isa.layout import AluOp, MemType, Opcode, mem_depth, mem_elem_bytes
from vtabench.spec.tokens import POP_QUEUES, PUSH_QUEUES, Stage, schedule, stage_of
from vtabench.spec.program import INSN_ALIGN
from vtabench.rtl.simjob import DRAM_KNOBS
from vtabench.verify.illegal import DEFECTS
from vtabench.verify.random_case import KINDS

if TYPE_CHECKING:
    from vtabench.spec.config import Config
    from vtabench.spec.isa.insn import Insn
    from vtabench.spec.program import Program

PAD_FIELDS = ("y_pad_0", "y_pad_1", "x_pad_0", "x_pad_1")
PADDED_MEMS = (MemType.INP, MemType.ACC, MemType.ACC_8BIT)
LOADED_MEMS = (MemType.UOP, MemType.WGT, MemType.INP, MemType.ACC, MemType.ACC_8BIT)
SIGNS = ("neg", "zero", "pos")
SHIFT_CLASSES = ("right_0_31", "right_ge_32", "left_1_31", "left_ge_32")
#: Token flags legal per stage (docs/isa.md section 3): its pops, then its pushes.
STAGE_FLAGS = {s: tuple(f for st, f in [*POP_QUEUES, *PUSH_QUEUES] if st == s) for s in Stage}
LOOP_SHAPES = ("single", "iter_out", "iter_in", "both_loops", "multi_uop", "empty")
#: Token queue occupancy: some token went through, half the capacity held at once (in the
#: stage machine's eager order), and full: the program deadlocks with one token less. A
#: command queue is full when the program deadlocks with one entry less.
QUEUE_LEVELS = ("used", "half", "full")
#: Memory timing classes (knob values): latency low <= 4 < mid < 100 <= high cycles.
LATENCY_CLASSES = ("low", "mid", "high")
TIMING_BINS = ("ideal", *(f"{k}.{c}" for k in ("rd_latency", "wr_latency")
                          for c in LATENCY_CLASSES), "rd_gap", "stall.light", "stall.heavy",
               "rd_reorder")
#: Error codes some generated case expects (DEADLOCK: no valid or generated stream has one).
EXPECTED_ERRORS = tuple(c for c in ErrorCode if c not in (ErrorCode.NONE, ErrorCode.DEADLOCK))
def align_bins(cfg: Config) -> list[str]:
    """Instruction stream: each 16-byte lane of a bus beat (AXI_DATA_BITS / 128 of them), not at
    a fetch group start, across a 4 KiB boundary; the image at a nonzero DRAM base."""
    return [*(f"insn.lane{k}" for k in range(cfg.bus_bytes // 16)), "insn.mid_group",
            "insn.cross_4k", "dram_base.moved"]


def all_bins(cfg: Config) -> list[str]:
    """Every bin of the model for ``cfg``, in report order."""
    bins = [f"kind/LOAD.{m.name}" for m in LOADED_MEMS]
    bins += ["kind/STORE.OUT", "kind/GEMM", "kind/ALU", "kind/FINISH"]
    bins += [f"pad/{m.name}.{f}" for m in PADDED_MEMS for f in PAD_FIELDS]
    bins += [f"pad/{m.name}.max15" for m in PADDED_MEMS]
    bins += [f"alu/{op.name}.{src}.{sign}" for op in AluOp for src in ("imm", "tensor")
             for sign in SIGNS]
    bins += [f"shift/{src}.{c}" for src in ("imm", "tensor") for c in SHIFT_CLASSES]
    bins += ["alu/extreme.int32_min", "alu/extreme.int32_max"]
    bins += ["gemm/reset", "gemm/accumulate"]
    bins += [f"loops/{k}.{s}" for k in ("GEMM", "ALU") for s in LOOP_SHAPES]
    bins += [f"factor/GEMM.{f}" for f in ("dst_factor_out", "dst_factor_in", "src_factor_out",
                                          "src_factor_in", "wgt_factor_out", "wgt_factor_in")]
    bins += [f"factor/ALU.{f}" for f in ("dst_factor_out", "dst_factor_in", "src_factor_out",
                                         "src_factor_in")]
    bins += [f"token/{st.name}.{f}" for st, flags in STAGE_FLAGS.items() for f in flags]
    bins += ["edge/noop.LOAD_STAGE", "edge/noop.COMPUTE_STAGE", "edge/noop.STORE_STAGE"]
    bins += [f"edge/full_buffer.{m.name}" for m in (MemType.UOP, MemType.WGT, MemType.INP,
                                                    MemType.ACC)]
    bins += [f"edge/2d.{m.name}" for m in (*LOADED_MEMS, MemType.OUT)]
    bins += [f"edge/strided.{m}" for m in ("LOAD", "STORE")]
    bins += ["overlap/load_ahead_of_compute", "overlap/store_behind_compute",
             "overlap/load_after_store"]
    bins += [f"queue/{q.name}.{level}" for q in TokenQueue for level in QUEUE_LEVELS]
    bins += [f"queue/cmd_{s.name}.full" for s in Stage]
    bins += [f"timing/{b}" for b in TIMING_BINS]
    bins += [f"align/{b}" for b in align_bins(cfg)]
    bins += [f"error/{c.name}" for c in EXPECTED_ERRORS]
    bins += [f"case/{k}" for k in KINDS if k != "illegal"]
    bins += [f"illegal/{d}" for d in DEFECTS]
    return bins


def _sign_bins(values: np.ndarray) -> list[str]:
    return [s for s, hit in zip(SIGNS, ((values < 0).any(), (values == 0).any(),
                                        (values > 0).any())) if hit]


def _shift_bins(amounts: np.ndarray) -> list[str]:
    a = amounts.astype(np.int64)
    hits = ((a >= 0) & (a <= 31), a >= 32, (a <= -1) & (a >= -31), a <= -32)
    return [c for c, h in zip(SHIFT_CLASSES, hits) if h.any()]


def _loop_shapes(insn: Insn) -> list[str]:
    if insn.iter_out == 0 or insn.iter_in == 0 or insn.uop_bgn == insn.uop_end:
        return ["empty"]
    shapes = []
    if insn.iter_out > 1 and insn.iter_in > 1:
        shapes.append("both_loops")
    elif insn.iter_out > 1:
        shapes.append("iter_out")
    elif insn.iter_in > 1:
        shapes.append("iter_in")
    else:
        shapes.append("single")
    if insn.uop_end - insn.uop_bgn > 1:
        shapes.append("multi_uop")
    return shapes


class FunctionalCoverage:
    """Hit counts per bin; :meth:`sample_program` and :meth:`sample_alu` feed it."""

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.hits: Counter[str] = Counter()

    def hit(self, name: str) -> None:
        self.hits[name] += 1

    def sample_case(self, prog: Program) -> None:
        """Every static bin of a generated program: its run setup's, and for a valid stream its
        instructions', execution order's and token queues'."""
        self._sample_setup(prog)
        if prog.legal:
            order = schedule(prog.insns).order
            self.sample_program(prog.insns, order)
            self._sample_queues(prog.insns, order)
            self._sample_dram_reuse(prog.insns, order)

    def sample_program(self, insns: Sequence[Insn], order: Sequence[int]) -> None:
        """Static bins of every instruction, and the overlap bins of the execution order."""
        for insn in insns:
            self._sample_insn(insn)
        self._sample_order(insns, order)

    def _sample_setup(self, prog: Program) -> None:
        """The bins of how ``prog`` runs: timing, placement, expected errors, its kind."""
        knobs = {**DRAM_KNOBS, **prog.knobs}
        if not prog.knobs:
            self.hit("timing/ideal")
        for k in ("rd_latency", "wr_latency"):
            self.hit(f"timing/{k}.{LATENCY_CLASSES[(knobs[k] > 4) + (knobs[k] >= 100)]}")
        if knobs["rd_gap"]:
            self.hit("timing/rd_gap")
        if knobs["stall"]:
            self.hit("timing/stall.heavy" if knobs["stall"] >= 128 else "timing/stall.light")
        if prog.knobs.get("rd_reorder"):
            self.hit("timing/rd_reorder")
        start = prog.placement.insn_offset(prog.dram.size)
        if start % 16 == 0:
            self.hit(f"align/insn.lane{start % self.cfg.bus_bytes // 16}")
            if start % (FETCH_GROUP_BEATS * self.cfg.bus_bytes):
                self.hit("align/insn.mid_group")
            if start // INSN_ALIGN != (start + 16 * len(prog.insns) - 1) // INSN_ALIGN:
                self.hit("align/insn.cross_4k")
        if prog.placement.dram_base:
            self.hit("align/dram_base.moved")
        for want in prog.expect.values():
            if want is not None and want.error != ErrorCode.NONE:
                self.hit(f"error/{ErrorCode(want.error).name}")
        group, _, name = prog.kind.partition(".")
        if group == "illegal":
            self.hit(f"illegal/{name}")
        elif prog.kind in KINDS:
            self.hit(f"case/{prog.kind}")

    def _sample_queues(self, insns: Sequence[Insn], order: Sequence[int]) -> None:
        """Queue levels: the most tokens each queue held in ``order`` (pops of an instruction
        before its pushes), and the queue a program needs full (it deadlocks waiting to push
        into it when the queues hold one token less)."""
        count = [0] * len(TokenQueue)
        most = [0] * len(TokenQueue)
        for i in order:
            insn = insns[i]
            stage = stage_of(insn)
            for flags, step in ((POP_QUEUES, -1), (PUSH_QUEUES, 1)):
                for (s, flag), q in flags.items():
                    if s == stage and getattr(insn, flag):
                        count[q] += step
                        most[q] = max(most[q], count[q])
        for q in TokenQueue:
            if most[q]:
                self.hit(f"queue/{q.name}.used")
            if most[q] >= TOKEN_QUEUE_DEPTH // 2:
                self.hit(f"queue/{q.name}.half")
        if max(most) >= TOKEN_QUEUE_DEPTH:  # else a smaller capacity would not bind
            tight = schedule(insns, token_depth=TOKEN_QUEUE_DEPTH - 1).deadlock
            if tight is not None and tight.waits_for == "push":
                self.hit(f"queue/{tight.queue.upper()}.full")
        if len(insns) > CMD_QUEUE_DEPTH:  # else no command queue can fill
            tight = schedule(insns, cmd_depth=CMD_QUEUE_DEPTH - 1).deadlock
            if tight is not None and tight.fetch_blocked is not None:
                self.hit(f"queue/cmd_{stage_of(insns[tight.fetch_blocked]).name}.full")

    def _sample_dram_reuse(self, insns: Sequence[Insn], order: Sequence[int]) -> None:
        """overlap/load_after_store: a LOAD reads DRAM bytes a STORE wrote before it ran."""
        written: list[tuple[int, int]] = []
        for i in order:
            insn = insns[i]
            if insn.opcode not in (Opcode.LOAD, Opcode.STORE) or not insn.x_size:
                continue
            eb = mem_elem_bytes(self.cfg, MemType(insn.memory_type))
            rows = [((insn.dram_base + y * insn.x_stride) * eb,
                     (insn.dram_base + y * insn.x_stride + insn.x_size) * eb)
                    for y in range(insn.y_size)]
            if insn.opcode == Opcode.STORE:
                written += rows
            elif any(lo < w_hi and w_lo < hi for lo, hi in rows for w_lo, w_hi in written):
                self.hit("overlap/load_after_store")
                return

    def _sample_insn(self, insn: Insn) -> None:
        op = Opcode(insn.opcode)
        stage = stage_of(insn)
        for flag in STAGE_FLAGS[stage]:
            if getattr(insn, flag):
                self.hit(f"token/{stage.name}.{flag}")
        if op in (Opcode.LOAD, Opcode.STORE):
            self._sample_mem(op, MemType(insn.memory_type), insn, stage)
        elif op == Opcode.FINISH:
            self.hit("kind/FINISH")
        else:
            self.hit(f"kind/{op.name}")
            if op == Opcode.GEMM:
                self.hit("gemm/reset" if insn.reset_reg else "gemm/accumulate")
            for shape in _loop_shapes(insn):
                self.hit(f"loops/{op.name}.{shape}")
            factors = ["dst_factor_out", "dst_factor_in"]
            if op == Opcode.GEMM or not insn.use_imm:
                factors += ["src_factor_out", "src_factor_in"]
            if op == Opcode.GEMM:
                factors += ["wgt_factor_out", "wgt_factor_in"]
            for f in factors:
                if getattr(insn, f) and (insn.iter_out > 1 if f.endswith("out")
                                         else insn.iter_in > 1):
                    self.hit(f"factor/{op.name}.{f}")
            if op == Opcode.ALU and insn.use_imm:
                imm = np.array([insn.imm])
                alu = AluOp(insn.alu_opcode)
                for sign in _sign_bins(imm):
                    self.hit(f"alu/{alu.name}.imm.{sign}")
                if alu == AluOp.SHR:
                    for c in _shift_bins(imm):
                        self.hit(f"shift/imm.{c}")

    def _sample_mem(self, op: Opcode, mem: MemType, insn: Insn, stage: Stage) -> None:
        if insn.x_size == 0 or insn.y_size == 0:
            self.hit(f"edge/noop.{stage.name}_STAGE")
            return
        self.hit(f"kind/{op.name}.{mem.name}")
        for f in PAD_FIELDS:
            value = getattr(insn, f)
            if value and mem in PADDED_MEMS:
                self.hit(f"pad/{mem.name}.{f}")
                if value == 15:
                    self.hit(f"pad/{mem.name}.max15")
        if insn.y_size > 1:
            self.hit(f"edge/2d.{mem.name}")
            if insn.x_stride > insn.x_size:
                self.hit(f"edge/strided.{op.name}")
        if op == Opcode.LOAD and mem != MemType.ACC_8BIT:
            rows = insn.y_pad_0 + insn.y_size + insn.y_pad_1
            cols = insn.x_pad_0 + insn.x_size + insn.x_pad_1
            if rows * cols == mem_depth(self.cfg, mem):
                self.hit(f"edge/full_buffer.{mem.name}")

    def _sample_order(self, insns: Sequence[Insn], order: Sequence[int]) -> None:
        """Overlap bins: a load ran before an earlier compute instruction did (load ahead), or a
        store ran after a later compute instruction did (store behind): the stages did not run
        in lock-step with the stream."""
        n = len(insns)
        if not n:
            return
        pos = np.empty(n, np.int64)
        pos[np.asarray(order, np.int64)] = np.arange(len(order))
        stages = np.array([stage_of(i) for i in insns])
        compute_pos = np.where(stages == Stage.COMPUTE, pos, -1)
        before = np.concatenate([[-1], np.maximum.accumulate(compute_pos)[:-1]])
        if ((stages == Stage.LOAD) & (before > pos)).any():
            self.hit("overlap/load_ahead_of_compute")
        compute_pos = np.where(stages == Stage.COMPUTE, pos, n)
        after = np.concatenate([np.minimum.accumulate(compute_pos[::-1])[::-1][1:], [n]])
        if ((stages == Stage.STORE) & (after < pos)).any():
            self.hit("overlap/store_behind_compute")

    def sample_alu(self, insn: Insn, a: np.ndarray, b: np.ndarray) -> None:
        """Dynamic bins: operand values of one ALU instruction (A = acc[dst], B = operand)."""
        alu = AluOp(insn.alu_opcode)
        src = "imm" if insn.use_imm else "tensor"
        if src == "tensor":
            for sign in _sign_bins(b):
                self.hit(f"alu/{alu.name}.tensor.{sign}")
            if alu == AluOp.SHR:
                for c in _shift_bins(b):
                    self.hit(f"shift/tensor.{c}")
        both = np.concatenate([a.reshape(-1), b.reshape(-1)])
        if (both == np.iinfo(np.int32).min).any():
            self.hit("alu/extreme.int32_min")
        if (both == np.iinfo(np.int32).max).any():
            self.hit("alu/extreme.int32_max")

    # --- results -------------------------------------------------------------------------------
    def merge(self, other: FunctionalCoverage | dict[str, int]) -> None:
        self.hits.update(other.hits if isinstance(other, FunctionalCoverage) else other)

    def uncovered(self) -> list[str]:
        return [b for b in all_bins(self.cfg) if not self.hits[b]]

    def percent(self) -> float:
        bins = all_bins(self.cfg)
        return 100.0 * sum(1 for b in bins if self.hits[b]) / len(bins)

    def report(self) -> str:
        bins = all_bins(self.cfg)
        lines = [f"functional coverage: {self.percent():.1f}% "
                 f"({len(bins) - len(self.uncovered())}/{len(bins)} bins)"]
        groups: dict[str, list[str]] = {}
        for b in bins:
            groups.setdefault(b.split("/")[0], []).append(b)
        for group, members in groups.items():
            hit = sum(1 for b in members if self.hits[b])
            lines.append(f"  {group:<8} {hit:>3}/{len(members):<3}")
        missing = self.uncovered()
        if missing:
            lines.append("uncovered: " + ", ".join(missing))
        return "\n".join(lines)
