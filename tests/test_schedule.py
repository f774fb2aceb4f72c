"""The stage / token machine: routing, pop-before / push-after, queue capacities, deadlocks."""

from __future__ import annotations


import pytest

from vtabench.spec.isa.insn import Insn
from vtabench.spec.isa.layout import MemType, Opcode
from vtabench.spec.tokens import Deadlock, LeftoverToken, Stage, schedule, stage_of


def L(pop: bool = False, push: bool = False) -> Insn:
    """A load-stage instruction (LOAD INP): pops g2l, pushes l2g."""
    return Insn(Opcode.LOAD, memory_type=MemType.INP, x_size=1, y_size=1,
                pop_next_dep=int(pop), push_next_dep=int(push))


def C(pop_l: bool = False, pop_s: bool = False, push_l: bool = False,
      push_s: bool = False) -> Insn:
    """A compute-stage instruction (GEMM): pops l2g / s2g, pushes g2l / g2s."""
    return Insn(Opcode.GEMM, pop_prev_dep=int(pop_l), pop_next_dep=int(pop_s),
                push_prev_dep=int(push_l), push_next_dep=int(push_s))


def S(pop: bool = False, push: bool = False) -> Insn:
    """A store-stage instruction: pops g2s, pushes s2g."""
    return Insn(Opcode.STORE, memory_type=MemType.OUT, x_size=1, y_size=1,
                pop_prev_dep=int(pop), push_prev_dep=int(push))


F = Insn(Opcode.FINISH)


def test_routing_follows_the_stage_table() -> None:
    load = {MemType.INP, MemType.WGT}
    for mem in (MemType.UOP, MemType.WGT, MemType.INP, MemType.ACC, MemType.ACC_8BIT):
        want = Stage.LOAD if mem in load else Stage.COMPUTE
        assert stage_of(Insn(Opcode.LOAD, memory_type=mem)) == want, mem.name
    assert stage_of(Insn(Opcode.STORE, memory_type=MemType.OUT)) == Stage.STORE
    for op in (Opcode.GEMM, Opcode.ALU, Opcode.FINISH):
        assert stage_of(Insn(op)) == Stage.COMPUTE


def test_stages_run_ahead_until_a_token_is_missing() -> None:
    # Double-buffer handshake: L1 needs the g2l token C0 gives back.
    prog = [L(push=True), L(pop=True, push=True), C(pop_l=True, push_l=True), C(pop_l=True), F]
    result = schedule(prog)
    assert result.ok
    assert result.order == [0, 2, 1, 3, 4]


def test_without_tokens_each_stage_runs_its_queue_in_order() -> None:
    prog = [S(), C(), L(), S(), L(), C(), F]
    assert schedule(prog).order == [2, 4, 1, 5, 6, 0, 3]
    reverse = schedule(prog, stage_order=(Stage.STORE, Stage.COMPUTE, Stage.LOAD))
    assert reverse.order == [0, 3, 1, 5, 6, 2, 4]


def test_store_waits_for_compute_and_compute_for_store() -> None:
    prog = [C(push_s=True), S(pop=True, push=True), C(pop_s=True), F]
    result = schedule(prog)
    assert result.order == [0, 1, 2, 3]
    assert result.ok


def test_pop_that_nothing_satisfies_is_a_deadlock() -> None:
    result = schedule([L(), C(pop_l=True), F])
    assert result.deadlock == Deadlock(1, "l2g", "pop", "pop_prev_dep", None)
    assert result.order == [0]
    assert "instruction 1 waits forever for a token in token queue l2g" in \
        result.deadlock.describe()


def test_cyclic_wait_reports_the_earliest_instruction() -> None:
    prog = [L(pop=True, push=True), C(pop_l=True, push_l=True), F]
    result = schedule(prog)
    assert result.deadlock is not None
    assert (result.deadlock.index, result.deadlock.queue, result.deadlock.flag) == \
        (0, "g2l", "pop_next_dep")


