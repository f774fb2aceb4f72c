"""Coverage closure (issue #31): the sign-off over Verilator's points (waivers, thresholds, the
report), the random DRAM fill outside every buffer and its check, waves written on a failure."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from vtabench.cli import main
from vtabench.report.coverage_html import write_report
from vtabench.rtl.coverage import RtlCoverage
from vtabench.rtl.signoff import (THRESHOLDS, WAIVERS, WaiverError, kind_of, load_waivers,
                                  signoff)
from vtabench.rtl.signoff import main as signoff_main

KEY = ("\x01f\x02{f}\x01l\x02{l}\x01t\x02{t}\x01page\x02v_{t}/{m}\x01o\x02{o}"
       "\x01h\x02TOP.vta_tb_top.u_core.{h}")


def _dat(path: Path, points: list[tuple[str, str, int, str, str, int]]) -> Path:
    """A coverage.dat of (module, kind, line, comment, instance, count) points of hdl/."""
    lines = ["# SystemC::Coverage-3"]
    lines += [f"C '{KEY.format(f=f'hdl/{m}.sv', l=l, t=t, m=m, o=o, h=h)}' {n}"
              for m, t, l, o, h, n in points]
    path.write_text("\n".join(lines) + "\n")
    return path


#: vta_buf with one missed line, one missed branch, and 100 toggle points of which 3 missed;
#: vta_fifo complete, with an FSM state and an assertion's cover point.
POINTS = [("vta_buf", "line", 10, "block", "u_acc_buf", 4),
          ("vta_buf", "line", 12, "block", "u_wgt_buf", 0),
          ("vta_buf", "branch", 14, "if", "u_acc_buf", 3),
          ("vta_buf", "branch", 14, "else", "u_acc_buf", 0),
          *[("vta_buf", "toggle", 5, f"g_bank[0].lane[{b}]:{d}", "u_acc_buf", int(b < 2 or b > 2))
            for b in range(48) for d in ("0->1", "1->0")],
          ("vta_buf", "toggle", 6, "win_c0[0]:0->1", "u_acc_buf", 1),
          ("vta_buf", "toggle", 6, "win_c0[0]:1->0", "u_acc_buf", 1),
          ("vta_buf", "toggle", 6, "we:0->1", "u_acc_buf", 0),
          ("vta_buf", "toggle", 6, "we:1->0", "u_acc_buf", 1),
          ("vta_fifo", "line", 3, "block", "u_q", 9),
          ("vta_fifo", "user", 8, "fsm_state_q_S_IDLE", "u_q", 2),
          ("vta_fifo", "user", 9, "cov_a_rptr_next", "u_q", 5)]

WAIVE_ALL = '''
[[waiver]]
module = "vta_buf"
kind = "line"
line = 12
instance = "*.u_wgt_buf"
reason = "the loop body has no iteration in this instance (NumGroups = 1)"
owner = "RTL owners"

[[waiver]]
module = "vta_buf"
kind = "branch"
line = 14
comment = "else"
reason = "the else of a constant condition of this parameterization"
owner = "RTL owners"

[[waiver]]
module = "vta_buf"
kind = "toggle"
signal = "g_bank[*].lane"
bits = "2"
reason = "lane bit 2 is constant in this test's made-up instance"
owner = "RTL owners"
'''


def _cov(tmp_path: Path) -> RtlCoverage:
    return RtlCoverage.from_files([_dat(tmp_path / "cov.dat", POINTS)])


def _waivers(tmp_path: Path, text: str, name: str = "w.toml") -> Path:
    (tmp_path / name).write_text(text)
    return tmp_path / name


def test_thresholds_name_module_kind_and_first_missed_points(tmp_path):
    judged = signoff(_cov(tmp_path), [], "default")
    failures = judged.failures()
    assert judged.rtl_modules == ["vta_buf", "vta_fifo"]
    assert [f.split(" (")[0] for f in failures] == [
        "vta_buf line 50.0% < 100%", "vta_buf branch 50.0% < 100%", "vta_buf toggle 97.0% < 98%"]
    assert "first missed: vta_buf.sv:12 block" in failures[0]
    assert "first missed: vta_buf.sv:14 else" in failures[1]
    # the toggle's missed points gathered by signal, bits listed
    assert "g_bank[0].lane[2] (u_acc_buf)" in failures[2] and "we (u_acc_buf)" in failures[2]
    assert "vta_shell" in judged.unmeasured  # a module of hdl/ this bench does not reach


def test_waived_points_leave_the_denominator(tmp_path):
    judged = signoff(_cov(tmp_path), load_waivers(_waivers(tmp_path, WAIVE_ALL)), "default")
    assert judged.failures() == []
    buf = judged.tallies["vta_buf"]
    assert (buf["line"].hit, buf["line"].waived, buf["line"].total) == (1, 1, 2)
    assert buf["toggle"].waived == 2 and buf["toggle"].percent == pytest.approx(100 * 97 / 98)
    assert {w.number for w in judged.waived.values()} == {1, 2, 3}
    assert "+2w" in judged.report()


def test_a_waiver_for_another_configuration_does_not_apply(tmp_path):
    text = WAIVE_ALL.replace('line = 12\n', 'line = 12\nconfigs = ["cloud32"]\n')
    judged = signoff(_cov(tmp_path), load_waivers(_waivers(tmp_path, text)), "default")
    assert [f.split(" ")[:2] for f in judged.failures()] == [["vta_buf", "line"]]


def test_a_toggle_waiver_names_one_element_of_a_packed_array(tmp_path):
    """The last index of a toggle point is the bit; the ones before it belong to the signal:
    ``len[1]`` waives client 1's bits alone, ``len[*]`` every client's."""
    points = [("vta_buf", "toggle", 7, f"len[{k}][{b}]:{d}", "u_acc_buf", int(k == 0))
              for k in range(2) for b in range(4) for d in ("0->1", "1->0")]
    cov = RtlCoverage.from_files([_dat(tmp_path / "c.dat", points)])
    entry = ('[[waiver]]\nmodule = "vta_buf"\nkind = "toggle"\nsignal = "{}"\nbits = "3:2"\n'
             'reason = "client 1 asks for whole 4-byte elements only"\nowner = "RTL owners"\n')
    one = signoff(cov, load_waivers(_waivers(tmp_path, entry.format("len[1]"))), "default")
    assert one.tallies["vta_buf"]["toggle"].waived == 4 and not one.stale
    assert all(p.comment.startswith("len[1][") for p in one.waived)
    assert signoff(cov, load_waivers(_waivers(tmp_path, entry.format("len"))), "default").stale
    every = signoff(cov, load_waivers(_waivers(tmp_path, entry.format("len[*]"))), "default")
    assert every.tallies["vta_buf"]["toggle"].waived == 4 and not every.stale


@pytest.mark.parametrize("change, why", [
    (("line = 12", "line = 13"), "waiver 1 (vta_buf line line 13) matches no coverage point"),
    (("comment = \"else\"", "comment = \"if\""), "waiver 2 (vta_buf branch line 14): all 1 "
                                                  "point(s) it waives were hit"),
])
def test_a_stale_waiver_fails_the_signoff(tmp_path, change, why):
    text = WAIVE_ALL.replace(*change)
    judged = signoff(_cov(tmp_path), load_waivers(_waivers(tmp_path, text)), "default")
    assert any(f.startswith(why) for f in judged.failures()), judged.failures()


@pytest.mark.parametrize("entry, message", [
    ('module = "vta_buf"\nkind = "line"\nline = 3\nowner = "x"',
     "waiver 1: missing reason"),
    ('module = "vta_buf"\nkind = "line"\nline = 3\nreason = "unused"\nowner = "x"',
     "waiver 1: the reason must say why"),
    ('module = "vta_buf"\nkind = "toggle"\nline = 3\nreason = "' + "r" * 40 + '"\nowner = "x"',
     "waiver 1: key(s) line not for a toggle waiver"),
    ('module = "vta_buf"\nkind = "toggle"\nsignal = "a"\nbits = "3:7"\nreason = "' + "r" * 40
     + '"\nowner = "x"', "waiver 1: bits '3:7': HI below LO"),
    ('module = "vta_buf"\nkind = "stmt"\nreason = "' + "r" * 40 + '"\nowner = "x"',
     "waiver 1: kind 'stmt'"),
])
def test_bad_waiver_files_are_refused_with_the_entry(tmp_path, entry, message):
    path = _waivers(tmp_path, "[[waiver]]\n" + entry + "\n")
    with pytest.raises(WaiverError, match=None) as info:
        load_waivers(path)
    assert str(info.value).startswith(f"{path}: {message}"), info.value
    assert "\n" not in str(info.value)


def test_the_repository_waivers_load_with_reasons_and_owners():
    waivers = load_waivers(WAIVERS)
    assert len(waivers) > 20
    assert all(w.reason and w.owner for w in waivers)
    # no blanket: a toggle waiver names one signal, a line or branch waiver one line
    assert all(w.signal and w.signal != "*" for w in waivers if w.kind == "toggle")
    assert all(w.line for w in waivers if w.kind in ("line", "branch"))


def test_cover_points_count_as_fsm_or_assertion(tmp_path):
    cov = RtlCoverage.from_files([_dat(tmp_path / "u.dat", [
        ("vta_fetch", "user", 7, "fsm_state_q_S_IDLE", "u_fetch", 3),
        ("vta_fetch", "user", 9, "a_one_route", "u_fetch", 0)])])
    assert sorted(kind_of(p) for p in cov.table) == ["assertion", "fsm"]
    failures = signoff(cov, [], "default").failures()
    assert [f.split(" ")[:2] for f in failures] == [
        ["vta_fetch", "assertion"], *([f"{k}:", "no"] for k in ("line", "branch", "toggle"))]
    assert set(THRESHOLDS) >= {"fsm", "assertion"}


def test_a_kind_without_points_fails_and_its_waivers_wait(tmp_path):
    """A coverage build without --coverage-user has no fsm or assertion points: the sign-off
    says so (it is not met), and the waivers of those kinds are not called stale."""
    plain = [p for p in POINTS if p[1] != "user"]
    cov = RtlCoverage.from_files([_dat(tmp_path / "plain.dat", plain)])
    fsm_waiver = WAIVE_ALL + '''
[[waiver]]
module = "vta_fifo"
kind = "fsm"
cover = "fsm_state_q_S_IDLE_to_S_DONE"
reason = "the next-state logic never moves from S_IDLE to S_DONE directly"
owner = "RTL owners"
'''
    judged = signoff(cov, load_waivers(_waivers(tmp_path, fsm_waiver)), "default")
    assert judged.missing_kinds == ["fsm", "assertion"]
    assert [f.split(":")[0] for f in judged.failures()] == ["fsm", "assertion"]
    assert "--coverage-user" in judged.failures()[0]


def test_coverage_dat_round_trip(tmp_path):
    cov = _cov(tmp_path)
    cov.write_dat(tmp_path / "again.dat")
    again = RtlCoverage.from_files([tmp_path / "again.dat"])
    assert again.counts == cov.counts


def test_signoff_cli_exit_status(tmp_path, capsys):
    dat = _dat(tmp_path / "cov.dat", POINTS)
    assert signoff_main([str(dat), "--waivers", str(_waivers(tmp_path, ""))]) == 1
    out = capsys.readouterr().out
    assert "FAIL vta_buf line 50.0% < 100%" in out
    assert signoff_main([str(dat), "--waivers", str(_waivers(tmp_path, WAIVE_ALL))]) == 0
    assert signoff_main([str(tmp_path / "none.dat")]) == 2
    assert "no such coverage file" in capsys.readouterr().err


def test_regress_cli_refuses_signoff_without_rtl_coverage(capsys):
    assert main(["regress", "--count", "1", "--targets", "fsim", "--signoff"]) == 2
    assert "--signoff: only with --rtl-coverage" in capsys.readouterr().err
    assert main(["regress", "--count", "1", "--targets", "fsim", "--waivers", "w.toml"]) == 2
    assert "--waivers: only with --signoff" in capsys.readouterr().err


def test_report_marks_waived_points_and_the_signoff(tmp_path):
    cov = _cov(tmp_path)
    judged = signoff(cov, load_waivers(_waivers(tmp_path, WAIVE_ALL)), "default")
    index = write_report(tmp_path / "rep", cov, {"a/b": 1}, ["a/b"], "t", judged)
    text = index.read_text()
    assert "Sign-off after waivers" in text and "Every RTL module meets its thresholds" in text
    assert "3 waived" not in text and "(97/98, 2 waived)" in text
    page = (tmp_path / "rep" / "src" / "vta_buf.html").read_text()
    assert "<h2>Waivers</h2>" in page and "waiver 3 (vta_buf toggle g_bank[*].lane[2:2])" in page
    unjudged = write_report(tmp_path / "plain", cov, {"a/b": 1}, ["a/b"], "t").read_text()
    assert "Sign-off" not in unjudged


# --- random DRAM fill outside every buffer ------------------------------------------------------

def test_images_are_random_outside_every_buffer():
    from vtabench.spec.config import load_config
    from vtabench.verify.random_case import TAIL_BEATS, buffer_mask
    from vtabench.verify.regress.campaign import generate

    cfg = load_config("default")
    for k in range(12):
        prog = generate(cfg, 11, k)
        if not prog.legal:  # a broken stream may address past the image (its defect)
            continue
        inside = buffer_mask(cfg, list(prog.insns), prog.dram.size)
        tail = prog.dram.size - 1 - int(np.flatnonzero(inside)[-1])
        assert cfg.bus_bytes <= tail < (TAIL_BEATS + 1) * cfg.bus_bytes, (k, tail)
        outside = prog.dram[~inside]
        assert len(set(outside.tolist())) > 16, k  # random bytes, not a fill pattern
    # the draws of the program and its setup are the generator's as before: the fill has a
    # stream of its own (same seed, same instructions)
    again = generate(cfg, 11, 3)
    assert again.insns == generate(cfg, 11, 3).insns and (again.dram == generate(cfg, 11, 3).dram).all()


def test_a_write_outside_every_store_row_is_caught_after_any_outcome():
    from vtabench.spec.config import load_config
    from vtabench.spec.contracts.errors import ErrorCode
    from vtabench.spec.program import Origin, Outcome
    from vtabench.verify.random_case import buffer_mask
    from vtabench.verify.regress.diff import compare, unstored_change
    from vtabench.verify.regress.campaign import generate
    from vtabench.spec.isa import Opcode

    cfg = load_config("default")
    # the first clean case of the seed (an illegal stream's image is not compared)
    prog = next(p for k in range(20) if (p := generate(cfg, 11, k)).kind == "legal")
    failing = replace(prog, origin=Origin("fault.write"),
                      expect={"rtl": Outcome(ErrorCode.AXI_WR, (0,))})
    stored = buffer_mask(cfg, list(prog.insns), prog.dram.size, (Opcode.STORE,))
    got = prog.dram.copy()
    got[np.flatnonzero(stored)[:5]] ^= 0x5A  # a store's bytes: anything after an error
    assert unstored_change(cfg, "rtl", failing, got) is None
    beside = int(np.flatnonzero(~stored)[-1])
    got[beside] ^= 1
    m = unstored_change(cfg, "rtl", failing, got)
    assert m is not None and m.byte == beside and m.differing_bytes == 1
    assert "(outside every STORE's rows): input image" in m.describe()
    # fsim's image is held to the same rule (reported as fsim's) when a clean run is compared
    bad_golden = prog.dram.copy()
    bad_golden[beside] ^= 1
    assert compare(cfg, "rtl", prog, bad_golden, prog.dram).target == "fsim"


def test_run_on_target_reports_a_stray_write(monkeypatch):
    import vtabench.drivers.api as api
    from vtabench.spec.config import load_config
    from vtabench.verify.regress.campaign import generate
    from vtabench.verify.regress.diff import run_on_target

    cfg = load_config("default")
    progs = [generate(cfg, 11, k) for k in range(3)]
    progs = [p for p in progs if p.legal and p.outcome("fsim") is not None]  # clean on fsim
    _, problems = run_on_target(cfg, "fsim", progs, seed=1)
    assert problems == [None] * len(progs)
    real = api.run_program

    def stray(dev, code, dram, *args, **kwargs):  # a target that also writes the last byte
        result = real(dev, code, dram, *args, **kwargs)
        dram[-1] ^= 0xFF
        return result

    monkeypatch.setattr(api, "run_program", stray)
    _, problems = run_on_target(cfg, "fsim", progs, seed=1)
    assert all(p and "outside every STORE's rows" in p for p in problems), problems


# --- assertion and FSM cover points -----------------------------------------------------------

FSM_SV = """`define VTA_ASSERT_OFF (!rst_ni || !rst_seen)
module t (input logic clk_i, input logic rst_ni, input logic go_i);
  typedef enum logic [1:0] {S_IDLE, S_RUN = 2'd2, S_DONE} state_e;
  state_e state_q, state_d;
  always_comb begin
    state_d = state_q;
    unique case (state_q)
      S_IDLE: if (go_i) state_d = S_RUN;
      S_RUN:  state_d = S_DONE;
      default: state_d = S_IDLE;
    endcase
  end
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) state_q <= S_IDLE;
    else         state_q <= state_d;
  end
`ifndef SYNTHESIS
  logic rst_seen;
  initial rst_seen = 1'b0;
  always @(posedge clk_i or negedge rst_ni) if (!rst_ni) rst_seen <= 1'b1;
  a_run_done: assert property (@(posedge clk_i) disable iff (!rst_ni || !rst_seen)
      state_q == S_RUN && (go_i || !go_i) |=> state_q == S_DONE)
    else $error("t: RUN went to %0d; (not DONE)", state_q);
  a_legal: assert property (@(posedge clk_i) disable iff (!rst_ni || !rst_seen)
      state_q != 2'd1) else $error("illegal");
`endif
endmodule
"""


def test_assertion_twins_take_the_trigger_and_keep_every_line():
    from vtabench.rtl.cover_points import assertions, fsm_registers, instrumented_text

    found = assertions(FSM_SV)
    assert [(a.name, a.clock, a.disable, a.trigger) for a in found] == [
        ("a_run_done", "@(posedge clk_i)", "!rst_ni || !rst_seen",
         "state_q == S_RUN && (go_i || !go_i)"),
        ("a_legal", "@(posedge clk_i)", "!rst_ni || !rst_seen", "1'b1")]
    assert fsm_registers(FSM_SV) == {"state_q": ["S_IDLE", "S_RUN", "S_DONE"]}
    out = instrumented_text(FSM_SV, Path("/x/t.sv"))
    lines = out.splitlines()
    assert lines[0] == '`line 1 "/x/t.sv" 0'
    assert len(lines) == len(FSM_SV.splitlines()) + 1
    for old, new in zip(FSM_SV.splitlines(), lines[1:]):
        assert new.startswith(old)  # covers only after a statement's end, on its line
    twin = next(n for n in lines if "cov_a_run_done" in n)
    assert twin.startswith('    else $error("t: RUN went to %0d; (not DONE)", state_q);')
    assert ("cov_a_run_done: cover property (@(posedge clk_i) disable iff (!rst_ni || "
            "!rst_seen) state_q == S_RUN && (go_i || !go_i));") in twin
    last = next(n for n in lines if "cov_a_legal" in n)
    assert "fsm_state_q_S_RUN: cover property" in last  # after the module's last assertion
    assert last.count("fsm_state_q_") == 3 + 3 * 2  # states and arcs between two of them
    assert "state_q == S_DONE && state_d == S_IDLE" in last


def test_every_assertion_of_the_rtl_gets_a_twin(tmp_path):
    from vtabench.rtl.cover_points import assertions, instrument
    from vtabench.sources import HDL_DIR

    out = instrument(tmp_path / "hdl")
    for src in HDL_DIR.glob("*.sv"):
        names = [a.name for a in assertions(src.read_text())]
        copy = (out / src.name).read_text()
        assert all(f"cov_{n}: cover property" in copy for n in names), src.name
        assert copy.startswith(f'`line 1 "{src}" 0\n'), src.name
    assert sum(len(assertions(s.read_text())) for s in HDL_DIR.glob("*.sv")) >= 30
    assert "fsm_state_q_S_POP_to_S_RUN" in (out / "vta_stage_ctrl.sv").read_text()


@pytest.mark.slow
def test_cover_points_are_counted_by_verilator(tmp_path):
    """A Verilator --coverage-user build of the instrumented module: its cover points come back
    as assertion and FSM points of the original file and lines (one build, about 40 s)."""
    import subprocess

    from vtabench.rtl.cover_points import instrumented_text
    from vtabench.rtl.verilator import setup_verilator_env

    setup_verilator_env()
    src = tmp_path / "t.sv"
    src.write_text(FSM_SV)
    (tmp_path / "inst.sv").write_text(instrumented_text(FSM_SV, src))
    (tmp_path / "main.cpp").write_text("""
#include "Vt.h"
#include "verilated.h"
#include "verilated_cov.h"
int main(int argc, char** argv) {
  VerilatedContext ctx; ctx.commandArgs(argc, argv); Vt top{&ctx};
  top.rst_ni = 1; top.clk_i = 0; top.eval(); top.rst_ni = 0; top.eval();  // a reset edge
  top.clk_i = 1; top.eval(); top.clk_i = 0; top.rst_ni = 1; top.eval();
  for (int i = 0; i < 12; i++) {
    top.go_i = i % 4 == 0; top.clk_i = 1; top.eval(); top.clk_i = 0; top.eval();
  }
  top.final(); ctx.coveragep()->write("coverage.dat"); return 0;
}
""")
    subprocess.run(["verilator", "--cc", "--exe", "--build", "--assert", "--coverage-user",
                    "-Wno-fatal", "--top-module", "t", "inst.sv", "main.cpp", "-o", "sim"],
                   cwd=tmp_path, check=True, capture_output=True)
    subprocess.run([str(tmp_path / "obj_dir" / "sim")], cwd=tmp_path, check=True)
    cov = RtlCoverage.from_files([tmp_path / "coverage.dat"])
    points = {p.comment.split(".")[-1]: (kind_of(p), f"{Path(p.file).name}:{p.line}", n)
              for p, n in cov.counts.items()}
    # the original file, on the assertion's last line (line 23 of FSM_SV: its else action)
    assert points["cov_a_run_done"][:2] == ("assertion", "t.sv:23") and points["cov_a_run_done"][2]
    assert points["fsm_state_q_S_DONE_to_S_IDLE"][0] == "fsm" and points["fsm_state_q_S_DONE_to_S_IDLE"][2]
    assert points["fsm_state_q_S_IDLE_to_S_DONE"][2] == 0  # no such arc in the next-state logic
    assert points["fsm_state_q_S_RUN"][0] == "fsm" and points["fsm_state_q_S_RUN"][2] > 0


def test_closure_cases_end_in_the_errors_the_validator_gives():
    """Every illegal directed case of coverage closure is a stream the RTL must stop on; a halt
    case stops at its illegal opcode, after its LOAD and its empty GEMMs; the long stream at
    instruction 2^LONG_BITS - 1 of 2^(LONG_BITS + 1) - 1; the valid ones are valid streams (their
    images are compared with fsim's when they run)."""
    from vtabench.spec.config import load_config
    from vtabench.spec.contracts.errors import ErrorCode
    from vtabench.verify.closure import (EXTREME_MEMS, EXTREME_VARIANTS, HALT_DELAYS, LONG_BITS,
                                         closure_cases)

    for name in ("default", "cloud32", "edge8"):
        cases = closure_cases(load_config(name))
        illegal = [c for c in cases if not c.legal]
        assert len({c.name for c in cases}) == len(cases)
        assert len(illegal) == 9 + 2 * HALT_DELAYS + len(EXTREME_MEMS) * len(EXTREME_VARIANTS)
        assert all(c.expect["rtl"].error != ErrorCode.NONE for c in illegal), name
        assert {c.name for c in cases if c.legal} == {
            "closure-loop_extremes", "closure-whole_rows", "closure-many_rows",
            "closure-store_push_wait"}
        assert all(c.expect == {} for c in cases if c.legal), name
        long = next(c for c in cases if c.name == "closure-long_stream")
        assert long.expect["rtl"].indices == ((1 << LONG_BITS) - 1,)
        assert long.count == (1 << (LONG_BITS + 1)) - 1
        for c in illegal:
            if "-halt_" in c.name:
                delay = int(c.name.rsplit("_", 1)[1])
                assert c.expect["rtl"].error == ErrorCode.OPCODE
                assert c.expect["rtl"].indices == (delay + 1,) and c.count == delay + 3


COVERAGE_TOP_SV = """module t (input logic clk_i, input logic rst_ni, output logic [7:0] cnt_o,
                       output logic [31:0] const_o, output logic [31:0] held_o,
                       output logic odd_o);
  logic [31:0] held_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      cnt_o  <= '0;
      held_q <= '0;
    end else begin
      cnt_o <= cnt_o + 8'd1;
    end
  end
  always_comb begin
    for (int i = 0; i < 32; i++) const_o[i] = (i % 3 == 0);
  end
  always_comb begin
    if (held_q == '0) begin
      odd_o = 1'b0;
    end else begin
      odd_o = 1'b1;
    end
  end
  assign held_o = held_q;
  `include "coverage_hooks.svh"
endmodule
"""


@pytest.mark.slow
def test_coverage_counts_from_the_end_of_the_first_reset(tmp_path):
    """tb/csrc/coverage.cpp with the bench top's hooks (tb/core/coverage_hooks.svh) on a small
    module with random power-up values: a register only the reset clears keeps no toggle and the
    branch its random value took at the settle is not hit, a counter keeps its toggles, the
    constant logic Verilator evaluates before the initial blocks keeps its line (one build,
    about 30 s)."""
    import subprocess

    from vtabench.rtl.verilator import COVERAGE_CPP, COVERAGE_HOOKS, setup_verilator_env

    setup_verilator_env()
    (tmp_path / "t.sv").write_text(COVERAGE_TOP_SV)
    (tmp_path / "main.cpp").write_text("""
#include "Vtop.h"
#include "verilated.h"
#include "verilated_cov.h"
int main(int argc, char** argv) {
  VerilatedContext ctx; ctx.randReset(2); ctx.commandArgs(argc, argv); Vtop top{&ctx};
  for (int i = 0; i < 16; i++) {
    top.rst_ni = i >= 3; top.clk_i = 1; top.eval(); top.clk_i = 0; top.eval();
  }
  top.final(); VerilatedCov::write(); return 0;  // the harness's write, as cocotb's
}
""")
    subprocess.run(["verilator", "--cc", "--exe", "--build", "--coverage-line",
                    "--coverage-toggle", "--x-assign", "fast", "--x-initial", "unique",
                    "-Wno-fatal", f"-I{COVERAGE_HOOKS.parent}", "--top-module", "t",
                    "--prefix", "Vtop", "t.sv", "main.cpp",
                    str(COVERAGE_CPP), "-o", "sim"],
                   cwd=tmp_path, check=True, capture_output=True)
    subprocess.run([str(tmp_path / "obj_dir" / "sim")], cwd=tmp_path, check=True)

    def counts(name: str) -> dict[str, int]:
        cov = RtlCoverage.from_files([tmp_path / name])
        return {f"{p.kind}:{p.line}:{p.comment}": n for p, n in cov.counts.items()
                if Path(p.file).name == "t.sv"}

    raw, final = counts("coverage.dat.raw"), counts("coverage.dat")
    assert raw.keys() == final.keys()
    held = [k for k in raw if k.startswith("toggle:") and "held_q[" in k]
    assert sum(raw[k] for k in held) > 0  # the random power-up value the reset cleared
    assert all(final[k] == 0 for k in held)
    counter = [k for k in final if k.startswith("toggle:") and ":cnt_o[0]:" in k]
    assert len(counter) == 2 and all(final[k] > 0 for k in counter)  # 13 counts after the reset
    assert final["line:14:block"] == raw["line:14:block"] == 32  # constant: before the initials
    assert raw["branch:17:else"] == 1 and final["branch:17:else"] == 0  # the settle's random held_q
    assert final["branch:17:if"] > 0
    assert raw["branch:6:if"] > 0 and final["branch:6:if"] == 0  # the one reset: not counted
