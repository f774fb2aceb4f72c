"""The core bench: the top (``hdl/``), the DPI-C DRAM model (``csrc/``) and the cocotb test that
runs raw programs on it (:mod:`.core_bench`)."""
