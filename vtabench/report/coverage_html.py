"""An HTML report of a regression's coverage: Verilator's code coverage (line, branch, toggle,
FSM and assertion points per module, from :class:`~vtabench.rtl.coverage.RtlCoverage`) and the
ISA's functional bins, in one folder that opens without a server and needs no genhtml.

- ``index.html``: the totals, a table of modules (one module per file in hdl/) with the points
  hit per kind, and with a sign-off (:mod:`vtabench.rtl.signoff`) each module's coverage after
  its waivers against the thresholds; the functional bins as a heat map (``functional.png``) and
  a table of the bins;
- ``src/<module>.html``: the module's source, each line with the hit count of its line and branch
  points (red: a point never hit; grey: waived, the reason on hover), then its toggle points by
  signal and its waivers.
"""

from __future__ import annotations

import html
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from vtabench.rtl.coverage import SOURCE_ROOT, Point, RtlCoverage
from vtabench.rtl.signoff import KINDS, THRESHOLDS, Signoff, kind_of, module_of

STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 2px 8px; text-align: right; }
th { background: #f0f0f0; } td.name { text-align: left; }
.bar { display: inline-block; height: 10px; background: #e04040; width: 100px;
       vertical-align: middle; margin-right: 6px; }
.bar span { display: block; height: 10px; background: #40a040; }
pre { font: 12px/1.35 monospace; margin: 0; }
.hit { background: #e6f5e6; } .miss { background: #fbdada; } .waived { background: #e8e8e8; }
td.fail { background: #fbdada; } td.pass { background: #e6f5e6; }
.count { color: #666; display: inline-block; width: 7em; text-align: right; margin-right: 1em; }
.bins td { font-size: 12px; }
"""


@dataclass(frozen=True)
class Tally:
    hit: int
    total: int

    @property
    def percent(self) -> float:
        return 100.0 * self.hit / self.total if self.total else 100.0


def tallies(cov: RtlCoverage) -> dict[str, dict[str, Tally]]:
    """module -> kind -> points hit / points."""
    acc: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for p, n in cov.counts.items():
        t = acc[module_of(p)][kind_of(p)]
        t[0] += n > 0
        t[1] += 1
    return {m: {k: Tally(*v) for k, v in kinds.items()} for m, kinds in sorted(acc.items())}


def _bar(t: Tally | None) -> str:
    if t is None or not t.total:
        return "<td>-</td>"
    return (f'<td><span class="bar"><span style="width:{t.percent:.0f}px"></span></span>'
            f"{t.percent:.1f}% ({t.hit}/{t.total})</td>")


def _page(title: str, body: str) -> str:
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(title)}"
            f"</title><style>{STYLE}</style></head><body>\n{body}\n</body></html>\n")


def _signoff_table(judged: Signoff) -> str:
    """Each module's coverage after waivers, red below its threshold (bench files unjudged)."""
    head = "".join(f"<th>{k} (&ge; {THRESHOLDS[k]:g}%)</th>" for k in KINDS)
    rows = []
    for module, kinds in judged.tallies.items():
        cells = []
        for k in KINDS:
            t = kinds.get(k)
            if t is None:
                cells.append("<td>-</td>")
                continue
            cls = ("" if module not in judged.rtl_modules
                   else ' class="pass"' if t.percent >= THRESHOLDS[k] else ' class="fail"')
            waived = f", {t.waived} waived" if t.waived else ""
            cells.append(f"<td{cls}>{t.percent:.1f}% ({t.hit}/{t.total - t.waived}{waived})</td>")
        name = module if module in judged.rtl_modules else f"{module} (bench)"
        rows.append(f'<tr><td class="name">{html.escape(name)}</td>{"".join(cells)}</tr>')
    rows += [f'<tr><td class="name">{m}</td><td colspan="{len(KINDS)}">no points: not in '
             "this bench</td></tr>" for m in judged.unmeasured]
    failures = judged.failures()
    verdict = ("<p>Every RTL module meets its thresholds.</p>" if not failures else
               "<p>Below the bar:</p><ul>" + "".join(f"<li>{html.escape(f)}</li>"
                                                  for f in failures) + "</ul>")
    return (f"<h2>Sign-off after waivers</h2>\n<p>Points hit / points judged (waived points "
            f"left out: they cannot be reached or do not matter, tb/coverage_waivers.toml says "
            f"why).</p>\n<table><tr><th>module</th>{head}</tr>\n" + "\n".join(rows)
            + f"</table>\n{verdict}\n")


def write_report(directory: str | Path, cov: RtlCoverage, hits: Mapping[str, int],
                 bins: Sequence[str], title: str, judged: Signoff | None = None) -> Path:
    """Write the report into ``directory``; returns the path of index.html. ``judged``: the
    sign-off of ``cov`` (its table on the index, waived points marked on the sources)."""
    from vtabench.report.plots import coverage_figure

    out = Path(directory)
    (out / "src").mkdir(parents=True, exist_ok=True)
    per_module = tallies(cov)
    kinds = [k for k in KINDS if any(k in t for t in per_module.values())]
    kinds += sorted({k for t in per_module.values() for k in t} - set(kinds))
    totals = {k: Tally(sum(t[k].hit for t in per_module.values() if k in t),
                       sum(t[k].total for t in per_module.values() if k in t)) for k in kinds}
    rows = []
    for module, t in per_module.items():
        rows.append(f'<tr><td class="name"><a href="src/{module}.html">{module}</a></td>'
                    + "".join(_bar(t.get(k)) for k in kinds) + "</tr>")
        (out / "src" / f"{module}.html").write_text(_source_page(cov, module, title, judged))
    head = "".join(f"<th>{k}</th>" for k in kinds)
    hit_bins = sum(1 for b in bins if hits.get(b, 0))
    coverage_figure(hits, bins, "functional coverage").savefig(out / "functional.png")
    bin_rows = "".join(
        f'<tr class="{"hit" if hits.get(b, 0) else "miss"}"><td class="name">{html.escape(b)}'
        f"</td><td>{hits.get(b, 0)}</td></tr>" for b in bins)
    body = (f"<h1>{html.escape(title)}</h1>\n"
            f"<h2>RTL code coverage (Verilator)</h2>\n<table><tr><th>all modules</th>"
            + "".join(_bar(totals[k]) for k in kinds)
            + f"</tr></table>\n<table><tr><th>module</th>{head}</tr>\n" + "\n".join(rows)
            + "</table>\n" + (_signoff_table(judged) if judged is not None else "")
            + f"<h2>Functional coverage: {hit_bins}/{len(bins)} bins "
            f"({100.0 * hit_bins / max(len(bins), 1):.1f}%)</h2>\n"
            '<p><img src="functional.png" alt="functional coverage bins" style="max-width:100%">'
            f'</p>\n<table class="bins"><tr><th>bin</th><th>hits</th></tr>{bin_rows}</table>')
    index = out / "index.html"
    index.write_text(_page(title, body))
    return index


def _source_page(cov: RtlCoverage, module: str, title: str, judged: Signoff | None) -> str:
    waived = judged.waived if judged is not None else {}
    points = [(p, n) for p, n in cov.counts.items() if module_of(p) == module]
    by_line: dict[int, list[tuple[Point, int]]] = defaultdict(list)
    toggles: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # hit, waived, points
    for p, n in points:
        if p.kind == "toggle":  # comment: signal[bit]:0->1 (each bit, each direction)
            t = toggles[p.comment.split(":", 1)[0].split("[", 1)[0]]
            t[0] += n > 0
            t[1] += p in waived
            t[2] += 1
        else:
            by_line[p.line].append((p, n))
    files = sorted({p.file for p, _ in points})
    src = SOURCE_ROOT / files[0] if files else None
    text = src.read_text(errors="replace").splitlines() if src and src.exists() else []
    lines = []
    for no, line in enumerate(text, start=1):
        pts = by_line.get(no)
        if pts:
            counts = [n for _, n in pts]
            open_ = [p for p, n in pts if n == 0 and p not in waived]
            cls = "miss" if open_ else "waived" if min(counts) == 0 else "hit"
            tip = html.escape("; ".join(
                f"{kind_of(p)} {p.comment} {p.hier.rsplit('.', 1)[-1]}: {n}"
                + (f" (waived: {waived[p].reason})" if p in waived else "") for p, n in pts),
                quote=True)
            count = f'<span class="count" title="{tip}">{max(counts)}</span>'
        else:
            cls, count = "", '<span class="count"></span>'
        lines.append(f'<pre class="{cls}">{count}{no:5d}  {html.escape(line)}</pre>')
    missed = sorted(s for s, (h, w, t) in toggles.items() if h + w < t)
    toggle_rows = "".join(
        f'<tr class="{"hit" if h == t else "miss" if h + w < t else "waived"}">'
        f'<td class="name">{html.escape(s)}</td><td>{h}/{t}</td><td>{w or ""}</td></tr>'
        for s, (h, w, t) in sorted(toggles.items()))
    reasons = sorted({(w.number, w.describe(), w.reason, w.owner)
                      for p, w in waived.items() if module_of(p) == module})
    waiver_rows = "".join(
        f'<tr><td class="name">{html.escape(d)}</td><td class="name">{html.escape(r)}</td>'
        f'<td class="name">{html.escape(o)}</td></tr>' for _, d, r, o in reasons)
    body = (f'<p><a href="../index.html">{html.escape(title)}</a></p><h1>{module}</h1>'
            f"<p>{html.escape(files[0] if files else '')}: line and branch points per source "
            f"line (hover for each point); {len(missed)} of {len(toggles)} signals have a bit "
            f"that never toggled both ways and is not waived (all instances of the module "
            f"together).</p>\n"
            + "\n".join(lines)
            + f"\n<h2>Toggle points by signal</h2><table><tr><th>signal</th><th>toggle points "
              f"hit (bits x directions x instances)</th><th>waived</th></tr>{toggle_rows}"
              "</table>"
            + (f"\n<h2>Waivers</h2><table><tr><th>waiver</th><th>reason</th><th>who can change "
               f"it</th></tr>{waiver_rows}</table>" if waiver_rows else ""))
    return _page(f"{module}: {title}", body)
