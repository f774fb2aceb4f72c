"""The platform's RTL in `make coverage` (issue #31 item 1): the shell's unit bench gives the
points of vta_shell and the register block vta_regs, merged into the core bench's coverage and
judged by the sign-off like the core's modules, without touching the core's figures."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from vtabench.cli import main
from vtabench.cli.regress import _merge_platform_coverage
from vtabench.rtl import cover_points
from vtabench.rtl.coverage import RtlCoverage
from vtabench.rtl.signoff import is_rtl, load_waivers, module_of, signoff
from vtabench.sources import HDL_DIR
from vtabench.verify.platform_coverage import platform_coverage, platform_files, points_of

KEY = "\x01f\x02{f}\x01l\x02{l}\x01t\x02{t}\x01page\x02v_{t}/{m}\x01o\x02{o}\x01h\x02TOP.{h}"
SHELL, REGS, FETCH = (HDL_DIR / "vta_shell.sv", HDL_DIR / "gen" / "vta_regs.sv",
                      HDL_DIR / "vta_fetch.sv")


def _dat(path: Path, points: list[tuple[Path, str, int, str, str, int]]) -> Path:
    """A coverage.dat of (file, kind, line, comment, instance, count) points."""
    path.write_text("\n".join(
        ["# SystemC::Coverage-3"]
        + [f"C '{KEY.format(f=f, l=ln, t=t, m=f.stem, o=o, h=h)}' {n}"
           for f, t, ln, o, h, n in points]) + "\n")
    return path


#: the core bench's vta_fetch: one line hit, one missed
CORE = [(FETCH, "line", 10, "block", "vta_tb_top.u_core.u_fetch", 3),
        (FETCH, "line", 12, "block", "vta_tb_top.u_core.u_fetch", 0)]
#: a shell build: its own files' points, and a second vta_fetch (inside vta_shell.u_core) that
#: hit the line the core bench missed and missed the one it hit
SHELL_BUILD = [(SHELL, "line", 130, "block", "vta_shell", 5),
               (SHELL, "toggle", 120, "irq_q:0->1", "vta_shell", 2),
               (REGS, "branch", 132, "else", "vta_shell.u_regs", 0),
               (REGS, "branch", 132, "if", "vta_shell.u_regs", 9),
               (FETCH, "line", 10, "block", "vta_shell.u_core.u_fetch", 0),
               (FETCH, "line", 12, "block", "vta_shell.u_core.u_fetch", 4)]


def test_platform_files_are_what_the_shell_adds_to_the_core():
    assert [f.name for f in platform_files()] == ["vta_regs.sv", "vta_shell.sv"]


@pytest.mark.parametrize("path", [SHELL, REGS], ids=["vta_shell", "vta_regs"])
def test_platform_files_have_no_fsm_or_assertion_point(path):
    """The shell's unit build has no --coverage-user and no instrumented copy: valid while the
    platform's files have nothing cover_points would instrument. An assertion or an enum
    register added there fails this: build the shell bench from the instrumented copy then."""
    assert cover_points.covers(path.read_text()) == {}


def test_points_of_keeps_the_platform_files_alone(tmp_path):
    cov = points_of(_dat(tmp_path / "coverage.dat", SHELL_BUILD), platform_files())
    assert sorted({module_of(p) for p in cov.table}) == ["vta_regs", "vta_shell"]
    assert len(cov.table) == 4 and all(is_rtl(p) for p in cov.table)


def test_merged_report_judges_shell_and_regs_and_keeps_the_core_figures(tmp_path):
    core = RtlCoverage.from_files([_dat(tmp_path / "core.dat", CORE)])
    before = signoff(core, [], "default")
    merged = RtlCoverage.from_files([_dat(tmp_path / "core.dat", CORE)])
    merged.merge(points_of(_dat(tmp_path / "coverage.dat", SHELL_BUILD), platform_files()))
    after = signoff(merged, [], "default")
    assert {"vta_shell", "vta_regs"} <= set(before.unmeasured)
    assert {"vta_shell", "vta_regs"} <= set(after.rtl_modules)
    assert not {"vta_shell", "vta_regs"} & set(after.unmeasured)
    assert after.tallies["vta_regs"]["branch"].percent == 50.0
    fetch_before, fetch_after = (s.tallies["vta_fetch"]["line"] for s in (before, after))
    assert (fetch_after.hit, fetch_after.total) == (fetch_before.hit, fetch_before.total) == (1, 2)
    assert any(f.startswith("vta_regs branch 50.0% < 100%") for f in after.failures())


def test_a_core_bench_run_leaves_the_platform_waivers_waiting(tmp_path):
    """Without the shell bench's points (a regression without --platform-coverage) the waivers
    of vta_shell and vta_regs wait, as those of a kind without points do; a waiver naming no
    module of the design still matches nothing and fails."""
    core = RtlCoverage.from_files([_dat(tmp_path / "core.dat", CORE)])
    waivers = [w for w in load_waivers() if w.module in ("vta_shell", "vta_regs")]
    assert waivers and signoff(core, waivers, "default").stale == []
    typo = [replace(waivers[0], module="vta_shel", kind="line")]  # (the run has line points)
    assert signoff(core, typo, "default").stale == [
        f"{typo[0].describe()} matches no coverage point: fix or remove it"]


@pytest.mark.parametrize("argv, message", [
    ([], "--platform-coverage: only with --rtl-coverage DIR"),
    (["--rtl-coverage", "cov", "--config", "cloud64"],
     "the shell bench runs the built-in configurations (default, edge8, cloud32), not 'cloud64'"),
])
def test_cli_refuses_platform_coverage_it_cannot_give(capsys, argv, message):
    assert main(["regress", "--targets", "fsim,rtl", "--platform-coverage", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_a_failing_shell_bench_is_one_line_and_exit_1(monkeypatch, capsys):
    """A failing cocotb test of the shell bench (run_bench's AssertionError: the tests, the log,
    the seed) ends `vtabench regress --platform-coverage` with its first line, no traceback."""
    def failing(*args: object, **kwargs: object) -> None:
        raise AssertionError("shell-default: failing tests ['long_runs'] (see sim.log; "
                             "COCOTB_RANDOM_SEED=7)\n  Assertion failed: ...")
    monkeypatch.setattr("vtabench.verify.platform_coverage.run_bench", failing)
    result = SimpleNamespace(config="default", rtl_coverage=RtlCoverage())
    assert not _merge_platform_coverage(result, 7)  # type: ignore[arg-type]
    err = capsys.readouterr().err
    assert err == ("vtabench regress: error: platform coverage: shell-default: failing tests "
                   "['long_runs'] (see sim.log; COCOTB_RANDOM_SEED=7)\n")


@pytest.mark.rtl
@pytest.mark.slow
def test_shell_bench_gives_points_of_vta_shell_and_vta_regs():
    """The shell's unit bench as make coverage runs it (about a minute: make test runs the same
    bench in tests/test_rtl_units.py): every kind of the sign-off that the platform's files have
    (line, branch, toggle), of those files alone, signed off with the platform's waivers."""
    cov = platform_coverage("default", seed=1)
    kinds = {(module_of(p), p.kind) for p in cov.table}
    assert kinds == {(m, k) for m in ("vta_shell", "vta_regs")
                     for k in ("line", "branch", "toggle")}
    judged = signoff(cov, load_waivers(), "default")
    assert judged.rtl_modules == ["vta_regs", "vta_shell"]
    below = [f for f in judged.failures() if f.split()[0] in judged.rtl_modules]
    assert below == [] and judged.stale == [], judged.report()  # (fsm, assertion: no points)
