"""Mutation testing: how many realistic bugs the regression catches (`vtabench mutate`).

A catalogue (``verify/mutants/rtl.json`` for the RTL core, ``opencl.json`` for the OpenCL
kernel) lists mutants: one exact text replacement each (``old`` occurs exactly once in ``file``)
with the bug it models. Each mutant is applied alone to a copy of the sources (RTL: a build of its
own from a copy of hdl/, :class:`~vtabench.rtl.verilator.Mutation`; OpenCL: the item
variant built from the mutated kernel or ISA header text), and the regression's programs run on
it (program k of seed S, as ``vtabench regress`` runs them) until one fails: the mutant is **killed**, or it **survives** all
of them. A kill counts only when the failing program passes on the original sources (it is run
again there): a program that fails without the mutant is a problem of the bench, and the mutant
is **broken**. A survivor the catalogue argues equivalent (no program can tell it from the
original) is reported **equivalent** with the argument; any other survivor is a gap in the
regression.

The RTL core bench has no shell, so mutants of the register block and interrupt
(``killer: platform``) are outside the regression's reach: their entry names the platform tests
that catch them, and ``--platform`` runs those tests against a copy of the package with the
mutant applied (builds in a folder of their own). A mutant that does not build is **broken**
(a catalogue error, not a kill).

Verdicts are written to a JSON file after every mutant, so a long campaign can be stopped and
resumed (``resume``: mutants already judged with the same settings are not run again).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from vtabench.spec.config import load_config
from vtabench.sources import HDL_DIR, OPENCL_DIR
from vtabench.workdirs import checkout_root

CATALOGUE_DIR = Path(__file__).resolve().parent / "mutants"
#: Catalogue kind -> the folder its ``file`` entries are relative to, the regression target and
#: its options for the original sources (OpenCL: the item variant, opencl/vta.cl).
KINDS: dict[str, tuple[Path, str, dict[str, Any]]] = {
    "rtl": (HDL_DIR, "rtl", {}),
    "opencl": (OPENCL_DIR, "opencl", {"variant": "item"})}
KILLERS = ("regress", "platform")
#: Programs per task while hunting for the first failure: the first tasks are small (most
#: mutants die on one of the first programs), then they double up to HUNT_CHUNK.
FIRST_CHUNK = 4
HUNT_CHUNK = 64


class CatalogueError(ValueError):
    """A catalogue file is malformed, or a mutant does not apply to its source."""


@dataclass(frozen=True)
class Mutant:
    """One catalogue entry (see the module docstring)."""

    id: str
    area: str
    file: str
    old: str
    new: str
    bug: str
    killer: str = "regress"
    tests: tuple[str, ...] = ()
    equivalent: str | None = None

    def source(self, kind: str) -> Path:
        return KINDS[kind][0] / self.file

    def apply(self, text: str) -> str:
        """``text`` with the mutation; CatalogueError unless ``old`` occurs exactly once."""
        n = text.count(self.old)
        if n != 1:
            raise CatalogueError(f"mutant {self.id}: its old text occurs {n} times in "
                                 f"{self.file} (must be exactly once)")
        return text.replace(self.old, self.new)


def load_catalogue(kind: str, path: Path | None = None) -> list[Mutant]:
    """The mutants of catalogue ``kind`` ("rtl" or "opencl"), checked for shape (not for
    applying: :func:`check_applies`)."""
    if kind not in KINDS:
        raise CatalogueError(f"unknown catalogue {kind!r}; known: {', '.join(KINDS)}")
    path = path or CATALOGUE_DIR / f"{kind}.json"
    try:
        entries = json.loads(path.read_text())["mutants"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CatalogueError(f"{path}: not a mutant catalogue ({exc})") from None
    mutants, seen = [], set()
    for k, e in enumerate(entries):
        where = f"{path.name} entry {k} ({e.get('id', '?') if isinstance(e, dict) else '?'})"
        try:
            m = Mutant(**{**e, "tests": tuple(e.get("tests", ()))})
        except TypeError as exc:
            raise CatalogueError(f"{where}: {exc}") from None
        if m.id in seen:
            raise CatalogueError(f"{where}: duplicate id")
        if m.killer not in KILLERS:
            raise CatalogueError(f"{where}: killer {m.killer!r} is not one of {KILLERS}")
        if m.killer == "platform" and not m.tests:
            raise CatalogueError(f"{where}: a platform mutant names the tests that kill it")
        if not (m.old and m.bug and m.old != m.new):
            raise CatalogueError(f"{where}: needs old != new and a bug description")
        seen.add(m.id)
        mutants.append(m)
    return mutants


def check_applies(kind: str, mutants: list[Mutant]) -> list[str]:
    """One line per mutant whose old text does not occur exactly once in its source."""
    problems = []
    for m in mutants:
        try:
            m.apply(m.source(kind).read_text())
        except (CatalogueError, OSError) as exc:
            problems.append(str(exc))
    return problems


@dataclass
class Verdict:
    """What happened to one mutant. ``status``: killed, survived, equivalent (survived, argued
    equivalent), broken (did not build), not run (a platform mutant without ``--platform``)."""

    id: str
    status: str
    detail: str = ""
    programs: int = 0  # programs run until the verdict
    build_s: float = 0.0
    run_s: float = 0.0
    settings: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Settings:
    """The regression a mutant faces: ``count`` programs of ``seed`` on ``config``."""

    config: str = "default"
    count: int = 1000
    seed: int = 1
    jobs: int = 2

    def key(self, mutant: Mutant) -> dict[str, Any]:
        """What a stored verdict must match to be reused."""
        return {"config": self.config, "count": self.count, "seed": self.seed,
                "old": mutant.old, "new": mutant.new}


def judge(kind: str, mutant: Mutant, settings: Settings, *, platform: bool = False,
          keep_build: bool = False, progress: Callable[[str], None] = print) -> Verdict:
    """Apply ``mutant`` alone, rebuild, run the regression (or its platform tests); the verdict.
    An RTL mutant's build (about 150 MB) is removed afterwards unless ``keep_build``."""
    if mutant.killer == "platform":
        if not platform:
            return Verdict(mutant.id, "not run", f"killed by {', '.join(mutant.tests)} "
                           f"(--platform runs them)", settings=settings.key(mutant))
        return _judge_platform(kind, mutant, settings)
    text = mutant.apply(mutant.source(kind).read_text())
    t0 = time.monotonic()
    try:
        opts = _prepare(kind, mutant, text, settings)
    except Exception as exc:  # noqa: BLE001 - a build failure of any kind: the mutant is broken
        return Verdict(mutant.id, "broken", f"{type(exc).__name__}: {str(exc)[-500:]}",
                       build_s=time.monotonic() - t0, settings=settings.key(mutant))
    build_s = time.monotonic() - t0
    t1 = time.monotonic()
    _, target, original = KINDS[kind]
    try:
        programs, failure = _hunt(target, opts, settings, progress)
        if failure is not None and _fails(target, original, settings, failure[0]):
            return Verdict(mutant.id, "broken", f"program(s) {failure[0][0]}.. fail on the "
                           f"original sources too: {failure[1]}", programs, round(build_s, 1),
                           round(time.monotonic() - t1, 1), settings.key(mutant))
    finally:
        if kind == "rtl" and not keep_build:
            from vtabench.rtl.verilator import build_dir_for

            shutil.rmtree(build_dir_for(load_config(settings.config),
                                        mutation=opts["mutation"]), ignore_errors=True)
    if failure is not None:
        status, detail = "killed", failure[1]
    elif mutant.equivalent:
        status, detail = "equivalent", mutant.equivalent
    else:
        status, detail = "survived", f"passed all {programs} programs"
    return Verdict(mutant.id, status, detail, programs, round(build_s, 1),
                   round(time.monotonic() - t1, 1), settings.key(mutant))


