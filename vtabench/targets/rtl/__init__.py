"""The RTL target: the SystemVerilog core (hdl/) simulated by Verilator under cocotb.

- :mod:`vtabench.targets.rtl.build` builds one simulator per configuration into ``build/rtl/<config>/``
  (rebuilt only when an input changed);
- :mod:`vtabench.targets.rtl.runner` runs raw programs on the core bench (``run_batch``: many in one
  simulator process), moving the device DRAM image through a shared memory-mapped file.

One raw program through the driver and the PCIe platform model (``vtabench exec --target rtl``)
is ``vtabench.drivers.rtl_backend.run_raw``.
"""
