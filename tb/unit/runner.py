"""The pytest side of the module unit benches (tb/unit/test_<module>.py), shared by all of them.

Each bench file holds its cocotb tests and its own pytest runner function ``test_<module>``,
parametrized over the configurations (:func:`configs`) and the module's parameters, which calls
:func:`run_bench`: the module is built with the cocotb Python runner on Verilator, once per
(configuration, parameter set), into build/units/<bench>-<config>-<parameters>/ (the runner
skips an up-to-date build), and the bench's cocotb tests run there. Every unit build has the
RTL's assertions on (``--assert``). UNIT_COVERAGE=1 in the environment (`make unit` sets it; the
platform coverage asks for it) builds with Verilator line, branch and toggle coverage instead
(``--coverage-line --coverage-toggle``, a build folder of its own, ``-cov``): each run then
reports the coverage of the module's own source file, with its uncovered lines, so that gaps show
(``coverage.txt`` beside the build). `make test` builds without it: coverage is read, never
checked, there, and it made the builds of vta_core and vta_shell about twice as long.

The seed is cocotb's random seed (printed; set COCOTB_RANDOM_SEED to repeat a run). WAVES=1 in
the environment builds with tracing (a build folder of its own) and writes the waves (FST, or VCD
without the lz4 headers) and a GTKWave save file of the top's ports, and prints their paths.
The configuration reaches the bench as UNIT_CONFIG, the parameters as UNIT_PARAMS (JSON).
"""

from __future__ import annotations

import fcntl
import json
import os
import random
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from vtabench.hwgen.constants import sv_package_path
from vtabench.hwgen.contracts import SV_PACKAGES
from vtabench.rtl.coverage import RtlCoverage
from vtabench.rtl.filelist import unit_files
from vtabench.rtl.verilator import HDL_DIR, _runner, setup_verilator_env, waves_format
from vtabench.workdirs import build_root

#: The configurations every bench runs under; the first is the one `make test` runs (the others
#: are marked slow: each is a build of its own).
CONFIG_NAMES = ("default", "edge8", "cloud32")
#: Toggle coverage of signals up to this width (Verilator's default, 256, leaves out every bus
#: beat and buffer element of the configurations).
COVERAGE_MAX_WIDTH = 8192
#: Coverage kinds reported per module (Verilator's page names without ``v_``).
COVERAGE_KINDS = ("line", "branch", "toggle")
#: g++ optimisation of the Verilated model (verilated.mk's default is -Os). Measured without
#: coverage on this 2-core machine (CPU seconds, default configuration, build + run): vta_shell
#: 32.1 + 24.7 at -Os, 28.7 + 21.3 at -O1; vta_compute 25.2 + 3.4, 22.5 + 3.4. At -O0 the
#: shell's run had not ended after 286 s of wall time (101 s at -Os, the same load).
CXX_OPT = "-O1"


def configs(all_fast: bool = False) -> list[object]:
    """The configurations as pytest parameters: default in `make test`, edge8 and cloud32 marked
    slow (``all_fast``: none slow, for a module whose build is quick and whose bench is short)."""
    return [pytest.param(name, marks=() if all_fast or name == "default" else pytest.mark.slow)
            for name in CONFIG_NAMES]


def unit_sources(*modules: str, hdl: Path = HDL_DIR) -> list[Path]:
    """The files ``modules`` compile as tops of their own (vtabench.rtl.filelist.unit_files, the
    IP's file lists in ``hdl``), each once, without the packages every build puts first."""
    return [f for f in dict.fromkeys(f for m in modules for f in unit_files(m, hdl))
            if f.name not in {p.name for p in SV_PACKAGES}]


def bench_seed() -> int:
    """COCOTB_RANDOM_SEED when set, else a fresh one; printed so that a failure can be repeated."""
    env_seed = os.environ.get("COCOTB_RANDOM_SEED")
    seed = int(env_seed) if env_seed else random.SystemRandom().randrange(1, 2**31)
    print(f"COCOTB_RANDOM_SEED={seed}")
    return seed


@dataclass(frozen=True)
class UnitRun:
    """A passing run; the coverage fields are empty unless it was a coverage build."""

    log: str                     # the simulator's output
    coverage: dict[str, tuple[int, int]]  # kind -> (points hit, points) of the module's file
    uncovered: list[int]         # lines of the module's file with a line or branch point missed
    untoggled: list[str]         # its toggle points never hit (signal and bit)
    waves: Path | None
    build_dir: Path              # a coverage build's coverage.dat: every point of it


