"""Unit bench: vta_stage_ctrl, the control machine of the load, compute and store stages
(S_IDLE -> S_POP -> S_RUN -> S_PUSH, an error leaves it idle until clr_i).

A cycle model of the machine, written from the module's contract (its header), takes the same
random inputs each cycle; every output (cmd_ready_o, take_o, retire_o, insn_o, in_pop_o,
in_run_o, busy_o, err_o, err_idx_o, pop_wait_o, push_wait_o) is checked against it on settled
values before the edge. A second scoreboard checks the instruction stream: every instruction
taken is the queue's next one (index and bits), each instruction's tokens are taken once and it
retires once, after they were taken. The stimulus is random in phases: smooth
(tokens and room mostly there, runs that finish, back-to-back instructions), stalls (tokens and
room rare), errors (start, run, abort errors, halts), each with rare clears. Instruction bits
and indices are random with all-ones and all-zeros among them (toggles).
"""

from __future__ import annotations

import cocotb
import pytest

from vtabench.spec.contracts.errors import ErrorCode
from vtabench.tb.unit.clocked_tb import ClockedTB, val
from vtabench.tb.unit.runner import bench_seed, configs, run_bench

S_IDLE, S_POP, S_RUN, S_PUSH = range(4)
INSN_BITS = 128
IDX_BITS = 32
NONE = int(ErrorCode.NONE)
ERRORS = [int(e) for e in ErrorCode if e != ErrorCode.NONE]


class StageCtrlTB(ClockedTB):
    def __init__(self, dut) -> None:
        super().__init__(dut)
        self.state = S_IDLE
        self.err = NONE
        self.insn = 0
        self.idx = 0
        self.next_idx = 0          # index of the queue's next instruction
        self.taken = False         # take_o seen for the instruction taken last
        self.retired = False       # retire_o seen for it
        self.seen_states: set[tuple[int, int]] = set()

    def bits(self, n: int) -> int:
        pick = self.rng.random()
        return (1 << n) - 1 if pick < 0.05 else 0 if pick < 0.1 else self.rng.getrandbits(n)

    def model(self, i: dict[str, int]) -> dict[str, int]:
        """Outputs this cycle and the next state (``_state``, ``_err``), from the contract."""
        o = {"cmd_ready_o": 0, "take_o": 0, "retire_o": 0}
        state, err = self.state, self.err
        if self.state == S_IDLE:
            if i["cmd_valid_i"] and self.err == NONE:
                o["cmd_ready_o"], state = 1, S_POP
        elif self.state == S_POP:
            if i["pop_ok_i"]:
                o["take_o"] = 1
                if i["start_err_i"] != NONE:
                    err, state = i["start_err_i"], S_IDLE
                else:
                    state = S_PUSH if i["start_skip_i"] else S_RUN
        elif self.state == S_RUN:
            if i["run_done_i"]:
                if i["run_err_i"] != NONE:
                    err, state = i["run_err_i"], S_IDLE
                else:
                    state = S_PUSH
        elif i["push_ok_i"]:
            o["retire_o"], state = 1, S_IDLE
            if i["cmd_valid_i"]:
                o["cmd_ready_o"], state = 1, S_POP
        if i["abort_i"]:
            err, state = i["abort_err_i"], S_IDLE
        if i["halt_i"] or i["clr_i"]:
            state = S_IDLE
        if i["clr_i"]:
            err = NONE
        o.update(insn_o=self.insn, in_pop_o=int(self.state == S_POP),
                 in_run_o=int(self.state == S_RUN), busy_o=int(self.state != S_IDLE),
                 err_o=self.err, err_idx_o=self.idx,
                 pop_wait_o=int(self.state == S_POP and not i["pop_ok_i"]),
                 push_wait_o=int(self.state == S_PUSH and not i["push_ok_i"]),
                 _state=state, _err=err)
        return o

    def error(self) -> int:
        """An error code, or any other value but ERR_NONE (the machine only compares with it)."""
        if self.rng.random() < 0.5:
            return self.rng.choice(ERRORS)
        return self.rng.randrange(1, 1 << len(self.dut.err_o))

    def inputs(self, phase: str) -> dict[str, int]:
        r = self.rng.random
        p_tok = {"smooth": 0.9, "stall": 0.15, "errors": 0.6}[phase]
        p_err = {"smooth": 0.0, "stall": 0.01, "errors": 0.2}[phase]
        err = lambda: self.error() if r() < p_err else NONE  # noqa: E731
        insn = self.bits(INSN_BITS)
        idx = self.next_idx if r() < 0.9 else self.bits(IDX_BITS)
        return {"cmd_valid_i": int(r() < 0.8), "cmd_i": (idx << INSN_BITS) | insn,
                "pop_ok_i": int(r() < p_tok), "push_ok_i": int(r() < p_tok),
                "start_err_i": err(), "start_skip_i": int(r() < 0.3),
                "run_done_i": int(r() < 0.4), "run_err_i": err(),
                "abort_i": int(r() < p_err / 4), "abort_err_i": self.error(),
                "halt_i": int(r() < p_err / 4),
                "clr_i": int(r() < (0.05 if self.err != NONE else 0.005))}

    async def step(self, i: dict[str, int]) -> None:
        d = self.dut
        for name, value in i.items():
            getattr(d, name).value = value
        await self.settle()
        want = self.model(i)
        for name, value in want.items():
            if not name.startswith("_"):
                got = val(getattr(d, name))
                assert got == value, (f"{name} = {got:#x}, model {value:#x} (state {self.state}, "
                                      f"err {self.err}, inputs {i})")
        if want["take_o"]:                  # each instruction: one take, then one retire
            assert not self.taken, f"instruction {self.idx}: tokens taken twice"
            self.taken = True
        if want["retire_o"]:
            assert self.taken and not self.retired, \
                f"instruction {self.idx}: retired {'twice' if self.retired else 'untaken'}"
            self.retired = True
        if want["cmd_ready_o"]:             # the instruction stream: taken in queue order
            self.insn = i["cmd_i"] & ((1 << INSN_BITS) - 1)
            self.idx = i["cmd_i"] >> INSN_BITS
            self.next_idx = (self.next_idx + 1) % (1 << IDX_BITS)
            self.taken = self.retired = False
        self.seen_states.add((self.state, want["_state"]))
        self.state, self.err = want["_state"], want["_err"]
        await self.cycle()


