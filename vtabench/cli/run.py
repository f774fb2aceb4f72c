"""`vtabench run`: run MODEL.onnx (compiled on the fly) or MODEL.vtapkg on a target.

X.npy is the model's float input, Y.npy receives its float output. Prints the placement summary,
host-device syncs, copies and bytes moved per inference, the one-time upload, and per-layer
cycles and MAC utilization on targets that count cycles (rtl; a profiling run with one sync per
layer, after the timed batched inference). Every MAC utilization is
:func:`vtabench.runtime.utilization.mac_utilization` and says what it is over. ``--json``: the
same as one JSON object on stdout. Every option is checked before anything is compiled or run.
"""

from __future__ import annotations

import argparse
import random
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vtabench.drivers.api import BACKENDS

if TYPE_CHECKING:
    import numpy as np

    from vtabench.graph import Package
    from vtabench.graph.execute import Result
    from vtabench.report.timeline import Recorder
    from vtabench.spec.config import Config

#: What --plot and --pcie-plot write (matplotlib draws each without further packages).
PLOT_SUFFIXES = (".png", ".svg", ".pdf")
#: Targets that model the PCIe link (they take a link preset), so --pcie-plot has time to draw.
PCIE_TARGETS = tuple(name for name, t in BACKENDS.items() if "link" in t.options)
#: The first bytes of every file numpy.save writes.
NPY_MAGIC = b"\x93NUMPY"


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
    p.add_argument("--json", action="store_true",
                   help="the result as one JSON object on stdout (the text goes to stderr)")
    p.set_defaults(func=run)


def format_layers(rows: list[dict], macs_per_cycle: int) -> list[str]:
    """The profiling run's table: one row per layer launch, its MAC utilization over that
    launch's core cycles, and the total over all of them."""
    from vtabench.runtime.utilization import mac_utilization

    out = [(f"  {'layer':<12} {'shape':<26} {'MACs':>11} {'insns':>6} {'cycles':>10} "
            f"{'MAC util':>8}")]
    tc = tm = 0
    for r in rows:
        cyc = r.get("cycles")
        tm += r["macs"]
        cs, us = "-", "-"
        if cyc is not None:
            tc += cyc
            cs, us = str(cyc), f"{100 * r['util']:.1f}%"
        out.append(f"  {r['layer']:<12} {r['shape']:<26} {r['macs']:>11} {r['insns']:>6} "
                   f"{cs:>10} {us:>8}")
    if tc:
        out.append(f"  {'total':<12} {'':<26} {tm:>11} {'':>6} {tc:>10} "
                   f"{100 * mac_utilization(tm, macs_per_cycle, tc):>7.1f}%")
        lanes = f"{macs_per_cycle} lanes"
        out.append(f"  MAC util = {definition_text(lanes)}")
    return out


def definition_text(lanes: str) -> str:
    return (f"the layer's MACs / ({lanes} x the core cycles of its launch); total: all layers' "
            f"MACs / ({lanes} x all launches' core cycles)")


def run(args: argparse.Namespace) -> int:
    from vtabench.cli.options import human_text_to_stderr, print_json

    with human_text_to_stderr(args.json):
        result = execute(args)
    if args.json:
        print_json(result)
    return 0


def _check_options(args: argparse.Namespace) -> None:
    """Everything about the options that can be refused before the model is compiled or run."""
    from vtabench.cli import CliError
    from vtabench.cli.options import check_output
    from vtabench.report.timeline import SUFFIXES, TRACED_TARGETS

    if not args.model.exists():
        raise CliError(f"{args.model}: no such file")
    if args.runs < 1:
        raise CliError(f"--runs {args.runs}: run at least one inference")
    if args.plot is not None and args.profile is False:
        raise CliError("--plot draws the profiling run: not with --no-profile")
    for option, path in (("--timeline", args.timeline), ("--plot", args.plot)):
        if path is not None and args.target not in TRACED_TARGETS:
            raise CliError(f"{option}: only target {' or '.join(TRACED_TARGETS)} records a "
                           f"pipeline trace, not {args.target}")
    if args.pcie_plot is not None and args.target not in PCIE_TARGETS:
        raise CliError(f"--pcie-plot: target {args.target} models no PCIe time "
                       f"({' or '.join(PCIE_TARGETS)} does)")
    check_output("--output", args.output, (".npy",))
    check_output("--timeline", args.timeline, SUFFIXES)
    check_output("--plot", args.plot, PLOT_SUFFIXES)
    check_output("--pcie-plot", args.pcie_plot, PLOT_SUFFIXES)


