"""Benchmark: what the RTL's pipeline trace costs (docs/visualize.md).

Runs, in one core-bench simulator process, a GEMM-bound program (vtabench.verify.perf,
few instructions, long loops) ``--repeat`` times and ``--random`` seeded random programs (many
short instructions), with the event log on (``--trace FILE``) or off, and prints simulated cycles
per CPU second of the simulator process (insensitive to other processes' load, unlike wall time).
To compare with a build without the trace port, run it with PYTHONPATH pointing at an older tree
(``git archive``) and VTABENCH_BUILD_DIR at a build folder of its own.

    python bench/bench_trace_cost.py                  # tracing off
    python bench/bench_trace_cost.py --trace /tmp/t.log
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from vtabench.spec.config import load_config
from vtabench.verify import perf
from vtabench.rtl.simjob import run_batch
from vtabench.spec.program import Program
from vtabench.verify.random_program import random_program


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="default")
    ap.add_argument("--trace", type=Path, help="write the event log here (tracing on)")
    ap.add_argument("--repeat", type=int, default=5, help="runs of the GEMM program")
    ap.add_argument("--random", type=int, default=40, help="random programs")
    ap.add_argument("--seed", type=int, help="simulator seed (random when omitted; printed)")
    a = ap.parse_args(argv)
    cfg = load_config(a.config)
    gemm, _ = perf.gemm_program(cfg, 24, repeat=10)
    rnd = [random_program(cfg, np.random.default_rng([5, k])) for k in range(a.random)]
    progs = [Program(f"gemm{i}", gemm.insns, gemm.dram.copy()) for i in range(a.repeat)]
    progs += [Program(f"rand{k}", p.insns, p.dram.copy()) for k, p in enumerate(rnd)]
    stats = run_batch(cfg, progs, seed=a.seed, **({"trace": a.trace} if a.trace else {}))
    if any(s["state"] != "done" for s in stats):
        print("a program did not finish", file=sys.stderr)
        return 1
    g = [s for s in stats if s["name"].startswith("gemm")]
    r = [s for s in stats if s["name"].startswith("rand")]
    rates = ", ".join(f"{s['cycles_per_cpu_s']:,}" for s in g)
    print(f"tracing {'on' if a.trace else 'off'}; GEMM program ({len(gemm.insns)} instructions, "
          f"{g[0]['cycles']} cycles), cycles per CPU second: {rates}")
    cyc, cpu = sum(s["cycles"] for s in r), sum(s["cpu_s"] for s in r)
    print(f"{len(rnd)} random programs ({sum(len(p.insns) for p in rnd)} instructions, {cyc} "
          f"cycles): {cyc / cpu:,.0f} cycles per CPU second")
    return 0


if __name__ == "__main__":
    sys.exit(main())
