"""The platform simulator (top ``vta_pcie_top``: VTA shell + core + DPI DRAM), once per config.

The recipe is the core bench's (:func:`vtabench.rtl.verilator.build`: same Verilator options, DRAM
model, input hashing and file lock); only the top and the shell's files differ. The build lives in
``build/rtl/<config>-pcie/`` and is reused while no input changed.
"""

from __future__ import annotations


from vtabench.rtl import filelist
from vtabench.sources import TB_DIR
from vtabench.spec.config import Config
from vtabench.rtl.verilator import Bench, Build, build

PLATFORM_HDL = TB_DIR / "platform"
#: the shell IP (hdl/vta_shell.f) around the core, the DRAM model and the top
PLATFORM_BENCH = Bench("vta_pcie_top", filelist.PLATFORM_BENCH, PLATFORM_HDL / "public.vlt",
                       suffix="-pcie", shell=True)


def build_platform(cfg: Config, *, stub: bool = False, waves: bool = False,
                   force: bool = False) -> Build:
    """Build (or reuse) the platform simulator for ``cfg``. ``stub`` uses the bench's stand-in
    core (a memcpy engine; tb/core/selftest) instead of hdl/vta_core.sv."""
    return build(cfg, stub=stub, waves=waves, force=force, bench=PLATFORM_BENCH)
