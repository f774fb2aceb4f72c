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

from bisect import bisect_left, bisect_right
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


class _Painted:
    """The latest instruction of one stage that accessed each address, one kind of access
    (read or write) of one memory: disjoint segments [start, end) sorted by address, each with
    the index of the last instruction whose access covered it. A stage's instructions are
    recorded in stream order, so painting a range with the newest index keeps the maximum."""

    __slots__ = ("starts", "ends", "last")

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.last: list[int] = []

    def _span(self, lo: int, hi: int) -> tuple[int, int]:
        """The positions [i, j) of the segments that overlap [lo, hi)."""
        return bisect_right(self.ends, lo), bisect_left(self.starts, hi)

    def latest(self, lo: int, hi: int) -> int:
        """The latest index that accessed any address of [lo, hi), or -1 (always for an empty
        range: a DMA of no bytes touches nothing)."""
        i, j = self._span(lo, hi)
        return max(self.last[i:j]) if i < j and lo < hi else -1

    def paint(self, lo: int, hi: int, index: int) -> None:
        """Record an access of [lo, hi) by instruction ``index`` (the newest of its stage)."""
        if hi <= lo:
            return
        i, j = self._span(lo, hi)
        starts, ends, last = [lo], [hi], [index]
        if i < j and self.starts[i] < lo:  # the part of the first segment before lo stays
            starts.insert(0, self.starts[i])
            ends.insert(0, lo)
            last.insert(0, self.last[i])
        if i < j and self.ends[j - 1] > hi:  # and the part of the last one after hi
            starts.append(hi)
            ends.append(self.ends[j - 1])
            last.append(self.last[j - 1])
        self.starts[i:j], self.ends[i:j], self.last[i:j] = starts, ends, last



class HazardTracker:
    """Access histories of one stream (``queues``) and the tokens already placed between its
    stages.

    A history keeps, per memory, stage and kind of access, the latest instruction at every
    address (:class:`_Painted`): an access conflicts with the latest instruction of another
    stage that wrote the range (or read it, for a write). Older accesses of the same stage need
    no token of their own (a stage runs in order), and a token already placed past an index
    makes waiting for it again a no-op, so looking up only the latest is enough; the lookups
    cost a bisection each, whatever the length of the stream (a network's weights, loaded in
    tens of thousands of chunks, once made the history quadratic).
    """

    def __init__(self, queues: StageQueues) -> None:
        self._queues = queues
        self._hist: dict[tuple[str, Stage, bool], _Painted] = {}
        # synced[(Y, X)]: the latest Y instruction that X has already waited for.
        self._synced: dict[tuple[Stage, Stage], int] = {}

    def wait_before(self, stage: Stage, sram: list[SramAccess], dram: list[DramAccess]) -> None:
        """Make the next instruction of ``stage``, which accesses ``sram`` and ``dram``, wait for
        every earlier instruction of another stage that it conflicts with."""
        need: dict[Stage, int] = {}
        accesses = [(a.kind, a.lo, a.hi, a.write) for a in sram] + \
            [("dram", a.lo, a.hi, a.write) for a in dram]
        for memory, lo, hi, write in accesses:
            for (mem, other, was_write), hist in self._hist.items():
                if mem == memory and other != stage and (write or was_write):
                    j = hist.latest(lo, hi)
                    if j >= 0:
                        need[other] = max(need.get(other, -1), j)
        for producer, j in sorted(need.items()):
            self._wait_for(producer, stage, j)

    def record(self, stage: Stage, index: int, sram: list[SramAccess],
               dram: list[DramAccess]) -> None:
        """Remember the accesses of instruction ``index`` (of ``stage``), just queued."""
        for memory, lo, hi, write in [(a.kind, a.lo, a.hi, a.write) for a in sram] + \
                [("dram", a.lo, a.hi, a.write) for a in dram]:
            self._hist.setdefault((memory, stage, write), _Painted()).paint(lo, hi, index)

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
