"""Coverage sign-off: waivers and per-module thresholds over Verilator's coverage points.

The bar is OpenTitan's V3 stage (issue #31): every RTL module (a file in hdl/, or
the generated register block hdl/gen/vta_regs.sv) reaches 100% of its line, branch, FSM and
assertion points and at least 98% of its toggle points, counted after waivers. A waiver
(tb/coverage_waivers.toml) names points that cannot be reached or do not matter, why, and who can
change that; waived points leave the denominator and show as waived in the report. The bench's
own files (tb/) are reported but not judged.

A waiver must stay true: one that matches no point (the RTL moved) or whose points were all hit
(it hides nothing) fails the check like a missed point, so the file cannot rot into a blanket.
``python -m vtabench.rtl.signoff results/coverage/coverage.dat`` rechecks a saved run.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from vtabench.rtl.coverage import SOURCE_ROOT, Point, RtlCoverage
from vtabench.sources import HDL_DIR

#: The sign-off thresholds (percent of points hit, after waivers), by kind.
THRESHOLDS = {"line": 100.0, "branch": 100.0, "fsm": 100.0, "assertion": 100.0, "toggle": 98.0}
#: Kinds of the report, in order (Verilator's v_line, v_branch, v_toggle; fsm and assertion
#: from the --coverage-user points, see :func:`kind_of`).
KINDS = ("line", "branch", "toggle", "fsm", "assertion")
#: The waiver file of the core bench.
WAIVERS = SOURCE_ROOT / "tb" / "coverage_waivers.toml"
#: Design files below hdl/gen/: the register block peakrdl-regblock generates (the shell's; the
#: generated packages beside it have no coverage points).
GENERATED_RTL = (HDL_DIR / "gen" / "vta_regs.sv",)
#: Fields every waiver has, and the optional ones per kind.
_REQUIRED = ("module", "kind", "reason", "owner")
_OPTIONAL = {"line": ("line", "comment", "instance", "configs"),
             "branch": ("line", "comment", "instance", "configs"),
             "toggle": ("signal", "bits", "instance", "configs"),
             "fsm": ("cover", "instance", "configs"),
             "assertion": ("cover", "instance", "configs")}
#: A toggle point's comment: ``signal[index]...:0->1`` (the last index is the bit; the signal
#: may name a generate scope, ``g_bank[0].lane``).
_TOGGLE = re.compile(r"^(?P<signal>.+?)(?P<index>(\[\d+\])*):(?P<dir>[01]->[01])$")
#: A waiver's reason is a sentence a reviewer can judge, not a tag.
MIN_REASON = 30


class WaiverError(ValueError):
    """A waiver file that cannot be used (its path and the entry named in the message)."""


def kind_of(point: Point) -> str:
    """The report kind of a point: Verilator's page, with its user (cover) points split into fsm
    (covers named ``fsm_*``) and assertion (every other cover)."""
    if point.kind == "user":
        return "fsm" if point.comment.split(".")[-1].startswith("fsm_") else "assertion"
    return point.kind


def module_of(point: Point) -> str:
    """The module a point belongs to: its file's name (one module per file)."""
    return Path(point.file).stem


def is_rtl(point: Point) -> bool:
    """Whether the point is in the design (a file of hdl/ or GENERATED_RTL), not in the bench."""
    path = (SOURCE_ROOT / point.file).resolve()
    return path.parent == HDL_DIR or path in GENERATED_RTL


def rtl_modules() -> list[str]:
    """The design's modules: the files of hdl/ and GENERATED_RTL."""
    return sorted(p.stem for p in [*HDL_DIR.glob("*.sv"), *GENERATED_RTL])


def toggle_bit(point: Point) -> tuple[str, int | None, str] | None:
    """(signal, bit or None for a 1-bit signal, direction) of a toggle point. The last index is
    the bit; the indices before it stay in the signal (``rd_req_len[0]`` of a packed array of
    per-client lengths, so that a waiver can name one element, or ``rd_req_len[*]`` all)."""
    m = _TOGGLE.match(point.comment)
    if not m:
        return None
    bits = re.findall(r"\[\d+\]", m["index"])
    return (m["signal"] + "".join(bits[:-1]), int(bits[-1][1:-1]) if bits else None,
            m["dir"])


