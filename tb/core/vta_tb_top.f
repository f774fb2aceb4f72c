# The core bench's top vta_tb_top: its own files, compiled after the core IP's list
# (hdl/vta_core.f, or a stand-in core: selftest/) and, when a build traces, the trace logger
# (vta_trace_log.sv, vta_trace_bind.sv). Format: hdl/vta_core.f.
axi_dram.sv
vta_tb_top.sv