def _prepare(kind: str, mutant: Mutant, text: str, settings: Settings) -> dict[str, Any]:
    """Build the mutant (raising when it does not build); the target options that run it."""
    cfg = load_config(settings.config)
    if kind == "rtl":
        from vtabench.rtl.verilator import Mutation, build

        mutation = Mutation(mutant.file, mutant.old, mutant.new, owner=str(os.getpid()))
        build(cfg, mutation=mutation)
        return {"mutation": mutation}
    from vtabench.drivers.opencl.device import OpenCLDevice
    from vtabench.drivers.opencl.kernel import ISA_HEADER, KERNEL_PATH

    # the device option that replaces the file: the kernel's source, or the ISA header it includes
    option = {KERNEL_PATH.name: "source", ISA_HEADER.name: "isa_header"}.get(mutant.file)
    if option is None:
        raise CatalogueError(f"mutant {mutant.id}: {mutant.file} is neither {KERNEL_PATH.name} "
                             f"nor {ISA_HEADER.name}")
    opts = {**KINDS[kind][2], option: text}
    with OpenCLDevice(cfg, 1 << 20, **opts):
        pass
    return opts


def _fails(target: str, opts: dict[str, Any], settings: Settings, indices: list[int]) -> bool:
    """Whether one of regression programs ``indices`` fails on ``target`` run with ``opts``."""
    from vtabench.verify.regress.campaign import run_chunk

    part = run_chunk(load_config(settings.config), settings.seed, indices, [target],
                     {target: opts})
    return any(r.mismatches or r.error for r in part.results)


