"""`make gls`: the gate-level netlist of the core (:mod:`vtabench.rtl.gls`) on the core bench,
checked against fsim: the directed set and random regression programs (memory timing,
placement, injected faults), every DRAM image and outcome compared. It ends with
``gls <config>: N/N programs match fsim`` (exit status 1 on any mismatch).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from vtabench.rtl.gls import synthesize
from vtabench.spec.config import Config, load_config
from vtabench.spec.program import Program
from vtabench.verify.directed import directed_programs
from vtabench.verify.regress.campaign import generate
from vtabench.verify.regress.diff import compare, golden_image, run_on_target


def programs_for(cfg: Config, count: int, seed: int, directed: bool = True) -> list[Program]:
    """The directed set (when ``directed``) and random regression programs 0..count-1 of
    ``seed`` (the programs ``vtabench regress --seed`` runs)."""
    progs = directed_programs(cfg) if directed else []
    return progs + [generate(cfg, seed, k) for k in range(count)]


def check(cfg: Config, netlist: Path, programs: list[Program], seed: int) -> list[str]:
    """Run ``programs`` on the netlist; one line per program that differs from fsim (its image or
    its outcome), empty when all match."""
    expected = [golden_image(cfg, p) for p in programs]
    images, problems = run_on_target(cfg, "rtl", programs, seed=seed,
                                     target_opts={"netlist": netlist})
    bad = []
    for p, want, got, problem in zip(programs, expected, images, problems, strict=True):
        diff = compare(cfg, "rtl", p, want, got)
        if problem or diff:
            bad.append(f"{p.name}: {problem or diff}")
    return bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vtabench.verify.gls", description=__doc__.split("\n")[0])
    ap.add_argument("--config", default="edge8", help="configuration (default edge8)")
    ap.add_argument("--count", type=int, default=200, help="random programs (default 200)")
    ap.add_argument("--seed", type=int, default=1, help="their regression seed (default 1)")
    ap.add_argument("--no-directed", action="store_true", help="random programs only")
    args = ap.parse_args(argv)
    if args.count < 0:
        ap.error(f"--count {args.count}: must be 0 or more")
    try:
        cfg = load_config(args.config)
        netlist = synthesize(cfg.name)
        progs = programs_for(cfg, args.count, args.seed, directed=not args.no_directed)
        t0 = time.monotonic()
        bad = check(cfg, netlist, progs, args.seed)
    except (OSError, ValueError, RuntimeError) as exc:
        print(f"gls: {exc}", file=sys.stderr)
        return 2
    for line in bad[:20]:
        print(f"gls: MISMATCH {line}")
    print(f"gls {cfg.name}: {len(progs) - len(bad)}/{len(progs)} programs match fsim "
          f"(seed {args.seed}, {time.monotonic() - t0:.0f} s on the netlist)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
