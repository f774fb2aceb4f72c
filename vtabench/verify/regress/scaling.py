"""python -m vtabench.verify.regress.scaling: the measured figures of docs/regress.md (scaling).

On this machine it measures

- programs per second of the regression with the local process pool and with a LocalCluster of
  each worker count given (the same seed and chunks, so the same work);
- the scheduler's overhead per task: no-op tasks through a LocalCluster client, submitted all at
  once (what the cluster spends per chunk beyond the chunk's own work);
- the client's cost per chunk: unpickling one real chunk result and merging it (functional
  coverage, and with --rtl-coverage the Verilator points too).
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
from concurrent.futures import Executor, wait

from vtabench.spec.config import load_config
from vtabench.verify.regress.campaign import CHUNK, regress, run_chunk
from vtabench.verify.regress.cluster import ClusterSpec, cluster_executor
from vtabench.verify.regress.coverage import FunctionalCoverage
from vtabench.rtl.coverage import RtlCoverage


def _noop(k: int) -> int:
    return k


def task_overhead(ex: Executor, tasks: int) -> float:
    """Seconds per no-op task, all submitted at once, through ``ex``."""
    wait([ex.submit(_noop, 0) for _ in range(min(tasks, 50))])  # warm up
    t0 = time.perf_counter()
    wait([ex.submit(_noop, k) for k in range(tasks)])
    return (time.perf_counter() - t0) / tasks


def merge_cost(config: str, seed: int, targets: list[str], rtl_coverage: bool,
               repeats: int = 20) -> tuple[float, float, int]:
    """The client's cost of one chunk of CHUNK programs: seconds to unpickle and merge the first
    one (it decodes the Verilator point table), seconds for each later one, and its size."""
    cfg = load_config(config)
    part = run_chunk(cfg, seed, list(range(CHUNK)), [t for t in targets if t != "fsim"], {},
                     rtl_coverage)
    blob = pickle.dumps(part)
    cov, rtl = FunctionalCoverage(cfg), RtlCoverage()

    def merge_one() -> None:
        got = pickle.loads(blob)
        cov.merge(got.coverage)
        if got.rtl_coverage is not None:
            rtl.merge(got.rtl_coverage)

    t0 = time.perf_counter()
    merge_one()
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(repeats):
        merge_one()
    return first, (time.perf_counter() - t0) / repeats, len(blob)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vtabench.verify.regress.scaling",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="default")
    ap.add_argument("--count", type=int, default=500)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--targets", default="fsim,rtl")
    ap.add_argument("--workers", default="1,2", help="worker counts to measure")
    ap.add_argument("--tasks", type=int, default=2000, help="no-op tasks for the overhead")
    ap.add_argument("--rtl-coverage", action="store_true",
                    help="also the client's cost of a chunk's Verilator coverage")
    args = ap.parse_args(argv)
    targets = args.targets.split(",")
    workers = [int(w) for w in args.workers.split(",")]
    quiet = {"shrink": False, "progress": lambda _: None}
    print(f"regress {args.config}, {args.count} programs, seed {args.seed}, targets "
          f"{args.targets}")
    for n in workers:
        res = regress(args.config, args.count, args.seed, targets, jobs=n, **quiet)
        print(f"  local pool, {n} process(es):  {args.count / res.seconds:7.1f} programs/s "
              f"({res.seconds:.1f} s)")
        with cluster_executor(ClusterSpec("local", workers=n), log=lambda _: None) as ex:
            res = regress(args.config, args.count, args.seed, targets, executor=ex, **quiet)
            print(f"  LocalCluster, {n} worker(s):    {args.count / res.seconds:7.1f} "
                  f"programs/s ({res.seconds:.1f} s)")
            per = task_overhead(ex, args.tasks)
            print(f"  scheduler overhead, {n} worker(s): {per * 1e3:.2f} ms per no-op task "
                  f"({args.tasks} tasks)")
    for cov in (False, True) if args.rtl_coverage else (False,):
        first, later, size = merge_cost(args.config, args.seed, targets, cov)
        print(f"  client per chunk of {CHUNK} ({'with' if cov else 'without'} RTL coverage, "
              f"{size / 1e3:.0f} kB): {later * 1e3:.2f} ms to unpickle and merge "
              f"(the first: {first * 1e3:.0f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
