"""`vtabench regress`: constrained-random differential regression across targets.

Program k of a run with seed S is generated from ``numpy.random.default_rng([S, k])``, so any one
program can be regenerated alone (``--seed S --only k``), and a worker needs only the indices of
its programs, never the programs. fsim is the golden model; every other selected target runs the
same programs and its DRAM images are compared with fsim's.

Programs run in chunks (one simulator process per chunk on rtl; the chunk's worker computes
fsim's images while its targets run, in a thread of its own) on an executor: a local process
pool by default, or the workers of a Dask cluster (:mod:`vtabench.verify.regress.cluster`). The
chunks depend only on the programs and the chunk size, never on the number of workers, so a run
gives the same programs, verdicts and merged coverage on one core or on a hundred workers. A
chunk returns its verdicts, its functional coverage hits, its Verilator coverage (parsed) and the
reproducer files of its failing programs (.s, .bin, .dram.bin); the client merges them. Failing
programs are then minimised to short reproducers, on the executor too. Results go to a JUnit XML
file and a one-screen summary.
"""

from __future__ import annotations

import json
import multiprocessing
import tempfile
import time
import xml.etree.ElementTree as ET
from concurrent.futures import (Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor,
                                as_completed)
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from vtabench.drivers.api import BACKENDS
from vtabench.spec.config import Config, load_config
from vtabench.spec.isa.asm import disassemble
from vtabench.spec.isa.insn import Insn
from vtabench.spec.program import Origin, Program
from vtabench.verify.random_case import random_case
from vtabench.verify.regress.coverage import FunctionalCoverage
from vtabench.verify.regress.diff import Mismatch, compare, golden_image, run_on_target
from vtabench.verify.regress.replay import bench_record
from vtabench.rtl.coverage import RtlCoverage
from vtabench.verify.regress.shrink import Shrinker

#: Largest chunk: programs per task (and per simulator process on rtl).
CHUNK = 100
#: Smallest default chunk: a simulator start (about a second) is amortised over this many.
MIN_CHUNK = 20
#: A run is cut into about this many chunks when CHUNK and MIN_CHUNK allow it.
SPREAD = 8
#: Seconds between progress lines (thousands of chunks must not print thousands of lines).
PROGRESS_S = 2.0


def generate(cfg: Config, seed: int, index: int) -> Program:
    """Program ``index`` of the run with ``seed`` (named and marked with both)."""
    prog = random_case(cfg, np.random.default_rng([seed, index]))
    return replace(prog, name=f"rand-{seed}-{index}", origin=Origin(prog.kind, seed, index))