def _tag(params: Mapping[str, int]) -> str:
    return "-".join(f"{k}{v}" for k, v in sorted(params.items()))


def _module_coverage(dat: Path, source: str
                     ) -> tuple[dict[str, tuple[int, int]], list[int], list[str]]:
    # only the module's own points are parsed: a build of vta_core or vta_shell writes 30-60 MB
    # of points of every module (13 s to parse whole, 0.4-2.5 s for the module's, measured)
    own = dat.with_name(f"{Path(source).stem}.cov")
    key = f"/{source}\x01".encode()
    own.write_bytes(b"\n".join(ln for ln in dat.read_bytes().split(b"\n") if key in ln))
    cov = RtlCoverage.from_files([own])
    per: dict[str, list[int]] = {k: [0, 0] for k in COVERAGE_KINDS}
    missed = set()
    untoggled = []
    for point, hits in zip(cov.table, cov.hits.tolist()):
        if Path(point.file).name != source or point.kind not in per:
            continue
        per[point.kind][1] += 1
        per[point.kind][0] += hits > 0
        if not hits and point.kind == "toggle":
            untoggled.append(point.comment)
        elif not hits:
            missed.add(point.line)
    return {k: (h, t) for k, (h, t) in per.items()}, sorted(missed), sorted(set(untoggled))


def coverage_line(top: str, run: UnitRun, limit: int = 12) -> str:
    """One line: the module's coverage per kind, its uncovered lines and (the first ``limit``)
    toggle points never hit."""
    parts = [f"{k} {h}/{t} ({100.0 * h / max(1, t):.1f}%)" for k, (h, t) in run.coverage.items()]
    gaps = f"; uncovered lines {run.uncovered}" if run.uncovered else ""
    if run.untoggled:
        more = f" (+{len(run.untoggled) - limit})" if len(run.untoggled) > limit else ""
        gaps += f"; untoggled {' '.join(run.untoggled[:limit])}{more}"
    return f"{top}.sv coverage: " + ", ".join(parts) + gaps


def _gtkw(waves: Path, top: str) -> Path:
    """A GTKWave save file showing the top's own signals (its ports and registers, not those of
    its instances); Verilator names its scope ``<top>`` in VCD, ``TOP.<top>`` in FST."""
    import pywellen

    w = pywellen.Waveform(str(waves), multi_threaded=False)
    lines = ["[*] GTKWave save file written by vtabench.tb.unit.runner",
             f'[dumpfile] "{waves.resolve()}"', "[timestart] 0", "[sst_expanded] 1",
             "[signals_width] 300"]
    for v in w.all_vars():
        scope = v.full_name.split(".")[:-1]
        if scope in ([top], ["TOP", top]):
            width = int(v.bitwidth)
            name = v.full_name
            lines += ["@28", name] if width == 1 else ["@22", f"{name}[{width - 1}:0]"]
    out = waves.with_suffix(".gtkw")
    out.write_text("\n".join(lines) + "\n")
    return out


