"""The two dependency-token queues around one stage in its unit bench (load, store), modelled as
the spec lets the stage's peers behave: tokens arrive in the queue the stage pops when they like,
the queue it pushes drains when it likes (``cap`` entries), and the stage's side is checked every
cycle: a pop only of an offered token, once per instruction that asks for it, and a push exactly
with the retire of an instruction that asks for one, never into a full queue."""

from __future__ import annotations

import random
from typing import Any

from vtabench.spec.isa import Insn
from vtabench.tb.unit.clocked_tb import val


class StageTokens:
    """``pop``/``push``: the queue names on the stage's ports (``<pop>_valid_i``,
    ``<pop>_pop_o``, ``<push>_ready_i``, ``<push>_push_o``); ``pop_flag``/``push_flag``: the
    instruction fields that ask for them (``pop_next_dep``...)."""

    def __init__(self, dut: Any, rng: random.Random, pop: str, push: str, pop_flag: str,
                 push_flag: str, cap: int = 4) -> None:
        self.dut, self.rng = dut, rng
        self.pop, self.push, self.pop_flag, self.push_flag = pop, push, pop_flag, push_flag
        self.cap = cap
        self.waiting = 0  # tokens in the queue the stage pops
        self.pushed = 0  # tokens in the queue it pushes
        self.popped: set[int] = set()  # instructions that popped their token

    def offer(self, p_tok: float) -> None:
        """Before the cycle settles: maybe a new token, the valid and ready the stage sees."""
        if self.rng.random() < p_tok:
            self.waiting += 1
        getattr(self.dut, f"{self.pop}_valid_i").value = int(self.waiting > 0)
        getattr(self.dut, f"{self.push}_ready_i").value = int(self.pushed < self.cap)

    def check_pop(self, cyc: int, insns: list[Insn], cur: int) -> None:
        """After settling: a pop takes an offered token for instruction ``cur``, once."""
        if val(getattr(self.dut, f"{self.pop}_pop_o")):
            assert self.waiting > 0, f"cycle {cyc}: {self.pop} popped empty"
            assert getattr(insns[cur], self.pop_flag) and cur not in self.popped, \
                f"cycle {cyc}: {self.pop} popped for instruction {cur}"
            self.waiting -= 1
            self.popped.add(cur)

    def has_token(self, insns: list[Insn], cur: int) -> bool:
        """Instruction ``cur`` needs no token or has popped it."""
        return not getattr(insns[cur], self.pop_flag) or cur in self.popped

    def check_push(self, cyc: int, insns: list[Insn], cur: int, retiring: bool,
                   p_room: float) -> None:
        """After settling: a push only with the retire of an instruction that asks for it,
        never into a full queue; then the peer maybe takes a token."""
        push = val(getattr(self.dut, f"{self.push}_push_o"))
        if retiring:
            assert push == getattr(insns[cur], self.push_flag), \
                f"instruction {cur}: {self.push} push {push} at retire"
            assert self.has_token(insns, cur)
        else:
            assert not push, f"cycle {cyc}: {self.push} pushed outside a retire"
        if push:
            assert self.pushed < self.cap, f"{self.push} pushed into a full queue"
            self.pushed += 1
        if self.pushed and self.rng.random() < p_room:
            self.pushed -= 1
