# The FPGA flow's harness top vta_fpga_top (the shell behind registered ports): its own files,
# compiled after the shell IP's list (hdl/vta_shell.f). Format: hdl/vta_core.f.
vta_fpga_top.sv
