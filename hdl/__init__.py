"""The VTA core's SystemVerilog (one module per file) and its generated packages (``gen/``).

Shipped in the wheel as package data of ``vtabench.hdl``; :mod:`vtabench.sources` locates it.
"""
