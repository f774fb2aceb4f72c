"""Hazard tracking: the dependency tokens that order conflicting accesses of different stages.

The tracker records which SRAM ranges and which device-memory byte ranges each queued instruction
reads and writes. Before an instruction is queued, :meth:`HazardTracker.wait_before` makes its
stage wait (token push on the producer, pop on the consumer) for the latest instruction of each
other stage that it conflicts with (read-after-write and write-after-read), so a caller that
double-buffers only has to alternate buffer addresses. A dependency of the load stage on the
store stage (a layer loading what the previous one stored, batched in one run) travels
store -> compute -> load through a compute no-op.
"""

from __future__ import annotations

from typing import NamedTuple

from vtabench.runtime.queues import StageQueues
from vtabench.spec.tokens import Stage


class SramAccess(NamedTuple):
    """An access of an on-chip buffer (``kind``: inp, wgt or acc): elements [lo, hi)."""

    kind: str
    lo: int
    hi: int
    write: bool


class DramAccess(NamedTuple):
    """An access of device memory: bytes [lo, hi)."""

    lo: int
    hi: int
    write: bool


class _Entry(NamedTuple):
    lo: int
    hi: int
    stage: Stage
    index: int  # the instruction's index in the stream
    write: bool


# The stages that access each on-chip buffer.
_SHARERS = {"inp": (Stage.LOAD, Stage.COMPUTE), "wgt": (Stage.LOAD, Stage.COMPUTE),
            "acc": (Stage.COMPUTE, Stage.STORE)}


class HazardTracker:
    """Access histories of one stream (``queues``) and the tokens already placed between its
    stages."""

    def __init__(self, queues: StageQueues) -> None:
        self._queues = queues
        self._sram: dict[str, list[_Entry]] = {kind: [] for kind in _SHARERS}
        self._dram: list[_Entry] = []
        # synced[(Y, X)]: the latest Y instruction that X has already waited for.
        self._synced: dict[tuple[Stage, Stage], int] = {}

    def wait_before(self, stage: Stage, sram: list[SramAccess], dram: list[DramAccess]) -> None:
        """Make the next instruction of ``stage``, which accesses ``sram`` and ``dram``, wait for
        every earlier instruction of another stage that it conflicts with."""
        need: dict[Stage, int] = {}
        for acc in sram:
            self._conflicts(self._sram[acc.kind], stage, acc.lo, acc.hi, acc.write, need)
        for acc in dram:
            self._conflicts(self._dram, stage, acc.lo, acc.hi, acc.write, need)
        for producer, j in sorted(need.items()):
            self._wait_for(producer, stage, j)

    def record(self, stage: Stage, index: int, sram: list[SramAccess],
               dram: list[DramAccess]) -> None:
        """Remember the accesses of instruction ``index`` (of ``stage``), just queued."""
        for acc in sram:
            self._record(self._sram[acc.kind], _Entry(acc.lo, acc.hi, stage, index, acc.write),
                         _SHARERS[acc.kind])
        for acc in dram:
            self._record(self._dram, _Entry(acc.lo, acc.hi, stage, index, acc.write),
                         tuple(Stage))

    @staticmethod
    def _conflicts(hist: list[_Entry], stage: Stage, lo: int, hi: int, write: bool,
                   need: dict[Stage, int]) -> None:
        for e in hist:
            if e.stage != stage and (write or e.write) and e.lo < hi and lo < e.hi:
                need[e.stage] = max(need.get(e.stage, -1), e.index)

    def _wait_for(self, producer: Stage, consumer: Stage, j: int) -> None:
        """Consumer's next instruction must wait until producer's instruction j completes."""
        if self._synced.get((producer, consumer), -1) >= j:
            return
        if {producer, consumer} == {Stage.LOAD, Stage.STORE}:
            # No direct queue: store -> compute -> load (or load -> compute -> store).
            self._wait_for(producer, Stage.COMPUTE, j)
            k = self._queues.noop(Stage.COMPUTE)
            self._synced[(producer, consumer)] = j
            self._wait_for(Stage.COMPUTE, consumer, k)
            return
        self._queues.dep_push(producer, consumer, at=j)
        self._queues.dep_pop(producer, consumer)
        self._synced[(producer, consumer)] = j

    def _record(self, hist: list[_Entry], entry: _Entry, sharers: tuple[Stage, ...]) -> None:
        # Drop entries of this stage that the new one covers (same kind of access) and entries
        # every other stage has already synchronized past.
        keep = []
        for e in hist:
            if e.stage == entry.stage and e.write == entry.write and entry.lo <= e.lo and \
                    e.hi <= entry.hi:
                continue
            if e.stage != entry.stage and all(self._synced.get((e.stage, o), -1) >= e.index
                                              for o in sharers if o != e.stage):
                continue
            keep.append(e)
        keep.append(entry)
        hist[:] = keep
