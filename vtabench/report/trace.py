"""The RTL's pipeline event log (tb/core/vta_trace_log.sv, tb/csrc/trace.cpp), read back.

A simulator started with ``+vta_trace=FILE`` (or with the environment variable
``VTA_TRACE_FILE=FILE``: :func:`tracing`, for simulators other tools start, such as the device
server behind ``open_device("rtl")``) writes one record per event (the format is in trace.cpp):
a run starts, fetch puts an instruction into a stage's command queue, a stage retires an
instruction, a run ends with the core's own counters. :func:`read_trace` turns the file into one
:class:`Run` per launch of the core, each with one :class:`Span` per retired instruction.

Cycle numbers are the core's ``cycles_o`` (0 in a run's first busy cycle). A stage that takes an
instruction in cycle ``take`` is busy with it in cycles ``take + 1 .. retire`` (the cycle it takes
the next one may be ``retire`` itself), so the busy cycles of a stage's spans add up to the
core's busy counter of that stage.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from vtabench.spec.contracts.stages import Stage

#: First line of a trace file of the format this module reads.
HEADER = "# vtabench pipeline trace, format 1"
#: The environment variable a simulator takes its trace file from when it gets no +vta_trace.
ENV_VAR = "VTA_TRACE_FILE"


class TraceError(ValueError):
    """A trace file that is not the log this module reads; the message names file and line."""


@dataclass(frozen=True)
class Span:
    """One instruction in its stage."""

    stage: Stage
    index: int  # position in the run's instruction stream
    word: int  # the 128-bit instruction
    dispatch: int  # cycle fetch put it into the stage's command queue
    take: int  # cycle the stage took it from the queue
    retire: int  # cycle the stage retired it
    pop_wait: int  # cycles waiting for the tokens it pops (right after take)
    mem_wait: int  # cycles in a LOAD / STORE that moved no data (memory latency, back-pressure)
    push_wait: int  # cycles waiting for room in the token queues it pushes (right before retire)

    @property
    def start(self) -> int:
        """First busy cycle."""
        return self.take + 1

    @property
    def end(self) -> int:
        """One past the last busy cycle."""
        return self.retire + 1

    @property
    def busy(self) -> int:
        return self.retire - self.take


@dataclass(frozen=True)
class Counters:
    """The core's counters at the end of a run (its status outputs)."""

    cycles: int
    error: int
    busy: dict[Stage, int]
    insns: dict[Stage, int]


@dataclass
class Run:
    """One launch of the core: its spans in order of retirement, its counters when it ended."""

    insn_count: int
    spans: list[Span] = field(default_factory=list)
    counters: Counters | None = None  # None: the log ends before the run did

    @property
    def cycles(self) -> int:
        """The run's length: the core's cycle counter, else the last retirement."""
        if self.counters is not None:
            return self.counters.cycles
        return max((s.end for s in self.spans), default=0)

    def stage_spans(self, stage: Stage) -> list[Span]:
        return [s for s in self.spans if s.stage == stage]


def _ints(fields: list[str], n: int, where: str) -> list[int]:
    if len(fields) != n:
        raise TraceError(f"{where}: expected {n} fields after the record type, got {len(fields)}")
    try:
        return [int(f) for f in fields]
    except ValueError:
        raise TraceError(f"{where}: a field is not an integer") from None


def read_trace(path: str | Path) -> list[Run]:
    """The runs of a trace file, in order. Raises :class:`TraceError` on a malformed file."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise TraceError(f"{path}: cannot read the trace ({exc.strerror or exc})") from None
    lines = text.splitlines()
    if not lines or lines[0] != HEADER:
        raise TraceError(f"{path}:1: not a vtabench pipeline trace (expected {HEADER!r})")
    runs: list[Run] = []
    dispatched: dict[tuple[int, int], tuple[int, int]] = {}  # (stage, index) -> (cycle, word)
    for n, line in enumerate(lines[1:], start=2):
        where = f"{path}:{n}"
        if not line.strip():
            continue
        kind, *fields = line.split()
        if kind == "L":
            runs.append(Run(_ints(fields, 1, where)[0]))
            dispatched.clear()
            continue
        if not runs:
            raise TraceError(f"{where}: a {kind!r} record before the first run")
        run = runs[-1]
        if kind == "D":
            if len(fields) != 4:
                raise TraceError(f"{where}: expected 4 fields after D, got {len(fields)}")
            cycle, stage, index = _ints(fields[:3], 3, where)
            try:
                word = int(fields[3], 16)
            except ValueError:
                raise TraceError(f"{where}: the instruction is not hexadecimal") from None
            dispatched[(stage, index)] = (cycle, word)
        elif kind == "R":
            stage, index, take, retire, pop, mem, push = _ints(fields, 7, where)
            if (stage, index) not in dispatched:
                raise TraceError(f"{where}: instruction {index} retired by stage {stage} was "
                                 f"never dispatched to it")
            cycle, word = dispatched[(stage, index)]
            run.spans.append(Span(Stage(stage), index, word, cycle, take, retire, pop, mem, push))
        elif kind == "E":
            cycles, error, *rest = _ints(fields, 8, where)
            run.counters = Counters(cycles, error, dict(zip(Stage, rest[:3], strict=True)),
                                    dict(zip(Stage, rest[3:], strict=True)))
        else:
            raise TraceError(f"{where}: unknown record type {kind!r}")
    return runs


@contextmanager
def tracing(path: str | Path) -> Iterator[Path]:
    """Every RTL simulator started inside the block (by this process or its children: the device
    server of ``open_device("rtl")``) writes its event log to ``path``."""
    path = Path(path).resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    before = os.environ.get(ENV_VAR)
    os.environ[ENV_VAR] = str(path)
    try:
        yield path
    finally:
        if before is None:
            os.environ.pop(ENV_VAR, None)
        else:
            os.environ[ENV_VAR] = before
