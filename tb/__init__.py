"""The testbenches: the core bench (``core/``: top, DRAM model, cocotb batch runner), the DPI C++
(``csrc/``), the module-level unit benches (``unit/``) and the PCIe platform model (``platform/``:
its top, the cocotb host side and the card's socket server).

Shipped in the wheel as the package ``vtabench.tb``; :mod:`vtabench.sources` locates it.
"""
