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
#: vta_fifo complete.
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
          ("vta_fifo", "line", 3, "block", "u_q", 9)]

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
    assert [f.split(" ")[:2] for f in failures] == [["vta_fetch", "assertion"]]
    assert set(THRESHOLDS) >= {"fsm", "assertion"}


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
    prog = generate(cfg, 11, 0)
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
    progs = [p for p in progs if p.outcome("fsim") is not None]
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
