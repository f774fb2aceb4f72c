"""Benchmark: simulated core cycles per wall-clock second of the RTL core bench.

Runs a GEMM-heavy program (vtabench.verify.perf.gemm_program) on the Verilator build of a
configuration, checks the result against fsim, and prints the core cycles, the wall time of the
run (launch to done_o), simulated cycles per second, and the MAC utilisation. The fast path (the
C++ harness tb/csrc/core_main.cpp, no Python or cocotb in the loop) by default; ``--cocotb`` the
cocotb bench (tb/core/core_bench.py); ``--speed`` the fast path's build without assertions;
``--baseline`` the cocotb bench and the fast path (and, with ``--speed``, the speed build) side by
side in one run, their repetitions interleaved (cocotb, fast, cocotb, fast, ...) so that the
machine's load falls on all alike, and the ratios. Usage: python bench/bench_rtl.py [--config
default] [--iter-out 24] [--gemms 10] [--repeat 3] [--baseline | --cocotb] [--speed]
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import numpy as np

from vtabench.fsim import Fsim
from vtabench.rtl.simjob import run_batch
from vtabench.rtl.verilator import build
from vtabench.spec.config import Config, load_config
from vtabench.spec.program import Program
from vtabench.verify import perf

#: The benches, by name: what run_batch gets for each.
PATHS: dict[str, dict[str, bool]] = {
    "cocotb + Verilator": {"fast": False},
    "fast path (C++ main + Verilator)": {"fast": True},
    "fast path, speed build (no assertions, -march=native)": {"fast": True, "speed": True},
}
COCOTB, FAST, SPEED = PATHS


def _run(cfg: Config, prog: Program, want: np.ndarray, repeat: int, seed: int,
         path: str) -> tuple[list[dict[str, Any]], bool]:
    """One simulator process running ``repeat`` copies of ``prog``: their stats, and whether
    every image matched fsim's."""
    progs = [Program(f"{prog.name}#{i}", prog.insns, prog.dram.copy()) for i in range(repeat)]
    stats = run_batch(cfg, progs, seed=seed, quiet=True, **PATHS[path])
    ok = all(np.array_equal(p.dram, want) for p in progs) and all(
        s["state"] == "done" for s in stats)
    return stats, ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="default")
    ap.add_argument("--iter-out", type=int, default=24)
    ap.add_argument("--gemms", type=int, default=10, help="times the measured GEMM is issued")
    ap.add_argument("--repeat", type=int, default=3,
                    help="runs in one simulator process (and, with --baseline, rounds)")
    ap.add_argument("--seed", type=int, default=1)
    which = ap.add_mutually_exclusive_group()
    which.add_argument("--baseline", action="store_true",
                       help="the cocotb bench and the fast path side by side, and the ratio")
    which.add_argument("--cocotb", action="store_true", help="the cocotb bench only")
    ap.add_argument("--speed", action="store_true",
                    help="the fast path's build without assertions (beside the others with "
                         "--baseline)")
    a = ap.parse_args(argv)
    if a.speed and a.cocotb:
        ap.error("--speed is a build of the fast path, not of the cocotb bench")
    cfg = load_config(a.config)
    paths = ([COCOTB, FAST] + ([SPEED] if a.speed else []) if a.baseline
             else [COCOTB if a.cocotb else SPEED if a.speed else FAST])
    for path in paths:
        t0 = time.monotonic()
        b = build(cfg, **PATHS[path])
        print(f"build {b.build_dir.name}: {'built' if b.built else 'reused'} "
              f"({time.monotonic() - t0 if b.built else b.seconds:.1f} s)")
    prog, macs = perf.gemm_program(cfg, a.iter_out, repeat=a.gemms)
    want = prog.dram.copy()
    Fsim(cfg).run(prog.insns, want)
    print(f"program {prog.name}: {len(prog.insns)} instructions, {macs} MACs")
    rounds = a.repeat if a.baseline else 1
    per_run = 1 if a.baseline else a.repeat
    best: dict[str, dict[str, Any]] = {}
    all_ok = True
    for r in range(rounds):
        for path in paths:
            t1 = time.monotonic()
            stats, ok = _run(cfg, prog, want, per_run, a.seed, path)
            total = time.monotonic() - t1
            all_ok &= ok
            for s in stats:
                print(f"  {path}: {s['cycles']} core cycles in {s['wall_s']:.3f} s wall = "
                      f"{s['cycles_per_s']:,} cycles/s ({s['cpu_s']:.3f} s CPU = "
                      f"{s['cycles_per_cpu_s']:,} cycles per CPU second); "
                      f"{'matches fsim' if ok else 'MISMATCH vs fsim'}; process {total:.2f} s")
                if s["cycles_per_s"] and s["cycles_per_s"] > best.get(path, {}).get(
                        "cycles_per_s", 0):
                    best[path] = s
    for path in paths:
        s = best[path]
        print(f"simulated core cycles per wall second ({cfg.name}, {path}): "
              f"{s['cycles_per_s']:,} (best of {a.repeat}); per CPU second "
              f"{s['cycles_per_cpu_s']:,}")
    if a.baseline:
        for path in paths[1:]:
            wall = best[path]["cycles_per_s"] / best[COCOTB]["cycles_per_s"]
            cpu = best[path]["cycles_per_cpu_s"] / best[COCOTB]["cycles_per_cpu_s"]
            print(f"{path} / cocotb bench: {wall:.2f}x per wall second, {cpu:.2f}x per CPU "
                  f"second (same run, interleaved)")
    cyc = next(iter(best.values()))["cycles"]
    print(f"MAC utilisation of the whole program: {macs / cyc / cfg.macs_per_cycle:.3f} of peak "
          f"({cfg.macs_per_cycle} MACs/cycle)")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
