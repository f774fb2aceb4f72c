"""`vtabench mutate`: mutation testing of the regression (docs/regress.md, "Mutation score")."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from vtabench.cli import CliError

if TYPE_CHECKING:
    from vtabench.verify.mutation import Mutant


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("mutate", help="apply each catalogued bug alone (RTL or OpenCL kernel), "
                       "rebuild, run the regression on it: killed / survived / equivalent")
    p.add_argument("--kind", choices=("rtl", "opencl"), default="rtl",
                   help="which catalogue: mutants of the RTL core or of the OpenCL kernel")
    p.add_argument("--config", default="default", help="configuration name or JSON path")
    p.add_argument("--count", type=int, default=1000, help="regression programs per mutant")
    p.add_argument("--seed", type=int, default=1, help="regression seed")
    p.add_argument("--jobs", type=int, default=2, help="local worker processes")
    p.add_argument("--only", type=lambda s: [x.strip() for x in s.split(",") if x.strip()],
                   help="comma-separated mutant ids (default: the whole catalogue)")
    p.add_argument("--results", type=Path,
                   help="verdicts as JSON, written after every mutant (default "
                   "results/mutation-KIND-CONFIG.json)")
    p.add_argument("--resume", action="store_true",
                   help="keep the verdicts in --results that were judged with these settings")
    p.add_argument("--platform", action="store_true",
                   help="also run the platform tests of register-block / interrupt mutants")
    p.add_argument("--keep-builds", action="store_true", help="keep each RTL mutant's build")
    p.add_argument("--formal", action="store_true",
                   help="instead of the regression: run the proofs of each mutant's unit "
                   "(vtabench formal) on it, for the mutants of units with proofs")
    p.add_argument("--formal-limit", type=float, default=600.0, metavar="S",
                   help="--formal: stop a proof job after S seconds (default 600)")
    p.add_argument("--check", action="store_true",
                   help="only check that every mutant applies (its old text occurs once)")
    p.add_argument("--report", type=Path, nargs="+", metavar="RESULTS",
                   help="run nothing: the score and a Markdown table of every mutant from these "
                   "verdict files (a later file's verdict of a mutant replaces an earlier one's)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from vtabench.workdirs import results_root
    from vtabench.verify.mutation import (CatalogueError, Settings, campaign, check_applies,
                                          load_catalogue, load_verdicts, markdown_table,
                                          reclassify, score)

    try:
        mutants = load_catalogue(args.kind)
    except CatalogueError as exc:
        raise CliError(str(exc)) from None
    if args.only:
        unknown = sorted(set(args.only) - {m.id for m in mutants})
        if unknown:
            raise CliError(f"--only: no mutant {', '.join(unknown)} in the {args.kind} catalogue")
        mutants = [m for m in mutants if m.id in args.only]
    problems = check_applies(args.kind, mutants)
    if problems:
        raise CliError("; ".join(problems))
    if args.check:
        print(f"{len(mutants)} {args.kind} mutants apply cleanly")
        return 0
    if args.formal:
        return _run_formal(args, mutants)
    if args.report:
        try:
            merged = {v.id: v for path in args.report for v in load_verdicts(path)}
        except CatalogueError as exc:
            raise CliError(str(exc)) from None
        verdicts = reclassify(mutants, [merged[m.id] for m in mutants if m.id in merged])
        print(score(mutants, verdicts))
        print()
        print(markdown_table(mutants, verdicts))
        return 0
    for flag in ("count", "jobs"):
        if getattr(args, flag) < 1:
            raise CliError(f"--{flag} {getattr(args, flag)}: must be at least 1")
    settings = Settings(args.config, args.count, args.seed, args.jobs)
    results = args.results or results_root() / f"mutation-{args.kind}-{args.config}.json"
    print(f"mutate: {len(mutants)} {args.kind} mutants, each against {args.count} regression "
          f"programs (config {args.config}, seed {args.seed}); verdicts in {results}")
    verdicts = campaign(args.kind, mutants, settings, results, resume=args.resume,
                        platform=args.platform, keep_builds=args.keep_builds)
    print(score(mutants, verdicts))
    return 1 if any(v.status in ("survived", "broken") for v in verdicts) else 0


def _run_formal(args: argparse.Namespace, mutants: list[Mutant]) -> int:
    """--formal: each mutant of a unit with proofs against those proofs; a Markdown table."""
    import sys

    from vtabench.verify import formal
    from vtabench.verify.mutation import formal_mutants, formal_table, judge_formal
    from vtabench.workdirs import results_root

    if args.kind != "rtl":
        raise CliError("--formal: only the rtl catalogue has units with proofs")
    if args.formal_limit <= 0:
        raise CliError(f"--formal-limit {args.formal_limit}: must be positive")
    picked = formal_mutants(mutants)
    if not picked:
        raise CliError("--formal: none of these mutants touches a unit with proofs")
    out = results_root() / "formal-mutants"

    def say(line: str) -> None:
        print(f"mutate: {line}", file=sys.stderr, flush=True)

    verdicts = []
    for k, m in enumerate(picked, 1):
        say(f"[{k}/{len(picked)}] {m.id} ({m.file})")
        try:
            verdicts.append(judge_formal(m, out, args.formal_limit, say))
        except formal.FormalError as exc:
            raise CliError(str(exc)) from None
        say(f"[{k}/{len(picked)}] {m.id}: {verdicts[-1].status}")
    print(formal_table(verdicts))
    killed = sum(v.status == "killed" for v in verdicts)
    print(f"{killed} of {len(verdicts)} mutants killed by the proofs "
          f"({sum(v.seconds for v in verdicts):.1f} s); traces in {out}")
    return 0 if killed == len(verdicts) else 1
