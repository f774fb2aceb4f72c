"""`vtabench formal`: the formal proofs of the core's units (SymbiYosys, k-induction or bounded
model checking, and covers), a table of every property's status, counterexamples as VCD with a
GTKWave save file; exit 1 when any property fails, is not closed or a cover is unreached."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from vtabench.cli import positive_int


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("formal", help="prove the units' properties with SymbiYosys (from PyPI)")
    p.add_argument("--module", help="only the proofs of this unit (vta_fifo or fifo) or job")
    p.add_argument("--depth", type=positive_int, metavar="N",
                   help="induction length (prove jobs) or bound (bmc jobs) instead of each "
                        "job's own")
    p.add_argument("--quick", action="store_true", help="only the quick jobs (make test's)")
    p.add_argument("--list", action="store_true", help="list the jobs and exit")
    p.add_argument("--jobs", type=positive_int, default=1, metavar="N",
                   help="run N jobs at a time (default 1; a prove job's check runs two "
                        "solver processes)")
    p.add_argument("--out", type=Path, default=None,
                   help="folder of counterexample traces (default results/formal)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from vtabench.cli import CliError
    from vtabench.verify import formal
    from vtabench.workdirs import results_root

    jobs = [j.at_depth(args.depth) for j in formal.select(args.module, args.quick)]
    if args.list:
        for j in jobs:
            print(f"{j.name:18} {j.unit:16} {j.mode} depth {j.depth:<3} config {j.config}"
                  f"{'' if j.quick else '  (slow)'}{'  ' + j.why if j.why else ''}")
        return 0
    out = args.out or results_root() / "formal"

    def say(line: str) -> None:
        print(f"formal: {line}", file=sys.stderr, flush=True)

    t0 = time.monotonic()
    try:
        results = formal.run(jobs, out, say=say, workers=args.jobs)
    except formal.FormalError as exc:
        raise CliError(str(exc)) from None
    print(formal.table(results))
    bad = [r.job.name for r in results if not r.ok]
    total = sum(r.seconds for r in results)
    print(f"{len(results) - len(bad)} of {len(results)} jobs ok in {total:.1f} s of job time"
          f" ({time.monotonic() - t0:.1f} s wall, {args.jobs} at a time)"
          + (f"; failing: {', '.join(bad)} (traces in {out})" if bad else ""))
    return 1 if bad else 0
