"""`vtabench regress`: constrained-random differential regression (fsim vs rtl vs opencl)."""

from __future__ import annotations

import argparse
import random
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("regress", help="random programs on several targets, compared with fsim")
    p.add_argument("--config", default="default", help="configuration name or JSON path")
    p.add_argument("--count", type=int, default=200, help="number of random programs")
    p.add_argument("--seed", type=int, help="run seed (random when omitted; always printed)")
    p.add_argument("--targets", default="fsim,rtl,opencl",
                   help="comma-separated targets; fsim is always the golden model")
    p.add_argument("--jobs", type=int, default=2, help="worker processes")
    p.add_argument("--only", type=lambda s: [int(x) for x in s.split(",")],
                   help="run only these program indices (reproduce a failure)")
    p.add_argument("--junit", type=Path, help="JUnit XML result file")
    p.add_argument("--coverage-json", type=Path, help="functional coverage hits as JSON")
    p.add_argument("--save-dir", type=Path, default=Path("results/regress/failures"),
                   help="where failing programs are saved (.s, .bin, .dram.bin)")
    p.add_argument("--no-shrink", action="store_true", help="do not minimise failures")
    p.add_argument("--rtl-coverage", type=Path, metavar="DIR",
                   help="collect Verilator line/toggle coverage of the rtl runs in DIR "
                   "(a coverage build of the core; text summary and lcov.info)")
    p.add_argument("--platform", help="opencl platform name (substring)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from vtabench.verify.regress.campaign import (coverage_json, regress, rtl_coverage_report, summary,
                                         write_junit)

    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    targets = [t.strip() for t in args.targets.split(",") if t.strip()]
    bad = [t for t in targets if t not in ("fsim", "rtl", "opencl")]
    if bad:
        raise ValueError(f"unknown target(s) {', '.join(bad)}; expected fsim, rtl, opencl")
    opts = {"opencl": {"platform": args.platform}} if args.platform else {}
    result = regress(args.config, args.count, seed, targets, jobs=args.jobs, only=args.only,
                     save_dir=args.save_dir, shrink=not args.no_shrink, target_opts=opts,
                     coverage_dir=args.rtl_coverage)
    if args.junit:
        write_junit(result, args.junit)
        print(f"wrote {args.junit}")
    if args.coverage_json:
        args.coverage_json.parent.mkdir(parents=True, exist_ok=True)
        args.coverage_json.write_text(coverage_json(result))
    print(summary(result))
    if args.rtl_coverage and "rtl" in targets:
        print(rtl_coverage_report(args.rtl_coverage))
    return 1 if result.failed else 0