def _hunt(target: str, opts: dict[str, Any], settings: Settings,
          progress: Callable[[str], None]) -> tuple[int, tuple[list[int], str] | None]:
    """Run the regression's programs on ``target`` with ``opts`` in chunks, in parallel, until
    one fails; returns (programs run, the first failure found or None). A failure is the
    failing program's index and why; a worker that died running a chunk (a kernel that
    corrupted its process, say) fails the whole chunk."""
    from vtabench.verify.regress.campaign import local_pool, run_chunk

    cfg = load_config(settings.config)
    done = 0
    with local_pool(settings.jobs) as pool:
        chunk_of: dict[Future[Any], list[int]] = {
            pool.submit(run_chunk, cfg, settings.seed, c, [target], {target: opts}): c
            for c in hunt_chunks(settings.count)}
        pending = set(chunk_of)
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in sorted(finished, key=lambda f: chunk_of[f][0]):
                try:
                    part = fut.result()
                except Exception as exc:  # noqa: BLE001 - the worker or the target crashed
                    failure = (chunk_of[fut], f"programs {chunk_of[fut][0]}..{chunk_of[fut][-1]}"
                               f": the run crashed ({type(exc).__name__}: {exc})"[:600])
                else:
                    done += len(part.results)
                    failure = first_failure(part.results)
                    if failure is None:
                        continue
                for other in pending:
                    other.cancel()
                return done, failure
            progress(f"    {done}/{settings.count} programs pass")
    return done, None


def first_failure(results: list[Any]) -> tuple[list[int], str] | None:
    """The failure a chunk's program results (campaign.ProgramVerdict) show, if any: the first
    failing program and why; or, when every failing program carries the same error (the target
    failed the whole chunk: a simulator stopped by an assertion gives fewer results than
    programs), all of them, so that the kill counts only if the original passes them all."""
    bad = [r for r in results if r.mismatches or r.error]
    if not bad:
        return None
    first = min(bad, key=lambda r: r.index)
    if len(bad) > 1 and not first.mismatches and all(r.error == first.error for r in bad):
        indices = sorted(r.index for r in bad)
        return indices, f"programs {indices[0]}..{indices[-1]}: {first.error}"[:600]
    why = first.mismatches[0].describe() if first.mismatches else first.error
    return [first.index], f"{first.name}: {why}"[:600]


