"""Pipeline timelines from the RTL's event log: a Chrome-trace / Perfetto file and a picture.

:func:`write_timeline` picks by the file's suffix:

- ``.json``: Chrome trace event format (open in https://ui.perfetto.dev or chrome://tracing). One
  process, three lanes (load, compute, store) with one slice per instruction named by its
  disassembly, from the cycle its stage took it to the cycle it retired; the token waits are
  slices of their own inside it (``wait l2g`` at its start, ``full g2s`` at its end); the slice's
  arguments hold the index, the cycles it was dispatched, taken and retired, and its wait cycles.
  A fourth lane has one slice per run (and per segment, a layer say), with its MAC utilization
  (:mod:`vtabench.runtime.utilization`) among its arguments; counter tracks show how
  many instructions wait in each command queue. Time: 1 us in the viewer is one core cycle; runs
  are laid end to end (the host's time between them is left out).
- ``.png``: the same three lanes drawn to scale (colour per instruction kind, token waits grey),
  and, when there are several runs or segments, the cycles of each split into parts
  (:mod:`vtabench.report.breakdown`) with its MAC utilization
  (:mod:`vtabench.runtime.utilization`): readable for thousands of instructions, summarized per
  layer.
"""

from __future__ import annotations

import json
import os
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from vtabench.report.breakdown import Breakdown, Segment, decode, popped_queues, windows
from vtabench.report.trace import Run, read_trace, tracing
from vtabench.runtime.utilization import mac_utilization
from vtabench.spec.contracts.stages import QUEUE_ENDS, Stage
from vtabench.spec.isa.asm import format_insn

if TYPE_CHECKING:
    from vtabench.spec.config import Config

SUFFIXES = (".json", ".png")
#: targets whose simulators write the event log
TRACED_TARGETS = ("rtl",)
#: lane (tid) of the runs / segments slices, below the three stages
RUNS_LANE = len(Stage)


def pushed_queues(insn: Any, stage: Stage) -> list[str]:
    return [q.name.lower() for q, ends in QUEUE_ENDS.items()
            if ends.producer == stage and getattr(insn, ends.push_flag)]


def run_labels(runs: Sequence[Run], labels: Sequence[str] | None) -> list[str]:
    if labels is not None and len(labels) != len(runs):
        raise ValueError(f"{len(labels)} labels for {len(runs)} runs")
    return list(labels) if labels is not None else [
        f"run {k + 1} ({r.insn_count} instructions)" for k, r in enumerate(runs)]


def chrome_trace(cfg: Config, runs: Sequence[Run], labels: Sequence[str] | None = None,
                 segments: dict[int, Sequence[Segment]] | None = None) -> dict[str, Any]:
    """The trace as a Chrome trace-event document. ``labels``: one name per run; ``segments``:
    run number -> named instruction ranges of that run (layers), drawn in the runs lane."""
    names = run_labels(runs, labels)
    ev: list[dict[str, Any]] = [
        {"ph": "M", "pid": 0, "name": "process_name", "args": {"name": f"VTA core ({cfg.name})"}}]
    for tid, lane in [*((s.value, s.name.lower()) for s in Stage), (RUNS_LANE, "runs")]:
        ev.append({"ph": "M", "pid": 0, "tid": tid, "name": "thread_name",
                   "args": {"name": lane}})
        ev.append({"ph": "M", "pid": 0, "tid": tid, "name": "thread_sort_index",
                   "args": {"sort_index": tid}})
    offset = 0
    for k, run in enumerate(runs):
        segs = (segments or {}).get(k, ())
        wins = windows(cfg, [run], [names[k]], {0: segs} if segs else {})
        args: dict[str, Any] = {"instructions": run.insn_count, "cycles": run.cycles,
                                "mac_utilization": round(mac_utilization(
                                    sum(w.macs for w in wins), cfg.macs_per_cycle,
                                    run.cycles), 4)}
        if run.counters is not None:
            args.update({"error": run.counters.error,
                         **{f"{s.name.lower()}_busy": n for s, n in run.counters.busy.items()}})
        ev.append({"ph": "X", "pid": 0, "tid": RUNS_LANE, "name": names[k], "cat": "run",
                   "ts": offset, "dur": run.cycles, "args": args})
        if segs:
            ev += _segment_events(wins, offset)
        ev += _span_events(cfg, run, offset)
        ev += _queue_counters(run, offset)
        offset += run.cycles
    return {"traceEvents": ev,
            "otherData": {"config": cfg.name, "time_unit": "1 us = 1 core cycle",
                          "runs": len(runs)}}


def _segment_events(wins: Sequence[Breakdown], offset: int) -> list[dict[str, Any]]:
    out = []
    start = 0
    for b in wins:
        out.append({"ph": "X", "pid": 0, "tid": RUNS_LANE, "name": b.label, "cat": "segment",
                    "ts": offset + start, "dur": b.cycles,
                    "args": {"mac_utilization": round(b.utilization, 4), b.macs_source: b.macs,
                             **b.parts}})
        start += b.cycles
    return out