def load_input(path: Path) -> np.ndarray:
    """The --input array: a .npy file (numpy.save) of floats; anything else is refused with what
    the file should be."""
    import numpy as np

    from vtabench.cli import CliError

    expected = ("--input takes a .npy file (numpy.save of one float array of the model's input "
                "shape, e.g. x.npy from python -m vtabench.workloads NAME --input x.npy)")
    with path.open("rb") as f:
        magic = f.read(len(NPY_MAGIC))
    if magic != NPY_MAGIC:
        raise CliError(f"--input {path}: not a .npy array file; {expected}")
    try:
        x = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise CliError(f"--input {path}: a damaged .npy file ({exc}); {expected}") from None
    if not isinstance(x, np.ndarray) or not np.issubdtype(x.dtype, np.floating):
        raise CliError(f"--input {path} holds {x.dtype}; the model takes its float input "
                       f"(it quantizes it itself): save the unquantized float array")
    return x


def execute(args: argparse.Namespace) -> dict[str, Any]:
    """The run, its text on stdout; returns what the text says, for ``--json``."""
    import numpy as np

    from vtabench.cli import CliError
    from vtabench.cli.compile import summarize
    from vtabench.cli.options import make_parent
    from vtabench.graph import Package, compile_model, run_package
    from vtabench.progress import Activity
    from vtabench.report.timeline import Recorder
    from vtabench.runtime.utilization import definition, mac_utilization, utilization_text
    from vtabench.spec.config import load_config

    _check_options(args)
    x = load_input(args.input)
    out: dict[str, Any] = {"command": "run", "model": str(args.model), "target": args.target}
    if args.model.suffix == ".vtapkg":
        pkg = Package.load(args.model)
        if args.config and load_config(args.config).name != pkg.cfg_name:
            raise CliError(f"{args.model} was compiled for {pkg.cfg_name}, not {args.config}")
    else:
        cfg = load_config(args.config or "default")
        with Activity(f"compiling {args.model.name} for {cfg.name}"):
            pkg = compile_model(args.model, cfg)
        print(f"compiled {args.model} for {cfg.name} in {pkg.compile_s:.1f} s")
        out["compile_s"] = round(pkg.compile_s, 3)
    cfg = load_config(pkg.cfg_name)
    out["config"] = cfg.name
    summary = summarize(pkg)
    for line in summary:
        print(line)
    spec = pkg.manifest["inputs"][0]
    if tuple(x.shape) != tuple(spec["shape"]):
        raise CliError(f"input {args.input} has shape {x.shape}, the model takes "
                       f"{tuple(spec['shape'])}")
    profile = args.profile if args.profile is not None else BACKENDS[args.target].cycles
    rec = (Recorder(args.target, args.timeline, "--timeline" if args.timeline else "--plot")
           if args.timeline or args.plot else None)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    out.update({"seed": seed, "device_programs": len(pkg.programs),
                "instructions": pkg.manifest["stats"]["insns"],
                "warnings": [line.strip() for line in summary if "warning:" in line]})
    print(f"target {args.target}, seed {seed}")
    if not pkg.programs:
        print(f"  the package has no device program (every layer runs on the CPU): target "
              f"{args.target} runs nothing")
    dev_opts = {"seed": seed} if "seed" in BACKENDS[args.target].options else {}
    with rec or nullcontext():
        results = run_package(pkg, args.target, [x.astype(np.float32)], runs=args.runs,
                              profile=profile, progress=not args.no_progress, **dev_opts)
    timed = results[:args.runs]
    r = timed[-1]
    out["load"] = r.load
    print(f"target {args.target}: load (once per model): {r.load['bytes_written']} bytes "
          f"written in {r.load['writes']} writes")
    macs = sum(int(layer["macs"]) for layer in pkg.manifest["layers"].values())
    out["inferences"] = []
    for i, t in enumerate(timed):
        p = t.per_inference
        entry = {"wall_s": round(t.wall_s, 4), **p}
        cyc = f", {p['cycles']} cycles" if "cycles" in p else ""
        if "pcie_h2d_bytes" in p:
            cyc += (f"; PCIe DMA {p['pcie_h2d_bytes']} B host->device, {p['pcie_d2h_bytes']} B "
                    f"device->host")
        print(f"inference {i + 1}: {t.wall_s:.3f} s wall, {p['syncs']} host-device sync(s), "
              f"{p['copies']} copies, {p['bytes_written']} bytes written / {p['bytes_read']} "
              f"read{cyc}")
        if "cycles" in p and pkg.programs:
            entry["mac_utilization"] = mac_utilization(macs, cfg.macs_per_cycle, int(p["cycles"]))
            out["mac_utilization_definition"] = definition(cfg)
            print("  MAC utilization "
                  + utilization_text(cfg, macs, int(p["cycles"]), f"inference {i + 1}"))
        out["inferences"].append(entry)
    out["outputs"] = {}
    if profile and len(results) > args.runs:
        prof = results[-1]
        out["profile"] = _profile(args, cfg, prof)
    if rec is not None:
        out["outputs"].update(_pictures(args, cfg, pkg, rec, results))
    if args.pcie_plot:
        out["outputs"]["pcie_plot"] = _pcie_plot(args, cfg, timed)
    y = timed[-1].outputs[0]
    if args.output:
        np.save(make_parent(args.output), y.astype(np.float32))
        print(f"wrote {args.output} {y.shape}")
        out["outputs"]["output"] = str(args.output)
    return out


