"""Pictures (matplotlib, no pyplot state: every function returns a Figure for ``savefig``).

- :func:`timeline_figure`: the three stage lanes of a trace to scale, plus the per-window cycle
  breakdown when there are several windows (runs or layers);
- :func:`breakdown_figure`: per-layer cycles split into parts, with MAC utilization;
- :func:`coverage_figure`: functional-coverage bins as a heat map;
- :func:`pcie_figure`: the modelled time of each inference split into its parts.
"""

from __future__ import annotations

import math
import textwrap
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np
from matplotlib import colormaps
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from vtabench.report.breakdown import PARTS, Breakdown, Segment, decode, windows
from vtabench.report.trace import Run
from vtabench.runtime.utilization import definition, utilization_text
from vtabench.spec.contracts.stages import Stage

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from vtabench.spec.config import Config

#: instruction kind (Insn.describe()) -> colour; ALU operations share one
KIND_COLOURS = {
    "LOAD INP": "#4c72b0", "LOAD WGT": "#6f9bd1", "LOAD UOP": "#8172b3", "LOAD ACC": "#937860",
    "LOAD ACC_8BIT": "#b39b7f", "GEMM": "#dd8452", "ALU": "#55a868", "STORE OUT": "#c44e52",
    "FINISH": "#222222",
}
WAIT_COLOUR = "#c8c8c8"
PART_COLOURS = {"gemm": "#dd8452", "alu": "#55a868", "uop_acc_load": "#937860",
                "load_stall": "#4c72b0", "store_stall": "#c44e52", "token_wait": "#8c8c8c",
                "idle": "#e5e5e5"}
#: lanes top to bottom
LANES = (Stage.LOAD, Stage.COMPUTE, Stage.STORE)
#: below this many instructions the bars carry their kind as text
LABEL_LIMIT = 60


def _kind(describe: str) -> str:
    return "ALU" if describe.startswith("ALU") else describe


def _cycles_axis(ax: Axes, total: int) -> None:
    scale, unit = ((1e6, "M") if total >= 2e6 else (1e3, "k") if total >= 2e4 else (1, ""))
    ax.xaxis.set_major_formatter(lambda x, _pos: f"{x / scale:g}{unit}")
    ax.set_xlabel("core cycles")


def timeline_figure(cfg: Config, runs: Sequence[Run], labels: Sequence[str],
                    segments: Mapping[int, Sequence[Segment]]) -> Figure:
    wins = windows(cfg, runs, labels, segments)
    many = len(wins) > 1
    fig = Figure(figsize=(14, 7.5 if many else 3.6), layout="constrained")
    axes = fig.subplots(2 if many else 1, 1, height_ratios=(1, 1.3) if many else None,
                        squeeze=False)[:, 0]
    _lanes(cfg, axes[0], runs, wins)
    insns = sum(len(r.spans) for r in runs)
    fig.suptitle(f"{cfg.name}: {insns} instructions; "
                 + windows_utilization(cfg, wins, "the traced run" if len(runs) == 1 else
                                       f"the {len(runs)} traced runs"), fontsize=11)
    if many:
        handles, names = _breakdown_bars(cfg, axes[1], wins)
        axes[1].legend(handles, names, loc="upper left", bbox_to_anchor=(1.07, 1.0), fontsize=8,
                       frameon=False)
    return fig