@dataclass(frozen=True)
class Waiver:
    """One waived point or group of points (see tb/coverage_waivers.toml's header)."""

    number: int  # 1-based entry number in the file
    module: str
    kind: str
    reason: str
    owner: str
    line: int | None = None
    comment: str | None = None
    signal: str | None = None
    bits: tuple[tuple[int, int], ...] = ()  # (hi, lo) ranges; () for every bit
    cover: str | None = None
    instance: str | None = None
    configs: tuple[str, ...] = ()

    def applies(self, config: str) -> bool:
        return not self.configs or config in self.configs

    def matches(self, p: Point) -> bool:
        if module_of(p) != self.module or kind_of(p) != self.kind:
            return False
        if self.instance and not glob(self.instance, p.hier):
            return False
        if self.kind in ("line", "branch"):
            return p.line == self.line and (self.comment is None or p.comment == self.comment)
        if self.kind == "toggle":
            tb = toggle_bit(p)
            if tb is None or not glob(str(self.signal), tb[0]):
                return False
            return not self.bits or (tb[1] is not None
                                     and any(lo <= tb[1] <= hi for hi, lo in self.bits))
        return p.comment.split(".")[-1] == self.cover

    def describe(self) -> str:
        what = {"line": f"line {self.line}", "branch": f"line {self.line}",
                "toggle": f"{self.signal}" + ("[" + ",".join(f"{hi}:{lo}" for hi, lo in self.bits)
                                              + "]" if self.bits else ""),
                }.get(self.kind, str(self.cover))
        return f"waiver {self.number} ({self.module} {self.kind} {what})"


def glob(pattern: str, text: str) -> bool:
    """``text`` matches ``pattern``, where ``*`` is any run of characters and everything else,
    brackets included (``g_bank[*].lane``), stands for itself."""
    return re.fullmatch(".*".join(re.escape(part) for part in pattern.split("*")), text) is not None


def _bits(text: str, where: str) -> tuple[tuple[int, int], ...]:
    """``"31:11,1:0"`` -> ((31, 11), (1, 0)); a single bit ``"5"`` -> ((5, 5),)."""
    out = []
    for part in text.split(","):
        m = re.fullmatch(r"(\d+)(?::(\d+))?", part.strip())
        if not m:
            raise WaiverError(f"{where}: bits {text!r}: expected HI:LO ranges or bits, "
                              "comma-separated")
        hi, lo = int(m[1]), int(m[2] if m[2] is not None else m[1])
        if lo > hi:
            raise WaiverError(f"{where}: bits {text!r}: HI below LO")
        out.append((hi, lo))
    return tuple(out)


