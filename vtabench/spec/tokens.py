"""The abstract stage / token machine of docs/isa.md section 3, shared by validation and fsim.

Fetch reads the stream in order and routes each instruction into the bounded in-order command
queue of its stage (load, compute, store); it blocks while the target queue is full. A stage takes
the head of its queue once every token queue it pops holds a token, executes it, then pushes,
waiting while a token queue it pushes to is full. Nothing here looks at data: the machine only
decides *when* each instruction runs.

:func:`schedule` runs the machine under one fixed policy (eager round-robin: fetch as far as it can,
then each stage in turn - load, compute, store - runs instructions until it blocks; repeat) and
returns the execution order, or where it deadlocks, and which tokens are left over at the end. A
program whose tokens order every conflicting access gives the same result under any policy; one
that relies on luck is exposed by this one (loads run as far ahead as the tokens allow).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from vtabench.spec.config import CMD_QUEUE_DEPTH, TOKEN_QUEUE_DEPTH
from vtabench.spec.contracts.stages import QUEUE_ENDS, Stage, TokenQueue
from vtabench.spec.isa.insn import Insn
from vtabench.spec.isa.layout import MemType, Opcode

#: (stage, flag) -> token queue, per the table of docs/isa.md section 3 (the contract
#: spec/contracts/stages.json). Flags absent here are the ones that table marks "must be 0"
#: (validation rejects them; the machine ignores them).
POP_QUEUES: dict[tuple[Stage, str], TokenQueue] = {
    (ends.consumer, ends.pop_flag): q for q, ends in QUEUE_ENDS.items()}
PUSH_QUEUES: dict[tuple[Stage, str], TokenQueue] = {
    (ends.producer, ends.push_flag): q for q, ends in QUEUE_ENDS.items()}
#: The flag that makes an instruction of a stage pop / push a given queue (inverse of the above).
POP_FLAG = {(s, q): f for (s, f), q in POP_QUEUES.items()}
PUSH_FLAG = {(s, q): f for (s, f), q in PUSH_QUEUES.items()}


def stage_of(insn: Insn) -> Stage:
    """The stage fetch routes an instruction to (docs/isa.md section 3)."""
    if insn.opcode == Opcode.STORE:
        return Stage.STORE
    if insn.opcode == Opcode.LOAD and insn.memory_type in (MemType.INP, MemType.WGT):
        return Stage.LOAD
    return Stage.COMPUTE


@dataclass(frozen=True)
class Deadlock:
    """The machine cannot progress: instruction ``index`` waits forever on ``queue``.

    ``queue`` is a token queue name (``l2g`` ...) with ``waits_for`` "pop" (empty) or "push"
    (full). ``fetch_blocked`` is the index fetch is stuck on (its command queue is full), if any:
    the token that would unblock ``index`` may sit behind it in the stream.
    """

    index: int
    queue: str
    waits_for: str
    flag: str
    fetch_blocked: int | None

    def describe(self) -> str:
        what = "a token in" if self.waits_for == "pop" else "room in"
        msg = f"instruction {self.index} waits forever for {what} token queue {self.queue}"
        if self.fetch_blocked is not None:
            msg += (f" (fetch is blocked at instruction {self.fetch_blocked}: its stage's "
                    f"command queue of {CMD_QUEUE_DEPTH} instructions is full)")
        return msg


@dataclass(frozen=True)
class LeftoverToken:
    """A token pushed by instruction ``index`` into ``queue`` and never popped."""

    index: int
    queue: str
    flag: str


@dataclass
class ScheduleResult:
    order: list[int]
    deadlock: Deadlock | None = None
    leftover: list[LeftoverToken] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.deadlock is None and not self.leftover


DEFAULT_STAGE_ORDER = (Stage.LOAD, Stage.COMPUTE, Stage.STORE)


def schedule(insns: Sequence[Insn], *, cmd_depth: int = CMD_QUEUE_DEPTH,
             token_depth: int = TOKEN_QUEUE_DEPTH,
             stage_order: Sequence[Stage] = DEFAULT_STAGE_ORDER) -> ScheduleResult:
    """Run the stage / token machine over ``insns`` (eager round-robin) and return the order.

    ``stage_order`` is the order in which stages take their turn within a round; fsim uses the
    default. Other orders give other legal interleavings (tests use them to show a program's
    result does not depend on the interleaving). Deadlock and leftover tokens do not depend on
    it. Token flags the stage table marks "must be 0" are ignored here; validation rejects them.
    """
    n = len(insns)
    stages: list[int] = []
    pops: list[tuple[int, ...]] = []
    pushes: list[tuple[int, ...]] = []
    flags_cache: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {}
    for insn in insns:
        st = int(stage_of(insn))
        key = (st << 4 | insn.pop_prev_dep << 3 | insn.pop_next_dep << 2
               | insn.push_prev_dep << 1 | insn.push_next_dep)
        entry = flags_cache.get(key)
        if entry is None:
            entry = flags_cache[key] = (
                tuple(q for (s, f), q in POP_QUEUES.items() if s == st and getattr(insn, f)),
                tuple(q for (s, f), q in PUSH_QUEUES.items() if s == st and getattr(insn, f)))
        stages.append(st)
        pops.append(entry[0])
        pushes.append(entry[1])
    # Per stage: the instruction indices routed to it, in stream order. Fetch appends by moving
    # `fetched[s]`; a stage starts the instruction at `started[s]`.
    per_stage: list[list[int]] = [[], [], []]
    for i, st in enumerate(stages):
        per_stage[st].append(i)
    fetched = [0, 0, 0]
    started = [0, 0, 0]
    # Pushes still owed by the instruction a stage has executed but not yet retired.
    owed: list[tuple[int, ...]] = [(), (), ()]
    owner: list[int] = [-1, -1, -1]
    count = [0, 0, 0, 0]  # tokens per queue
    pushed: list[list[int]] = [[], [], [], []]  # pushing instruction of every token, in order
    order: list[int] = []
    fetch = 0
    turns = [int(s) for s in stage_order]

    while True:
        progress = False
        while fetch < n:
            st = stages[fetch]
            if fetched[st] - started[st] >= cmd_depth:
                break
            fetched[st] += 1
            fetch += 1
            progress = True
        for s in turns:
            queue = per_stage[s]
            k, end, due = started[s], fetched[s], owed[s]
            while True:
                if due:
                    left = []
                    for q in due:
                        if count[q] < token_depth:
                            count[q] += 1
                            pushed[q].append(owner[s])
                        else:
                            left.append(q)
                    if len(left) != len(due):
                        progress = True
                    due = tuple(left)
                    if due:
                        break
                if k >= end:
                    break
                i = queue[k]
                need = pops[i]
                if need:
                    for q in need:
                        if not count[q]:
                            break
                    else:
                        for q in need:
                            count[q] -= 1
                        need = ()
                    if need:
                        break
                k += 1
                order.append(i)
                progress = True
                due = pushes[i]
                owner[s] = i
            started[s], owed[s] = k, due
        if not progress:
            break

    if len(order) < n or any(owed):
        return ScheduleResult(order, _deadlock(n, stages, pops, per_stage, started, fetched,
                                               owed, owner, count, fetch))
    leftover = [LeftoverToken(i, TokenQueue(q).name.lower(), PUSH_FLAG[(Stage(stages[i]),
                                                                      TokenQueue(q))])
                for q in TokenQueue for i in pushed[q][len(pushed[q]) - count[q]:]]
    leftover.sort(key=lambda t: t.index)
    return ScheduleResult(order, None, leftover)


def _deadlock(n: int, stages: list[int], pops: list[tuple[int, ...]],
              per_stage: list[list[int]], started: list[int], fetched: list[int],
              owed: list[tuple[int, ...]], owner: list[int], count: list[int],
              fetch: int) -> Deadlock:
    """Name the earliest (in stream order) instruction that waits forever, and on what."""
    candidates: list[tuple[int, TokenQueue, str]] = []
    for s in Stage:
        if owed[s]:
            candidates.append((owner[s], TokenQueue(owed[s][0]), "push"))
        elif started[s] < fetched[s]:
            i = per_stage[s][started[s]]
            q = next(q for q in pops[i] if not count[q])
            candidates.append((i, TokenQueue(q), "pop"))
    i, q, how = min(candidates, key=lambda c: c[0])
    st = Stage(stages[i])
    flag = POP_FLAG[(st, q)] if how == "pop" else PUSH_FLAG[(st, q)]
    return Deadlock(i, q.name.lower(), how, flag, fetch if fetch < n else None)
