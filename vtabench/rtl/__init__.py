"""The Python side of the RTL: Verilator builds, lint, the FPGA flow, batch runs on the core bench.

- :mod:`.verilator` builds one simulator per configuration into ``build/rtl/<config>/`` (rebuilt
  only when an input changed); :mod:`.platform_build` the platform simulator (top ``vta_pcie_top``);
- :mod:`.simjob` runs raw programs on the core bench (many in one simulator process), moving the
  device DRAM image through a shared memory-mapped file;
- :mod:`.coverage` reads the line, branch and toggle points a coverage build writes;
- :mod:`.lint` (``make lint``) and :mod:`.fpga` (``make fpga``).

The sources are in the top-level ``hdl/`` and ``tb/`` (:mod:`vtabench.sources`); the device behind
the PCIe platform model, which the driver API opens (``open_device("rtl", cfg)``), is served by
``vtabench.drivers.rtl``.
"""
