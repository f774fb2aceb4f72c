"""Where the cycles went: a run (or a stretch of it, one layer say) cut into what the compute stage
was doing in each cycle.

The compute stage holds the MAC array, so its cycles are the ones that matter: each cycle of a
window goes to exactly one part, and the parts add up to the window's cycles.

- ``gemm``: executing a GEMM (the MAC array at work, or resetting the accumulators);
- ``alu``: executing an ALU instruction (or FINISH);
- ``uop_acc_load``: executing its own LOAD UOP / ACC / ACC_8BIT (memory bound);
- ``load_stall``: waiting for an l2g token (the load stage has not delivered inputs or weights);
- ``store_stall``: waiting for an s2g token (the store stage has not freed the out buffer);
- ``token_wait``: waiting for room to push a token, or for both l2g and s2g at once;
- ``idle``: no instruction in the stage (fetch behind at the start, the store draining at the
  end).

A window's MAC utilization is :func:`vtabench.runtime.utilization.mac_utilization` of its useful
MACs (a network layer's, given with its :class:`Segment`; else those its GEMMs issue) over its
cycles.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping, Sequence

from vtabench.report.trace import Run, Span
from vtabench.runtime.utilization import (ISSUED_MACS, LAYER_MACS, gemm_iterations,
                                          mac_utilization)
from vtabench.spec.contracts.stages import Stage, TokenQueue
from vtabench.spec.isa.insn import Insn, decode_insn
from vtabench.spec.isa.layout import Opcode
from vtabench.spec.tokens import POP_QUEUES

if TYPE_CHECKING:
    from vtabench.spec.config import Config

#: part -> its label in pictures and tables, in stacking order
PARTS = {
    "gemm": "compute: GEMM",
    "alu": "compute: ALU",
    "uop_acc_load": "compute-stage loads (uop, acc)",
    "load_stall": "load stall (waits for l2g)",
    "store_stall": "store stall (waits for s2g)",
    "token_wait": "token wait (push, both)",
    "idle": "compute idle (fetch, drain)",
}


@dataclass(frozen=True)
class Segment:
    """Instructions ``first .. last`` (stream indices, inclusive) of one run, under a name, with
    their useful MACs when they are a network's layers (None: the MACs their GEMMs issue)."""

    label: str
    first: int
    last: int
    macs: int | None = None


@dataclass
class Breakdown:
    """The cycles of one window, by part (see the module docstring)."""

    label: str
    cycles: int
    parts: dict[str, int]
    mac_iterations: int
    insns: int
    #: GEMM lanes (BATCH x BLOCK_IN x BLOCK_OUT)
    lanes: int
    #: the useful MACs of a network's layers; None: the MACs the GEMMs issue
    layer_macs: int | None = None
    #: per stage: busy cycles and memory-wait cycles of the window's instructions
    stage_busy: dict[Stage, int] = field(default_factory=dict)
    stage_mem_wait: dict[Stage, int] = field(default_factory=dict)

    @property
    def macs(self) -> int:
        """The useful MACs of the window (vtabench.runtime.utilization)."""
        return self.layer_macs if self.layer_macs is not None else self.mac_iterations * self.lanes

    @property
    def macs_source(self) -> str:
        return LAYER_MACS if self.layer_macs is not None else ISSUED_MACS

    @property
    def utilization(self) -> float:
        return mac_utilization(self.macs, self.lanes, self.cycles)


def decode(cfg: Config, span: Span) -> Insn:
    return decode_insn(cfg, span.word)


def popped_queues(insn: Insn, stage: Stage) -> list[TokenQueue]:
    """The token queues an instruction of ``stage`` pops."""
    return [q for (s, flag), q in POP_QUEUES.items() if s == stage and getattr(insn, flag)]


