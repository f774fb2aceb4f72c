"""The RTL target: the SystemVerilog core (hdl/) simulated by Verilator under cocotb.

- :mod:`vtabench.targets.rtl.build` builds one simulator per configuration into ``build/rtl/<config>/``
  (rebuilt only when an input changed);
- :mod:`vtabench.targets.rtl.runner` runs raw programs on the core bench (``run_batch``: many in one
  simulator process), moving the device DRAM image through a shared memory-mapped file.

The device behind the PCIe platform model (:mod:`.platform`), which the driver API opens
(``open_device("rtl", cfg)``), is served by ``vtabench.drivers.rtl``.
"""
