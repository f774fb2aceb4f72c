"""`vtabench regress`: constrained-random differential regression across targets.

Program k of a run with seed S is generated from ``numpy.random.default_rng([S, k])``, so any one
program can be regenerated alone (``--seed S --only k``). fsim is the golden model; every other
selected target runs the same programs (in chunks, one worker process per core) and its DRAM
images are compared with fsim's. A failing program is saved as .s, .bin and its DRAM image, then
minimised to a short reproducer. Results go to a JUnit XML file and a one-screen summary.
"""

from __future__ import annotations

import json
import multiprocessing
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from vtabench.spec.config import Config, load_config
from vtabench.spec.isa.asm import disassemble
from vtabench.spec.isa.insn import Insn, encode_program
from vtabench.verify.builder import TestProgram
from vtabench.verify.random_program import random_program
from vtabench.verify.regress.coverage import FunctionalCoverage
from vtabench.verify.regress.diff import Mismatch, first_mismatch, run_on_target
from vtabench.verify.regress.shrink import Shrinker
from vtabench.spec.tokens import schedule

#: Programs per simulator process (the RTL batch); small enough to show progress.
CHUNK = 100


def generate(cfg: Config, seed: int, index: int) -> TestProgram:
    prog = random_program(cfg, np.random.default_rng([seed, index]))
    prog.name = f"rand-{seed}-{index}"
    return prog


@dataclass
class ProgramResult:
    index: int
    name: str
    seconds: float
    mismatches: list[Mismatch] = field(default_factory=list)
    error: str | None = None  # a target raised instead of producing an image


@dataclass
class RegressResult:
    config: str
    seed: int
    targets: list[str]
    results: list[ProgramResult]
    coverage: FunctionalCoverage
    seconds: float
    reproducers: dict[str, str] = field(default_factory=dict)

    @property
    def failed(self) -> list[ProgramResult]:
        return [r for r in self.results if r.mismatches or r.error]


def golden(cfg: Config, programs: Sequence[TestProgram],
           coverage: FunctionalCoverage) -> list[np.ndarray]:
    """fsim images, sampling functional coverage (static bins and ALU operand values)."""
    from vtabench.fsim import Fsim

    images = []
    for p in programs:
        coverage.sample_program(p.insns, schedule(p.insns).order)
        img = p.dram.copy()
        Fsim(cfg).run(p.insns, img, observe_alu=coverage.sample_alu)
        images.append(img)
    return images


def _run_chunk(config: str, seed: int, indices: list[int], targets: list[str],
               target_opts: dict[str, Any], coverage_dir: Path | None) -> list[dict[str, Any]]:
    """Worker: regenerate programs ``indices``, run them on fsim and ``targets``, compare."""
    cfg = load_config(config)
    if coverage_dir is not None and "rtl" in targets:
        target_opts = {**target_opts, "rtl": {**target_opts.get("rtl", {}),
                                              "coverage": coverage_dir / f"chunk{indices[0]}.dat"}}
    programs = [generate(cfg, seed, k) for k in indices]
    cov = FunctionalCoverage(cfg)
    t0 = time.monotonic()
    expected = golden(cfg, programs, cov)
    out: list[dict[str, Any]] = [{"index": k, "name": p.name, "mismatches": [], "error": None}
                                 for k, p in zip(indices, programs)]
    for target in targets:
        try:
            images, problems = run_on_target(cfg, target, programs, seed=seed + indices[0],
                                             target_opts=target_opts.get(target))
        except Exception as exc:  # noqa: BLE001 - reported per program, the run goes on
            for r in out:
                r["error"] = f"{target}: {type(exc).__name__}: {exc}"[:2000]
            continue
        for r, p, exp, got, problem in zip(out, programs, expected, images, problems):
            if problem:
                r["error"] = problem
            m = first_mismatch(cfg, target, p.insns, exp, got)
            if m is not None:
                r["mismatches"].append(m.__dict__)
    per = (time.monotonic() - t0) / max(1, len(programs))
    for r in out:
        r["seconds"] = per
    return [{"coverage": dict(cov.hits)}] + out


def save_failure(cfg: Config, prog: TestProgram, directory: Path) -> Path:
    """Write NAME.s, NAME.bin and NAME.dram.bin; returns the .s path."""
    directory.mkdir(parents=True, exist_ok=True)
    base = directory / prog.name
    base.with_suffix(".s").write_text(f"# {prog.name} (config {cfg.name})\n"
                                      + disassemble(cfg, prog.insns, numbered=True))
    base.with_suffix(".bin").write_bytes(encode_program(cfg, prog.insns))
    prog.dram.tofile(f"{base}.dram.bin")
    return base.with_suffix(".s")


