// VTA shell: what goes into the FPGA's user region behind a vendor PCIe shell.
//
//   - BAR0: an AXI4-Lite slave register block (vta_regs, generated from vtabench/spec/contracts/
//     regmap.json; the map is in docs/registers.md). Upstream VCR layout first, then extensions.
//   - The core's AXI4 master is passed through unchanged towards device DRAM (m_axi_*).
//   - irq_o: a LEVEL interrupt, high while (IRQ_STATUS & IRQ_ENABLE) != 0, registered. IRQ_STATUS
//     bits are set on the rising edge of the core's done_o (FINISH; ERROR too when error_o is
//     nonzero) and cleared by the host writing 1 (W1C). A vendor MSI bridge turns the rising edge
//     of irq_o into one MSI message; the host must clear IRQ_STATUS before the next run so that the
//     next finish makes a new edge.
//   - CTRL.LAUNCH is a one-cycle pulse to the core; the shell drops it while the core is busy.
//
// The 64-bit register pairs (low word first) are cut to AxiAddrWidth bits. The upstream buffer
// base pointers (UOP/INP/WGT/ACC/OUT_BASE) are stored and read back but unused: instructions carry
// absolute element indices relative to DRAM_BASE (drivers write 0 to all of them).
module vta_shell #(
  parameter int unsigned AxiAddrWidth = 64,
  parameter int unsigned AxiDataWidth = vta_pkg::AXI_DATA_WIDTH,
  parameter int unsigned AxiIdWidth   = 4
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,

  // BAR0: AXI4-Lite slave
  input  logic [11:0]               s_axil_awaddr_i,
  input  logic                      s_axil_awvalid_i,
  output logic                      s_axil_awready_o,
  input  logic [31:0]               s_axil_wdata_i,
  input  logic [3:0]                s_axil_wstrb_i,
  input  logic                      s_axil_wvalid_i,
  output logic                      s_axil_wready_o,
  output logic [1:0]                s_axil_bresp_o,
  output logic                      s_axil_bvalid_o,
  input  logic                      s_axil_bready_i,
  input  logic [11:0]               s_axil_araddr_i,
  input  logic                      s_axil_arvalid_i,
  output logic                      s_axil_arready_o,
  output logic [31:0]               s_axil_rdata_o,
  output logic [1:0]                s_axil_rresp_o,
  output logic                      s_axil_rvalid_o,
  input  logic                      s_axil_rready_i,

  // Interrupt (level, see above)
  output logic                      irq_o,

  // AXI4 master towards device DRAM (the core's, passed through)
  output logic [AxiIdWidth-1:0]     m_axi_arid_o,
  output logic [AxiAddrWidth-1:0]   m_axi_araddr_o,
  output logic [7:0]                m_axi_arlen_o,
  output logic [2:0]                m_axi_arsize_o,
  output logic [1:0]                m_axi_arburst_o,
  output logic                      m_axi_arvalid_o,
  input  logic                      m_axi_arready_i,
  input  logic [AxiIdWidth-1:0]     m_axi_rid_i,
  input  logic [AxiDataWidth-1:0]   m_axi_rdata_i,
  input  logic [1:0]                m_axi_rresp_i,
  input  logic                      m_axi_rlast_i,
  input  logic                      m_axi_rvalid_i,
  output logic                      m_axi_rready_o,
  output logic [AxiIdWidth-1:0]     m_axi_awid_o,
  output logic [AxiAddrWidth-1:0]   m_axi_awaddr_o,
  output logic [7:0]                m_axi_awlen_o,
  output logic [2:0]                m_axi_awsize_o,
  output logic [1:0]                m_axi_awburst_o,
  output logic                      m_axi_awvalid_o,
  input  logic                      m_axi_awready_i,
  output logic [AxiDataWidth-1:0]   m_axi_wdata_o,
  output logic [AxiDataWidth/8-1:0] m_axi_wstrb_o,
  output logic                      m_axi_wlast_o,
  output logic                      m_axi_wvalid_o,
  input  logic                      m_axi_wready_i,
  input  logic [AxiIdWidth-1:0]     m_axi_bid_i,
  input  logic [1:0]                m_axi_bresp_i,
  input  logic                      m_axi_bvalid_i,
  output logic                      m_axi_bready_o
);

  // ---------------------------------------------------------------------------------------------
  // Register block <-> core signals
  logic        reg_launch;
  logic [31:0] reg_insn_count;
  logic [31:0] reg_insn_base_lo, reg_insn_base_hi;
  logic [31:0] reg_dram_base_lo, reg_dram_base_hi;
  logic [31:0] reg_dram_size_lo, reg_dram_size_hi;
  logic        reg_irq_enable_finish, reg_irq_enable_error;
  logic        reg_irq_status_finish, reg_irq_status_error;
  logic [31:0] unused_ptr_uop_lo, unused_ptr_uop_hi, unused_ptr_inp_lo, unused_ptr_inp_hi;
  logic [31:0] unused_ptr_wgt_lo, unused_ptr_wgt_hi, unused_ptr_acc_lo, unused_ptr_acc_hi;
  logic [31:0] unused_ptr_out_lo, unused_ptr_out_hi, unused_scratch;

  logic        core_launch;
  logic        core_busy;
  logic        core_done;
  logic [7:0]  core_error;
  logic [31:0] core_error_insn;
  logic [31:0] core_cycles;
  logic [31:0] core_load_busy, core_compute_busy, core_store_busy;
  logic [31:0] core_load_insns, core_compute_insns, core_store_insns;
  logic [31:0] core_acc_writes;

  logic [63:0] insn_base_full, dram_base_full, dram_size_full;
  assign insn_base_full = {reg_insn_base_hi, reg_insn_base_lo};
  assign dram_base_full = {reg_dram_base_hi, reg_dram_base_lo};
  assign dram_size_full = {reg_dram_size_hi, reg_dram_size_lo};

  // Address bits above AxiAddrWidth are dropped (none with the default 64).
  logic unused_addr_bits;
  assign unused_addr_bits = ^{insn_base_full, dram_base_full, dram_size_full};

  // ---------------------------------------------------------------------------------------------
  // Interrupt causes: rising edge of done (finish), with a nonzero error code (error).
  logic done_q;
  logic irq_finish_set, irq_error_set;
  logic irq_d, irq_q;

  assign irq_finish_set = core_done & ~done_q;
  assign irq_error_set = irq_finish_set & (core_error != 8'd0);

  always_comb begin
    irq_d = (reg_irq_status_finish & reg_irq_enable_finish) |
            (reg_irq_status_error & reg_irq_enable_error);
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      done_q <= 1'b0;
      irq_q <= 1'b0;
    end else begin
      done_q <= core_done;
      irq_q <= irq_d;
    end
  end

  assign irq_o = irq_q;
  assign core_launch = reg_launch & ~core_busy;

  // ---------------------------------------------------------------------------------------------
  vta_regs u_regs (
    .clk_i                   (clk_i),
    .rst_ni                  (rst_ni),
    .s_axil_awaddr_i         (s_axil_awaddr_i),
    .s_axil_awvalid_i        (s_axil_awvalid_i),
    .s_axil_awready_o        (s_axil_awready_o),
    .s_axil_wdata_i          (s_axil_wdata_i),
    .s_axil_wstrb_i          (s_axil_wstrb_i),
    .s_axil_wvalid_i         (s_axil_wvalid_i),
    .s_axil_wready_o         (s_axil_wready_o),
    .s_axil_bresp_o          (s_axil_bresp_o),
    .s_axil_bvalid_o         (s_axil_bvalid_o),
    .s_axil_bready_i         (s_axil_bready_i),
    .s_axil_araddr_i         (s_axil_araddr_i),
    .s_axil_arvalid_i        (s_axil_arvalid_i),
    .s_axil_arready_o        (s_axil_arready_o),
    .s_axil_rdata_o          (s_axil_rdata_o),
    .s_axil_rresp_o          (s_axil_rresp_o),
    .s_axil_rvalid_o         (s_axil_rvalid_o),
    .s_axil_rready_i         (s_axil_rready_i),
    .ctrl_launch_o           (reg_launch),
    .ctrl_finish_i           (core_done),
    .cycles_i                (core_cycles),
    .insn_count_o            (reg_insn_count),
    .insn_base_lo_o          (reg_insn_base_lo),
    .insn_base_hi_o          (reg_insn_base_hi),
    .uop_base_lo_o           (unused_ptr_uop_lo),
    .uop_base_hi_o           (unused_ptr_uop_hi),
    .inp_base_lo_o           (unused_ptr_inp_lo),
    .inp_base_hi_o           (unused_ptr_inp_hi),
    .wgt_base_lo_o           (unused_ptr_wgt_lo),
    .wgt_base_hi_o           (unused_ptr_wgt_hi),
    .acc_base_lo_o           (unused_ptr_acc_lo),
    .acc_base_hi_o           (unused_ptr_acc_hi),
    .out_base_lo_o           (unused_ptr_out_lo),
    .out_base_hi_o           (unused_ptr_out_hi),
    .acc_writes_i            (core_acc_writes),
    .status_busy_i           (core_busy),
    .status_done_i           (core_done),
    .status_error_i          (core_error != 8'd0),
    .status_irq_i            (irq_q),
    .error_code_i            (core_error),
    .error_insn_i            (core_error_insn),
    .irq_enable_finish_o     (reg_irq_enable_finish),
    .irq_enable_error_o      (reg_irq_enable_error),
    .irq_status_finish_set_i (irq_finish_set),
    .irq_status_finish_o     (reg_irq_status_finish),
    .irq_status_error_set_i  (irq_error_set),
    .irq_status_error_o      (reg_irq_status_error),
    .dram_base_lo_o          (reg_dram_base_lo),
    .dram_base_hi_o          (reg_dram_base_hi),
    .dram_size_lo_o          (reg_dram_size_lo),
    .dram_size_hi_o          (reg_dram_size_hi),
    .load_busy_cycles_i      (core_load_busy),
    .compute_busy_cycles_i   (core_compute_busy),
    .store_busy_cycles_i     (core_store_busy),
    .load_insns_i            (core_load_insns),
    .compute_insns_i         (core_compute_insns),
    .store_insns_i           (core_store_insns),
    .scratch_o               (unused_scratch)
  );

  // ---------------------------------------------------------------------------------------------
  vta_core #(
    .AxiAddrWidth (AxiAddrWidth),
    .AxiDataWidth (AxiDataWidth),
    .AxiIdWidth   (AxiIdWidth)
  ) u_core (
    .clk_i            (clk_i),
    .rst_ni           (rst_ni),
    .launch_i         (core_launch),
    .insn_count_i     (reg_insn_count),
    .insn_base_i      (insn_base_full[AxiAddrWidth-1:0]),
    .dram_base_i      (dram_base_full[AxiAddrWidth-1:0]),
    .dram_size_i      (dram_size_full[AxiAddrWidth-1:0]),
    .busy_o           (core_busy),
    .done_o           (core_done),
    .error_o          (core_error),
    .error_insn_o     (core_error_insn),
    .cycles_o         (core_cycles),
    .load_busy_o      (core_load_busy),
    .compute_busy_o   (core_compute_busy),
    .store_busy_o     (core_store_busy),
    .load_insns_o     (core_load_insns),
    .compute_insns_o  (core_compute_insns),
    .store_insns_o    (core_store_insns),
    .acc_writes_o     (core_acc_writes),
    .trace_cmd_o      (),
    .trace_dispatch_o (),
    .trace_take_o     (),
    .trace_retire_o   (),
    .trace_idx_o      (),
    .trace_pop_wait_o (),
    .trace_push_wait_o(),
    .trace_mem_wait_o (),
    .m_axi_arid_o     (m_axi_arid_o),
    .m_axi_araddr_o   (m_axi_araddr_o),
    .m_axi_arlen_o    (m_axi_arlen_o),
    .m_axi_arsize_o   (m_axi_arsize_o),
    .m_axi_arburst_o  (m_axi_arburst_o),
    .m_axi_arvalid_o  (m_axi_arvalid_o),
    .m_axi_arready_i  (m_axi_arready_i),
    .m_axi_rid_i      (m_axi_rid_i),
    .m_axi_rdata_i    (m_axi_rdata_i),
    .m_axi_rresp_i    (m_axi_rresp_i),
    .m_axi_rlast_i    (m_axi_rlast_i),
    .m_axi_rvalid_i   (m_axi_rvalid_i),
    .m_axi_rready_o   (m_axi_rready_o),
    .m_axi_awid_o     (m_axi_awid_o),
    .m_axi_awaddr_o   (m_axi_awaddr_o),
    .m_axi_awlen_o    (m_axi_awlen_o),
    .m_axi_awsize_o   (m_axi_awsize_o),
    .m_axi_awburst_o  (m_axi_awburst_o),
    .m_axi_awvalid_o  (m_axi_awvalid_o),
    .m_axi_awready_i  (m_axi_awready_i),
    .m_axi_wdata_o    (m_axi_wdata_o),
    .m_axi_wstrb_o    (m_axi_wstrb_o),
    .m_axi_wlast_o    (m_axi_wlast_o),
    .m_axi_wvalid_o   (m_axi_wvalid_o),
    .m_axi_wready_i   (m_axi_wready_i),
    .m_axi_bid_i      (m_axi_bid_i),
    .m_axi_bresp_i    (m_axi_bresp_i),
    .m_axi_bvalid_i   (m_axi_bvalid_i),
    .m_axi_bready_o   (m_axi_bready_o)
  );

  // Upstream pointer registers and SCRATCH are host-visible storage only.
  logic unused_regs;
  assign unused_regs = ^{unused_ptr_uop_lo, unused_ptr_uop_hi, unused_ptr_inp_lo,
                         unused_ptr_inp_hi, unused_ptr_wgt_lo, unused_ptr_wgt_hi,
                         unused_ptr_acc_lo, unused_ptr_acc_hi, unused_ptr_out_lo,
                         unused_ptr_out_hi, unused_scratch};

endmodule : vta_shell