def hunt_chunks(count: int) -> list[list[int]]:
    """Program indices 0 .. count - 1 in tasks of FIRST_CHUNK, twice that, ... up to HUNT_CHUNK
    programs."""
    chunks, start, size = [], 0, FIRST_CHUNK
    while start < count:
        chunks.append(list(range(start, min(count, start + size))))
        start += size
        size = min(2 * size, HUNT_CHUNK)
    return chunks


def _judge_platform(kind: str, mutant: Mutant, settings: Settings) -> Verdict:
    """Run the mutant's platform tests against a mutated copy of hdl/, which
    ``VTABENCH_HDL_DIR`` hands to the tests and the simulators they start (vtabench.sources);
    they build in a folder of their own."""
    root = checkout_root()
    if root is None:
        return Verdict(mutant.id, "not run", "the platform tests live in a source checkout",
                       settings=settings.key(mutant))
    if kind != "rtl":
        return Verdict(mutant.id, "broken", "platform tests judge RTL mutants only",
                       settings=settings.key(mutant))
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"vtabench-mutant-{mutant.id}-") as tmp:
        copy = Path(tmp) / "hdl"
        shutil.copytree(HDL_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
        target = copy / mutant.file
        target.write_text(mutant.apply(target.read_text()))
        env = {**os.environ, "VTABENCH_HDL_DIR": str(copy),
               "VTABENCH_BUILD_DIR": str(Path(tmp) / "build")}
        where = subprocess.run([sys.executable, "-c",
                                "from vtabench.sources import HDL_DIR; print(HDL_DIR)"],
                               cwd=tmp, env=env, capture_output=True, text=True, check=False)
        if where.stdout.strip() != str(copy.resolve()):
            return Verdict(mutant.id, "broken", f"the tests would not read the mutated copy "
                           f"({where.stdout.strip() or where.stderr.strip()[-300:]})",
                           settings=settings.key(mutant))
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p",
                               "no:cacheprovider", "--rootdir", str(root),
                               *(str(root / t) for t in mutant.tests)], cwd=tmp, env=env,
                              capture_output=True, text=True, check=False)
    lines = (proc.stdout + proc.stderr).strip().splitlines() or ["(no output)"]
    summary = lines[-1]
    # pytest exits 1 for failed tests and for errors (a fixture that broke): only a failure of
    # the tests themselves is a kill
    if proc.returncode == 0:
        status = "survived"
    elif proc.returncode == 1 and " failed" in summary and " error" not in summary:
        status = "killed"
    else:
        status, summary = "broken", " | ".join(lines[-12:])
    return Verdict(mutant.id, status, f"{' '.join(mutant.tests)}: {summary}"[:2000],
                   run_s=round(time.monotonic() - t0, 1), settings=settings.key(mutant))


def campaign(kind: str, mutants: list[Mutant], settings: Settings, results: Path, *,
             resume: bool = False, platform: bool = False, keep_builds: bool = False,
             progress: Callable[[str], None] = print) -> list[Verdict]:
    """Judge every mutant in turn, writing all verdicts to ``results`` after each one; with
    ``resume``, a verdict already there for the same settings is kept (except broken and not
    run, which are judged again)."""
    old: dict[str, Verdict] = {}
    if resume and results.exists():
        old = {v.id: v for v in load_verdicts(results)}
    verdicts: list[Verdict] = []
    for n, m in enumerate(mutants, 1):
        prev = old.get(m.id)
        if prev is not None and prev.settings == settings.key(m) and \
                prev.status not in ("not run", "broken"):
            verdicts.append(prev)
            continue
        progress(f"[{n}/{len(mutants)}] {m.id} ({m.area}): {m.bug}")
        v = judge(kind, m, settings, platform=platform, keep_build=keep_builds,
                  progress=progress)
        progress(f"  {v.status}: {v.detail}")
        verdicts.append(v)
        results.parent.mkdir(parents=True, exist_ok=True)
        results.write_text(json.dumps({"kind": kind, **asdict(settings),
                                       "verdicts": [asdict(x) for x in verdicts]}, indent=1))
    return verdicts


