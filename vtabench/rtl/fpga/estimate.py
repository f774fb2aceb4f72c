"""Netlist depth: an estimate of what limits Fmax where nextpnr has no routed report.

A longest-path pass over a ``synth_ecp5`` netlist with one assumed delay per net and per cell
type (a rough ECP5 model, not nextpnr's): it ranks register-to-register paths by logic depth,
with no placement, so it overestimates and knows nothing of distance (docs/fpga.md compares its
ranking with the routed critical paths).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vtabench.rtl.fpga.tools import HARNESS_TOP

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
    source (and the end cell's type), the cell types passed and the source files in order. An
    estimate to rank paths by, not a timing analysis (no placement, one delay per net)."""
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


def path_lines(path: dict[str, Any]) -> str:
    """One path of :func:`deepest_paths` as four lines: estimate, start, end, files passed."""
    return (f"{path['ns']:5.1f} ns  {path['levels']} levels {path['cells']}\n"
            f"  from {path['start']} [{path['start_src']}]\n"
            f"  to   {path['end']} [{path['end_src']}]\n"
            f"  through {' -> '.join(path['through'])}")
