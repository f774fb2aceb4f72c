"""The mutant catalogues of `vtabench mutate` (no builds, no runs: those are the benchmark).

Every catalogued mutant applies cleanly to the current sources (its old text occurs exactly once),
the RTL catalogue spans every part of the core, platform mutants name tests that exist, and an
equivalent mutant carries its argument.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vtabench.verify.mutation import (CatalogueError, Mutant, Verdict, check_applies,
                                      load_catalogue, load_verdicts, markdown_table, score)

ROOT = Path(__file__).resolve().parent.parent
#: Parts of the core the issue asks the RTL catalogue to cover.
AREAS = {"fetch", "decode", "load stage", "compute stage", "store stage", "token queues",
         "DMA read", "DMA write", "padding", "GEMM", "ALU", "forwarding", "memory engine",
         "error detection", "register block", "interrupt"}


@pytest.mark.parametrize("kind", ["rtl", "opencl"])
def test_every_mutant_applies_cleanly(kind: str) -> None:
    mutants = load_catalogue(kind)
    assert check_applies(kind, mutants) == []
    for m in mutants:
        assert m.new not in m.source(kind).read_text() or m.new in m.old, m.id


def test_rtl_catalogue_spans_the_core() -> None:
    mutants = load_catalogue("rtl")
    assert len(mutants) >= 30
    assert AREAS <= {m.area for m in mutants}
    reach = [m for m in mutants if m.killer == "regress"]
    # the regression alone can reach 95% of the catalogue only if the platform share is small
    assert len(reach) >= 0.95 * len(mutants)


def test_platform_mutants_name_existing_tests() -> None:
    platform = [m for m in load_catalogue("rtl") if m.killer == "platform"]
    assert platform
    for m in platform:
        for test in m.tests:
            path, _, name = test.partition("::")
            assert f"def {name}(" in (ROOT / path).read_text(), test


def test_equivalent_mutants_carry_an_argument() -> None:
    for kind in ("rtl", "opencl"):
        for m in load_catalogue(kind):
            assert m.equivalent is None or len(m.equivalent) > 80, m.id


def test_apply_needs_exactly_one_occurrence() -> None:
    m = Mutant("x", "ALU", "f.sv", "a + b", "a - b", "subtracts")
    assert m.apply("y = a + b;") == "y = a - b;"
    for text in ("y = a;", "y = a + b + a + b;"):
        with pytest.raises(CatalogueError, match="occurs"):
            m.apply(text)


def test_malformed_catalogue_is_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "rtl.json"
    bad.write_text(json.dumps({"mutants": [{"id": "a", "area": "ALU", "file": "f", "old": "x",
                                            "new": "y", "bug": "b", "killer": "luck"}]}))
    with pytest.raises(CatalogueError, match="killer 'luck'"):
        load_catalogue("rtl", bad)
    bad.write_text("{")
    with pytest.raises(CatalogueError, match="not a mutant catalogue"):
        load_catalogue("rtl", bad)


def test_score_counts_the_reachable_and_the_whole_catalogue() -> None:
    ms = [Mutant(f"m{i}", "ALU", "f", "a", "b", "bug") for i in range(4)]
    ms.append(Mutant("eq", "ALU", "f", "a", "c", "bug", equivalent="because " * 20))
    ms.append(Mutant("pf", "interrupt", "f", "a", "d", "bug", killer="platform", tests=("t",)))
    verdicts = [Verdict("m0", "killed"), Verdict("m1", "killed"), Verdict("m2", "killed"),
                Verdict("m3", "survived", "passed all 10 programs"),
                Verdict("eq", "equivalent", "because"), Verdict("pf", "not run", "t")]
    text = score(ms, verdicts)
    assert text.startswith("regress kills 3 of 4 non-equivalent mutants it can reach (75.0%); "
                           "3 of the whole catalogue's 5 non-equivalent mutants (60.0%)")
    assert "survived   m3" in text and "equivalent eq" in text and "not run    pf" in text


def test_markdown_table_has_a_row_per_mutant(tmp_path: Path) -> None:
    """The docs' results table: every mutant once, the killing program, the whole argument of
    an equivalent one, a verdict for another mutant text shown as not judged."""
    ms = [Mutant("k", "ALU", "f", "a", "b", "bug"),
          Mutant("eq", "ALU", "f", "a", "c", "bug", equivalent="because | " * 40),
          Mutant("stale", "ALU", "f", "a", "e", "bug"),
          Mutant("pf", "interrupt", "f", "a", "d", "bug", killer="platform", tests=("t::x",))]
    settings = {"old": "a", "new": "b"}
    verdicts = [Verdict("k", "killed", "rand-1-3: rtl: wrong\nlog tail", 4, settings=settings),
                Verdict("eq", "equivalent", ms[1].equivalent or "", 1000,
                        settings={"old": "a", "new": "c"}),
                Verdict("stale", "killed", "rand-1-0: rtl", 4, settings=settings)]
    results = tmp_path / "r.json"
    results.write_text(json.dumps({"verdicts": [v.__dict__ for v in verdicts]}))
    rows = markdown_table(ms, load_verdicts(results)).splitlines()
    assert len(rows) == 2 + len(ms)
    assert rows[2] == "| `k` | ALU | killed | 4 | rand-1-3: rtl: wrong |"
    assert rows[3].count("because \\|") == 40 and rows[3].endswith(" |")
    assert "| `stale` | ALU | not judged yet |" in rows[4]
    assert "not judged yet" in rows[5] and "platform: t::x" in rows[5]
    (tmp_path / "bad.json").write_text("[]")
    with pytest.raises(CatalogueError, match="not a mutation results file"):
        load_verdicts(tmp_path / "bad.json")


def test_mutate_report_merges_result_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) \
        -> None:
    """`vtabench mutate --report A B` runs nothing; B's verdict of a mutant replaces A's."""
    from vtabench.cli import main

    m = load_catalogue("rtl")[0]
    key = {"old": m.old, "new": m.new}
    for name, status in (("a.json", "survived"), ("b.json", "killed")):
        (tmp_path / name).write_text(json.dumps(
            {"verdicts": [Verdict(m.id, status, "rand-1-0: why", 4, settings=key).__dict__]}))
    assert main(["mutate", "--report", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("regress kills 1 of 1 ")
    assert f"| `{m.id}` | {m.area} | killed | 4 | rand-1-0: why |" in out


def test_a_chunk_wide_failure_is_confirmed_on_the_whole_chunk() -> None:
    """A simulator stopped in the middle of a chunk fails every program of it with one error:
    the kill is then confirmed on all of them, not on the chunk's first program alone."""
    from vtabench.verify.mutation import first_failure
    from vtabench.verify.regress.campaign import ProgramVerdict

    class Diff:
        def describe(self) -> str:
            return "rtl: first difference"

    stopped = "rtl: RtlRunError: simulator gave 1 of 3 results"
    chunk = [ProgramVerdict(k, f"rand-1-{k}", 0.0, error=stopped) for k in (28, 29, 30)]
    assert first_failure(chunk) == ([28, 29, 30], f"programs 28..30: {stopped}")
    mixed = [ProgramVerdict(4, "rand-1-4", 0.0),
             ProgramVerdict(6, "rand-1-6", 0.0, error="rtl [illegal.x]: expected ..."),
             ProgramVerdict(5, "rand-1-5", 0.0, mismatches=[Diff()])]  # type: ignore[list-item]
    assert first_failure(mixed) == ([5], "rand-1-5: rtl: first difference")
    assert first_failure(mixed[:1]) is None


def test_reclassify_follows_the_catalogue_as_it_is_now() -> None:
    """A survivor argued equivalent after it was judged counts as equivalent, with the
    argument; an equivalent one whose argument was withdrawn is a survivor again."""
    from vtabench.verify.mutation import reclassify

    argued = Mutant("a", "ALU", "f", "x", "y", "bug", equivalent="because " * 20)
    plain = Mutant("b", "ALU", "f", "x", "z", "bug")
    got = reclassify([argued, plain], [Verdict("a", "survived", "passed all 9 programs", 9),
                                       Verdict("b", "equivalent", "old argument", 9)])
    assert [(v.status, v.detail) for v in got] == [("equivalent", argued.equivalent),
                                                   ("survived", "passed all 9 programs")]