def chunk_size(count: int) -> int:
    """The default chunk size for ``count`` programs: about SPREAD chunks, each of MIN_CHUNK to
    CHUNK programs. A function of the count alone, so results do not depend on the workers."""
    return min(CHUNK, max(MIN_CHUNK, -(-count // SPREAD)))


def plan_chunks(indices: Sequence[int], size: int) -> list[list[int]]:
    return [list(indices[i:i + size]) for i in range(0, len(indices), size)]


@dataclass
class ProgramVerdict:
    """The regression's verdict on one program: what differed from fsim on which target, or
    why a target did not run it."""

    index: int
    name: str
    seconds: float
    mismatches: list[Mismatch] = field(default_factory=list)
    error: str | None = None  # a target raised instead of producing an image


@dataclass
class ChunkResult:
    """What one chunk sends back to the client."""

    results: list[ProgramVerdict]
    coverage: dict[str, int]
    rtl_coverage: RtlCoverage | None
    #: file name -> contents: the reproducer files of the chunk's failing programs
    failure_files: dict[str, bytes]


@dataclass
class RegressResult:
    config: str
    seed: int
    targets: list[str]
    results: list[ProgramVerdict]
    coverage: FunctionalCoverage
    seconds: float
    reproducers: dict[str, str] = field(default_factory=dict)
    rtl_coverage: RtlCoverage | None = None
    chunks: int = 0

    @property
    def failed(self) -> list[ProgramVerdict]:
        return [r for r in self.results if r.mismatches or r.error]


def golden(cfg: Config, programs: Sequence[Program],
           coverage: FunctionalCoverage) -> list[np.ndarray]:
    """fsim images, sampling functional coverage (static bins and ALU operand values)."""
    images = []
    for p in programs:
        coverage.sample_case(p)
        images.append(golden_image(cfg, p, observe_alu=coverage.sample_alu))
    return images


def run_chunk(cfg: Config, seed: int, indices: list[int], targets: list[str],
              target_opts: dict[str, Any], rtl_coverage: bool = False) -> ChunkResult:
    """Worker: regenerate programs ``indices``, run them on fsim and ``targets``, compare.
    ``rtl_coverage``: run a coverage build of the core and return its points."""
    programs = [generate(cfg, seed, k) for k in indices]
    cov = FunctionalCoverage(cfg)
    t0 = time.monotonic()
    out = [ProgramVerdict(k, p.name, 0.0) for k, p in zip(indices, programs)]
    rtl_cov = None
    with tempfile.TemporaryDirectory(prefix="vtabench-chunk-") as tmp:
        opts = {t: dict(target_opts.get(t) or {}) for t in targets}
        for target in targets:
            if rtl_coverage and BACKENDS[target].bench is not None:  # the core bench's build
                opts[target]["coverage"] = Path(tmp) / "coverage.dat"
        # The targets run in a thread while this one computes fsim's images: a target mostly
        # waits for its simulator process or device, and neither side reads what the other
        # writes (the targets run on copies of the images).
        with ThreadPoolExecutor(max_workers=1) as background:
            runs = background.submit(_run_targets, cfg, targets, programs, seed + indices[0],
                                     opts)
            expected = golden(cfg, programs, cov)
            outcomes = runs.result()
        for target, outcome in zip(targets, outcomes, strict=True):
            if isinstance(outcome, Exception):
                for r in out:
                    r.error = f"{target}: {type(outcome).__name__}: {outcome}"[:2000]
                continue
            images, problems = outcome
            for r, p, exp, got, problem in zip(out, programs, expected, images, problems,
                                               strict=True):
                if problem:
                    r.error = problem
                m = compare(cfg, target, p, exp, got)
                if m is not None:
                    r.mismatches.append(m)
            if "coverage" in opts[target]:
                rtl_cov = RtlCoverage.from_files([opts[target]["coverage"]])
    per = (time.monotonic() - t0) / max(1, len(programs))
    files: dict[str, bytes] = {}
    for r, p in zip(out, programs):
        r.seconds = per
        if r.mismatches or r.error:
            files.update(failure_files(cfg, p, seed + indices[0], ["fsim", *targets],
                                       target_opts))
    return ChunkResult(out, dict(cov.hits), rtl_cov, files)


def _run_targets(cfg: Config, targets: list[str], programs: list[Program], seed: int,
                 opts: dict[str, dict[str, Any]]
                 ) -> list[tuple[list[np.ndarray], list[str | None]] | Exception]:
    """Each target's :func:`run_on_target` result, or the exception it raised (reported per
    program by the caller: the run goes on)."""
    outcomes: list[tuple[list[np.ndarray], list[str | None]] | Exception] = []
    for target in targets:
        try:
            outcomes.append(run_on_target(cfg, target, programs, seed=seed,
                                          target_opts=opts[target]))
        except Exception as exc:  # noqa: BLE001 - reported per program, the run goes on
            outcomes.append(exc)
    return outcomes


def failure_files(cfg: Config, prog: Program, seed: int, targets: list[str],
                  target_opts: dict[str, dict[str, Any]] | None = None) -> dict[str, bytes]:
    """A program's reproducer files: NAME.s (assembly), NAME.bin, NAME.dram.bin, and NAME.json,
    the rest of what the bench used (``seed``: the bench's; see
    :mod:`vtabench.verify.regress.replay`)."""
    record = bench_record(cfg, prog, seed, targets, target_opts)
    return {f"{prog.name}.s": (f"# {prog.name} (config {cfg.name})\n"
                               + disassemble(cfg, prog.insns, numbered=True)).encode(),
            f"{prog.name}.bin": prog.encoded(cfg),
            f"{prog.name}.dram.bin": prog.dram.tobytes(),
            f"{prog.name}.json": (json.dumps(record, indent=1) + "\n").encode()}


def write_files(files: dict[str, bytes], directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (directory / name).write_bytes(data)


def save_failure(cfg: Config, prog: Program, directory: Path, seed: int, targets: list[str],
                 target_opts: dict[str, dict[str, Any]] | None = None) -> Path:
    """Write NAME.s, NAME.bin, NAME.dram.bin and NAME.json (:func:`failure_files`); returns the
    .s path."""
    write_files(failure_files(cfg, prog, seed, targets, target_opts), directory)
    return directory / f"{prog.name}.s"


def make_fails_batch(cfg: Config, prog: Program, target: str, seed: int,
                     target_opts: dict[str, Any] | None
                     ) -> Callable[[Sequence[list[Insn]]], list[bool]]:
    """A predicate for the shrinker: which candidate programs (run like ``prog``: same image,
    DRAM timing and placement) still differ from fsim. Candidates are encoded from their
    instructions (``code`` None): the reserved bits of the stream do not survive shrinking."""

    def fails_batch(candidates: Sequence[list[Insn]]) -> list[bool]:
        progs = [replace(prog, name=f"cand{i}", insns=list(c), code=None,
                         dram=prog.dram.copy())
                 for i, c in enumerate(candidates)]
        expected = [golden_image(cfg, p) for p in progs]
        images, problems = run_on_target(cfg, target, progs, seed=seed, target_opts=target_opts)
        return [bool(problem) or bool((e != g).any())
                for e, g, problem in zip(expected, images, problems, strict=True)]

    return fails_batch


def minimise(cfg: Config, prog: Program, target: str, seed: int,
             target_opts: dict[str, Any] | None = None,
             log: Callable[[str], None] | None = None) -> Program:
    """A short program that still fails like ``prog`` (``prog`` itself when it must end with an
    error: an illegal stream or an injected response error is its own reproducer)."""
    if prog.expect:
        return replace(prog, name=f"{prog.name}-min")
    shrinker = Shrinker(cfg, prog.dram, make_fails_batch(cfg, prog, target, seed, target_opts),
                        log=log)
    small = shrinker.shrink(list(prog.insns))
    return replace(prog, name=f"{prog.name}-min", insns=small, code=None,
                   dram=prog.dram.copy())


@dataclass
class Reproducer:
    """A minimised failing program, as :func:`minimise_task` sends it back."""

    before: int  # instructions of the failing program
    after: int  # instructions of the reproducer
    text: str  # its assembly
    files: dict[str, bytes]  # its reproducer files


def minimise_task(cfg: Config, seed: int, index: int, target: str,
                  target_opts: dict[str, Any] | None) -> Reproducer:
    """Worker: minimise program ``index`` of the run with ``seed`` on ``target``."""
    prog = generate(cfg, seed, index)
    small = minimise(cfg, prog, target, seed, target_opts)
    return Reproducer(len(prog.insns), len(small.insns),
                      disassemble(cfg, small.insns, numbered=True),
                      failure_files(cfg, small, seed, ["fsim", target],
                                    {target: dict(target_opts or {})}))


def local_pool(jobs: int) -> ProcessPoolExecutor:
    # spawn, not fork: forking a process that runs threads (pytest-xdist's execnet, cocotb's
    # runner) can copy a held lock into the child and hang it.
    return ProcessPoolExecutor(max_workers=max(1, jobs),
                               mp_context=multiprocessing.get_context("spawn"))


def regress(config: str, count: int, seed: int, targets: list[str], *, jobs: int = 2,
            executor: Executor | None = None, chunk: int | None = None,
            only: list[int] | None = None, save_dir: Path | None = None, shrink: bool = True,
            target_opts: dict[str, dict[str, Any]] | None = None,
            rtl_coverage: bool = False, max_reproducers: int = 3,
            progress: Callable[[str], None] = print) -> RegressResult:
    """Run the regression on ``executor`` (a Dask client's executor, say), or on a local pool of
    ``jobs`` processes when None. ``chunk``: programs per task (default :func:`chunk_size`).
    ``rtl_coverage``: collect Verilator line/toggle coverage of the rtl runs (a coverage build)
    into ``RegressResult.rtl_coverage``."""
    cfg = load_config(config)
    others = [t for t in targets if t != "fsim"]
    indices = only if only is not None else list(range(count))
    chunks = plan_chunks(indices, chunk or chunk_size(len(indices)))
    coverage = FunctionalCoverage(cfg)
    rtl_cov = RtlCoverage() if rtl_coverage and "rtl" in others else None
    by_index: dict[int, ProgramVerdict] = {}
    t0 = last = time.monotonic()
    where = f"{jobs} local job(s)" if executor is None else "the cluster"
    progress(f"regress: config {cfg.name}, {len(indices)} programs in {len(chunks)} chunk(s), "
             f"seed {seed}, targets fsim (golden){''.join(', ' + t for t in others)}, on {where}")
    with ExitStack() as stack:
        if executor is None:
            executor = stack.enter_context(local_pool(jobs))
        futures = [executor.submit(run_chunk, cfg, seed, c, others, target_opts or {},
                                   rtl_cov is not None) for c in chunks]
        for fut in as_completed(futures):
            part: ChunkResult = fut.result()
            coverage.merge(part.coverage)
            if rtl_cov is not None and part.rtl_coverage is not None:
                rtl_cov.merge(part.rtl_coverage)
            for r in part.results:
                if r.index in by_index:
                    raise RuntimeError(f"program {r.name} came back twice")
                by_index[r.index] = r
            if save_dir is not None and part.failure_files:
                write_files(part.failure_files, save_dir)
            now = time.monotonic()
            if now - last >= PROGRESS_S or len(by_index) == len(indices):
                last = now
                bad = sum(1 for r in by_index.values() if r.mismatches or r.error)
                progress(f"  {len(by_index)}/{len(indices)} programs, {bad} failing, "
                         f"{now - t0:.0f} s")
        missing = sorted(set(indices) - set(by_index))
        if missing:
            raise RuntimeError(f"{len(missing)} program(s) never came back, first {missing[0]}")
        out = RegressResult(cfg.name, seed, ["fsim", *others], [by_index[k] for k in indices],
                            coverage, time.monotonic() - t0, rtl_coverage=rtl_cov,
                            chunks=len(chunks))
        if save_dir is not None and out.failed:
            progress(f"saved {len(out.failed)} failing program(s) in {save_dir} (.s, .bin, "
                     f".dram.bin, .json: replay with `vtabench regress --replay DIR/NAME.json`)")
        if shrink:
            _minimise_failures(cfg, out, executor, target_opts or {}, save_dir,
                               max_reproducers, progress)
    return out


def _minimise_failures(cfg: Config, out: RegressResult, executor: Executor,
                       target_opts: dict[str, dict[str, Any]], save_dir: Path | None,
                       limit: int, progress: Callable[[str], None]) -> None:
    """Minimise the first ``limit`` failures, in parallel on ``executor``."""
    jobs: dict[Future[Reproducer], tuple[ProgramVerdict, str]] = {}
    for r in out.failed[:limit]:
        target = r.mismatches[0].target if r.mismatches else (r.error or "").split(":")[0]
        jobs[executor.submit(minimise_task, cfg, out.seed, r.index, target,
                             target_opts.get(target))] = (r, target)
    for fut, (r, target) in jobs.items():
        rep = fut.result()
        out.reproducers[r.name] = rep.text
        progress(f"minimised {r.name} on {target}: {rep.before} -> {rep.after} instructions\n"
                 f"{rep.text}")
        if save_dir is not None:
            write_files(rep.files, save_dir)


def rtl_coverage_report(cov: RtlCoverage, directory: Path) -> str:
    """Write lcov.info of the merged Verilator coverage in ``directory``; return the summary."""
    cov.write_lcov(directory / "lcov.info")
    return cov.report() + f"\nlcov tracefile: {directory / 'lcov.info'}"


def write_junit(result: RegressResult, path: Path) -> None:
    suite = ET.Element("testsuite", name=f"regress-{result.config}", tests=str(len(result.results)),
                       failures=str(sum(1 for r in result.results if r.mismatches)),
                       errors=str(sum(1 for r in result.results if r.error)),
                       time=f"{result.seconds:.3f}")
    props = ET.SubElement(suite, "properties")
    for k, v in (("seed", result.seed), ("targets", ",".join(result.targets)),
                 ("chunks", result.chunks),
                 ("functional_coverage", f"{result.coverage.percent():.1f}")):
        ET.SubElement(props, "property", name=k, value=str(v))
    for r in result.results:
        case = ET.SubElement(suite, "testcase", classname=f"regress.{result.config}",
                             name=r.name, time=f"{r.seconds:.4f}")
        if r.error:
            ET.SubElement(case, "error", message=r.error[:300]).text = r.error
        for m in r.mismatches:
            el = ET.SubElement(case, "failure", message=m.describe()[:300])
            el.text = m.describe() + ("\n" + result.reproducers[r.name]
                                      if r.name in result.reproducers else "")
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(suite).write(path, encoding="unicode", xml_declaration=True)


def summary(result: RegressResult) -> str:
    failed = result.failed
    lines = [f"regress {result.config}: {len(result.results) - len(failed)} passed, "
             f"{len(failed)} failed of {len(result.results)} programs on "
             f"{' vs '.join(result.targets)} (seed {result.seed}, {result.seconds:.1f} s)",
             result.coverage.report()]
    for r in failed[:10]:
        lines.append(f"FAIL {r.name}: " + (r.error or "; ".join(m.describe() for m in r.mismatches)))
        lines.append(f"  reproduce: vtabench regress --config {result.config} --seed "
                     f"{result.seed} --only {r.index} --targets {','.join(result.targets)}")
    return "\n".join(lines)


def coverage_json(result: RegressResult) -> str:
    return json.dumps({"config": result.config, "seed": result.seed,
                       "percent": round(result.coverage.percent(), 2),
                       "hits": dict(sorted(result.coverage.hits.items())),
                       "uncovered": result.coverage.uncovered()}, indent=1)