def make_fails_batch(cfg: Config, dram: np.ndarray, target: str, seed: int,
                     target_opts: dict[str, Any] | None
                     ) -> Callable[[Sequence[list[Insn]]], list[bool]]:
    """A predicate for the shrinker: which candidate programs still differ from fsim."""
    from vtabench.fsim import Fsim

    def fails_batch(candidates: Sequence[list[Insn]]) -> list[bool]:
        progs = [TestProgram(f"cand{i}", list(c), dram.copy()) for i, c in enumerate(candidates)]
        expected = []
        for p in progs:
            img = p.dram.copy()
            Fsim(cfg).run(p.insns, img)
            expected.append(img)
        images, problems = run_on_target(cfg, target, progs, seed=seed, target_opts=target_opts)
        return [bool(problem) or bool((e != g).any())
                for e, g, problem in zip(expected, images, problems)]

    return fails_batch


def minimise(cfg: Config, prog: TestProgram, target: str, seed: int,
             target_opts: dict[str, Any] | None = None,
             log: Callable[[str], None] | None = None) -> TestProgram:
    shrinker = Shrinker(cfg, prog.dram, make_fails_batch(cfg, prog.dram, target, seed,
                                                         target_opts), log=log)
    small = shrinker.shrink(list(prog.insns))
    return TestProgram(f"{prog.name}-min", small, prog.dram.copy())


def regress(config: str, count: int, seed: int, targets: list[str], *, jobs: int = 2,
            only: list[int] | None = None, save_dir: Path | None = None, shrink: bool = True,
            target_opts: dict[str, dict[str, Any]] | None = None,
            coverage_dir: Path | None = None, max_reproducers: int = 3,
            progress: Callable[[str], None] = print) -> RegressResult:
    """Run the regression. ``coverage_dir``: collect Verilator line/toggle coverage of the rtl
    runs there (one coverage.dat per worker chunk; see :func:`rtl_coverage_report`)."""
    cfg = load_config(config)
    others = [t for t in targets if t != "fsim"]
    indices = only if only is not None else list(range(count))
    size = max(1, min(CHUNK, -(-len(indices) // max(1, jobs))))
    chunks = [indices[i:i + size] for i in range(0, len(indices), size)]
    coverage = FunctionalCoverage(cfg)
    results: list[ProgramResult] = []
    t0 = time.monotonic()
    progress(f"regress: config {cfg.name}, {len(indices)} programs, seed {seed}, targets "
             f"fsim (golden){''.join(', ' + t for t in others)}, {jobs} job(s)")
    # spawn, not fork: forking a process that runs threads (pytest-xdist's execnet, cocotb's
    # runner) can copy a held lock into the child and hang it.
    with ProcessPoolExecutor(max_workers=max(1, jobs),
                             mp_context=multiprocessing.get_context("spawn")) as pool:
        if coverage_dir is not None:
            coverage_dir.mkdir(parents=True, exist_ok=True)
            for old in coverage_dir.glob("chunk*.dat"):
                old.unlink()
        futures = [pool.submit(_run_chunk, cfg.name, seed, c, others, target_opts or {},
                               coverage_dir) for c in chunks]
        for fut in futures:
            cov, *rows = fut.result()
            coverage.merge(cov["coverage"])
            for r in rows:
                results.append(ProgramResult(r["index"], r["name"], r["seconds"],
                                             [Mismatch(**m) for m in r["mismatches"]],
                                             r["error"]))
            bad = sum(1 for r in results if r.mismatches or r.error)
            progress(f"  {len(results)}/{len(indices)} programs, {bad} failing, "
                     f"{time.monotonic() - t0:.0f} s")
    out = RegressResult(cfg.name, seed, ["fsim", *others], results, coverage,
                        time.monotonic() - t0)
    for r in out.failed:
        prog = generate(cfg, seed, r.index)
        if save_dir is not None:
            path = save_failure(cfg, prog, save_dir)
            progress(f"saved {r.name}: {path} (+ .bin, .dram.bin)")
        if shrink and (r.mismatches or r.error):
            target = r.mismatches[0].target if r.mismatches else r.error.split(":")[0]
            small = minimise(cfg, prog, target, seed, (target_opts or {}).get(target))
            text = disassemble(cfg, small.insns, numbered=True)
            out.reproducers[r.name] = text
            progress(f"minimised {r.name} on {target}: {len(prog.insns)} -> "
                     f"{len(small.insns)} instructions\n{text}")
            if save_dir is not None:
                save_failure(cfg, small, save_dir)
        if len(out.reproducers) >= max_reproducers:
            break
    return out


def rtl_coverage_report(coverage_dir: Path) -> str:
    """Merge the chunks' coverage.dat files; write lcov.info beside them; return the summary."""
    from vtabench.verify.regress.rtl_coverage import RtlCoverage

    cov = RtlCoverage.from_files(sorted(coverage_dir.glob("chunk*.dat")))
    cov.write_lcov(coverage_dir / "lcov.info")
    return cov.report() + f"\nlcov tracefile: {coverage_dir / 'lcov.info'}"


def write_junit(result: RegressResult, path: Path) -> None:
    suite = ET.Element("testsuite", name=f"regress-{result.config}", tests=str(len(result.results)),
                       failures=str(sum(1 for r in result.results if r.mismatches)),
                       errors=str(sum(1 for r in result.results if r.error)),
                       time=f"{result.seconds:.3f}")
    props = ET.SubElement(suite, "properties")
    for k, v in (("seed", result.seed), ("targets", ",".join(result.targets)),
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
