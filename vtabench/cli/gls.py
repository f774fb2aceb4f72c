"""`vtabench gls` (what `make gls` runs): gate-level simulation of the core's synth_ecp5 netlist
(vtabench.rtl.gls, vtabench.verify.gls; docs/fpga.md) on the core bench against fsim. The last
line printed: ``gls CONFIG: N/N programs match fsim``; exit status 1 on any mismatch.
"""

from __future__ import annotations

import argparse
import time


def register(sub: argparse._SubParsersAction) -> None:
    # The flow's modules are imported by run(), not here: every vtabench command builds this parser.
    p = sub.add_parser("gls", help="gate-level simulation: the core's synth_ecp5 netlist on the "
                                   "core bench, directed and random programs against fsim")
    p.add_argument("--config", default="edge8", help="configuration (default edge8)")
    p.add_argument("--count", type=int, default=200, help="random programs (default 200)")
    p.add_argument("--seed", type=int, default=1,
                   help="their regression seed (the programs of vtabench regress --seed)")
    p.add_argument("--no-directed", action="store_true", help="random programs only")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from vtabench.cli import CliError
    from vtabench.rtl.fpga.tools import FlowError
    from vtabench.rtl.gls import synthesize
    from vtabench.spec.config import load_config
    from vtabench.verify.gls import check, programs_for

    if args.count < 0:
        raise CliError(f"--count {args.count}: must be 0 or more")
    cfg = load_config(args.config)
    try:
        netlist = synthesize(cfg.name)
    except FlowError as exc:
        raise CliError(str(exc).splitlines()[0]) from None
    progs = programs_for(cfg, args.count, args.seed, directed=not args.no_directed)
    t0 = time.monotonic()
    bad = check(cfg, netlist, progs, args.seed)
    for line in bad[:20]:
        print(f"gls: MISMATCH {line}")
    print(f"gls {cfg.name}: {len(progs) - len(bad)}/{len(progs)} programs match fsim "
          f"(seed {args.seed}, {time.monotonic() - t0:.0f} s on the netlist)")
    return 1 if bad else 0
