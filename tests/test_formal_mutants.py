"""docs/formal.md against the formal jobs and the mutant catalogue (issue #30's "Done when"), no
solver run: every catalogue mutant that touches a unit with proofs is either in the Mutants
table as killed by a job that reads its file, or in the table of mutants argued out of the
proofs' reach, with the argument and the simulation that kills it; and the property table has a
row for every job of `vtabench formal --list`, with its status and its depth.

The units with proofs are the hdl/ files the jobs read as design (``Job.files``, which hold each
job's ``unit``); a file a job cuts out (``Job.cut``: read for its ports only) is not proven by it.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from vtabench.verify import formal
from vtabench.verify.mutation import Mutant, load_catalogue

DOC = Path(__file__).resolve().parents[1] / "docs" / "formal.md"
#: the header cell (lower case) of the Mutants table's column that says how a mutant is killed,
#: and of the out-of-reach table's column with the argument
KILLED_BY = "killed by"
OUT_OF_REACH = "why out of the proofs' reach"
#: the simulation column of both tables: how the regression (docs/regress.md) judges the mutant
SIMULATION = "simulation (docs/regress.md)"
_CELL_SPLIT = re.compile(r"(?<!\\)\|")


def _cells(line: str) -> list[str]:
    """The cells of a Markdown table row (an escaped ``\\|`` stays inside its cell)."""
    return [c.strip() for c in _CELL_SPLIT.split(line.strip().strip("|"))]


def _section(text: str, title: str) -> str:
    """The body of the ``## title`` section, up to the next ``## `` heading."""
    m = re.search(rf"^## {re.escape(title)}\s*$(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert m, f"docs/formal.md has no section '## {title}'"
    return m.group(1)


def _tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """Every Markdown table of ``text``: (its header cells in lower case, its rows)."""
    tables: list[tuple[list[str], list[list[str]]]] = []
    block: list[str] = []
    for line in [*text.splitlines(), ""]:
        if line.lstrip().startswith("|"):
            block.append(line)
            continue
        if len(block) >= 2:
            tables.append(([c.lower() for c in _cells(block[0])],
                           [_cells(row) for row in block[2:]]))
        block = []
    return tables


def _table(text: str, column: str, required: bool = True) -> tuple[list[str], list[list[str]]]:
    """The one table of ``text`` with a column ``column`` (none: no rows, unless required)."""
    found = [t for t in _tables(text) if column in t[0]]
    assert len(found) == 1 or (not found and not required), \
        f"docs/formal.md: {len(found)} tables with a column '{column}'"
    return found[0] if found else ([column], [])


def _by_mutant(header: list[str], rows: list[list[str]]) -> dict[str, dict[str, str]]:
    """A mutant table's rows by mutant id (the first cell, in backticks), each as a mapping
    of the header's cells."""
    out: dict[str, dict[str, str]] = {}
    for row in rows:
        m = re.fullmatch(r"`([\w-]+)`", row[0])
        assert m, f"docs/formal.md: a mutant row starts with {row[0]!r}, not `id`"
        assert m.group(1) not in out, f"docs/formal.md: mutant {m.group(1)} has two rows"
        assert len(row) == len(header), f"docs/formal.md: row of {m.group(1)}: {len(row)} " \
                                        f"cells for {len(header)} columns"
        out[m.group(1)] = dict(zip(header, row))
    return out


@cache
def _doc() -> str:
    return DOC.read_text()


def proven_files() -> set[str]:
    """The hdl/ files (as the catalogue names them) that some job reads as design."""
    return {f for job in formal.JOBS for f in job.files}


def in_reach(mutants: list[Mutant]) -> dict[str, Mutant]:
    """The catalogue's mutants of files with proofs, by id."""
    files = proven_files()
    return {m.id: m for m in mutants if m.file in files}


def killed_rows() -> dict[str, dict[str, str]]:
    return _by_mutant(*_table(_section(_doc(), "Mutants"), KILLED_BY))


def argued_rows() -> dict[str, dict[str, str]]:
    """The table of mutants argued out of reach (none once every mutant is killed)."""
    return _by_mutant(*_table(_section(_doc(), "Mutants"), OUT_OF_REACH, required=False))


def test_units_with_proofs_hold_every_jobs_unit() -> None:
    assert {f"{j.unit}.sv" for j in formal.JOBS} - {Path(f).name for f in proven_files()} == set()


def test_every_mutant_of_a_proven_unit_is_killed_or_argued_out_of_reach() -> None:
    mutants = in_reach(load_catalogue("rtl"))
    killed, argued = killed_rows(), argued_rows()
    both = sorted(set(killed) & set(argued))
    assert not both, f"docs/formal.md: both killed and argued out of reach: {', '.join(both)}"
    missing = sorted(set(mutants) - set(killed) - set(argued))
    assert not missing, ("docs/formal.md: catalogue mutants of units with proofs neither in "
                         f"the Mutants table nor argued out of reach: {', '.join(missing)}")
    stale = sorted((set(killed) | set(argued)) - set(mutants))
    assert not stale, ("docs/formal.md: mutant rows that name no catalogue mutant of a unit "
                       f"with proofs: {', '.join(stale)}")


def test_mutant_counts_in_the_text_are_the_tables() -> None:
    """The Mutants section's sentence "Today N of the catalogue's M mutants touch such files: K
    killed, A argued out of reach" counts the catalogue and the two tables as they are."""
    catalogue = load_catalogue("rtl")
    m = re.search(r"Today (\d+) of the catalogue's (\d+) mutants touch such files: (\d+) "
                  r"killed, (\d+) argued out of\s+reach", _section(_doc(), "Mutants"))
    assert m, "docs/formal.md's Mutants section does not count the mutants"
    counts = (len(in_reach(catalogue)), len(catalogue), len(killed_rows()), len(argued_rows()))
    assert tuple(int(g) for g in m.groups()) == counts, \
        f"docs/formal.md counts {m.groups()}, the catalogue and the tables {counts}"


@pytest.mark.parametrize("which", ["killed", "argued"])
def test_mutant_rows_name_the_unit_and_the_regressions_verdict(which: str) -> None:
    """The unit column is the mutant's file; the simulation column says "equivalent" exactly
    for the mutants the catalogue argues equivalent, "killed" for the others."""
    mutants = in_reach(load_catalogue("rtl"))
    rows = killed_rows() if which == "killed" else argued_rows()
    for mid, row in rows.items():
        if mid not in mutants:
            continue  # stale: the test above names it
        m = mutants[mid]
        assert row["unit"] == Path(m.file).stem, f"{mid}: unit {row['unit']}, file {m.file}"
        verdict = "equivalent" if m.equivalent else "killed"
        assert row[SIMULATION].startswith(verdict), \
            f"{mid}: simulation column {row[SIMULATION]!r}, the catalogue says {verdict}"


def _assert_measured(mid: str, row: dict[str, str]) -> None:
    """A mutant row says how long its run took and at which commit."""
    assert re.fullmatch(r"\d+(\.\d+)? s", row["time"]), f"{mid}: time {row['time']!r}"
    assert re.fullmatch(r"[0-9a-f]{7,40}", row["commit"]), f"{mid}: commit {row['commit']!r}"


def test_killed_rows_name_a_failing_property_of_a_job_that_reads_the_file() -> None:
    mutants = in_reach(load_catalogue("rtl"))
    jobs = {j.name: j for j in formal.JOBS}
    for mid, row in killed_rows().items():
        if mid not in mutants:
            continue
        assert row["formal"] == "killed", f"{mid}: formal column {row['formal']!r}"
        m = re.match(r"([\w-]+): (\w+) failed (at step \d+|\(combinational\))", row[KILLED_BY])
        assert m, f"{mid}: '{row[KILLED_BY]}' is not 'JOB: PROPERTY failed at step N'"
        job = jobs.get(m.group(1))
        assert job is not None, f"{mid}: no job {m.group(1)}"
        assert mutants[mid].file in job.files, f"{mid}: job {job.name} does not read " \
                                               f"{mutants[mid].file}"
        _assert_measured(mid, row)


def test_argued_rows_say_why_and_what_the_proofs_gave() -> None:
    for mid, row in argued_rows().items():
        assert row["formal"] in ("survived", "unproven"), f"{mid}: formal {row['formal']!r}"
        _assert_measured(mid, row)
        assert len(row[OUT_OF_REACH].split()) >= 8, f"{mid}: no argument ({row[OUT_OF_REACH]!r})"


def _top_level_parts(cell: str) -> list[str]:
    """``cell`` split at the commas outside parentheses."""
    parts: list[str] = []
    depth = start = 0
    for i, ch in enumerate(cell):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(cell[start:i])
            start = i + 1
    return [*parts, cell[start:]]


def _job_names(cell: str) -> dict[str, bool]:
    """The jobs a property-table row names, each with whether it is marked "(quick)":
    "alu-mul-edge8, -default (...), -cloud32" is three jobs (a name starting with '-' takes the
    prefix of the name before it); other parentheses are notes."""
    names: dict[str, bool] = {}
    for part in _top_level_parts(cell):
        name = re.sub(r"\([^()]*\)", "", part).strip().split(" ")[0]
        if not name:
            continue
        if name.startswith("-"):
            assert names, f"property table: '{cell}' starts with a suffix"
            name = list(names)[-1].rsplit("-", 1)[0] + name
        names[name] = "(quick" in part
    return names


def property_rows() -> dict[str, tuple[str, bool]]:
    """The status cell of every job in docs/formal.md's property table and whether the row marks
    it quick, by job name."""
    header, rows = _table(_section(_doc(), "Properties"), "properties")
    out: dict[str, tuple[str, bool]] = {}
    for row in rows:
        for name, quick in _job_names(row[0]).items():
            assert name not in out, f"property table: job {name} in two rows"
            out[name] = (row[header.index("status")], quick)
    return out


def test_property_table_has_every_job_with_its_status_and_depth() -> None:
    """A prove job's row says its k, a bounded one its depth (the why is the row's text), and
    "(quick)" marks exactly the jobs `make test` runs."""
    rows = property_rows()
    names = {j.name for j in formal.JOBS}
    missing, stale = sorted(names - set(rows)), sorted(set(rows) - names)
    assert not missing, f"docs/formal.md: jobs without a property row: {', '.join(missing)}"
    assert not stale, f"docs/formal.md: property rows of no job: {', '.join(stale)}"
    for job in formal.JOBS:
        status, quick = rows[job.name]
        assert quick == job.quick, f"{job.name}: marked quick {quick}, the job's quick {job.quick}"
        if job.mode == "prove":
            assert re.search(rf"k-induction[^|]*\bk ?= ?{job.depth}\b", status), \
                f"{job.name}: status {status[:60]!r}... does not say k-induction k={job.depth}"
        elif job.combinational:
            assert "combinational" in status, f"{job.name}: status does not say combinational"
        else:
            assert re.search(rf"bounded to depth[^|]*\b{job.depth}\b", status), \
                f"{job.name}: status does not say bounded to depth {job.depth}"
