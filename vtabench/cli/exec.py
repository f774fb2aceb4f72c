"""`vtabench exec`: run a raw program (instructions + DRAM image) on one target.

Validation runs first: a malformed program exits non-zero with the message and no output file is
written. Every target is opened through the driver table (``vtabench.drivers.api.BACKENDS``) and
runs the program the same way (image at address 0, instructions after it:
``vtabench.drivers.api.run_program``), so a program runs identically on fsim, the RTL and OpenCL.
"""

from __future__ import annotations

import argparse
import random
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

import numpy as np

from vtabench.drivers.api import BACKENDS
from vtabench.spec.config import load_config

#: The run timeout of `vtabench exec` on every target (seconds, wall clock).
RUN_TIMEOUT_S = 600.0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("exec", help="run PROG.bin against DRAM.bin on a target")
    p.add_argument("--config", default="default", help="configuration name or JSON path")
    p.add_argument("--target", choices=sorted(BACKENDS), default="fsim")
    p.add_argument("--insns", type=Path, required=True, help="binary instruction stream")
    p.add_argument("--dram", type=Path, required=True, help="device memory image from byte 0")
    p.add_argument("--out", type=Path, required=True, help="DRAM image after the run")
    p.add_argument("--seed", type=int, help="random seed (memory back-pressure etc.; printed)")
    p.add_argument("--waves", nargs="?", const="auto", help="rtl: write an FST waveform")
    p.add_argument("--link", help="rtl: PCIe preset (gen3x8, gen3x16, gen4x16)")
    p.add_argument("--timeline", type=Path, metavar="PATH",
                   help="rtl: the pipeline timeline of the run, .json (Chrome trace / Perfetto) "
                   "or .png (docs/visualize.md)")
    p.add_argument("--timeout", type=float, default=RUN_TIMEOUT_S,
                   help="seconds (wall clock) before the run is stopped with RunTimeoutError, on "
                   "every target (default %(default)s: no real program comes near it, a runaway "
                   "loop always reaches it; checked between instructions on fsim, whose one "
                   "instruction runs at most 2^22 micro-op iterations (a few seconds); fsim "
                   "stops at once on a longer loop, naming the instruction; the OpenCL kernel "
                   "stops itself when a work budget derived from the timeout runs out, naming "
                   "the instruction, and the host waits at most the timeout + 1 s)")
    p.add_argument("--platform", help="opencl: platform name (substring)")
    p.add_argument("--device", help="opencl: device name (substring)")
    p.add_argument("--json", action="store_true",
                   help="the result as one JSON object on stdout (the text goes to stderr)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from vtabench.cli.options import human_text_to_stderr, print_json

    with human_text_to_stderr(args.json):
        result = execute(args)
    if args.json:
        print_json(result)
    return 0


def execute(args: argparse.Namespace) -> dict[str, Any]:
    """The run, its text on stdout; returns what the text says, for ``--json``."""
    from vtabench.cli import CliError
    from vtabench.cli.options import check_output, make_parent
    from vtabench.drivers.api import (PAGE_BYTES, RunTimeoutError, mem_bytes_for, open_device,
                                      run_program)
    from vtabench.progress import Activity
    from vtabench.report.timeline import SUFFIXES, Recorder
    from vtabench.runtime.utilization import (ISSUED_MACS, definition, gemm_iterations,
                                              mac_utilization, utilization_text)
    from vtabench.spec.validate import validate_binary

    cfg = load_config(args.config)
    accepted = BACKENDS[args.target].options
    given = {"waves": args.waves, "link": args.link, "platform": args.platform,
             "device": args.device}
    wrong = [k for k, v in given.items() if v is not None and k not in accepted]
    if wrong:
        raise CliError(f"--{wrong[0]} does not apply to target {args.target}")
    check_output("--out", args.out)
    check_output("--timeline", args.timeline, SUFFIXES)
    code = args.insns.read_bytes()
    dram = np.fromfile(args.dram, dtype=np.uint8)
    insns = validate_binary(cfg, code, dram)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    opts = {k: v for k, v in {**given, "seed": seed}.items() if v is not None and k in accepted}
    print(f"config {cfg.name}, target {args.target}, {len(insns)} instructions, "
          f"{dram.size} DRAM bytes, seed {seed}")
    mem = mem_bytes_for(dram.size, len(code), guard=PAGE_BYTES)
    timeline: AbstractContextManager[Recorder | None] = (
        Recorder(args.target, args.timeline) if args.timeline else nullcontext())
    with timeline as rec, Activity(f"running on {args.target}"), \
            open_device(args.target, cfg, mem, **opts) as dev:
        try:
            result = run_program(dev, code, dram, args.timeout, insn_align=PAGE_BYTES)
        except RunTimeoutError as exc:
            raise CliError(f"RunTimeoutError: {exc}{_reached(exc.status)}") from None
    dram.tofile(make_parent(args.out))
    stats = {**result.stats, "wall_s": round(result.wall_s, 4)}
    out: dict[str, Any] = {"command": "exec", "config": cfg.name, "target": args.target,
                           "device": dev.name, "seed": seed, "instructions": len(insns),
                           "dram_bytes": int(dram.size), "stats": stats,
                           "outputs": {"out": str(args.out)}}
    print(f"  device: {dev.name}")
    for key, value in stats.items():
        print(f"  {key}: {value}")
    if "cycles" in stats:
        macs = sum(gemm_iterations(i) for i in insns) * cfg.macs_per_cycle
        cycles = int(stats["cycles"])
        out["mac_utilization"] = mac_utilization(macs, cfg.macs_per_cycle, cycles)
        out["mac_utilization_definition"] = definition(cfg, ISSUED_MACS)
        print(f"  MAC utilization {utilization_text(cfg, macs, cycles, 'the run', ISSUED_MACS)}")
    print(f"wrote {args.out}")
    if rec is not None:
        out["outputs"]["timeline"] = str(rec.write(cfg))
        print(f"wrote {out['outputs']['timeline']}")
    return out


def _reached(status: dict[str, object]) -> str:
    """Where a timed-out run was, from what its target reports (fsim and OpenCL name the
    instruction in their message; rtl counts the instructions each stage finished)."""
    stages = {k: status.get(f"{k.upper()}_INSNS") for k in ("load", "compute", "store")}
    if all(isinstance(v, int) for v in stages.values()):
        done = sum(v for v in stages.values() if isinstance(v, int))
        return (f"; instructions finished: {done} (" +
                ", ".join(f"{k} {v}" for k, v in stages.items()) + ")")
    return ""