def score(mutants: list[Mutant], verdicts: list[Verdict]) -> str:
    """The campaign's summary: the regression's score over the mutants it can reach (regress
    killer, not equivalent) and over the whole catalogue's non-equivalent mutants (a platform
    mutant counts as not killed by regress), then every non-kill with its reason."""
    by_id = {v.id: v for v in verdicts}
    reach = [m for m in mutants if m.killer == "regress" and m.id in by_id]
    judged = [m for m in reach if by_id[m.id].status in ("killed", "survived")]
    killed = sum(by_id[m.id].status == "killed" for m in judged)
    scored = [m for m in mutants if not m.equivalent]  # the score: equivalents left out
    lines = [f"regress kills {killed} of {len(judged)} non-equivalent mutants it can reach "
             f"({100.0 * killed / max(1, len(judged)):.1f}%); "
             f"{killed} of the whole catalogue's {len(scored)} non-equivalent mutants "
             f"({100.0 * killed / max(1, len(scored)):.1f}%), "
             f"{len(mutants) - len(verdicts)} not judged yet"]
    for m in mutants:
        v = by_id.get(m.id)
        if v is not None and v.status != "killed":
            lines.append(f"  {v.status:<10} {m.id} ({m.area}): {v.detail}")
        elif v is not None and m.equivalent:
            lines.append(f"  killed     {m.id}: argued equivalent, but {v.detail}")
    platform = [by_id[m.id] for m in mutants if m.killer == "platform" and m.id in by_id]
    if platform:
        lines.append(f"platform mutants: {sum(v.status == 'killed' for v in platform)} of "
                     f"{len(platform)} killed by their platform tests")
    return "\n".join(lines)