def _window(cfg: Config, label: str, cycles: int, spans: Sequence[Span],
            layer_macs: int | None) -> Breakdown:
    parts = dict.fromkeys(PARTS, 0)
    macs = 0
    busy = dict.fromkeys(Stage, 0)
    mem = dict.fromkeys(Stage, 0)
    compute_busy = 0
    for s in spans:
        busy[s.stage] += s.busy
        mem[s.stage] += s.mem_wait
        if s.stage != Stage.COMPUTE:
            continue
        insn = decode(cfg, s)
        macs += gemm_iterations(insn)
        compute_busy += s.busy
        pops = popped_queues(insn, Stage.COMPUTE)
        wait_part = {(TokenQueue.L2G,): "load_stall", (TokenQueue.S2G,): "store_stall"}.get(
            tuple(pops), "token_wait")
        parts[wait_part] += s.pop_wait
        parts["token_wait"] += s.push_wait
        run_part = {Opcode.LOAD: "uop_acc_load", Opcode.GEMM: "gemm"}.get(insn.opcode, "alu")
        parts[run_part] += s.busy - s.pop_wait - s.push_wait
    parts["idle"] = cycles - compute_busy
    return Breakdown(label, cycles, parts, macs, len(spans), cfg.macs_per_cycle, layer_macs, busy,
                     mem)


def run_breakdown(cfg: Config, run: Run, label: str, layer_macs: int | None = None) -> Breakdown:
    """The whole run as one window; ``layer_macs``: its useful MACs when it is a network's
    layers (None: those its GEMMs issue)."""
    return _window(cfg, label, run.cycles, run.spans, layer_macs)


def segment_breakdowns(cfg: Config, run: Run, segments: Sequence[Segment]) -> list[Breakdown]:
    """One window per segment of ``run``. The compute stage is in order, so its instructions of a
    segment run in one stretch: a window runs from the first compute cycle of its segment to the
    first of the next (the first from cycle 0, the last to the end of the run), and the windows
    add up to the run."""
    starts = []
    for seg in segments:
        first = [s.start for s in run.spans
                 if s.stage == Stage.COMPUTE and seg.first <= s.index <= seg.last]
        starts.append(min(first) if first else None)
    out = []
    prev_end = 0
    for k, seg in enumerate(segments):
        nxt = next((t for t in starts[k + 1:] if t is not None), run.cycles)
        spans = [s for s in run.spans if seg.first <= s.index <= seg.last]
        out.append(_window(cfg, seg.label, nxt - prev_end, spans, seg.macs))
        prev_end = nxt
    return out


def merged(label: str, parts: Sequence[Breakdown]) -> Breakdown:
    """Several windows (the runs of one operator, say) as one: of one configuration, and all
    with layer MACs or none."""
    if not parts:
        raise ValueError(f"{label}: no windows to merge")
    if len({b.lanes for b in parts}) > 1 or len({b.macs_source for b in parts}) > 1:
        raise ValueError(f"{label}: the windows differ in lanes or in what their MACs are")
    known = parts[0].layer_macs is not None
    out = Breakdown(label, 0, dict.fromkeys(PARTS, 0), 0, 0, parts[0].lanes,
                    0 if known else None, dict.fromkeys(Stage, 0), dict.fromkeys(Stage, 0))
    for b in parts:
        if out.layer_macs is not None and b.layer_macs is not None:
            out.layer_macs += b.layer_macs
        out.cycles += b.cycles
        out.mac_iterations += b.mac_iterations
        out.insns += b.insns
        for k, v in b.parts.items():
            out.parts[k] += v
        for s in Stage:
            out.stage_busy[s] += b.stage_busy.get(s, 0)
            out.stage_mem_wait[s] += b.stage_mem_wait.get(s, 0)
    return out


def windows(cfg: Config, runs: Sequence[Run], labels: Sequence[str],
            segments: Mapping[int, Sequence[Segment]]) -> list[Breakdown]:
    """The breakdown windows of a timeline: each run's segments, or the run itself."""
    out: list[Breakdown] = []
    for k, run in enumerate(runs):
        segs = segments.get(k)
        out += segment_breakdowns(cfg, run, segs) if segs else [run_breakdown(cfg, run,
                                                                                labels[k])]
    return out
