"""Minimise a failing program to a short reproducer.

Every candidate stays a valid program (it is validated before it is tried) whose result is
defined by the spec alone: it never reads on-chip state it did not write (buffers are undefined
at launch, and an RTL's uninitialised SRAM differs from fsim's zeros), and it has no race between
stages that its tokens leave open (dropping a token pair can let a STORE overtake the ALU that
feeds it). A reproducer must fail because of the bug, not because of either, so it runs on any
target. Reductions, repeated until none
applies:

1. neutralise chunks of instructions (halving chunk sizes, ddmin style): an instruction becomes a
   no-op of its stage carrying the same token flags, so the token pattern stays intact;
2. drop a matched push/pop token pair (the k-th push into a queue with its k-th pop);
3. delete no-ops that carry no token;
4. shrink fields: sizes, loop counts, micro-op ranges and pads towards their smallest values.

Candidates of one round are judged together by ``fails_batch``, because a simulator run costs far
more per process than per program (the RTL runner executes a whole batch in one process).
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from vtabench.spec.contracts.stages import QUEUE_ENDS
from vtabench.spec.isa.insn import Insn
from vtabench.spec.isa.layout import MemType, Opcode
from vtabench.spec.tokens import Stage, stage_of
from vtabench.spec.validate import ValidationError, validate_program

if TYPE_CHECKING:
    from vtabench.spec.config import Config

FailsBatch = Callable[[Sequence[list[Insn]]], list[bool]]
FLAGS = ("pop_prev_dep", "pop_next_dep", "push_prev_dep", "push_next_dep")
#: (pushing stage, push flag, popping stage, pop flag) of each token queue.
QUEUES = tuple(QUEUE_ENDS.values())
#: Field shrink steps: each maps an instruction to a smaller candidate (or None).
FIELD_STEPS: tuple[tuple[str, Callable[[Insn], Insn | None]], ...] = (
    ("y_size->1", lambda i: replace(i, y_size=1) if i.y_size > 1 else None),
    ("x_size/2", lambda i: replace(i, x_size=i.x_size // 2) if i.x_size > 1 else None),
    ("iter_out->1", lambda i: replace(i, iter_out=1) if i.iter_out > 1 else None),
    ("iter_in->1", lambda i: replace(i, iter_in=1) if i.iter_in > 1 else None),
    ("uops->1", lambda i: replace(i, uop_end=i.uop_bgn + 1)
     if i.uop_end - i.uop_bgn > 1 else None),
    ("pads->0", lambda i: replace(i, y_pad_0=0, y_pad_1=0, x_pad_0=0, x_pad_1=0)
     if i.y_pad_0 or i.y_pad_1 or i.x_pad_0 or i.x_pad_1 else None),
)


def result_is_defined(cfg: Config, insns: list[Insn], dram: np.ndarray) -> bool:
    """True when the program's result depends neither on the on-chip buffers' initial contents
    nor on how the stages interleave: fsim started from zeros and from a fill pattern, and run
    under every priority order of the three stages, must produce one DRAM image."""
    from vtabench.fsim import Fsim

    images = []
    for fill in (0x00, 0xA5):
        for stage_order in itertools.permutations(Stage):
            sim = Fsim(cfg)
            for buf in (sim.inp, sim.wgt, sim.acc, sim.out):
                buf.view(np.uint8)[...] = fill
            img = dram.copy()
            sim.run(insns, img, stage_order=stage_order)
            images.append(img)
    return all(np.array_equal(images[0], img) for img in images[1:])


def noop_like(insn: Insn) -> Insn:
    """A no-op of the same stage carrying the same token flags."""
    flags = {f: getattr(insn, f) for f in FLAGS}
    stage = stage_of(insn)
    if stage == Stage.LOAD:
        return Insn(Opcode.LOAD, memory_type=MemType.INP, **flags)
    if stage == Stage.STORE:
        return Insn(Opcode.STORE, memory_type=MemType.OUT, **flags)
    return Insn(Opcode.LOAD, memory_type=MemType.UOP, **flags)


def is_noop(insn: Insn) -> bool:
    return insn.opcode in (Opcode.LOAD, Opcode.STORE) and (insn.x_size == 0 or insn.y_size == 0)


class Shrinker:
    """Greedy minimiser; ``fails_batch`` says which candidate programs still fail."""

    def __init__(self, cfg: Config, dram: np.ndarray, fails_batch: FailsBatch,
                 max_rounds: int = 60, log: Callable[[str], None] | None = None) -> None:
        self.cfg = cfg
        self.dram = dram
        self.fails_batch = fails_batch
        self.max_rounds = max_rounds
        self.log = log or (lambda _msg: None)
        self.evaluations = 0

    def _valid(self, insns: list[Insn]) -> bool:
        try:
            validate_program(self.cfg, insns, self.dram)
        except ValidationError:
            return False
        return result_is_defined(self.cfg, insns, self.dram)

    def _first_failing(self, candidates: list[list[Insn]]) -> list[Insn] | None:
        valid = [c for c in candidates if self._valid(c)]
        if not valid:
            return None
        self.evaluations += len(valid)
        for cand, fails in zip(valid, self.fails_batch(valid), strict=True):
            if fails:
                return cand
        return None

    # --- candidate generators ------------------------------------------------------------------
    @staticmethod
    def _neutralise(insns: list[Insn], chunk: int) -> list[list[Insn]]:
        live = [i for i, x in enumerate(insns) if x.opcode != Opcode.FINISH and not is_noop(x)]
        out = []
        for start in range(0, len(live), chunk):
            picked = set(live[start:start + chunk])
            out.append([noop_like(x) if i in picked else x for i, x in enumerate(insns)])
        return out

    @staticmethod
    def _drop_token_pairs(insns: list[Insn]) -> list[list[Insn]]:
        out = []
        for push_stage, push_flag, pop_stage, pop_flag in QUEUES:
            pushes = [i for i, x in enumerate(insns)
                      if stage_of(x) == push_stage and getattr(x, push_flag)]
            pops = [i for i, x in enumerate(insns)
                    if stage_of(x) == pop_stage and getattr(x, pop_flag)]
            for a, b in zip(pushes, pops):
                cand = list(insns)
                cand[a] = replace(cand[a], **{push_flag: 0})
                cand[b] = replace(cand[b], **{pop_flag: 0})
                out.append(cand)
        return out

    @staticmethod
    def _delete_bare_noops(insns: list[Insn]) -> list[Insn]:
        return [x for x in insns if not (is_noop(x) and not any(getattr(x, f) for f in FLAGS))]

    @staticmethod
    def _shrink_fields(insns: list[Insn]) -> list[list[Insn]]:
        out = []
        for i, x in enumerate(insns):
            for _name, step in FIELD_STEPS:
                smaller = step(x)
                if smaller is not None:
                    out.append(insns[:i] + [smaller] + insns[i + 1:])
        return out

    # --- driver ---------------------------------------------------------------------------------
    def shrink(self, insns: list[Insn]) -> list[Insn]:
        """Return a smaller program that still fails (``insns`` itself if nothing smaller does)."""
        current = list(insns)
        for round_no in range(self.max_rounds):
            progressed = False
            chunk = max(1, len(current) // 2)
            while chunk >= 1:
                found = self._first_failing(self._neutralise(current, chunk))
                if found is not None:
                    current = self._compact(found)
                    progressed = True
                    self.log(f"round {round_no}: neutralised a chunk of {chunk}; "
                             f"{len(current)} instructions")
                    continue
                chunk //= 2
            for generator in (self._drop_token_pairs, self._shrink_fields):
                found = self._first_failing(generator(current))
                if found is not None:
                    current = self._compact(found)
                    progressed = True
                    self.log(f"round {round_no}: {generator.__name__.strip('_')}; "
                             f"{len(current)} instructions")
            if not progressed:
                break
        return current

    def _compact(self, insns: list[Insn]) -> list[Insn]:
        bare = self._delete_bare_noops(insns)
        if len(bare) < len(insns) and self._valid(bare):
            still = self._first_failing([bare])
            if still is not None:
                return still
        return insns
