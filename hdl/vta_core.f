# vta_core, the core IP: every file it compiles, in compile order (packages first, then each
# module before the modules that instantiate it). One path a line, relative to this file;
# `-f FILE` includes another list; `#` starts a comment. The configuration's package
# (gen/<config>/vta_pkg.sv) is not listed: a build puts the one of its configuration first.
# Read by vtabench.rtl.filelist for the Verilator builds, lint, the FPGA flow, the unit benches
# and the formal flow (tests/test_filelists.py: every module of hdl/ is in one IP's list).
gen/vta_err_pkg.sv
gen/vta_stage_pkg.sv
vta_sram.sv
vta_fifo.sv
vta_token_queue.sv
vta_span_mask.sv
vta_buf.sv
vta_buf_out.sv
vta_gemm_dp.sv
vta_alu.sv
vta_dma_rd.sv
vta_stage_ctrl.sv
vta_load.sv
vta_compute.sv
vta_store.sv
vta_fetch.sv
vta_mem_engine.sv
vta_core.sv
