"""`vtabench run`: run MODEL.onnx (compiled on the fly) or MODEL.vtapkg on a target.

X.npy is the model's float input, Y.npy receives its float output. Prints the placement summary,
host-device syncs, copies and bytes moved per inference, the one-time upload, and per-layer
cycles and MAC utilization on targets that count cycles (rtl; a profiling run with one sync per
layer, after the timed batched inference).
"""

from __future__ import annotations

import argparse
import random
from contextlib import nullcontext
from pathlib import Path

from typing import TYPE_CHECKING

from vtabench.drivers.api import BACKENDS

if TYPE_CHECKING:
    from vtabench.graph import Package
    from vtabench.graph.execute import Result
    from vtabench.report.timeline import Recorder
    from vtabench.spec.config import Config


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run an ONNX model or .vtapkg package on a target")
    p.add_argument("model", type=Path, help="MODEL.onnx or MODEL.vtapkg")
    p.add_argument("--input", type=Path, required=True, help="X.npy (float input)")
    p.add_argument("--output", type=Path, help="Y.npy (float output)")
    p.add_argument("--target", choices=sorted(BACKENDS), default="fsim")
    p.add_argument("--config", default=None,
                   help="configuration (ONNX input; default 'default'; must match a package's)")
    p.add_argument("--runs", type=int, default=1, help="inferences to run (default 1)")
    p.add_argument("--seed", type=int, help="random seed of the target (rtl: the simulator's "
                   "random initialisation; printed; fsim and opencl are deterministic)")
    p.add_argument("--profile", action=argparse.BooleanOptionalAction, default=None,
                   help="per-layer run (one sync per layer) for cycles; default on for "
                   "targets that count cycles (rtl)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--timeline", type=Path, metavar="PATH",
                   help="rtl: the pipeline timeline of the timed inferences, .json (Chrome trace "
                   "/ Perfetto) or .png, layers marked (docs/visualize.md)")
    p.add_argument("--plot", type=Path, metavar="PATH",
                   help="rtl, with the profiling run: per-layer cycles by part (compute, load "
                   "stall, store stall, token wait) and MAC utilization, a PNG")
    p.add_argument("--pcie-plot", type=Path, metavar="PATH",
                   help="rtl: the modelled time of each inference split into its parts (DMA "
                   "each way, MMIO, the core, interrupts and driver waits), a PNG")
    p.set_defaults(func=run)


def format_layers(rows: list[dict], macs_per_cycle: int) -> list[str]:
    out = [(f"  {'layer':<12} {'shape':<26} {'MACs':>11} {'insns':>6} {'cycles':>10} "
            f"{'util':>6}")]
    tc = tm = 0
    for r in rows:
        cyc = r.get("cycles")
        tm += r["macs"]
        cs, us = "-", "-"
        if cyc is not None:
            tc += cyc
            cs, us = str(cyc), f"{100 * r['util']:.1f}%"
        out.append(f"  {r['layer']:<12} {r['shape']:<26} {r['macs']:>11} {r['insns']:>6} "
                   f"{cs:>10} {us:>6}")
    if tc:
        out.append(f"  {'total':<12} {'':<26} {tm:>11} {'':>6} {tc:>10} "
                   f"{100 * tm / macs_per_cycle / tc:>5.1f}%")
    return out


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from vtabench.cli import CliError
    from vtabench.cli.compile import summarize
    from vtabench.spec.config import load_config
    from vtabench.graph import Package, compile_model, run_package
    from vtabench.progress import Activity
    from vtabench.report.timeline import Recorder

    if not args.model.exists():
        raise CliError(f"{args.model}: no such file")
    if args.model.suffix == ".vtapkg":
        pkg = Package.load(args.model)
        if args.config and load_config(args.config).name != pkg.cfg_name:
            raise CliError(f"{args.model} was compiled for {pkg.cfg_name}, not {args.config}")
    else:
        cfg = load_config(args.config or "default")
        with Activity(f"compiling {args.model.name} for {cfg.name}"):
            pkg = compile_model(args.model, cfg)
        print(f"compiled {args.model} for {cfg.name} in {pkg.compile_s:.1f} s")
    cfg = load_config(pkg.cfg_name)
    for line in summarize(pkg):
        print(line)
    x = np.load(args.input)
    if not np.issubdtype(x.dtype, np.floating):
        raise CliError(f"--input {args.input} holds {x.dtype}; the model takes its float input "
                       f"(it quantizes it itself): save the unquantized float array")
    spec = pkg.manifest["inputs"][0]
    if tuple(x.shape) != tuple(spec["shape"]):
        raise CliError(f"input {args.input} has shape {x.shape}, the model takes "
                       f"{tuple(spec['shape'])}")
    profile = args.profile if args.profile is not None else BACKENDS[args.target].cycles
    if args.plot is not None and not profile:
        raise CliError("--plot draws the profiling run: not with --no-profile")
    rec = (Recorder(args.target, args.timeline, "--timeline" if args.timeline else "--plot")
           if args.timeline or args.plot else None)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    print(f"target {args.target}, seed {seed}")
    dev_opts = {"seed": seed} if "seed" in BACKENDS[args.target].options else {}
    with rec or nullcontext():
        results = run_package(pkg, args.target, [x.astype(np.float32)], runs=args.runs,
                              profile=profile, progress=not args.no_progress, **dev_opts)
    timed = results[:args.runs]
    r = timed[-1]
    print(f"target {args.target}: load (once per model): {r.load['bytes_written']} bytes "
          f"written in {r.load['writes']} writes")
    for i, t in enumerate(timed):
        p = t.per_inference
        cyc = f", {p['cycles']} cycles" if "cycles" in p else ""
        if "pcie_h2d_bytes" in p:
            cyc += (f"; PCIe DMA {p['pcie_h2d_bytes']} B host->device, {p['pcie_d2h_bytes']} B "
                    f"device->host")
        print(f"inference {i + 1}: {t.wall_s:.3f} s wall, {p['syncs']} host-device sync(s), "
              f"{p['copies']} copies, {p['bytes_written']} bytes written / {p['bytes_read']} "
              f"read{cyc}")
    if profile and len(results) > args.runs:
        prof = results[-1]
        print(f"per layer (profiling run, one sync per layer, {prof.wall_s:.2f} s):")
        for line in format_layers(prof.layers, cfg.macs_per_cycle):
            print(line)
        if not any("cycles" in row for row in prof.layers):
            print(f"  ({args.target} counts no cycles)")
    if rec is not None:
        _pictures(args, cfg, pkg, rec, results)
    if args.pcie_plot:
        _pcie_plot(args, cfg, timed)
    y = timed[-1].outputs[0]
    if args.output:
        np.save(args.output, y.astype(np.float32))
        print(f"wrote {args.output} {y.shape}")
    return 0


