"""Build the platform simulator (top ``vta_pcie_top``: VTA shell + DPI DRAM), once per config.

The recipe is the core bench's (:mod:`vtabench.rtl.build`: same Verilator options, same DRAM
model and C++ storage, same hashing of every input and file lock); only the top and the shell's
files differ. The build lives in ``build/rtl/<config>-pcie/`` and is reused while no input changed.
"""

from __future__ import annotations

import fcntl
import json
import time
from pathlib import Path

from vtabench.codegen import sv_package
from vtabench.config import Config
from vtabench.rtl import build as corebuild
from vtabench.rtl.build import Build, RtlBuildError

REPO = corebuild.REPO
TOPLEVEL = "vta_pcie_top"
PLATFORM_HDL = [REPO / "hdl" / "gen" / "vta_regs.sv", REPO / "hdl" / "vta_shell.sv",
                REPO / "tb" / "hdl" / "axi_dram.sv",
                REPO / "tb" / "platform" / "hdl" / "vta_pcie_top.sv"]
PUBLIC_VLT = REPO / "tb" / "platform" / "hdl" / "public.vlt"
RECIPE_VERSION = 1


def _runner(public: str):  # -> cocotb_tools.runner.Verilator
    """The core bench's adjusted cocotb Verilator runner when it has one (only the top public,
    precompiled-header fix), else cocotb's."""
    if hasattr(corebuild, "_runner"):
        return corebuild._runner(public)
    from cocotb_tools.runner import get_runner

    return get_runner("verilator")


def build_dir_for(cfg: Config, stub: bool = False, waves: bool = False) -> Path:
    return corebuild.BUILD_ROOT / (cfg.name + ("-stub" if stub else "") + "-pcie"
                                   + ("-waves" if waves else ""))


def build_platform(cfg: Config, *, stub: bool = False, waves: bool = False,
                   force: bool = False) -> Build:
    """Build (or reuse) the platform simulator for ``cfg``. ``stub`` uses the bench's stand-in
    core (a memcpy engine; tb/hdl/selftest) instead of hdl/vta_core.sv."""
    corebuild.setup_verilator_env()
    bdir = build_dir_for(cfg, stub, waves)
    bdir.mkdir(parents=True, exist_ok=True)
    lock_path = bdir.parent / f".{bdir.name}.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        gen_dir = bdir / "gen"
        gen_dir.mkdir(exist_ok=True)
        pkg = gen_dir / "vta_pkg.sv"
        text = sv_package(cfg)
        if not pkg.exists() or pkg.read_text() != text:
            pkg.write_text(text)
        public = getattr(corebuild, "PUBLIC", "all")
        sources = [pkg] + corebuild.core_sources(stub) + PLATFORM_HDL
        if public != "all":
            sources.append(PUBLIC_VLT)
        missing = [str(s) for s in sources if not s.exists()]
        if missing:
            raise RtlBuildError(f"missing RTL source(s): {', '.join(missing)}")
        args = corebuild._build_args(waves) + (
            [] if stub else ["-y", str(corebuild.HDL_DIR), "+libext+.sv"])
        hashed = sources + ([] if stub else [f for f in corebuild.hashed_rtl_files()
                                             if f not in sources])
        extra = [p for p in (corebuild.DRAM_CPP, getattr(corebuild, "PRELUDE_H", None))
                 if p is not None and Path(p).exists()]
        digest = corebuild._hash_inputs(
            hashed + extra,
            json.dumps([RECIPE_VERSION, corebuild.RECIPE_VERSION, args,
                        corebuild._tool_versions(), cfg.as_dict(), public]))
        stamp = bdir / "stamp.json"
        exe = bdir / TOPLEVEL
        if not force and exe.exists() and stamp.exists():
            try:
                info = json.loads(stamp.read_text())
            except ValueError:
                info = {}
            if info.get("hash") == digest:
                return Build(cfg.name, bdir, TOPLEVEL, waves, False,
                             float(info.get("seconds", 0.0)), stub)
        if exe.exists():
            exe.unlink()
        t0 = time.monotonic()
        log = bdir / "build.log"
        try:
            _runner(public).build(
                sources=[str(s) for s in sources], hdl_toplevel=TOPLEVEL, build_dir=str(bdir),
                build_args=args, waves=waves, timescale=("1ns", "1ps"), log_file=str(log),
                always=True)
        except (Exception, SystemExit) as exc:  # noqa: BLE001
            tail = log.read_text(errors="replace")[-4000:] if log.exists() else ""
            raise RtlBuildError(f"Verilator build of the {cfg.name} platform failed ({exc}); "
                                f"log {log}:\n{tail}") from None
        seconds = time.monotonic() - t0
        if not exe.exists():
            raise RtlBuildError(f"platform build of {cfg.name} produced no {exe}; see {log}")
        stamp.write_text(json.dumps({"hash": digest, "seconds": round(seconds, 1),
                                     "sources": [str(s) for s in sources], "args": args},
                                    indent=1))
        return Build(cfg.name, bdir, TOPLEVEL, waves, True, seconds, stub)