def _lanes(cfg: Config, ax: Axes, runs: Sequence[Run], wins: Sequence[Breakdown]) -> None:
    bars: dict[tuple[int, str], list[tuple[int, int]]] = {}
    texts = []
    offset = 0
    few = sum(len(r.spans) for r in runs) <= LABEL_LIMIT
    for run in runs:
        for s in run.spans:
            y = LANES.index(s.stage)
            kind = _kind(decode(cfg, s).describe())
            t0 = offset + s.start
            run_len = s.busy - s.pop_wait - s.push_wait
            if s.pop_wait:
                bars.setdefault((y, "wait"), []).append((t0, s.pop_wait))
            bars.setdefault((y, kind), []).append((t0 + s.pop_wait, run_len))
            if s.push_wait:
                bars.setdefault((y, "wait"), []).append((offset + s.end - s.push_wait,
                                                         s.push_wait))
            if few:
                texts.append((t0 + s.pop_wait + run_len / 2, y, kind.replace(" ", "\n")))
        offset += run.cycles
    for (y, kind), spans in bars.items():
        colour = WAIT_COLOUR if kind == "wait" else KIND_COLOURS.get(kind, "#999999")
        ax.broken_barh(spans, (len(LANES) - 1 - y - 0.4, 0.8), facecolors=colour,
                       edgecolors="white", linewidth=0.5 if few else 0)
    for x, y, text in texts:
        ax.text(x, len(LANES) - 1 - y, text, ha="center", va="center", fontsize=6,
                clip_on=True)
    ax.set_yticks(range(len(LANES)), [s.name.lower() for s in reversed(LANES)])
    ax.set_xlim(0, max(offset, 1))
    ax.set_ylim(-0.6, len(LANES) - 0.4)
    if len(wins) > 1:
        start = 0
        for k, w in enumerate(wins):
            if k:
                ax.axvline(start, color="black", linewidth=0.6, alpha=0.6)
            if len(wins) <= 40:
                ax.text(start + w.cycles / 2, len(LANES) - 0.45, w.label, rotation=90,
                        ha="center", va="bottom", fontsize=7)
            start += w.cycles
    _cycles_axis(ax, offset)
    kinds = sorted({k for (_, k) in bars if k != "wait"}, key=list(KIND_COLOURS).index)
    ax.legend(handles=[Patch(color=KIND_COLOURS[k], label=k) for k in kinds]
              + [Patch(color=WAIT_COLOUR, label="token wait")],
              loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)


def windows_utilization(cfg: Config, wins: Sequence[Breakdown], over: str) -> str:
    """The MAC utilization of windows together (vtabench.runtime.utilization), as a title says
    it."""
    sources = " + ".join(sorted({w.macs_source for w in wins}))
    return "MAC utilization " + utilization_text(cfg, sum(w.macs for w in wins),
                                                 sum(w.cycles for w in wins), over, sources)


def _breakdown_bars(cfg: Config, ax: Axes, wins: Sequence[Breakdown], share: bool = False
                    ) -> tuple[list[Any], list[str]]:
    """Stacked bars of the parts per window: cycles with the MAC utilization on a second axis,
    or (``share``) each part's share of the window's cycles. Returns the legend's handles and
    labels (the caller places the legend)."""
    x = range(len(wins))
    bottom = [0.0] * len(wins)
    for part, label in PARTS.items():
        vals = [100.0 * w.parts[part] / max(w.cycles, 1) if share else float(w.parts[part])
                for w in wins]
        ax.bar(x, vals, bottom=bottom, color=PART_COLOURS[part], label=label, width=0.75)
        bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    ax.set_xticks(list(x), [w.label for w in wins], rotation=60 if len(wins) > 8 else 0,
                  ha="right" if len(wins) > 8 else "center", fontsize=8)
    if share:
        ax.set_ylabel("share of the cycles (%)")
        ax.set_ylim(0, 100)
        return ax.get_legend_handles_labels()
    ax.set_ylabel("cycles")
    ax.yaxis.set_major_formatter(lambda v, _pos: f"{v / 1e6:g}M" if v >= 1e6 else
                                 f"{v / 1e3:g}k" if v >= 1e3 else f"{v:g}")
    util = ax.twinx()
    util.plot(list(x), [100 * w.utilization for w in wins], "o-", color="black",
              markersize=4, linewidth=1, label="MAC utilization")
    util.set_ylim(0, 105)
    sources = " + ".join(sorted({w.macs_source for w in wins}))
    util.set_ylabel(f"MAC utilization (%): {definition(cfg, sources, 'its core cycles')}",
                    fontsize=8)
    handles, names = ax.get_legend_handles_labels()
    h2, n2 = util.get_legend_handles_labels()
    return handles + h2, names + n2


def breakdown_figure(cfg: Config, wins: Sequence[Breakdown], title: str, over: str) -> Figure:
    """Per-window (layer) cycles split into parts, with MAC utilization (top), and the same
    parts as shares of each window's cycles (bottom: small layers' stalls show too). The title
    ends with the windows' MAC utilization, over ``over`` (what the windows are)."""
    fig = Figure(figsize=(max(8.0, 0.45 * len(wins) + 5), 8), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True)
    handles, names = _breakdown_bars(cfg, top, wins)
    _breakdown_bars(cfg, bottom, wins, share=True)
    bottom.legend(handles, names, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8,
                  frameon=False)
    top.tick_params(labelbottom=False)
    fig.suptitle(textwrap.fill(f"{title}; {windows_utilization(cfg, wins, over)}", 95),
                 fontsize=11)
    return fig


