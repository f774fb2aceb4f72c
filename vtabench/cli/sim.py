"""`vtabench sim` (what `make sim` runs): the default workload on the RTL co-simulation."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sim", help="run the default workload on the RTL through the driver and "
                       "the PCIe model, checked against fsim")
    p.add_argument("--config", default="default", help="configuration name or JSON path")
    p.add_argument("--link", default="gen3x16", help="PCIe preset: gen3x8, gen3x16, gen4x16")
    p.add_argument("--seed", type=int, help="simulation seed (printed)")
    p.add_argument("--waves", nargs="?", const="auto", help="write an FST waveform")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import random

    from vtabench.spec.config import load_config
    from vtabench.verify.network_check import simulate

    cfg = load_config(args.config)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    ok, text = simulate(cfg, link=args.link, seed=seed, waves=args.waves or False)
    print(text)
    print(f"sim: {'PASS' if ok else 'FAIL'} ({cfg.name}, {args.link}, seed {seed}; repeat with "
          f"--seed {seed})")
    return 0 if ok else 1
