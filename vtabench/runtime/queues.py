"""The instruction stream of one run, as the three stage queues and their dependency tokens.

Every instruction is routed to its stage (load / compute / store) as fetch will route it. The
three per-stage queues are kept as views of one list in emission order; that order is the merged
stream, and it is always valid because a token is pushed by an instruction emitted before the
instruction that pops it. :meth:`StageQueues.dep_push` / :meth:`StageQueues.dep_pop` are
upstream's ``VTADepPush`` / ``VTADepPop``: they set the token flags on the last / next
instruction of a stage and insert a no-op (LOAD or STORE with ``x_size = 0``) when that
instruction cannot carry the flag.
"""

from __future__ import annotations

from vtabench.runtime.stats import RuntimeStats
from vtabench.spec.isa.insn import Insn
from vtabench.spec.isa.layout import MemType, Opcode
from vtabench.spec.contracts.stages import QUEUE_ENDS
from vtabench.spec.tokens import POP_FLAG, PUSH_FLAG, Stage, TokenQueue, stage_of

# The token queue between two stages, by (from, to).
_QUEUE = {(ends.producer, ends.consumer): q for q, ends in QUEUE_ENDS.items()}


class StageQueues:
    """The queued instructions of one stream (``insns``, in emission order) with the token flags
    still to be placed; the no-ops it inserts are counted in ``stats.noops``."""

    def __init__(self, stats: RuntimeStats) -> None:
        self.insns: list[Insn] = []
        self._stats = stats
        self._stage_last: dict[Stage, int] = {}
        self._pending_pop: dict[Stage, set[TokenQueue]] = {s: set() for s in Stage}

    def append(self, insn: Insn) -> int:
        """Queue ``insn`` on its stage, carrying the pops waiting for that stage; returns its
        index in the stream."""
        st = stage_of(insn)
        for q in self._pending_pop[st]:
            setattr(insn, POP_FLAG[(st, q)], 1)
        self._pending_pop[st] = set()
        self.insns.append(insn)
        i = len(self.insns) - 1
        self._stage_last[st] = i
        return i

    def noop(self, stage: Stage) -> int:
        """Queue a no-op of ``stage`` (an instruction that only carries tokens)."""
        if stage == Stage.LOAD:
            insn = Insn(Opcode.LOAD, memory_type=MemType.INP)
        elif stage == Stage.COMPUTE:
            insn = Insn(Opcode.LOAD, memory_type=MemType.UOP)
        else:
            insn = Insn(Opcode.STORE, memory_type=MemType.OUT)
        self._stats.noops += 1
        return self.append(insn)

    def dep_push(self, src: Stage, dst: Stage, at: int | None = None) -> None:
        """Make stage ``src`` push a token towards ``dst`` after instruction ``at`` (default: its
        last queued instruction); inserts a no-op in ``src`` when there is none or it already
        pushes that queue."""
        q = _QUEUE[(Stage(src), Stage(dst))]
        flag = PUSH_FLAG[(Stage(src), q)]
        i = self._stage_last.get(Stage(src)) if at is None else at
        if i is None or getattr(self.insns[i], flag):
            i = self.noop(Stage(src))
        setattr(self.insns[i], flag, 1)

    def dep_pop(self, src: Stage, dst: Stage) -> None:
        """Make the next instruction of stage ``dst`` wait for a token from ``src``."""
        q = _QUEUE[(Stage(src), Stage(dst))]
        if q in self._pending_pop[Stage(dst)]:  # one pop per queue and instruction: the pending
            self.noop(Stage(dst))  # one goes on a no-op
        self._pending_pop[Stage(dst)].add(q)

    def place_pending_pops(self) -> None:
        """Put the pops that have no instruction to carry them on no-ops (before FINISH)."""
        for st in Stage:
            if self._pending_pop[st]:
                self.noop(st)

    def fence_finish(self) -> None:
        """Order every STORE before the FINISH that follows, as upstream's runtime does
        (``Synchronize``): the last instruction of the store stage pushes s2g and a compute no-op
        pops it. Upstream's cores report done when the compute stage executes FINISH, so without
        it the host could read an output whose STORE has not landed (docs/isa.md section 3).
        Nothing to do without a STORE, or when the last one pushes s2g already: the pop that
        takes that token precedes FINISH in the compute queue."""
        last = self._stage_last.get(Stage.STORE)
        if last is None or getattr(self.insns[last], PUSH_FLAG[(Stage.STORE, TokenQueue.S2G)]):
            return
        self.dep_push(Stage.STORE, Stage.COMPUTE)
        self.dep_pop(Stage.STORE, Stage.COMPUTE)
        self.place_pending_pops()
