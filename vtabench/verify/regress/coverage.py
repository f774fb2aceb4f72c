"""Functional coverage of the ISA: which features a set of programs exercised.

Bins are named ``group/bin``. A program is sampled statically (fields of every instruction, the
execution order the stage machine chose) and dynamically (the operand values of every ALU
instruction, observed in fsim). Coverage is a set of hit counts, mergeable across processes.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Sequence

import numpy as np

from vtabench.spec.isa.layout import AluOp, MemType, Opcode, mem_depth
from vtabench.spec.tokens import POP_QUEUES, PUSH_QUEUES, Stage, stage_of

if TYPE_CHECKING:
    from vtabench.spec.config import Config
    from vtabench.spec.isa.insn import Insn

PAD_FIELDS = ("y_pad_0", "y_pad_1", "x_pad_0", "x_pad_1")
PADDED_MEMS = (MemType.INP, MemType.ACC, MemType.ACC_8BIT)
LOADED_MEMS = (MemType.UOP, MemType.WGT, MemType.INP, MemType.ACC, MemType.ACC_8BIT)
SIGNS = ("neg", "zero", "pos")
SHIFT_CLASSES = ("right_0_31", "right_ge_32", "left_1_31", "left_ge_32")
#: Token flags legal per stage (docs/isa.md section 3): its pops, then its pushes.
STAGE_FLAGS = {s: tuple(f for st, f in [*POP_QUEUES, *PUSH_QUEUES] if st == s) for s in Stage}
LOOP_SHAPES = ("single", "iter_out", "iter_in", "both_loops", "multi_uop")


def all_bins() -> list[str]:
    """Every bin of the model, in report order."""
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
    bins += ["overlap/load_ahead_of_compute", "overlap/store_behind_compute"]
    return bins


def _sign_bins(values: np.ndarray) -> list[str]:
    return [s for s, hit in zip(SIGNS, ((values < 0).any(), (values == 0).any(),
                                        (values > 0).any())) if hit]


def _shift_bins(amounts: np.ndarray) -> list[str]:
    a = amounts.astype(np.int64)
    hits = ((a >= 0) & (a <= 31), a >= 32, (a <= -1) & (a >= -31), a <= -32)
    return [c for c, h in zip(SHIFT_CLASSES, hits) if h.any()]


def _loop_shapes(insn: Insn) -> list[str]:
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

    def sample_program(self, insns: Sequence[Insn], order: Sequence[int]) -> None:
        """Static bins of every instruction, and the overlap bins of the execution order."""
        for insn in insns:
            self._sample_insn(insn)
        self._sample_order(insns, order)

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
        return [b for b in all_bins() if not self.hits[b]]

    def percent(self) -> float:
        bins = all_bins()
        return 100.0 * sum(1 for b in bins if self.hits[b]) / len(bins)

    def report(self) -> str:
        bins = all_bins()
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