async def start(dut) -> StageCtrlTB:
    tb = StageCtrlTB(dut)
    await tb.start({"clr_i": 0, "halt_i": 0, "cmd_valid_i": 0, "cmd_i": 0, "pop_ok_i": 0,
                    "push_ok_i": 0, "start_err_i": NONE, "start_skip_i": 0, "run_done_i": 0,
                    "run_err_i": NONE, "abort_i": 0, "abort_err_i": NONE})
    return tb


@cocotb.test()
async def directed(dut):
    """One instruction through every state; back to back; each way out of each state with an
    error (start, run, abort in S_POP / S_RUN / S_PUSH) and a halt, each cleared."""
    tb = await start(dut)
    quiet = {"clr_i": 0, "halt_i": 0, "cmd_valid_i": 0, "cmd_i": 0, "pop_ok_i": 0,
             "push_ok_i": 0, "start_err_i": NONE, "start_skip_i": 0, "run_done_i": 0,
             "run_err_i": NONE, "abort_i": 0, "abort_err_i": NONE}

    async def go(**kw: int) -> None:
        await tb.step({**quiet, "cmd_i": (tb.next_idx << INSN_BITS) | 0xABCD, **kw})

    for _ in range(2):                          # idle -> pop -> run -> push -> idle
        await go(cmd_valid_i=1)
        await go(pop_ok_i=1)
        await go(run_done_i=1)
        await go(push_ok_i=1)
    await go(cmd_valid_i=1)                     # back to back, with a skip
    await go(pop_ok_i=1, start_skip_i=1)
    await go(push_ok_i=1, cmd_valid_i=1)
    await go(pop_ok_i=1, start_err_i=ERRORS[0])  # start error, held until clr
    await go(cmd_valid_i=1)
    await go(clr_i=1)
    for where in (S_POP, S_RUN, S_PUSH):        # abort and halt in each busy state
        for kind in ("abort", "halt"):
            await go(cmd_valid_i=1)
            if where != S_POP:
                await go(pop_ok_i=1, start_skip_i=int(where == S_PUSH))
            assert tb.state == where
            await go(**({"abort_i": 1, "abort_err_i": ERRORS[-1]} if kind == "abort"
                        else {"halt_i": 1}))
            assert tb.state == S_IDLE
            await go(clr_i=1)
    await go(cmd_valid_i=1)                     # run error
    await go(pop_ok_i=1)
    await go(run_done_i=1, run_err_i=ERRORS[1])
    assert tb.err == ERRORS[1]
    await go(clr_i=1)


@cocotb.test()
async def randomised(dut):
    tb = await start(dut)
    phases = ("smooth", "stall", "errors")
    for n in range(6000):
        await tb.step(tb.inputs(phases[(n // 250) % 3]))
    every = {(a, b) for a, b in [(S_IDLE, S_IDLE), (S_IDLE, S_POP), (S_POP, S_POP),
                                 (S_POP, S_RUN), (S_POP, S_PUSH), (S_POP, S_IDLE),
                                 (S_RUN, S_RUN), (S_RUN, S_PUSH), (S_RUN, S_IDLE),
                                 (S_PUSH, S_PUSH), (S_PUSH, S_IDLE), (S_PUSH, S_POP)]}
    assert every <= tb.seen_states, f"transitions never taken: {sorted(every - tb.seen_states)}"


# ------------------------------------------------------------------------------ pytest runner


@pytest.mark.rtl
@pytest.mark.parametrize("config", configs())
def test_stage_ctrl(config: str) -> None:
    run_bench("stage_ctrl", "vta_stage_ctrl", ["vta_stage_ctrl.sv"], config=config,
              seed=bench_seed())
