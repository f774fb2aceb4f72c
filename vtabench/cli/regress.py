"""`vtabench regress`: constrained-random differential regression (fsim vs rtl vs opencl), and
whole networks on every (configuration, target) with --networks; locally or on a Dask cluster."""

from __future__ import annotations

import argparse
import random
import sys
from concurrent.futures import Executor
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from vtabench.cli import positive_int
from vtabench.drivers.api import BACKENDS

if TYPE_CHECKING:
    from vtabench.verify.regress.campaign import RegressResult

#: Local worker processes when neither --jobs nor --cluster says otherwise.
DEFAULT_JOBS = 2
#: Failures that --waves-on-fail writes waves of (a rerun with waves each, about a minute).
WAVES_ON_FAIL = 3


def _names(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("regress", help="random programs (or whole networks) on several targets, "
                       "compared with fsim (or the integer reference)")
    p.add_argument("--config", default="default", help="configuration name or JSON path")
    p.add_argument("--count", type=positive_int, default=200, help="number of random programs")
    p.add_argument("--seed", type=int, help="run seed (random when omitted; always printed)")
    p.add_argument("--targets", default="fsim,rtl,opencl",
                   help="comma-separated targets; fsim is always the golden model")
    p.add_argument("--only", type=lambda s: [int(x) for x in s.split(",")],
                   help="run only these program indices (reproduce a failure)")
    p.add_argument("--chunk", type=int, metavar="N",
                   help="programs per task (default: about 8 tasks of 20 to 100 programs); the "
                   "results depend on it, never on the number of workers")
    p.add_argument("--junit", type=Path, help="JUnit XML result file")
    p.add_argument("--coverage-json", type=Path, help="functional coverage hits as JSON")
    p.add_argument("--coverage-png", type=Path, metavar="PATH",
                   help="functional coverage bins as a heat map (PNG)")
    p.add_argument("--save-dir", type=Path, default=Path("results/regress/failures"),
                   help="where failing programs are saved (.s, .bin, .dram.bin, and .json: "
                   "what the bench used, for --replay)")
    p.add_argument("--no-shrink", action="store_true", help="do not minimise failures")
    p.add_argument("--replay", type=Path, metavar="PATH",
                   help="instead of a run: rerun one saved failure (its NAME.json, or a folder "
                   "holding one) on its targets' benches with its seed, knobs and placement")
    p.add_argument("--waves", type=Path, nargs="?", const=Path("auto"), metavar="FILE",
                   help="with --replay: the rtl run writes waves (the cocotb bench; default "
                   "beside the saved failure, NAME.fst) and a GTKWave save file beside them")
    p.add_argument("--waves-on-fail", action="store_true",
                   help="after the run, rerun each failure of the rtl target (the first "
                   f"{WAVES_ON_FAIL}) on the cocotb bench with waves: NAME.fst (or .vcd) and a "
                   "GTKWave save file NAME.gtkw beside the saved failure in --save-dir")
    p.add_argument("--rtl-coverage", type=Path, metavar="DIR",
                   help="collect Verilator line/toggle coverage of the rtl runs, merged in DIR "
                   "(a coverage build of the core; text summary, lcov.info and an HTML report, "
                   "DIR/index.html); the directed cases of coverage closure run on that build "
                   "too (vtabench.verify.closure)")
    p.add_argument("--signoff", action="store_true",
                   help="with --rtl-coverage: judge every RTL module against the sign-off "
                   "thresholds (line, branch, FSM, assertion 100%%, toggle 98%%) after the "
                   "waivers; exit 1 below them, naming the module, kind and first missed points")
    p.add_argument("--waivers", type=Path, metavar="TOML",
                   help="with --signoff: the waiver file (default tb/coverage_waivers.toml)")
    p.add_argument("--platform-coverage", action="store_true",
                   help="with --rtl-coverage: also run the shell's unit bench "
                   "(tb/unit/test_shell.py) as a coverage build and merge the points of what only "
                   "the platform instantiates (vta_shell, the register block vta_regs)")
    p.add_argument("--platform", help="opencl platform name (substring)")
    net = p.add_argument_group("whole networks")
    net.add_argument("--networks", type=_names, metavar="LIST",
                     help="run these generated networks (small_resnet, resnet18, resnet50_block) "
                     "instead of random programs: one task per (network, config, target)")
    net.add_argument("--configs", type=_names, metavar="LIST",
                     help="configurations of --networks (default: --config)")
    where = p.add_argument_group("where it runs (docs/regress.md)")
    where.add_argument("--cluster", metavar="SPEC",
                       help="a Dask cluster: local:N (N worker processes here), tcp://HOST:PORT "
                       "(an existing scheduler), or slurm, lsf, pbs, sge (batch jobs through "
                       "dask-jobqueue); default: a local process pool of --jobs processes")
    where.add_argument("--jobs", type=int,
                       help=f"local worker processes (default {DEFAULT_JOBS}); with --cluster "
                       "slurm|lsf|pbs|sge: the number of batch jobs (default 1)")
    where.add_argument("--queue", help="batch queue (slurm partition) of the jobs")
    where.add_argument("--cores", type=int, help="cores per batch job, one worker process each "
                       "(default 1)")
    where.add_argument("--memory", help="memory per batch job (default 4GB)")
    where.add_argument("--walltime", help="wall time limit per batch job, in the scheduler's "
                       "format (slurm 02:00:00, lsf 02:00; default: dask-jobqueue's setting)")
    p.set_defaults(func=run)


def _executor(args: argparse.Namespace) -> AbstractContextManager[Executor | None]:
    """The cluster's executor, or None (the campaign's own local pool) without --cluster."""
    from vtabench.verify.regress.cluster import (BATCH_CLUSTERS, BatchOptions, cluster_executor,
                                                 parse_cluster)

    batch_flags = [f"--{k}" for k in ("queue", "cores", "memory", "walltime")
                   if getattr(args, k) is not None]
    if args.cluster is None:
        if batch_flags:
            raise ValueError(f"{', '.join(batch_flags)}: only with --cluster "
                             f"{'|'.join(BATCH_CLUSTERS)}")
        return nullcontext()
    spec = parse_cluster(args.cluster)
    if spec.kind not in BATCH_CLUSTERS:
        extra = batch_flags + (["--jobs"] if args.jobs is not None else [])
        if extra:
            raise ValueError(f"{', '.join(extra)}: not with --cluster {args.cluster} (only "
                             f"with {'|'.join(BATCH_CLUSTERS)})")
        return cluster_executor(spec)
    defaults = BatchOptions()
    return cluster_executor(spec, BatchOptions(
        queue=args.queue, cores=args.cores or defaults.cores,
        memory=args.memory or defaults.memory, walltime=args.walltime,
        jobs=args.jobs or defaults.jobs))


def run(args: argparse.Namespace) -> int:
    from vtabench.cli.options import check_output
    from vtabench.cli.run import PLOT_SUFFIXES

    check_output("--junit", args.junit)
    check_output("--coverage-json", args.coverage_json)
    check_output("--coverage-png", args.coverage_png, PLOT_SUFFIXES)
    if args.replay is not None:
        return _replay(args)
    if args.waves is not None:
        raise ValueError("--waves: only with --replay")
    if args.waves_on_fail and "rtl" not in _names(args.targets):
        raise ValueError("--waves-on-fail: only with the rtl target (--targets ...,rtl)")
    if args.signoff and args.rtl_coverage is None:
        raise ValueError("--signoff: only with --rtl-coverage DIR")
    if args.waivers is not None and not args.signoff:
        raise ValueError("--waivers: only with --signoff")
    if args.platform_coverage:
        if args.rtl_coverage is None:
            raise ValueError("--platform-coverage: only with --rtl-coverage DIR")
        from vtabench.verify.platform_coverage import check_config

        check_config(args.config)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    targets = _names(args.targets)
    bad = [t for t in targets if t not in BACKENDS]
    if bad:
        raise ValueError(f"unknown target(s) {', '.join(bad)}; expected {', '.join(BACKENDS)}")
    for flag in ("jobs", "chunk", "cores"):
        if getattr(args, flag) is not None and getattr(args, flag) < 1:
            raise ValueError(f"--{flag} {getattr(args, flag)}: must be at least 1")
    if args.networks is not None:
        from vtabench.verify.regress.networks import check_networks

        check_networks(args.networks)
        with _executor(args) as executor:
            return _run_networks(args, targets, seed, executor)
    if args.configs is not None:
        raise ValueError("--configs: only with --networks (random programs take --config)")
    with _executor(args) as executor:
        return _run_programs(args, targets, seed, executor)


def _replay(args: argparse.Namespace) -> int:
    """--replay: the saved failure's verdict per target, as the regression gave it."""
    from vtabench.verify.regress.replay import load_failure, replay

    saved = load_failure(args.replay)
    rec = saved.record
    waves = args.waves
    if waves is not None and str(waves) == "auto":
        waves = saved.where / f"{saved.program.name}.fst"
    print(f"replay {saved.program.name}: config {saved.cfg.name}, bench seed {rec['seed']}, "
          f"{saved.program.kind}, saved at commit {rec['commit']}")
    verdicts = replay(saved, waves)
    for target, problem in verdicts.items():
        print(f"  {target}: {problem or 'passed'}")
    if waves is not None and "rtl" in verdicts:
        print(f"waves: {waves.with_suffix('')}.* and its .gtkw")
    return 1 if any(verdicts.values()) else 0


def _run_programs(args: argparse.Namespace, targets: list[str], seed: int,
                  executor: Executor | None) -> int:
    from vtabench.verify.regress.campaign import (coverage_json, regress, rtl_coverage_report,
                                                  summary, write_junit)

    waivers = None
    if args.signoff:  # a bad waiver file stops the run before it starts
        from vtabench.rtl.signoff import WAIVERS, load_waivers

        waivers = load_waivers(args.waivers or WAIVERS)
    opts = {"opencl": {"platform": args.platform}} if args.platform else {}
    result = regress(args.config, args.count, seed, targets, jobs=args.jobs or DEFAULT_JOBS,
                     executor=executor, chunk=args.chunk, only=args.only,
                     save_dir=args.save_dir, shrink=not args.no_shrink, target_opts=opts,
                     rtl_coverage=args.rtl_coverage is not None)
    if args.junit:
        write_junit(result, args.junit)
        print(f"wrote {args.junit}")
    if args.coverage_json:
        args.coverage_json.parent.mkdir(parents=True, exist_ok=True)
        args.coverage_json.write_text(coverage_json(result))
    print(summary(result))
    if args.waves_on_fail:
        _waves_of_failures(result, args.save_dir)
    title = (f"regress {result.config}: {len(result.results)} programs, seed {result.seed}, "
             f"{' vs '.join(result.targets)}")
    if args.coverage_png:
        from vtabench.report.plots import coverage_figure
        from vtabench.verify.regress.coverage import all_bins

        args.coverage_png.parent.mkdir(parents=True, exist_ok=True)
        bins = all_bins(result.coverage.cfg)
        coverage_figure(result.coverage.hits, bins, title).savefig(args.coverage_png)
        print(f"wrote {args.coverage_png}")
    closure_failed = result.rtl_coverage is not None and _merge_closure_coverage(result, seed)
    if result.rtl_coverage is not None and args.platform_coverage:
        if not _merge_platform_coverage(result, seed):
            return 1
    if result.rtl_coverage is not None:
        from vtabench.report.coverage_html import write_report
        from vtabench.verify.regress.coverage import all_bins

        print(rtl_coverage_report(result.rtl_coverage, args.rtl_coverage))
        result.rtl_coverage.write_dat(args.rtl_coverage / "coverage.dat")
        judged = None
        if waivers is not None:
            from vtabench.rtl.signoff import signoff

            judged = signoff(result.rtl_coverage, waivers, result.coverage.cfg.name)
            print(judged.report())
        index = write_report(args.rtl_coverage, result.rtl_coverage, result.coverage.hits,
                             all_bins(result.coverage.cfg), title, judged)
        print(f"coverage report: {index}")
        failures = judged.failures() if judged is not None else []
        for line in failures:
            print(f"coverage sign-off FAIL: {line}")
        if failures:
            return 1
    return 1 if result.failed or closure_failed else 0


def _merge_closure_coverage(result: RegressResult, seed: int) -> bool:
    """--rtl-coverage: the directed cases of coverage closure (vtabench.verify.closure: illegal
    streams and halt timings no random program is sure to reach) on the same coverage build,
    their points merged into the run's; True when a case did not end as it must (said)."""
    from vtabench.verify.closure import run_closure

    assert result.rtl_coverage is not None
    closure = run_closure(result.coverage.cfg, seed)
    result.rtl_coverage.merge(closure.coverage)
    print(closure.summary())
    return bool(closure.failed)


def _merge_platform_coverage(result: RegressResult, seed: int) -> bool:
    """--platform-coverage: the shell bench's points of vta_shell and vta_regs merged into the
    run's RTL coverage (vtabench.verify.platform_coverage); False (said in one line) when the
    bench failed."""
    from vtabench.verify.platform_coverage import PlatformCoverageError, platform_coverage

    assert result.rtl_coverage is not None
    print(f"platform coverage: the shell's unit bench on {result.config}, seed {seed}")
    try:
        result.rtl_coverage.merge(platform_coverage(result.config, seed))
    except PlatformCoverageError as exc:
        print(f"vtabench regress: error: {exc}", file=sys.stderr)
        return False
    return True


def _waves_of_failures(result: RegressResult, save_dir: Path) -> None:
    """--waves-on-fail: waves and a GTKWave save file of the first failures of the rtl target."""
    from vtabench.verify.regress.replay import failure_waves

    rtl = [r.name for r in result.failed
           if (r.error or "").startswith("rtl") or any(m.target == "rtl" for m in r.mismatches)]
    if not rtl:
        return
    print(f"waves of {min(len(rtl), WAVES_ON_FAIL)} of {len(rtl)} rtl failure(s), rerun on the "
          "cocotb bench:")
    for name, (waves, verdict) in zip(rtl, failure_waves(save_dir, rtl[:WAVES_ON_FAIL])):
        again = "failed again" if verdict else "PASSED on the rerun (timing-dependent?)"
        print(f"  {name}: {waves} and {waves.with_suffix('.gtkw')} ({again})")


def _run_networks(args: argparse.Namespace, targets: list[str], seed: int,
                  executor: Executor | None) -> int:
    from vtabench.verify.regress.campaign import local_pool
    from vtabench.verify.regress.networks import regress_networks, summary, write_junit

    configs = args.configs or [args.config]
    with nullcontext(executor) if executor is not None else \
            local_pool(args.jobs or DEFAULT_JOBS) as ex:
        results = regress_networks(args.networks, configs, targets, seed, ex)
    if args.junit:
        write_junit(results, seed, args.junit)
        print(f"wrote {args.junit}")
    print(summary(results, seed))
    return 1 if any(r.problem for r in results) else 0
