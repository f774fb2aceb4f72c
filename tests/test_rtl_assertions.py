"""The RTL's assertions (docs/rtl.md, Assertions) fire on broken stimulus and on broken RTL: the
simulation stops at the failing cycle and the failure names the assertion and the time.

Every build has them on (Verilator --assert: vtabench/rtl/verilator.py for the core and platform
benches, tests/test_rtl_units.py for the unit benches); here they are shown to fire:
- a token queue pushed past full / popped empty (the stages never do that);
- an AXI master that lets a read burst cross a 4 KiB boundary, or raises WLAST a beat early
  (mutants of vta_mem_engine.sv, built from a copy of hdl/).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from test_rtl_units import run_unit
from vtabench.rtl.verilator import Mutation

pytestmark = pytest.mark.rtl

#: Verilator's message for a failing SVA: "[<time>] %Error: <file>:<line>: Assertion failed in
#: <hierarchy>.<label>: <message>"
FIRED = re.compile(r"\[(\d+)\] %Error: (\S+\.sv):(\d+): Assertion failed in (\S+)\.(\w+): (.*)")


def fired(log: str) -> list[tuple[int, str, str]]:
    """(time in ps, assertion label, message) of every assertion that failed in ``log``."""
    return [(int(m[1]), m[5], m[6]) for m in FIRED.finditer(log)]


@pytest.mark.parametrize("case,label", [("overflow", "a_no_overflow"),
                                        ("underflow", "a_no_underflow")])
def test_token_queue_misuse_fires(case: str, label: str) -> None:
    log = run_unit("token_queue", seed=1, bench="token_queue_misuse", testcase=case,
                   expect_fail=True)
    hits = fired(log)
    assert hits, f"no assertion fired:\n{log[-3000:]}"
    time_ps, name, message = hits[0]
    assert name == label, hits
    assert time_ps > 0 and "token queue" in message


@pytest.mark.parametrize("mutant,label", [
    (Mutation("vta_mem_engine.sv",
              "assign rd_to_win = 32'(WinBeats) - 32'((rd_addr_q & Aw'(WindowBytes - 1)) >> LogSw);",
              "assign rd_to_win = 32'(WinBeats);"), "a_ar_burst"),
    (Mutation("vta_mem_engine.sv", "assign w_last          = (w_beat_q == wf_len);",
              "assign w_last          = (w_beat_q + 8'd1 == wf_len);"), "a_wlast"),
], ids=["read-burst-crosses-4k", "wlast-early"])
def test_axi_master_assertions_fire_on_broken_engine(tmp_path: Path, mutant: Mutation,
                                                     label: str) -> None:
    hdl = mutant.apply(tmp_path / f"mut-{mutant.tag}" / "hdl")
    log = run_unit("mem_engine", seed=1, hdl=hdl, bench="mem_engine_burst", expect_fail=True)
    hits = fired(log)
    assert hits and hits[0][1] == label, (hits, log[-3000:])


def test_axi_master_assertions_quiet_on_the_real_engine() -> None:
    """The same bench on the real engine: no assertion fires (so the two above are the
    mutants', not the bench's)."""
    log = run_unit("mem_engine", seed=1, bench="mem_engine_burst")
    assert fired(log) == []
