# The gate-level simulation's cell models (vtabench/rtl/gls.py, make gls): compiled before the
# synth_ecp5 netlist of vta_core, in place of the core IP's list (hdl/vta_core.f); the core
# bench's own files (tb/core/vta_tb_top.f) follow. Format: hdl/vta_core.f.
ecp5_cells.sv
ecp5_dp16kd.sv
ecp5_mult18x18d.sv