def run_bench(bench: str, top: str, files: list[str | Path], *, config: str = "default",
              params: Mapping[str, int] | None = None, seed: int | None = None,
              testcase: str | None = None, hdl: Path = HDL_DIR, expect_fail: bool = False,
              waves: bool | None = None, bench_module: str | None = None,
              dut: str | None = None, coverage: bool | None = None) -> UnitRun:
    """Build ``top`` from ``files`` (names in ``hdl``: a mutated copy builds in a folder of its
    own; absolute paths: a bench's own top in tb/unit/) with ``params`` against ``config``'s
    package, and run the cocotb tests of tb/unit/test_<bench>.py (``bench_module``: tb/unit/test_<bench_module>.py instead;
    ``testcase``: one of them). Runs that share a build (pytest-xdist workers) take turns. A
    failing test or assertion fails this call with the failing tests and the assertion
    messages, unless ``expect_fail`` (then a passing run fails it). ``waves``: default from
    WAVES=1 in the environment; ``coverage``: from UNIT_COVERAGE=1. ``dut``: the module whose
    coverage is reported, when ``top`` is a bench's wrapper around it."""
    setup_verilator_env()
    params = dict(params or {})
    waves = os.environ.get("WAVES") == "1" if waves is None else waves
    coverage = os.environ.get("UNIT_COVERAGE") == "1" if coverage is None else coverage
    name = f"{bench}-{config}" + (f"-{_tag(params)}" if params else "")
    suffix = (("-cov" if coverage else "") + ("-waves" if waves else "")
              + (f"-{hdl.parent.name}" if hdl != HDL_DIR else ""))
    bdir = build_root() / "units" / (name + suffix)
    bdir.mkdir(parents=True, exist_ok=True)
    with open(bdir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _build_and_run(bdir, name, bench_module or bench, top, files, config, params,
                              seed, testcase, hdl, expect_fail, waves, coverage, dut or top)


def _build_and_run(bdir: Path, name: str, module: str, top: str, files: list[str | Path],
                   config: str,
                   params: dict[str, int], seed: int | None, testcase: str | None, hdl: Path,
                   expect_fail: bool, waves: bool, coverage: bool, dut: str) -> UnitRun:
    fst = waves and waves_format() == "fst"
    vlt = bdir / "public.vlt"  # only the top's signals are public (see vtabench.rtl.verilator)
    text = f'`verilator_config\npublic_flat_rw -module "{top}" -var "*"\n'
    if not vlt.exists() or vlt.read_text() != text:
        vlt.write_text(text)
    # hdl / an absolute path is that path
    sources = [sv_package_path(config), *SV_PACKAGES, *(hdl / f for f in files), vlt]
    runner = _runner("top")
    runner.build(sources=[str(s) for s in sources], hdl_toplevel=top, parameters=params,
                 build_dir=str(bdir), waves=waves, always=False,
                 build_args=["-Wno-fatal", "-O2", "--assert", f"+incdir+{hdl}",
                             "-CFLAGS", CXX_OPT,
                             *(["--coverage-line", "--coverage-toggle", "--coverage-max-width",
                                str(COVERAGE_MAX_WIDTH)] if coverage else []),
                             *(["--trace-fst"] if fst else [])])
    results, log, dat = bdir / "results.xml", bdir / "sim.log", bdir / "coverage.dat"
    for stale in (results, dat):  # a crashed run must not pass on the last run's files
        stale.unlink(missing_ok=True)
    env = {"UNIT_PARAMS": json.dumps(params), "UNIT_CONFIG": config}
    try:
        runner.test(test_module=f"vtabench.tb.unit.test_{module}", hdl_toplevel=top,
                    hdl_toplevel_lang="verilog", build_dir=str(bdir), test_dir=str(bdir),
                    results_xml=str(results), extra_env=env, seed=seed, log_file=str(log),
                    testcase=testcase, waves=waves)
    except (RuntimeError, SystemExit):  # a failing test or an assertion that stopped the run
        pass
    text = log.read_text(errors="replace") if log.exists() else ""
    fired = [ln for ln in text.splitlines() if "Assertion failed" in ln or "%Error" in ln]
    cases = list(ET.parse(results).getroot().iter("testcase")) if results.exists() else []
    fails = [tc.get("name") for tc in cases
             if tc.find("failure") is not None or tc.find("error") is not None]
    if expect_fail:
        assert fails or not cases, f"{name}: test_{module} passed but was expected to fail"
        return UnitRun(text, {}, [], [], None, bdir)
    assert results.exists(), f"{name}: the bench wrote no {results} (seed {seed})"
    assert cases, f"{name}: no cocotb test ran (see {results})"
    assert not fails and not fired, (f"{name}: failing tests {fails} (see {log}; "
                                     f"COCOTB_RANDOM_SEED={seed})"
                                     + "".join(f"\n  {ln}" for ln in fired[:10]))
    wave_file = None
    if waves:
        dump = bdir / ("dump.fst" if fst else "dump.vcd")
        wave_file = bdir / f"{name}{dump.suffix}"
        shutil.move(dump, wave_file)
    if not coverage:
        run = UnitRun(text, {}, [], [], wave_file, bdir)
    else:
        assert dat.exists(), f"{name}: the simulator wrote no {dat}"
        run = UnitRun(text, *_module_coverage(dat, f"{dut}.sv"), wave_file, bdir)
        summary = coverage_line(dut, run)
        (bdir / "coverage.txt").write_text(summary + "\n")
        print(f"{name}: {summary}")
    if wave_file is not None:
        print(f"waves: {wave_file}\nGTKWave save file: {_gtkw(wave_file, top)}")
    return run

