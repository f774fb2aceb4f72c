"""`vtabench fpga` (what `make fpga` runs): the FPGA implementation flow of vtabench.rtl.fpga
(docs/fpga.md). ECP5 synthesis, place and route and timing of one configuration, its routing map
(vtabench.report.fpga_map), then Xilinx synthesis estimates of others; the summary goes to
results/fpga/CONFIG.json. The last line printed is the ECP5 result:
``fpga CONFIG DEVICE: Fmax N MHz (target M MHz), LUT a, FF b, DSP c, BRAM d``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def register(sub: argparse._SubParsersAction) -> None:
    # The flow's modules are imported by run(), not here: every vtabench command builds this
    # parser. --device and --timing-weight are checked and defaulted there.
    p = sub.add_parser("fpga", help="Yosys + nextpnr-ecp5 place and route of a configuration: "
                                    "Fmax, resources, critical path; synth_xilinx estimates")
    p.add_argument("--config", default="edge8", help="configuration placed and routed on ECP5")
    p.add_argument("--device", default="LFE5UM5G-85F",
                   help="ECP5 part (LFE5UM5G-85F, LFE5UM5G-45F or LFE5U-85F)")
    p.add_argument("--freq", type=float, default=100.0, help="target clock in MHz")
    p.add_argument("--seed", type=int, default=1, help="nextpnr placement seed")
    p.add_argument("--router", default="router2", choices=("router1", "router2"),
                   help="nextpnr router")
    p.add_argument("--timing-weight", type=int,
                   help="nextpnr's placer timing weight (--placer-heap-timingweight; default "
                        "vtabench.rtl.fpga.ecp5.TIMING_WEIGHT, 30)")
    p.add_argument("--xilinx", default="default,cloud32",
                   help="configurations for synth_xilinx estimates ('' for none)")
    p.add_argument("--no-ecp5", action="store_true", help="only the Xilinx estimates")
    p.add_argument("--json", type=Path, help="summary file (default results/fpga/CONFIG.json)")
    p.add_argument("--depth", type=Path, metavar="NETLIST",
                   help="only print the deepest paths of a synth_ecp5 netlist (an estimate)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from vtabench.cli import CliError
    from vtabench.rtl.fpga.ecp5 import DEVICES, TIMING_WEIGHT, ecp5_line
    from vtabench.rtl.fpga.estimate import deepest_paths, path_lines
    from vtabench.rtl.fpga.tools import FlowError
    from vtabench.spec.config import load_config
    from vtabench.workdirs import results_root

    if args.device not in DEVICES:
        raise CliError(f"--device {args.device}: not one of {', '.join(sorted(DEVICES))}")
    if args.timing_weight is None:
        args.timing_weight = TIMING_WEIGHT
    if args.depth:
        if not args.depth.is_file():
            raise CliError(f"--depth {args.depth}: no such netlist")
        for path in deepest_paths(args.depth):
            print(path_lines(path))
        return 0
    xilinx = [c for c in args.xilinx.split(",") if c]
    for name in [args.config, *xilinx]:
        load_config(name)   # a bad name stops here, before minutes of synthesis
    summary: dict[str, Any] = {"xilinx": {}}
    try:
        if not args.no_ecp5:  # first: the result; the Xilinx estimates are extra
            summary.update(_ecp5(args))
        for name in xilinx:
            summary["xilinx"][name] = _xilinx(name)
    except FlowError as exc:
        print(f"vtabench fpga: {exc}", file=sys.stderr)
        return 1
    out = args.json or results_root() / "fpga" / f"{args.config}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(summary, indent=1))
    if not args.no_ecp5:  # the final line (printed first as soon as it is known)
        print(ecp5_line(args.config, args.device, summary["pnr"]))
    return 0


def _ecp5(args: argparse.Namespace) -> dict[str, Any]:
    """Synthesis, place and route, the routing map; returns the summary's ECP5 entries."""
    from vtabench.report.fpga_map import draw_routing_map
    from vtabench.rtl.fpga.ecp5 import (DEVICES, ROUTED_CONFIG, critical_path_line,
                                        ecp5_line, ecp5_resources, place_and_route, synth_ecp5)
    from vtabench.workdirs import build_root, results_root

    work = build_root() / "fpga" / args.config / "ecp5"
    syn = synth_ecp5(args.config, work)
    print(f"synth_ecp5 {args.config}: {syn['seconds']:.0f} s", flush=True)
    pnr = place_and_route(Path(syn["netlist"]), DEVICES[args.device], args.freq, args.seed,
                          work, args.router, args.timing_weight)
    print(f"nextpnr-ecp5 {args.device}: {pnr['seconds']:.0f} s; "
          f"{critical_path_line(pnr['critical_path'])} (cell names in "
          "results/fpga/CONFIG.json)", flush=True)
    png = draw_routing_map(work / ROUTED_CONFIG, pnr, args.config, args.device,
                           results_root() / "fpga" / f"{args.config}-routing.png")
    print(f"routing map: {png}", flush=True)
    print(ecp5_line(args.config, args.device, pnr), flush=True)
    return {"config": args.config, "device": args.device, "seed": args.seed,
            "router": args.router, "timing_weight": args.timing_weight, "synth_ecp5": syn,
            "pnr": pnr, "resources": ecp5_resources(pnr["utilization"])}


def _xilinx(name: str) -> dict[str, Any]:
    from vtabench.rtl.fpga.xilinx import synth_xilinx, xilinx_line
    from vtabench.workdirs import build_root

    res = synth_xilinx(name, build_root() / "fpga" / name / "xilinx")
    print(xilinx_line(name, res), flush=True)
    return res