def _pictures(args: argparse.Namespace, cfg: Config, pkg: Package, rec: Recorder,
              results: list[Result]) -> None:
    """--timeline (the timed inferences' runs, layers marked) and --plot (one window per run of
    the profiling run, which comes last: one run per layer)."""
    from vtabench.report.breakdown import run_breakdown
    from vtabench.report.network import inference_runs
    from vtabench.report.plots import breakdown_figure
    from vtabench.report.timeline import write_timeline

    runs = rec.runs()
    rows = results[-1].layers if len(results) > args.runs else []
    timed, prof = runs[:len(runs) - len(rows)], runs[len(runs) - len(rows):]
    if args.timeline:
        named = inference_runs(cfg, pkg, args.runs, len(timed))
        labels, segments = named if named else (None, None)
        print(f"wrote {write_timeline(args.timeline, cfg, timed, labels, segments)}")
    if args.plot:
        wins = [run_breakdown(cfg, r, str(row["layer"])) for r, row in zip(prof, rows,
                                                                           strict=True)]
        total = sum(w.cycles for w in wins)
        macs = sum(w.mac_iterations for w in wins)
        args.plot.parent.mkdir(parents=True, exist_ok=True)
        breakdown_figure(wins, f"{args.model.name} on rtl ({cfg.name}), per layer: "
                         f"{total:,} cycles, MAC utilization {100 * macs / max(total, 1):.1f}%"
                         ).savefig(args.plot)
        print(f"wrote {args.plot}")


def _pcie_plot(args: argparse.Namespace, cfg: Config, timed: list[Result]) -> None:
    from vtabench.cli import CliError
    from vtabench.report.plots import pcie_figure, pcie_parts

    parts = [pcie_parts(r.per_inference) for r in timed]
    if any(p is None for p in parts):
        raise CliError(f"--pcie-plot: target {args.target} models no PCIe time (rtl does)")
    for i, p in enumerate(parts):
        print(f"inference {i + 1}, modelled time: " + ", ".join(
            f"{k} {v / 1e3:.1f} us" for k, v in p.items()))
    args.pcie_plot.parent.mkdir(parents=True, exist_ok=True)
    pcie_figure(parts, [f"inference {i + 1}" for i in range(len(parts))],
                f"{args.model.name} on rtl ({cfg.name}): modelled time per inference"
                ).savefig(args.pcie_plot)
    print(f"wrote {args.pcie_plot}")