def _profile(args: argparse.Namespace, cfg: Config, prof: Result) -> dict[str, Any]:
    """Print the profiling run's table; returns its rows and total."""
    from vtabench.runtime.utilization import mac_utilization

    print(f"per layer (profiling run, one launch and sync per layer, {prof.wall_s:.2f} s):")
    for line in format_layers(prof.layers, cfg.macs_per_cycle):
        print(line)
    if not prof.layers:
        print(f"  (no device program: {args.target} ran nothing)")
    elif not any("cycles" in row for row in prof.layers):
        print(f"  ({args.target} counts no cycles)")
    result: dict[str, Any] = {"wall_s": round(prof.wall_s, 4), "layers": prof.layers}
    cycles = [row["cycles"] for row in prof.layers if "cycles" in row]
    if cycles:
        macs = sum(int(row["macs"]) for row in prof.layers)
        result["total"] = {"macs": macs, "cycles": sum(cycles), "mac_utilization":
                           mac_utilization(macs, cfg.macs_per_cycle, sum(cycles))}
        result["mac_utilization_definition"] = definition_text(f"{cfg.macs_per_cycle} lanes")
    return result


def _pictures(args: argparse.Namespace, cfg: Config, pkg: Package, rec: Recorder,
              results: list[Result]) -> dict[str, str]:
    """--timeline (the timed inferences' runs, layers marked) and --plot (one window per run of
    the profiling run, which comes last: one run per layer). Returns the paths written."""
    from vtabench.cli.options import make_parent
    from vtabench.report.breakdown import run_breakdown
    from vtabench.report.network import inference_runs
    from vtabench.report.plots import breakdown_figure
    from vtabench.report.timeline import write_timeline

    written = {}
    runs = rec.runs()
    rows = results[-1].layers if len(results) > args.runs else []
    timed, prof = runs[:len(runs) - len(rows)], runs[len(runs) - len(rows):]
    if args.timeline:
        named = inference_runs(cfg, pkg, args.runs, len(timed))
        labels, segments = named if named else (None, None)
        written["timeline"] = str(write_timeline(args.timeline, cfg, timed, labels, segments))
        print(f"wrote {written['timeline']}")
    if args.plot:
        wins = [run_breakdown(cfg, r, str(row["layer"]), int(row["macs"]))
                for r, row in zip(prof, rows, strict=True)]
        breakdown_figure(cfg, wins, f"{args.model.name} on rtl ({cfg.name}), per layer",
                         "profiling run, one launch per layer").savefig(make_parent(args.plot))
        written["plot"] = str(args.plot)
        print(f"wrote {args.plot}")
    return written


def _pcie_plot(args: argparse.Namespace, cfg: Config, timed: list[Result]) -> str:
    from vtabench.cli import CliError
    from vtabench.cli.options import make_parent
    from vtabench.report.plots import pcie_figure, pcie_parts

    parts = [pcie_parts(r.per_inference) for r in timed]
    if any(p is None for p in parts):
        raise CliError(f"--pcie-plot: target {args.target} models no PCIe time (rtl does)")
    for i, p in enumerate(parts):
        print(f"inference {i + 1}, modelled time: " + ", ".join(
            f"{k} {v / 1e3:.1f} us" for k, v in p.items()))
    pcie_figure(parts, [f"inference {i + 1}" for i in range(len(parts))],
                f"{args.model.name} on rtl ({cfg.name}): modelled time per inference"
                ).savefig(make_parent(args.pcie_plot))
    print(f"wrote {args.pcie_plot}")
    return str(args.pcie_plot)