def test_store_pop_deadlock_names_the_store() -> None:
    result = schedule([C(), S(pop=True), F])
    assert result.deadlock == Deadlock(1, "g2s", "pop", "pop_prev_dep", None)


def test_fetch_blocks_on_a_full_command_queue() -> None:
    # The l2g token compute waits for sits behind more compute instructions than fit.
    prog = [C(pop_l=True), C(), C(), L(push=True), F]
    blocked = schedule(prog, cmd_depth=2)
    assert blocked.deadlock == Deadlock(0, "l2g", "pop", "pop_prev_dep", 2)
    assert "fetch is blocked at instruction 2" in blocked.deadlock.describe()
    roomy = schedule(prog, cmd_depth=4)
    assert roomy.ok and roomy.order == [3, 0, 1, 2, 4]


def test_push_waits_while_the_token_queue_is_full() -> None:
    prog = [L(push=True), L(push=True), L(push=True), L(), C(pop_l=True), C(pop_l=True),
            C(pop_l=True), F]
    # Unbounded enough: the load stage runs through.
    assert schedule(prog).order == [0, 1, 2, 3, 4, 5, 6, 7]
    # Two tokens: instruction 2 executes but cannot push, so 3 waits until compute pops.
    assert schedule(prog, token_depth=2).order == [0, 1, 2, 4, 5, 3, 6, 7]


def test_push_into_a_queue_nobody_drains_is_a_deadlock() -> None:
    prog = [S(push=True), S(push=True), F]
    result = schedule(prog, token_depth=1)
    assert result.deadlock == Deadlock(1, "s2g", "push", "push_prev_dep", None)
    assert "room in token queue s2g" in result.deadlock.describe()


def test_tokens_left_at_the_end_name_their_pushers() -> None:
    prog = [L(push=True), C(push_l=True, push_s=True), S(push=True), F]
    result = schedule(prog)
    assert result.deadlock is None and not result.ok
    assert result.leftover == [LeftoverToken(0, "l2g", "push_next_dep"),
                               LeftoverToken(1, "g2l", "push_prev_dep"),
                               LeftoverToken(1, "g2s", "push_next_dep"),
                               LeftoverToken(2, "s2g", "push_prev_dep")]


@pytest.mark.parametrize("stage_order", [
    (Stage.LOAD, Stage.COMPUTE, Stage.STORE), (Stage.STORE, Stage.LOAD, Stage.COMPUTE),
    (Stage.COMPUTE, Stage.STORE, Stage.LOAD)])
def test_every_stage_order_respects_the_tokens(stage_order: tuple[Stage, ...]) -> None:
    prog = []
    for k in range(40):
        prog += [L(pop=k >= 2, push=True), C(pop_l=True, pop_s=k >= 2, push_l=k < 38, push_s=True),
                 S(pop=True, push=k < 38)]
    prog.append(F)
    result = schedule(prog, stage_order=stage_order)
    assert result.ok
    pos = {i: n for n, i in enumerate(result.order)}
    for k in range(40):
        l, c, s = 3 * k, 3 * k + 1, 3 * k + 2
        assert pos[l] < pos[c] < pos[s]
        if k >= 2:
            assert pos[3 * (k - 2) + 1] < pos[l]  # g2l: compute freed the buffer
            assert pos[3 * (k - 2) + 2] < pos[c]  # s2g: store drained


def test_hundred_thousand_instructions_schedule() -> None:
    """A long stream schedules in one pass (speed itself is for benchmarks, not tests)."""
    prog = []
    chunks = 33_333
    for k in range(chunks):
        last = k >= chunks - 2
        prog += [L(pop=k >= 2, push=True), C(pop_l=True, pop_s=k >= 2, push_l=not last,
                                             push_s=True), S(pop=True, push=not last)]
    prog.append(F)
    result = schedule(prog)
    assert result.ok and len(result.order) == len(prog)
    assert result.order[:6] == [0, 3, 1, 4, 2, 5]  # loads run two chunks ahead of compute