def load_waivers(path: Path = WAIVERS) -> list[Waiver]:
    """The waivers of ``path`` (a TOML file of ``[[waiver]]`` tables), checked for shape."""
    try:
        doc = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise WaiverError(f"{path}: no such waiver file") from None
    except tomllib.TOMLDecodeError as exc:
        raise WaiverError(f"{path}: not TOML: {exc}") from None
    extra = set(doc) - {"waiver"}
    if extra:
        raise WaiverError(f"{path}: unknown top-level key(s) {', '.join(sorted(extra))}")
    out = []
    for n, entry in enumerate(doc.get("waiver", []), start=1):
        where = f"{path}: waiver {n}"
        missing = [k for k in _REQUIRED if not str(entry.get(k, "")).strip()]
        if missing:
            raise WaiverError(f"{where}: missing {', '.join(missing)}")
        kind = entry["kind"]
        if kind not in _OPTIONAL:
            raise WaiverError(f"{where}: kind {kind!r}: expected one of {', '.join(_OPTIONAL)}")
        unknown = set(entry) - set(_REQUIRED) - set(_OPTIONAL[kind])
        if unknown:
            raise WaiverError(f"{where}: key(s) {', '.join(sorted(unknown))} not for a {kind} "
                              f"waiver (it takes {', '.join(_OPTIONAL[kind])})")
        if len(entry["reason"].strip()) < MIN_REASON:
            raise WaiverError(f"{where}: the reason must say why (at least {MIN_REASON} "
                              "characters)")
        need = {"line": "line", "branch": "line", "toggle": "signal"}.get(kind, "cover")
        if need not in entry:
            raise WaiverError(f"{where}: a {kind} waiver names its {need}")
        out.append(Waiver(
            n, entry["module"], kind, entry["reason"].strip(), entry["owner"].strip(),
            line=entry.get("line"), comment=entry.get("comment"), signal=entry.get("signal"),
            bits=_bits(str(entry["bits"]), where) if "bits" in entry else (),
            cover=entry.get("cover"), instance=entry.get("instance"),
            configs=tuple(entry.get("configs", ()))))
    return out


@dataclass
class Tally:
    """Points of one module and kind: hit, waived (never hit, covered by a waiver), total."""

    hit: int = 0
    waived: int = 0
    total: int = 0
    missed: list[Point] = field(default_factory=list)

    @property
    def percent(self) -> float:
        judged = self.total - self.waived
        return 100.0 * self.hit / judged if judged else 100.0


@dataclass
class Signoff:
    """The coverage of each module and kind after waivers, and what fails the bar."""

    tallies: dict[str, dict[str, Tally]]
    rtl_modules: list[str]
    waived: dict[Point, Waiver]
    stale: list[str]  # waivers that match nothing, or only points that were hit
    unmeasured: list[str]  # modules of hdl/ with no point in this coverage
    missing_kinds: list[str]  # kinds of the bar with no point in any module of hdl/

    def failures(self, limit: int = 5) -> list[str]:
        """One line per (module, kind) below its threshold, with its first missed points; then
        the stale waivers."""
        out = []
        for module in self.rtl_modules:
            for kind, t in self.tallies[module].items():
                bar = THRESHOLDS.get(kind)
                if bar is None or t.percent >= bar:
                    continue
                out.append(f"{module} {kind} {t.percent:.1f}% < {bar:g}% "
                           f"({t.hit}/{t.total - t.waived}, {t.waived} waived); first missed: "
                           + ", ".join(describe_points(t.missed, limit)))
        out += [f"{kind}: no {kind} points in this coverage (the coverage build needs Verilator's "
                "--coverage-user and the cover points of vtabench.rtl.cover_points)"
                for kind in self.missing_kinds]
        return out + self.stale

    def report(self) -> str:
        """The per-module table (RTL modules judged, bench files after them)."""
        lines = ["coverage sign-off (points hit / points judged, +N waived; thresholds "
                 + ", ".join(f"{k} {v:g}%" for k, v in THRESHOLDS.items()) + "):"]
        head = "".join(f" {k:>25}" for k in KINDS)
        lines.append(f"  {'module':<20}{head}")
        for module, kinds in self.tallies.items():
            judged = module in self.rtl_modules
            cells = []
            for k in KINDS:
                t = kinds.get(k)
                if t is None:
                    cells.append(f" {'-':>25}")
                    continue
                mark = "" if not judged or t.percent >= THRESHOLDS[k] else " !"
                cell = (f"{t.percent:.1f}% {t.hit}/{t.total - t.waived}"
                        + (f" +{t.waived}w" if t.waived else "") + mark)
                cells.append(f" {cell:>25}")
            lines.append(f"  {module + ('' if judged else ' (bench)'):<20}{''.join(cells)}")
        for module in self.unmeasured:
            lines.append(f"  {module:<20} no points: not in this bench")
        return "\n".join(lines)


