"""Xilinx resource estimates: ``synth_xilinx`` of the shell (synthesis only: there is no open
place and route for it). BRAM36 counts each RAMB36E2 and half of each RAMB18E2."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vtabench.rtl.fpga.tools import SHELL_TOP, cells_by_type, rel, sources, yosys

XILINX_LUTS = ("LUT1", "LUT2", "LUT3", "LUT4", "LUT5", "LUT6")
XILINX_FFS = ("FDRE", "FDSE", "FDCE", "FDPE")
XILINX_LUTRAM = ("RAM32M", "RAM32M16", "RAM64M", "RAM64M8", "RAM32X1D", "RAM64X1D", "RAM128X1D",
                 "RAM256X1D", "RAM32X1S", "RAM64X1S", "SRL16E", "SRLC32E")


def synth_xilinx(cfg_name: str, workdir: Path, family: str = "xcup") -> dict[str, Any]:
    """``synth_xilinx`` of the shell: resource estimates (no place and route)."""
    workdir.mkdir(parents=True, exist_ok=True)
    files = sources(cfg_name, workdir, harness=False)
    stat = workdir / "synth_xilinx_stat.json"
    script = (f"read_verilog -sv {' '.join(rel(f, workdir) for f in files)}; "
              f"synth_xilinx -family {family} -top {SHELL_TOP} -noiopad; "
              f"tee -q -o {stat.name} stat -json")
    seconds = yosys("synth_xilinx", script, workdir / "synth_xilinx.log")
    cells = cells_by_type(stat, SHELL_TOP)
    res = {"LUT": sum(cells.get(c, 0) for c in XILINX_LUTS),
           "LUTRAM": sum(cells.get(c, 0) for c in XILINX_LUTRAM),
           "FF": sum(cells.get(c, 0) for c in XILINX_FFS),
           "DSP48": cells.get("DSP48E2", 0),
           "BRAM36": cells.get("RAMB36E2", 0) + cells.get("RAMB18E2", 0) / 2}
    return {"family": family, "resources": res, "cells": cells, "seconds": round(seconds, 1)}


def xilinx_line(cfg_name: str, res: dict[str, Any]) -> str:
    """One configuration's estimate as a line."""
    r = res["resources"]
    return (f"xilinx {cfg_name} {res['family']} (synthesis estimate): LUT {r['LUT']} "
            f"(+{r['LUTRAM']} LUTRAM), FF {r['FF']}, DSP48 {r['DSP48']}, BRAM36 {r['BRAM36']:g}")