def load_verdicts(results: Path) -> list[Verdict]:
    """The verdicts a campaign wrote to ``results``; CatalogueError when it is not such a file."""
    try:
        return [Verdict(**v) for v in json.loads(results.read_text())["verdicts"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CatalogueError(f"{results}: not a mutation results file ({exc})") from None


def reclassify(mutants: list[Mutant], verdicts: list[Verdict]) -> list[Verdict]:
    """``verdicts`` as :func:`judge` would give them with the catalogue as it is now: a survivor
    whose entry has since been argued equivalent is equivalent (with the argument), an
    equivalent one whose argument was withdrawn survived."""
    by_id = {m.id: m for m in mutants}
    out = []
    for v in verdicts:
        m = by_id.get(v.id)
        if m is not None and v.status == "survived" and m.equivalent:
            v = replace(v, status="equivalent", detail=m.equivalent)
        elif m is not None and v.status == "equivalent" and not m.equivalent:
            v = replace(v, status="survived", detail=f"passed all {v.programs} programs")
        out.append(v)
    return out


def markdown_table(mutants: list[Mutant], verdicts: list[Verdict]) -> str:
    """One row per catalogued mutant (docs/regress.md, "Results"): its id, area, verdict,
    programs run, and the program that killed it with the first thing it saw wrong, or the
    argument (equivalent), or why it was not judged. A verdict judged with another text of the
    mutant than the catalogue's holds no longer and shows as not judged."""
    by_id = {v.id: v for v in verdicts}
    rows = ["| mutant | area | verdict | programs | killed by / why |", "|---|---|---|---|---|"]
    for m in mutants:
        v = by_id.get(m.id)
        if v is None or (v.settings and (v.settings.get("old"), v.settings.get("new")) !=
                         (m.old, m.new)):
            status, programs, why = "not judged yet", "", (
                f"platform: {', '.join(m.tests)}" if m.killer == "platform" else "")
        else:
            status, programs, why = v.status, str(v.programs or ""), v.detail
        # a table cell holds no pipe and no newline: the first line, shortened unless it is
        # the argument of an equivalent mutant
        why = why.splitlines()[0] if why else ""
        if status != "equivalent" and len(why) > 220:
            why = why[:217] + "..."
        why = why.replace("|", "\\|")
        rows.append(f"| `{m.id}` | {m.area} | {status} | {programs} | {why} |")
    return "\n".join(rows)


@dataclass(frozen=True)
class FormalVerdict:
    """A mutant against the proofs of its unit (``vtabench mutate --formal``). ``status``:
    killed (an assert fails from reset: ``detail`` names the job, the property, the step and
    the counterexample trace), survived (every assert of every job of the unit still proven),
    unproven (no counterexample, but a job stopped at the time limit or its induction did not
    close: neither a kill nor a proof)."""

    id: str
    unit: str
    status: str
    detail: str
    seconds: float


def formal_mutants(mutants: list[Mutant]) -> list[Mutant]:
    """The mutants of files that are units with proofs (vtabench formal's jobs)."""
    from vtabench.verify import formal

    units = {j.unit for j in formal.JOBS}
    return [m for m in mutants if Path(m.file).stem in units]


def judge_formal(mutant: Mutant, out_dir: Path, limit_s: float | None = None,
                 say: Callable[[str], None] | None = None) -> FormalVerdict:
    """Apply ``mutant`` to a copy of hdl/ and run its unit's proofs (the asserts only, quick
    jobs first) until one fails; each job stops after ``limit_s`` seconds. A k-induction that
    does not close is followed by bmc to the job's cover depth, which reaches every state of
    the unit: a kill is always a counterexample from reset."""
    from vtabench.rtl.verilator import Mutation
    from vtabench.verify import formal

    unit = Path(mutant.file).stem
    jobs = sorted(formal.select(unit), key=lambda j: not j.quick)
    held: list[str] = []
    open_: list[str] = []
    seconds = 0.0
    with tempfile.TemporaryDirectory(prefix="vtabench-formal-mut-") as tmp:
        hdl = Mutation(mutant.file, mutant.old, mutant.new).apply(Path(tmp) / "hdl")
        for job in jobs:
            r = formal.run_job(job, out_dir, hdl_dir=hdl, tag=mutant.id, say=say,
                               tasks=("check",), limit_s=limit_s)
            seconds += r.seconds
            if (job.mode == "prove" and not r.timed_out
                    and any(p.status == "not closed" for p in r.properties)
                    and not any(p.status == "failed" for p in r.properties)):
                # induction broke from a state the base case did not reach: bmc to the cover
                # depth (every state of the unit) looks for the trace from reset
                job = replace(job, mode="bmc", depth=job.cover_depth)
                r = formal.run_job(job, out_dir, hdl_dir=hdl, tag=mutant.id, say=say,
                                   tasks=("check",), limit_s=limit_s)
                seconds += r.seconds
            if r.timed_out:
                open_.append(f"{job.name} stopped after {limit_s:.0f} s")
                continue
            failed = [p for p in r.properties if p.status == "failed"]
            if failed:
                p = failed[0]
                at = f" at step {p.step}" if p.step is not None else ""
                return FormalVerdict(mutant.id, unit, "killed",
                                     f"{job.name}: {p.name} failed{at} "
                                     f"({p.trace.name if p.trace else 'no trace'})", seconds)
            bad = [f"{job.name}: {p.name} {p.status}" for p in r.properties
                   if not p.ok and p.status != "not checked"]
            if bad:
                open_.extend(bad)
            else:
                held.append(job.name)
    if open_:
        return FormalVerdict(mutant.id, unit, "unproven", "; ".join(open_), seconds)
    return FormalVerdict(mutant.id, unit, "survived", f"every assert of {', '.join(held)} "
                         "still proven", seconds)


def formal_table(verdicts: list[FormalVerdict]) -> str:
    """One Markdown row per mutant: id, unit, verdict, the proof that killed it, time."""
    rows = ["| mutant | unit | formal | killed by / why | time |", "|---|---|---|---|---|"]
    for v in verdicts:
        detail = v.detail.replace("|", "\\|")
        rows.append(f"| `{v.id}` | {v.unit} | {v.status} | {detail} | {v.seconds:.1f} s |")
    return "\n".join(rows)
