// Attaches the pipeline event log (vta_trace_log) to every vta_core of a bench: the core bench
// (vta_tb_top) and the PCIe platform (vta_pcie_top, inside vta_shell) alike, without wiring the
// trace port through the shell. Compiled into every bench build except the DRAM self-test's
// stand-in core (vtabench/rtl/verilator.py).
bind vta_core vta_trace_log u_trace_log (
  .clk_i,
  .rst_ni,
  .busy_i          (busy_o),
  .done_i          (done_o),
  .error_i         (error_o),
  .insn_count_i,
  .cycles_i        (cycles_o),
  .load_busy_i     (load_busy_o),
  .compute_busy_i  (compute_busy_o),
  .store_busy_i    (store_busy_o),
  .load_insns_i    (load_insns_o),
  .compute_insns_i (compute_insns_o),
  .store_insns_i   (store_insns_o),
  .cmd_i           (trace_cmd_o),
  .dispatch_i      (trace_dispatch_o),
  .take_i          (trace_take_o),
  .retire_i        (trace_retire_o),
  .idx_i           (trace_idx_o),
  .pop_wait_i      (trace_pop_wait_o),
  .push_wait_i     (trace_push_wait_o),
  .mem_wait_i      (trace_mem_wait_o)
);
