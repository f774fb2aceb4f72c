"""`vtabench smoke`: run the fixed smoke programs on a device and check each against fsim.

Prints the device, pass/fail and run times per program, writes a markdown report (--report) and
exits non-zero when any program fails. ``make smoke PLATFORM=NAME`` runs it on OpenCL.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("smoke", help="run the smoke programs on a device and check them against "
                                     "fsim")
    p.add_argument("--target", choices=("opencl", "fsim"), default="opencl",
                   help="opencl (a real or PoCL device) or fsim (checks the harness itself)")
    p.add_argument("--platform", help="opencl: platform name substring (else "
                                      "$VTA_OPENCL_PLATFORM, else the first)")
    p.add_argument("--device", help="opencl: device name substring (else $VTA_OPENCL_DEVICE)")
    p.add_argument("--binary", type=Path, help="opencl: prebuilt kernel binary to load instead "
                                               "of building the kernel")
    p.add_argument("--variant", choices=("group", "item"),
                   help="opencl: kernel variant (default by device type: group on GPUs and "
                        "CPUs, item elsewhere; $VTA_OPENCL_VARIANT)")
    p.add_argument("--config", default="default", help="configuration name or JSON path")
    p.add_argument("--report", type=Path, help="write the markdown report here")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per program")
    p.add_argument("--random", type=int, default=0, metavar="N",
                   help="also run N seeded random programs "
                        "(vtabench.verify.random_program, seeds 0..N-1)")
    p.set_defaults(func=run)


def _command_line() -> str:
    argv = list(sys.argv)
    prog = ["vtabench"] if Path(argv[0]).name == "vtabench" else ["python3", "-m", "vtabench"]
    return shlex.join(prog + argv[1:])


def run(args: argparse.Namespace) -> int:
    from vtabench.spec.config import load_config
    from vtabench.verify.smoke import run_smoke

    from vtabench.drivers import DeviceError

    from vtabench.cli.options import check_output

    check_output("--report", args.report)
    cfg = load_config(args.config)
    from vtabench.verify.smoke import smoke_programs

    programs = smoke_programs(cfg)
    if args.random:
        import numpy as np

        from vtabench.verify.random_program import random_program

        for seed in range(args.random):
            prog = random_program(cfg, np.random.default_rng(seed))
            prog.name = f"random_{seed}"
            programs.append(prog)
    opts = {k: v for k, v in (("platform", args.platform), ("device", args.device),
                              ("binary", args.binary), ("variant", args.variant))
            if v is not None}
    try:
        report = run_smoke(cfg, args.target, command=_command_line(), programs=programs,
                           timeout_s=args.timeout, **opts)
    except DeviceError as exc:
        print(f"vtabench smoke: error: {exc}", file=sys.stderr)
        return 2
    if args.report:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text(report.markdown())
        print(f"wrote {args.report}")
    return 0 if report.passed else 1
