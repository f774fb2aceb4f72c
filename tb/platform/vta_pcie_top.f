# The platform simulator's top vta_pcie_top: its own files, compiled after the shell IP's list
# (hdl/vta_shell.f, which holds the core's). Format: hdl/vta_core.f.
../core/axi_dram.sv
vta_pcie_top.sv
