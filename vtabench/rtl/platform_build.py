"""The platform simulator (top ``vta_pcie_top``: VTA shell + core + DPI DRAM), once per config.

The recipe is the core bench's (:func:`vtabench.rtl.verilator.build`: same Verilator options, DRAM
model, input hashing and file lock); only the top and the shell's files differ. The build lives in
``build/rtl/<config>-pcie/`` and is reused while no input changed.
"""

from __future__ import annotations


from vtabench.hwgen.regmap import SV_MODULE as REGS_MODULE
from vtabench.hwgen.regmap import SV_PACKAGE as REGS_PACKAGE
from vtabench.sources import TB_DIR
from vtabench.spec.config import Config
from vtabench.rtl.verilator import HDL_DIR, TB_HDL_DIR, Bench, Build, build

PLATFORM_HDL = TB_DIR / "platform"
PLATFORM_BENCH = Bench(
    "vta_pcie_top",
    (REGS_PACKAGE, REGS_MODULE, HDL_DIR / "vta_shell.sv",
     TB_HDL_DIR / "axi_dram.sv", PLATFORM_HDL / "vta_pcie_top.sv"),
    PLATFORM_HDL / "public.vlt",
    suffix="-pcie")


def build_platform(cfg: Config, *, stub: bool = False, waves: bool = False,
                   force: bool = False) -> Build:
    """Build (or reuse) the platform simulator for ``cfg``. ``stub`` uses the bench's stand-in
    core (a memcpy engine; tb/core/selftest) instead of hdl/vta_core.sv."""
    return build(cfg, stub=stub, waves=waves, force=force, bench=PLATFORM_BENCH)
