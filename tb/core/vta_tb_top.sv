// Top of the core bench for Verilator: vta_core with its AXI4 master on the DPI-backed DRAM model.
// Every input is driven by cocotb (the clock by cocotb.clock.Clock, which runs in C); the DRAM
// knobs are inputs too, so one simulator process runs many programs with different memory
// behaviour, resetting in between; so is the bus address of the window of bus memory the DRAM
// file serves (dram_win_base_i: a program's image may sit anywhere in the 64-bit bus space).
// dram_open_at_done_o: done_o rose while a burst was open or the core was still asking for one
// (the core must finish on a quiet bus, after an error too).
module vta_tb_top #(
  parameter int unsigned AxiAddrWidth = 64,
  parameter int unsigned AxiDataWidth = vta_pkg::AXI_DATA_WIDTH,
  parameter int unsigned AxiIdWidth   = 4,
  parameter int unsigned MaxReads     = 16,
  parameter int unsigned MaxWrites    = 16
) (
  input  logic                    clk_i,
  input  logic                    rst_ni,
  input  logic                    launch_i,
  input  logic [31:0]             insn_count_i,
  input  logic [AxiAddrWidth-1:0] insn_base_i,
  input  logic [AxiAddrWidth-1:0] dram_base_i,
  input  logic [AxiAddrWidth-1:0] dram_size_i,
  // DRAM model knobs (see axi_dram.sv)
  input  logic [15:0]             dram_rd_latency_i,
  input  logic [15:0]             dram_wr_latency_i,
  input  logic [7:0]              dram_rd_gap_i,
  input  logic [7:0]              dram_stall_i,
  input  logic [31:0]             dram_seed_i,
  input  logic [63:0]             dram_fault_lo_i,
  input  logic [63:0]             dram_fault_hi_i,
  input  logic                    dram_rd_reorder_i,
  input  logic [31:0]             dram_wr_err_burst_i,
  input  logic [63:0]             dram_win_base_i,   // bus address of the DRAM file's byte 0
  // core status
  output logic                    busy_o,
  output logic                    done_o,
  output logic [7:0]              error_o,
  output logic [31:0]             error_insn_o,
  output logic [31:0]             cycles_o,
  output logic [31:0]             load_busy_o,
  output logic [31:0]             compute_busy_o,
  output logic [31:0]             store_busy_o,
  output logic [31:0]             load_insns_o,
  output logic [31:0]             compute_insns_o,
  output logic [31:0]             store_insns_o,
  output logic [31:0]             acc_writes_o,
  // DRAM statistics
  output logic [31:0]             dram_rd_beats_o,
  output logic [31:0]             dram_wr_beats_o,
  output logic [31:0]             dram_rd_bursts_o,
  output logic [31:0]             dram_wr_bursts_o,
  output logic [31:0]             dram_max_rd_outstanding_o,
  output logic [31:0]             dram_proto_err_o,
  output logic [31:0]             dram_resp_err_o,
  output logic [63:0]             dram_mapped_bytes_o,
  output logic                    dram_open_at_done_o
);

  logic [AxiIdWidth-1:0]     arid, rid, awid, bid;
  logic [AxiAddrWidth-1:0]   araddr, awaddr;
  logic [7:0]                arlen, awlen;
  logic [2:0]                arsize, awsize;
  logic [1:0]                arburst, awburst, rresp, bresp;
  logic                      arvalid, arready, rlast, rvalid, rready;
  logic                      awvalid, awready, wlast, wvalid, wready, bvalid, bready;
  logic [AxiDataWidth-1:0]   rdata, wdata;
  logic [AxiDataWidth/8-1:0] wstrb;
  logic                      dram_busy, done_q, open_at_done_q;

  vta_core #(
    .AxiAddrWidth(AxiAddrWidth),
    .AxiDataWidth(AxiDataWidth),
    .AxiIdWidth  (AxiIdWidth)
  ) u_core (
    .clk_i,
    .rst_ni,
    .launch_i,
    .insn_count_i,
    .insn_base_i,
    .dram_base_i,
    .dram_size_i,
    .busy_o,
    .done_o,
    .error_o,
    .error_insn_o,
    .cycles_o,
    .load_busy_o,
    .compute_busy_o,
    .store_busy_o,
    .load_insns_o,
    .compute_insns_o,
    .store_insns_o,
    .acc_writes_o,
    .m_axi_arid_o   (arid),
    .m_axi_araddr_o (araddr),
    .m_axi_arlen_o  (arlen),
    .m_axi_arsize_o (arsize),
    .m_axi_arburst_o(arburst),
    .m_axi_arvalid_o(arvalid),
    .m_axi_arready_i(arready),
    .m_axi_rid_i    (rid),
    .m_axi_rdata_i  (rdata),
    .m_axi_rresp_i  (rresp),
    .m_axi_rlast_i  (rlast),
    .m_axi_rvalid_i (rvalid),
    .m_axi_rready_o (rready),
    .m_axi_awid_o   (awid),
    .m_axi_awaddr_o (awaddr),
    .m_axi_awlen_o  (awlen),
    .m_axi_awsize_o (awsize),
    .m_axi_awburst_o(awburst),
    .m_axi_awvalid_o(awvalid),
    .m_axi_awready_i(awready),
    .m_axi_wdata_o  (wdata),
    .m_axi_wstrb_o  (wstrb),
    .m_axi_wlast_o  (wlast),
    .m_axi_wvalid_o (wvalid),
    .m_axi_wready_i (wready),
    .m_axi_bid_i    (bid),
    .m_axi_bresp_i  (bresp),
    .m_axi_bvalid_i (bvalid),
    .m_axi_bready_o (bready)
  );

  axi_dram #(
    .AddrWidth(AxiAddrWidth),
    .DataWidth(AxiDataWidth),
    .IdWidth  (AxiIdWidth),
    .MaxReads (MaxReads),
    .MaxWrites(MaxWrites)
  ) u_dram (
    .clk_i,
    .rst_ni,
    .cfg_rd_latency_i(dram_rd_latency_i),
    .cfg_wr_latency_i(dram_wr_latency_i),
    .cfg_rd_gap_i    (dram_rd_gap_i),
    .cfg_stall_i     (dram_stall_i),
    .cfg_seed_i      (dram_seed_i),
    .cfg_fault_lo_i  (dram_fault_lo_i),
    .cfg_fault_hi_i  (dram_fault_hi_i),
    .cfg_rd_reorder_i  (dram_rd_reorder_i),
    .cfg_wr_err_burst_i(dram_wr_err_burst_i),
    .cfg_win_base_i    (dram_win_base_i),
    .s_axi_arid_i    (arid),
    .s_axi_araddr_i  (araddr),
    .s_axi_arlen_i   (arlen),
    .s_axi_arsize_i  (arsize),
    .s_axi_arburst_i (arburst),
    .s_axi_arvalid_i (arvalid),
    .s_axi_arready_o (arready),
    .s_axi_rid_o     (rid),
    .s_axi_rdata_o   (rdata),
    .s_axi_rresp_o   (rresp),
    .s_axi_rlast_o   (rlast),
    .s_axi_rvalid_o  (rvalid),
    .s_axi_rready_i  (rready),
    .s_axi_awid_i    (awid),
    .s_axi_awaddr_i  (awaddr),
    .s_axi_awlen_i   (awlen),
    .s_axi_awsize_i  (awsize),
    .s_axi_awburst_i (awburst),
    .s_axi_awvalid_i (awvalid),
    .s_axi_awready_o (awready),
    .s_axi_wdata_i   (wdata),
    .s_axi_wstrb_i   (wstrb),
    .s_axi_wlast_i   (wlast),
    .s_axi_wvalid_i  (wvalid),
    .s_axi_wready_o  (wready),
    .s_axi_bid_o     (bid),
    .s_axi_bresp_o   (bresp),
    .s_axi_bvalid_o  (bvalid),
    .s_axi_bready_i  (bready),
    .stat_rd_beats_o          (dram_rd_beats_o),
    .stat_wr_beats_o          (dram_wr_beats_o),
    .stat_rd_bursts_o         (dram_rd_bursts_o),
    .stat_wr_bursts_o         (dram_wr_bursts_o),
    .stat_max_rd_outstanding_o(dram_max_rd_outstanding_o),
    .stat_proto_err_o         (dram_proto_err_o),
    .stat_resp_err_o          (dram_resp_err_o),
    .stat_mapped_bytes_o      (dram_mapped_bytes_o),
    .stat_busy_o              (dram_busy)
  );

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      done_q         <= 1'b0;
      open_at_done_q <= 1'b0;
    end else begin
      done_q <= done_o;
      if (done_o && !done_q && (dram_busy || arvalid || awvalid || wvalid)) begin
        open_at_done_q <= 1'b1;
      end
    end
  end
  assign dram_open_at_done_o = open_at_done_q;

  // The RTL's assertions hold from the first reset on: before it every register is random
  // (+verilator+rand+reset), so they stay off until the bench has held rst_ni low on a clock edge.
  initial $assertoff;
  always @(posedge clk_i) if (!rst_ni) $asserton;

  // Coverage counts what the design did, not its random power-up state (the settle's evaluation
  // of it, its move to the reset values): what was counted from the initial blocks to the first
  // clock edge after the first reset is taken off the line, branch and toggle points at the end
  // (tb/csrc/coverage.cpp; nothing in a build without coverage). Later resets (one before every
  // program) count as the design's.
  `include "coverage_hooks.svh"

endmodule : vta_tb_top