def _span_events(cfg: Config, run: Run, offset: int) -> list[dict[str, Any]]:
    out = []
    for s in run.spans:
        insn = decode(cfg, s)
        tid = s.stage.value
        out.append({"ph": "X", "pid": 0, "tid": tid, "name": format_insn(cfg, insn),
                    "cat": insn.describe(), "ts": offset + s.start, "dur": s.busy,
                    "args": {"index": s.index, "dispatch": s.dispatch, "take": s.take,
                             "retire": s.retire, "pop_wait": s.pop_wait,
                             "mem_wait": s.mem_wait, "push_wait": s.push_wait}})
        if s.pop_wait:
            pops = "+".join(q.name.lower() for q in popped_queues(insn, s.stage))
            out.append({"ph": "X", "pid": 0, "tid": tid, "name": f"wait {pops}",
                        "cat": "token wait", "ts": offset + s.start, "dur": s.pop_wait})
        if s.push_wait:
            out.append({"ph": "X", "pid": 0, "tid": tid,
                        "name": f"full {'+'.join(pushed_queues(insn, s.stage))}",
                        "cat": "token wait", "ts": offset + s.end - s.push_wait,
                        "dur": s.push_wait})
    return out


def _queue_counters(run: Run, offset: int) -> list[dict[str, Any]]:
    """Counter tracks: instructions in each command queue (dispatched, not yet taken)."""
    out = []
    for stage in Stage:
        steps: dict[int, int] = {}
        for s in run.stage_spans(stage):
            steps[s.dispatch + 1] = steps.get(s.dispatch + 1, 0) + 1
            steps[s.take + 1] = steps.get(s.take + 1, 0) - 1
        level = 0
        for t in sorted(steps):
            level += steps[t]
            out.append({"ph": "C", "pid": 0, "name": f"{stage.name.lower()} queue",
                        "ts": offset + t, "args": {"instructions": level}})
    return out


def write_timeline(path: str | Path, cfg: Config, runs: Sequence[Run],
                   labels: Sequence[str] | None = None,
                   segments: dict[int, Sequence[Segment]] | None = None) -> Path:
    """Write the timeline of ``runs`` to ``path`` (.json or .png, see the module docstring)."""
    path = Path(path)
    if path.suffix not in SUFFIXES:
        raise ValueError(f"timeline {path}: the name must end in {' or '.join(SUFFIXES)}")
    if not runs:
        raise ValueError(f"timeline {path}: the trace holds no run")
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".json":
        path.write_text(json.dumps(chrome_trace(cfg, runs, labels, segments)))
    else:
        from vtabench.report.plots import timeline_figure

        timeline_figure(cfg, runs, run_labels(runs, labels), segments or {}).savefig(path)
    return path


class Recorder:
    """``--timeline PATH`` (or another picture drawn from the trace: ``option``) of a command:
    every RTL simulator started inside the ``with`` block writes its event log to a temporary
    file (:func:`vtabench.report.trace.tracing`); :meth:`runs` reads it once the simulators have
    ended, :meth:`write` turns them into the timeline ``out``. The target and the suffix are
    checked when it is made, before anything runs."""

    def __init__(self, target: str, out: str | Path | None = None,
                 option: str = "--timeline") -> None:
        self.out = Path(out) if out is not None else None
        if target not in TRACED_TARGETS:
            raise ValueError(f"{option}: only target {' or '.join(TRACED_TARGETS)} records a "
                             f"pipeline trace, not {target}")
        if self.out is not None and self.out.suffix not in SUFFIXES:
            raise ValueError(f"{option} {self.out}: the name must end in "
                             f"{' or '.join(SUFFIXES)}")
        fd, name = tempfile.mkstemp(prefix="vtabench-trace-", suffix=".log")
        os.close(fd)
        self.trace = Path(name)
        self._stack = ExitStack()

    def __enter__(self) -> Recorder:
        self._stack.enter_context(tracing(self.trace))
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def runs(self) -> list[Run]:
        """The runs recorded (read once; the temporary file is removed)."""
        try:
            return read_trace(self.trace)
        finally:
            self.trace.unlink(missing_ok=True)

    def write(self, cfg: Config, runs: Sequence[Run] | None = None,
              labels: Sequence[str] | None = None,
              segments: dict[int, Sequence[Segment]] | None = None) -> Path:
        """Write the timeline of ``runs`` (default: every run recorded) to ``out``."""
        if self.out is None:
            raise ValueError("Recorder.write: the recorder was made without a timeline path")
        return write_timeline(self.out, cfg, self.runs() if runs is None else runs, labels,
                              segments)
