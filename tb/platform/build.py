"""The platform simulator (top ``vta_pcie_top``: VTA shell + core + DPI DRAM), once per config.

The recipe is the core bench's (:func:`vtabench.rtl.build.build`: same Verilator options, DRAM
model, input hashing and file lock); only the top and the shell's files differ. The build lives in
``build/rtl/<config>-pcie/`` and is reused while no input changed.
"""

from __future__ import annotations

from vtabench.config import Config
from vtabench.rtl.build import REPO, Bench, Build, build

PLATFORM_BENCH = Bench(
    "vta_pcie_top",
    (REPO / "hdl" / "gen" / "vta_regs.sv", REPO / "hdl" / "vta_shell.sv",
     REPO / "tb" / "hdl" / "axi_dram.sv", REPO / "tb" / "platform" / "hdl" / "vta_pcie_top.sv"),
    REPO / "tb" / "platform" / "hdl" / "public.vlt",
    suffix="-pcie")


def build_platform(cfg: Config, *, stub: bool = False, waves: bool = False,
                   force: bool = False) -> Build:
    """Build (or reuse) the platform simulator for ``cfg``. ``stub`` uses the bench's stand-in
    core (a memcpy engine; tb/hdl/selftest) instead of hdl/vta_core.sv."""
    return build(cfg, stub=stub, waves=waves, force=force, bench=PLATFORM_BENCH)
