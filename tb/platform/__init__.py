"""PCIe platform model: what a vendor shell and the host give the VTA shell (docs/platform.md).

- :mod:`.link`: the PCIe cost model (presets Gen3 x8, Gen3 x16, Gen4 x16); pure Python.
- :mod:`.faults`: fault injection hooks (late / failed DMA, lost MSI, all-ones MMIO reads).
- :mod:`.model`: the cocotb side (BAR0 MMIO over AXI4-Lite, DMA timing, MSI).
- :mod:`.protocol`: the card's socket protocol, which drivers (Python in ``vtabench.drivers.rtl``,
  C in drivers/c/) speak: the card defines it, as a real card defines its interface;
- :mod:`.server`: the simulator's side of that socket, a cocotb test serving driver requests.

The Verilator build of the top ``vta_pcie_top`` (shell + DRAM model) is
:mod:`vtabench.rtl.platform_build`; the driver side is ``vtabench.drivers.rtl.device`` (target
``rtl`` of the driver API).
"""

from vtabench.tb.platform.faults import FaultPlan
from vtabench.tb.platform.link import D2H, H2D, PRESETS, LinkModel, LinkStats, preset

__all__ = ["D2H", "H2D", "PRESETS", "FaultPlan", "LinkModel", "LinkStats", "preset"]
