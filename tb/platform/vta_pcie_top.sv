// Simulator top of the PCIe platform model (tb/platform): the VTA shell (hdl/vta_shell.sv) with
// its AXI4 master on the DPI-backed DRAM model (tb/hdl/axi_dram.sv). cocotb drives everything
// else (vtabench.tb.platform.model.Platform): the clock, the reset, the BAR0 AXI4-Lite slave (the
// host's MMIO), the DRAM model's knobs; it watches irq_o for MSIs and moves DMA payloads straight
// into the DRAM model's storage (a file both sides have mapped).
module vta_pcie_top #(
  parameter int unsigned AxiAddrWidth = 64,
  parameter int unsigned AxiDataWidth = vta_pkg::AXI_DATA_WIDTH,
  parameter int unsigned AxiIdWidth   = 4
) (
  input  logic                    clk_i,
  input  logic                    rst_ni,
  // BAR0 (AXI4-Lite slave of the shell)
  input  logic [11:0]             s_axil_awaddr_i,
  input  logic                    s_axil_awvalid_i,
  output logic                    s_axil_awready_o,
  input  logic [31:0]             s_axil_wdata_i,
  input  logic [3:0]              s_axil_wstrb_i,
  input  logic                    s_axil_wvalid_i,
  output logic                    s_axil_wready_o,
  output logic [1:0]              s_axil_bresp_o,
  output logic                    s_axil_bvalid_o,
  input  logic                    s_axil_bready_i,
  input  logic [11:0]             s_axil_araddr_i,
  input  logic                    s_axil_arvalid_i,
  output logic                    s_axil_arready_o,
  output logic [31:0]             s_axil_rdata_o,
  output logic [1:0]              s_axil_rresp_o,
  output logic                    s_axil_rvalid_o,
  input  logic                    s_axil_rready_i,
  output logic                    irq_o,
  // DRAM model knobs (see axi_dram.sv)
  input  logic [15:0]             dram_rd_latency_i,
  input  logic [15:0]             dram_wr_latency_i,
  input  logic [7:0]              dram_rd_gap_i,
  input  logic [7:0]              dram_stall_i,
  input  logic [31:0]             dram_seed_i,
  input  logic [63:0]             dram_fault_lo_i,
  input  logic [63:0]             dram_fault_hi_i,
  // DRAM statistics
  output logic [31:0]             dram_rd_beats_o,
  output logic [31:0]             dram_wr_beats_o,
  output logic [31:0]             dram_proto_err_o,
  output logic [31:0]             dram_resp_err_o,
  output logic [63:0]             dram_mapped_bytes_o
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
  logic [31:0]               unused_rd_bursts, unused_wr_bursts, unused_max_rd;

  vta_shell #(
    .AxiAddrWidth(AxiAddrWidth),
    .AxiDataWidth(AxiDataWidth),
    .AxiIdWidth  (AxiIdWidth)
  ) u_shell (
    .clk_i                  (clk_i),
    .rst_ni                 (rst_ni),
    .s_axil_awaddr_i    (s_axil_awaddr_i),
    .s_axil_awvalid_i   (s_axil_awvalid_i),
    .s_axil_awready_o   (s_axil_awready_o),
    .s_axil_wdata_i     (s_axil_wdata_i),
    .s_axil_wstrb_i     (s_axil_wstrb_i),
    .s_axil_wvalid_i    (s_axil_wvalid_i),
    .s_axil_wready_o    (s_axil_wready_o),
    .s_axil_bresp_o     (s_axil_bresp_o),
    .s_axil_bvalid_o    (s_axil_bvalid_o),
    .s_axil_bready_i    (s_axil_bready_i),
    .s_axil_araddr_i    (s_axil_araddr_i),
    .s_axil_arvalid_i   (s_axil_arvalid_i),
    .s_axil_arready_o   (s_axil_arready_o),
    .s_axil_rdata_o     (s_axil_rdata_o),
    .s_axil_rresp_o     (s_axil_rresp_o),
    .s_axil_rvalid_o    (s_axil_rvalid_o),
    .s_axil_rready_i    (s_axil_rready_i),
    .irq_o                  (irq_o),
    .m_axi_arid_o       (arid),
    .m_axi_araddr_o     (araddr),
    .m_axi_arlen_o      (arlen),
    .m_axi_arsize_o     (arsize),
    .m_axi_arburst_o    (arburst),
    .m_axi_arvalid_o    (arvalid),
    .m_axi_arready_i    (arready),
    .m_axi_rid_i        (rid),
    .m_axi_rdata_i      (rdata),
    .m_axi_rresp_i      (rresp),
    .m_axi_rlast_i      (rlast),
    .m_axi_rvalid_i     (rvalid),
    .m_axi_rready_o     (rready),
    .m_axi_awid_o       (awid),
    .m_axi_awaddr_o     (awaddr),
    .m_axi_awlen_o      (awlen),
    .m_axi_awsize_o     (awsize),
    .m_axi_awburst_o    (awburst),
    .m_axi_awvalid_o    (awvalid),
    .m_axi_awready_i    (awready),
    .m_axi_wdata_o      (wdata),
    .m_axi_wstrb_o      (wstrb),
    .m_axi_wlast_o      (wlast),
    .m_axi_wvalid_o     (wvalid),
    .m_axi_wready_i     (wready),
    .m_axi_bid_i        (bid),
    .m_axi_bresp_i      (bresp),
    .m_axi_bvalid_i     (bvalid),
    .m_axi_bready_o     (bready)
  );

  axi_dram #(
    .AddrWidth(AxiAddrWidth),
    .DataWidth(AxiDataWidth),
    .IdWidth  (AxiIdWidth)
  ) u_dram (
    .clk_i                  (clk_i),
    .rst_ni                 (rst_ni),
    .cfg_rd_latency_i       (dram_rd_latency_i),
    .cfg_wr_latency_i       (dram_wr_latency_i),
    .cfg_rd_gap_i           (dram_rd_gap_i),
    .cfg_stall_i            (dram_stall_i),
    .cfg_seed_i             (dram_seed_i),
    .cfg_fault_lo_i         (dram_fault_lo_i),
    .cfg_fault_hi_i         (dram_fault_hi_i),
    .s_axi_arid_i       (arid),
    .s_axi_araddr_i     (araddr),
    .s_axi_arlen_i      (arlen),
    .s_axi_arsize_i     (arsize),
    .s_axi_arburst_i    (arburst),
    .s_axi_arvalid_i    (arvalid),
    .s_axi_arready_o    (arready),
    .s_axi_rid_o        (rid),
    .s_axi_rdata_o      (rdata),
    .s_axi_rresp_o      (rresp),
    .s_axi_rlast_o      (rlast),
    .s_axi_rvalid_o     (rvalid),
    .s_axi_rready_i     (rready),
    .s_axi_awid_i       (awid),
    .s_axi_awaddr_i     (awaddr),
    .s_axi_awlen_i      (awlen),
    .s_axi_awsize_i     (awsize),
    .s_axi_awburst_i    (awburst),
    .s_axi_awvalid_i    (awvalid),
    .s_axi_awready_o    (awready),
    .s_axi_wdata_i      (wdata),
    .s_axi_wstrb_i      (wstrb),
    .s_axi_wlast_i      (wlast),
    .s_axi_wvalid_i     (wvalid),
    .s_axi_wready_o     (wready),
    .s_axi_bid_o        (bid),
    .s_axi_bresp_o      (bresp),
    .s_axi_bvalid_o     (bvalid),
    .s_axi_bready_i     (bready),
    .stat_rd_beats_o          (dram_rd_beats_o),
    .stat_wr_beats_o          (dram_wr_beats_o),
    .stat_rd_bursts_o         (unused_rd_bursts),
    .stat_wr_bursts_o         (unused_wr_bursts),
    .stat_max_rd_outstanding_o(unused_max_rd),
    .stat_proto_err_o         (dram_proto_err_o),
    .stat_resp_err_o          (dram_resp_err_o),
    .stat_mapped_bytes_o      (dram_mapped_bytes_o)
  );

  // BAR0 protocol checks (AMBA AXI4-Lite, ARM IHI 0022 A3.2.1, A3.3.1, B1.1): the host's master
  // (tb/platform/model.py, hand-written handshakes: docs/platform.md says why not cocotbext-axi's
  // AxiLiteMaster) and the shell's register block (hdl/gen/vta_regs.sv) on their shared interface.
  // A channel's VALID stays up with its payload stable until READY; a response comes only for a
  // request already accepted (B after both AW and W, R after AR) and never says EXOKAY.
  logic [7:0] axil_aw_n, axil_w_n, axil_b_n, axil_ar_n, axil_r_n;  // handshakes so far (wrapping)
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      {axil_aw_n, axil_w_n, axil_b_n, axil_ar_n, axil_r_n} <= '0;
    end else begin
      axil_aw_n <= axil_aw_n + 8'(s_axil_awvalid_i && s_axil_awready_o);
      axil_w_n  <= axil_w_n + 8'(s_axil_wvalid_i && s_axil_wready_o);
      axil_b_n  <= axil_b_n + 8'(s_axil_bvalid_o && s_axil_bready_i);
      axil_ar_n <= axil_ar_n + 8'(s_axil_arvalid_i && s_axil_arready_o);
      axil_r_n  <= axil_r_n + 8'(s_axil_rvalid_o && s_axil_rready_i);
    end
  end

  a_axil_aw_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
      s_axil_awvalid_i && !s_axil_awready_o |=> s_axil_awvalid_i && $stable(s_axil_awaddr_i))
    else $error("BAR0 AW: AWVALID dropped or AWADDR changed before AWREADY");
  a_axil_w_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
      s_axil_wvalid_i && !s_axil_wready_o |=> s_axil_wvalid_i &&
      $stable({s_axil_wdata_i, s_axil_wstrb_i}))
    else $error("BAR0 W: WVALID dropped or WDATA/WSTRB changed before WREADY");
  a_axil_ar_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
      s_axil_arvalid_i && !s_axil_arready_o |=> s_axil_arvalid_i && $stable(s_axil_araddr_i))
    else $error("BAR0 AR: ARVALID dropped or ARADDR changed before ARREADY");
  a_axil_b_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
      s_axil_bvalid_o && !s_axil_bready_i |=> s_axil_bvalid_o && $stable(s_axil_bresp_o))
    else $error("BAR0 B: BVALID dropped or BRESP changed before BREADY");
  a_axil_r_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
      s_axil_rvalid_o && !s_axil_rready_i |=> s_axil_rvalid_o &&
      $stable({s_axil_rdata_o, s_axil_rresp_o}))
    else $error("BAR0 R: RVALID dropped or RDATA/RRESP changed before RREADY");
  a_axil_b_after_aw_w: assert property (@(posedge clk_i) disable iff (!rst_ni)
      s_axil_bvalid_o |-> axil_aw_n != axil_b_n && axil_w_n != axil_b_n)
    else $error("BAR0 B: BVALID without an accepted AW and W to answer");
  a_axil_r_after_ar: assert property (@(posedge clk_i) disable iff (!rst_ni)
      s_axil_rvalid_o |-> axil_ar_n != axil_r_n)
    else $error("BAR0 R: RVALID without an accepted AR to answer");
  a_axil_b_no_exokay: assert property (@(posedge clk_i) disable iff (!rst_ni)
      s_axil_bvalid_o |-> s_axil_bresp_o != 2'b01)
    else $error("BAR0 B: EXOKAY (AXI4-Lite has no exclusive access)");
  a_axil_r_no_exokay: assert property (@(posedge clk_i) disable iff (!rst_ni)
      s_axil_rvalid_o |-> s_axil_rresp_o != 2'b01)
    else $error("BAR0 R: EXOKAY (AXI4-Lite has no exclusive access)");

  // The RTL's assertions hold from the first reset on: before it every register is random
  // (+verilator+rand+reset), so they stay off until the bench has held rst_ni low on a clock edge.
  initial $assertoff;
  always @(posedge clk_i) if (!rst_ni) $asserton;

endmodule : vta_pcie_top