#: cells per row of the coverage heat map (longer groups continue on the next row)
COVERAGE_COLUMNS = 12


def coverage_figure(hits: Mapping[str, int], bins: Sequence[str], title: str) -> Figure:
    """Functional-coverage bins (``group/name``) as a heat map: one row per group (continued on
    further rows past COVERAGE_COLUMNS bins), one cell per bin, colour by log10 of the hit count,
    missed bins red."""
    by_group: dict[str, list[str]] = {}
    for b in bins:
        by_group.setdefault(b.split("/", 1)[0], []).append(b)
    rows = [(name if k == 0 else f"{name} (cont.)", members[k:k + COVERAGE_COLUMNS])
            for name, members in by_group.items()
            for k in range(0, len(members), COVERAGE_COLUMNS)]
    width = max(len(members) for _, members in rows)
    fig = Figure(figsize=(1.25 * width + 1.5, 0.55 * len(rows) + 1.0), layout="constrained")
    ax = fig.subplots()
    grid = np.full((len(rows), width), np.nan)
    top = max((hits.get(b, 0) for b in bins), default=1)
    for r, members in enumerate(m for _, m in rows):
        for c, b in enumerate(members):
            n = hits.get(b, 0)
            grid[r, c] = math.log10(n + 1) if n else -1.0
    cmap = ListedColormap(["#d62728", *colormaps["Greens"](np.linspace(0.25, 1.0, 254))])
    cmap.set_bad("white")
    ax.imshow(grid, aspect="auto", cmap=cmap, vmin=-1.0, vmax=math.log10(top + 1),
              interpolation="nearest")
    for r, members in enumerate(m for _, m in rows):
        for c, b in enumerate(members):
            n = hits.get(b, 0)
            ax.text(c, r, f"{b.split('/', 1)[1]}\n{n}", ha="center", va="center", fontsize=6,
                    color="white" if n and math.log10(n + 1) > 0.6 * math.log10(top + 1)
                    else "black")
    ax.set_yticks(range(len(rows)), [name for name, _ in rows])
    ax.set_xticks([])
    hit = sum(1 for b in bins if hits.get(b, 0))
    ax.set_title(f"{title}: {hit}/{len(bins)} bins hit ({100 * hit / max(len(bins), 1):.1f}%); "
                 f"red: missed; green: log10 hits", fontsize=10)
    return fig


def pcie_parts(per: Mapping[str, Any]) -> dict[str, float] | None:
    """The modelled time of one inference (``Result.per_inference`` of the rtl platform) split
    into its parts, in ns: DMA each way and MMIO (the PCIe model's own counters), the core's
    cycles at its clock, and the rest (interrupt latency, the driver's waits). None on targets
    that model no time."""
    if "modeled_ns" not in per or "core_ns" not in per:
        return None
    parts = {"DMA host->device": float(per["pcie_h2d_ns"]),
             "DMA device->host": float(per["pcie_d2h_ns"]),
             "MMIO (registers)": float(per["pcie_mmio_ns"]),
             "core (cycles at its clock)": float(per["core_ns"])}
    parts["other (interrupts, driver waits)"] = float(per["modeled_ns"]) - sum(parts.values())
    return parts


def pcie_figure(parts: Sequence[Mapping[str, float]], labels: Sequence[str],
                title: str) -> Figure:
    """Stacked horizontal bars, one per inference: modelled time (us) by part (same keys in
    every mapping, in stacking order)."""
    fig = Figure(figsize=(10, 1.2 + 0.5 * len(parts)), layout="constrained")
    ax = fig.subplots()
    keys = list(parts[0]) if parts else []
    colours = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860"]
    left = [0.0] * len(parts)
    for k, key in enumerate(keys):
        vals = [p[key] / 1e3 for p in parts]
        ax.barh(range(len(parts)), vals, left=left, color=colours[k % len(colours)], label=key)
        left = [a + v for a, v in zip(left, vals, strict=True)]
    ax.set_yticks(range(len(parts)), list(labels))
    ax.invert_yaxis()
    ax.set_xlabel("modelled time (us)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    fig.suptitle(title, fontsize=11)
    return fig