def describe_points(points: list[Point], limit: int) -> list[str]:
    """The first ``limit`` missed points, one entry per line, branch, FSM or assertion point (with
    its instance) or per toggled signal and instance (bits gathered: ``sig[7,3] (u_x)``)."""
    out: list[str] = []
    toggles: dict[tuple[str, str], list[str]] = defaultdict(list)
    for p in points:
        tb = toggle_bit(p) if p.kind == "toggle" else None
        if tb is None:  # with the instance: a module's instances each have their points
            where = ".".join(p.hier.split(".")[-2:])
            out.append(f"{Path(p.file).name}:{p.line} {p.comment} ({where})")
        else:
            bits = toggles.setdefault((tb[0], p.hier), [])
            if tb[1] is not None and str(tb[1]) not in bits:
                bits.append(str(tb[1]))
    for (sig, hier), bits in toggles.items():
        out.append(f"{sig}{'[' + ','.join(bits[:8]) + (',...' if len(bits) > 8 else '') + ']' if bits else ''}"
                   f" ({hier.split('.')[-1]})")
    return out[:limit]


def signoff(cov: RtlCoverage, waivers: list[Waiver], config: str) -> Signoff:
    """Tally ``cov`` per module and kind with the waivers of ``config`` applied (those of a kind
    the coverage has no point of are left out: that kind is reported missing instead; so are
    those of an RTL module it has no point of, such as the platform's in a core-bench run: that
    module is reported unmeasured)."""
    present = {kind_of(p) for p in cov.table}
    unmeasured = set(rtl_modules()) - {module_of(p) for p in cov.table}
    active = [w for w in waivers if w.applies(config) and w.kind in present
              and w.module not in unmeasured]
    tallies: dict[str, dict[str, Tally]] = defaultdict(dict)
    waived: dict[Point, Waiver] = {}
    matched: dict[int, list[int]] = {w.number: [0, 0] for w in active}  # points, hit ones
    rtl: set[str] = set()
    for p, n in cov.counts.items():
        module, kind = module_of(p), kind_of(p)
        t = tallies[module].setdefault(kind, Tally())
        t.total += 1
        if is_rtl(p):
            rtl.add(module)
        w = next((w for w in active if w.matches(p)), None)
        if w is not None:
            matched[w.number][0] += 1
            matched[w.number][1] += n > 0
        if n:
            t.hit += 1
        elif w is not None:
            t.waived += 1
            waived[p] = w
        else:
            t.missed.append(p)
    stale = []
    for w in active:
        points, hit = matched[w.number]
        if not points:
            stale.append(f"{w.describe()} matches no coverage point: fix or remove it")
        elif hit == points:
            stale.append(f"{w.describe()}: all {points} point(s) it waives were hit: remove it")
    order = sorted(tallies, key=lambda m: (m not in rtl, m))
    measured = {kind_of(p) for p in cov.table if is_rtl(p)}
    return Signoff({m: {k: tallies[m][k] for k in KINDS if k in tallies[m]} for m in order},
                   sorted(rtl), waived, stale, sorted(unmeasured),
                   [k for k in KINDS if k not in measured])


def main(argv: list[str] | None = None) -> int:
    """``python -m vtabench.rtl.signoff COVERAGE.dat [--waivers FILE] [--config NAME]``: the
    sign-off table of a saved run; exit 1 below a threshold or with a stale waiver."""
    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("coverage", type=Path, nargs="+", help="coverage.dat file(s), merged")
    ap.add_argument("--waivers", type=Path, default=WAIVERS)
    ap.add_argument("--config", default="default")
    args = ap.parse_args(argv)
    try:
        waivers = load_waivers(args.waivers)
        missing = [str(p) for p in args.coverage if not p.is_file()]
        if missing:
            raise WaiverError(f"no such coverage file: {', '.join(missing)}")
    except WaiverError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    result = signoff(RtlCoverage.from_files(args.coverage), waivers, args.config)
    print(result.report())
    failures = result.failures()
    for line in failures:
        print(f"FAIL {line}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
