"""`vtabench compile`: a quantized ONNX model (QDQ or QOperator) -> a .vtapkg package for one
configuration. Any ONNX model compiles (what has no integer form runs on the CPU) or exits
non-zero with one line naming the file, node or input and the reason.

The package (a zip) holds manifest.json (graph with each node's device and, for CPU fallbacks,
the reason; execution units; memory plan; layers), image/*.bin (packed weights, biases and
micro-op kernels at their device addresses), programs/*.bin (one instruction stream per sync),
profile/*.bin (one per layer, for per-layer cycles) and cpu.json (the CPU parts: a Relax
IRModule, built for llvm when the package is loaded). See docs/graph.md.
"""

from __future__ import annotations

import argparse
from contextlib import nullcontext
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compile", help="compile a quantized ONNX model into a .vtapkg package")
    p.add_argument("model", type=Path, help="MODEL.onnx")
    p.add_argument("--shape", action="append", default=[], metavar="NAME=D0,D1,...",
                   help="static shape of an input with dynamic dimensions (repeatable)")
    p.add_argument("--config", default="default", help="configuration name or JSON path")
    p.add_argument("-o", "--output", type=Path, help="output package (default MODEL.vtapkg)")
    p.add_argument("--cpu", action="append", default=[], metavar="NODE",
                   help="force a node (name or key) onto the CPU (repeatable)")
    p.add_argument("--no-double-buffer", action="store_true",
                   help="single buffering (fewer, larger instructions: about 2.5x faster on "
                        "fsim, a few percent slower on the RTL)")
    p.add_argument("--no-profile", action="store_true",
                   help="leave out the per-layer profiling programs")
    p.add_argument("-v", "--verbose", action="store_true", help="print every layer compiled")
    p.add_argument("--dump-passes", type=Path, metavar="DIR",
                   help="write the graph's text form after every graph pass into DIR "
                        "(00-to_graph.txt, 01-fold_activations.txt, ...)")
    p.set_defaults(func=run)


def parse_shapes(items: list[str]) -> dict[str, list[int]]:
    """``NAME=1,3,224,224`` options -> {name: dims}."""
    from vtabench.cli import CliError

    shapes = {}
    for item in items:
        name, sep, dims = item.rpartition("=")
        try:
            shapes[name] = [int(d) for d in dims.split(",")]
        except ValueError:
            sep = ""
        if not sep or not name or any(d <= 0 for d in shapes.get(name, [0])):
            raise CliError(f"--shape {item}: expected NAME=D0,D1,... with positive sizes")
    return shapes


def summarize(pkg, verbose: bool = False) -> list[str]:
    """The placement summary; ``verbose``: every CPU node with its reason, not only the
    operators VTA could have run."""
    man = pkg.manifest
    lines = []
    nodes = man["nodes"]
    vta = [n for n in nodes if n["device"] == "vta" and n["op"] != "copy"]
    cpu = [n for n in nodes if n["device"] == "cpu" and n["op"] not in ("copy", "input")]
    copies = [n for n in nodes if n["op"] == "copy"]
    lines.append(f"  {len(vta)} nodes on VTA, {len(cpu)} on the CPU, {len(copies)} copies, "
                 f"{len(pkg.programs)} device program(s) = syncs per inference, "
                 f"{man['stats']['insns']} instructions")
    for n in nodes:
        if n.get("reason") and n["op"].split(" ")[0] in ("conv2d", "dense", "avgpool", "add",
                                                         "maxpool", "leaky", "mul"):
            lines.append(f"  CPU fallback: {n['name']} ({n['op']}): {n['reason']}")
        elif verbose and n in cpu:
            lines.append(f"  CPU: {n['name']} ({n['op']}, {n.get('onnx') or '-'}): "
                         f"{n.get('reason') or 'no VTA pattern'}")
    lines.append(f"  device memory plan {man['plan_bytes']} bytes, static image "
                 f"{man['static_bytes']} bytes (uploaded once per model)")
    if not vta:
        lines.append("  warning: nothing runs on VTA, the whole model runs on the CPU (a float "
                     "model? quantize it first: vtabench quantize)")
    return lines


def run(args: argparse.Namespace) -> int:
    from vtabench.cli import CliError
    from vtabench.cli.options import check_output, make_parent
    from vtabench.graph import compile_model
    from vtabench.progress import Activity
    from vtabench.spec.config import load_config

    if not args.model.exists():
        raise CliError(f"{args.model}: no such file")
    cfg = load_config(args.config)
    out = args.output or args.model.with_suffix(".vtapkg")
    check_output("--output", out)
    if args.dump_passes is not None:
        if args.dump_passes.exists() and not args.dump_passes.is_dir():
            raise CliError(f"--dump-passes {args.dump_passes}: is a file, not a folder")
        try:
            args.dump_passes.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CliError(f"--dump-passes {args.dump_passes}: {exc.strerror or exc}") from None
    # --verbose prints a line per layer instead
    with nullcontext() if args.verbose else Activity(f"compiling {args.model.name} for {cfg.name}"):
        pkg = compile_model(args.model, cfg, force_cpu=set(args.cpu),
                            profile=not args.no_profile, log=print if args.verbose else None,
                            double_buffer=not args.no_double_buffer,
                            shapes=parse_shapes(args.shape), dump_dir=args.dump_passes)
    pkg.save(make_parent(out))
    print(f"compiled {args.model} for {cfg.name} in {pkg.compile_s:.1f} s")
    for line in summarize(pkg, args.verbose):
        print(line)
    print(f"wrote {out}")
    return 0
