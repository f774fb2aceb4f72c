"""Benchmark: simulated core cycles per wall-clock second of the RTL core under cocotb.

Runs a GEMM-heavy program (vtabench.verify.perf.gemm_program) on the Verilator build of a
configuration, checks the result against fsim, and prints the core cycles, the wall time of the
run (launch to done_o, Python asleep meanwhile), simulated cycles per second, and the MAC
utilisation. Usage: python bench/bench_rtl.py [--config default] [--iter-out 24] [--gemms 10] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from vtabench.spec.config import load_config
from vtabench.fsim import Fsim
from vtabench.verify import perf
from vtabench.rtl.verilator import build
from vtabench.rtl.simjob import run_batch
from vtabench.spec.program import Program


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="default")
    ap.add_argument("--iter-out", type=int, default=24)
    ap.add_argument("--gemms", type=int, default=10, help="times the measured GEMM is issued")
    ap.add_argument("--repeat", type=int, default=3, help="runs in the one simulator process")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    cfg = load_config(a.config)
    t0 = time.monotonic()
    b = build(cfg)
    print(f"build {cfg.name}: {'built' if b.built else 'reused'} "
          f"({time.monotonic() - t0 if b.built else b.seconds:.1f} s)")
    prog, macs = perf.gemm_program(cfg, a.iter_out, repeat=a.gemms)
    want = prog.dram.copy()
    Fsim(cfg).run(prog.insns, want)
    progs = [Program(f"{prog.name}#{i}", prog.insns, prog.dram.copy()) for i in range(a.repeat)]
    t1 = time.monotonic()
    stats = run_batch(cfg, progs, seed=a.seed)
    total = time.monotonic() - t1
    ok = all(np.array_equal(p.dram, want) for p in progs)
    best = max(stats, key=lambda s: s["cycles_per_s"] or 0)
    cyc = best["cycles"]
    print(f"program {prog.name}: {len(prog.insns)} instructions, {macs} MACs, "
          f"{'matches fsim' if ok else 'MISMATCH vs fsim'}")
    for s in stats:
        print(f"  {s['name']}: {s['cycles']} core cycles in {s['wall_s']:.3f} s wall = "
              f"{s['cycles_per_s']:,} cycles/s ({s['cpu_s']:.3f} s CPU of the simulator = "
              f"{s['cycles_per_cpu_s']:,} cycles per CPU second)")
    print(f"simulated core cycles per wall second ({cfg.name}, cocotb + Verilator): "
          f"{best['cycles_per_s']:,} (best of {a.repeat}); simulator process incl. start-up "
          f"and {a.repeat} programs: {total:.2f} s")
    print(f"per CPU second of the simulator process (insensitive to other load): "
          f"{max(s['cycles_per_cpu_s'] or 0 for s in stats):,}")
    print(f"MAC utilisation of the whole program: {macs / cyc / cfg.macs_per_cycle:.3f} of peak "
          f"({cfg.macs_per_cycle} MACs/cycle)")
    return 0 if ok and best["state"] == "done" else 1


if __name__ == "__main__":
    sys.exit(main())
