"""`vtabench exec`: run a raw program (instructions + DRAM image) on one target.

Validation runs first: a malformed program exits non-zero with the message and no output file is
written. Every target is reached through a ``run_raw`` function with the same signature
(docs/dev/interfaces.md), so a program runs identically on fsim, the RTL and OpenCL.
"""

from __future__ import annotations

import argparse
import importlib
import random
from pathlib import Path
from typing import Callable

import numpy as np

from vtabench.spec.config import load_config
from vtabench.spec.isa.insn import decode_program

#: Target name -> module whose ``run_raw`` runs a raw program there.
TARGETS = {
    "fsim": "vtabench.fsim",
    "rtl": "vtabench.drivers.rtl_backend",
    "opencl": "vtabench.drivers.opencl_backend",
}


def raw_runner(target: str) -> Callable[..., dict[str, object]]:
    return importlib.import_module(TARGETS[target]).run_raw  # type: ignore[no-any-return]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("exec", help="run PROG.bin against DRAM.bin on a target")
    p.add_argument("--config", default="default", help="configuration name or JSON path")
    p.add_argument("--target", choices=sorted(TARGETS), default="fsim")
    p.add_argument("--insns", type=Path, required=True, help="binary instruction stream")
    p.add_argument("--dram", type=Path, required=True, help="device memory image from byte 0")
    p.add_argument("--out", type=Path, required=True, help="DRAM image after the run")
    p.add_argument("--seed", type=int, help="random seed (memory back-pressure etc.; printed)")
    p.add_argument("--waves", nargs="?", const="auto", help="rtl: write an FST waveform")
    p.add_argument("--timeout", type=float, help="seconds before the run is abandoned")
    p.add_argument("--platform", help="opencl: platform name (substring)")
    p.add_argument("--device", help="opencl: device name (substring)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from vtabench.spec.validate import validate_program

    cfg = load_config(args.config)
    insns = decode_program(cfg, args.insns.read_bytes())
    dram = np.fromfile(args.dram, dtype=np.uint8)
    validate_program(cfg, insns, dram)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    print(f"config {cfg.name}, target {args.target}, {len(insns)} instructions, "
          f"{dram.size} DRAM bytes, seed {seed}")
    opts = {k: v for k, v in (("platform", args.platform), ("device", args.device)) if v}
    stats = raw_runner(args.target)(cfg, insns, dram, seed=seed, waves=args.waves,
                                    timeout_s=args.timeout, **opts)
    dram.tofile(args.out)
    for key, value in stats.items():
        print(f"  {key}: {value}")
    print(f"wrote {args.out}")
    return 0
