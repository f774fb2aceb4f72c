"""The RTL target: the SystemVerilog core (hdl/) simulated by Verilator under cocotb.

- :mod:`vtabench.rtl.build` builds one simulator per configuration into ``build/rtl/<config>/``
  (rebuilt only when an input changed);
- :mod:`vtabench.rtl.runner` runs raw programs on it (``run_raw`` for one, ``run_batch`` for many
  in one simulator process), moving the device DRAM image through a shared memory-mapped file.
"""
