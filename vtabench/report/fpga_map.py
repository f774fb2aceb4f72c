"""The routed ECP5 design on the die (docs/fpga.md): how many routing switches (PIPs) each tile
uses, read from nextpnr's ``--textcfg`` bitstream text, the block RAM and DSP tiles in use, and
the critical path drawn from cell to cell. It shows at a glance whether a slow path is long in
logic or stretched across the die by the placement."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

#: A tile of the text bitstream: ".tile CIB_R10C100:CIB_DSP", ".tile R40C110:PLC2", and the
#: members of a ".tile_group" (a block RAM spans two or three tiles).
_TILE = re.compile(r"\S*?R(\d+)C(\d+):(\S+)")


@dataclass(frozen=True)
class TileUse:
    """Routing switches per tile (rows x columns) and the block RAM (first tile of each) and DSP
    tiles configured."""

    pips: np.ndarray
    ebr: frozenset[tuple[int, int]]
    dsp: frozenset[tuple[int, int]]


def tile_use(textcfg: Path) -> TileUse:
    """Count the ``arc:`` lines (one set routing switch each) under every tile of ``textcfg``."""
    counts: dict[tuple[int, int], int] = {}
    ebr: set[tuple[int, int]] = set()
    dsp: set[tuple[int, int]] = set()
    here: tuple[int, int] | None = None
    with textcfg.open() as f:
        for line in f:
            if line.startswith(".tile"):
                tiles = [(int(m[1]), int(m[2]), m[3]) for m in _TILE.finditer(line)]
                here = tiles[0][:2] if line.startswith(".tile ") and tiles else None
                if tiles and tiles[0][2].startswith("MIB_EBR"):
                    ebr.add(tiles[0][:2])
                dsp.update((r, c) for r, c, kind in tiles if kind.startswith("MIB_DSP"))
            elif here is not None and line.startswith("arc:"):
                counts[here] = counts.get(here, 0) + 1
    rows = 1 + max((r for r, _ in (*counts, *ebr, *dsp)), default=0)
    cols = 1 + max((c for _, c in (*counts, *ebr, *dsp)), default=0)
    pips = np.zeros((rows, cols), dtype=np.int32)
    for (r, c), n in counts.items():
        pips[r, c] = n
    return TileUse(pips, frozenset(ebr), frozenset(dsp))


def routing_map_figure(use: TileUse, path: Sequence[Sequence[int]], title: str,
                       path_label: str) -> Figure:
    """The die with ``use`` as a heat map and ``path`` (tile x, y of each critical-path cell,
    in order) drawn over it."""
    fig = Figure(figsize=(10, 7.6), layout="constrained")
    ax = fig.add_subplot()
    shown = np.ma.masked_equal(use.pips, 0)
    im = ax.imshow(shown, origin="upper", cmap="viridis", interpolation="nearest",
                   aspect="equal")
    fig.colorbar(im, ax=ax, shrink=0.8, label="routing switches (PIPs) set in the tile")
    if use.ebr:
        r, c = zip(*sorted(use.ebr))
        ax.scatter(c, r, marker="s", s=16, facecolors="none", edgecolors="#ff9f1c",
                   linewidths=1.0, label="block RAM (EBR) in use")
    if use.dsp:
        r, c = zip(*sorted(use.dsp))
        ax.scatter(c, r, marker="x", s=10, color="#7fdbff", linewidths=0.8,
                   label="DSP tiles in use")
    if path:
        x, y = zip(*((p[0], p[1]) for p in path))
        ax.plot(x, y, "-", color="white", lw=2.6, alpha=0.9)
        ax.plot(x, y, "-o", color="#e6194b", lw=1.4, ms=3.5, label=path_label)
        ax.annotate("start", (x[0], y[0]), xytext=(6, -10), textcoords="offset points",
                    color="white", fontsize=9, weight="bold")
        ax.annotate("end", (x[-1], y[-1]), xytext=(6, 4), textcoords="offset points",
                    color="white", fontsize=9, weight="bold")
    ax.set_xlabel("tile column (x)")
    ax.set_ylabel("tile row (y)")
    ax.set_title(title, fontsize=10)
    ax.legend(loc="lower left", fontsize=8, framealpha=0.85)
    return fig


def draw_routing_map(textcfg: Path, pnr: Mapping[str, Any], cfg_name: str, device: str,
                     out: Path) -> Path:
    """Draw a routed design (``textcfg``: nextpnr's text bitstream; ``pnr``: its parsed report,
    vtabench.rtl.fpga.ecp5.place_and_route) with its critical path into the PNG ``out``;
    returns ``out``."""
    crit = pnr["critical_path"]
    where = f" ({crit['start_src']} -> {crit['end_src']})" if crit.get("start_src") else ""
    fig = routing_map_figure(
        tile_use(textcfg), crit.get("locs", []),
        f"{cfg_name} on {device}, routed: {pnr['fmax_mhz']:.1f} MHz (target "
        f"{pnr['target_mhz']:g} MHz)",
        f"critical path{where}: {crit.get('logic_levels')} levels, {crit.get('logic_ns')} ns "
        f"logic + {crit.get('routing_ns')} ns routing")
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    return out
