// Properties of the shell's glue between the core and the register block (hdl/vta_shell.sv),
// end to end at BAR0: the core is cut out (its outputs free every cycle: any core), and the
// property module reads its done, busy and error (f_core_*, connected by the flow after
// flatten). The host is an AXI4-Lite master with one transaction at a time (a master-side
// assumption, legal AXI) that keeps the AXI rules; the data it writes and reads is free.
//   - STATUS reads BUSY, DONE and ERROR (error code nonzero) as the core drives them, whenever
//     they held over the read;
//   - IRQ_STATUS.FINISH is set by the rising edge of done, ERROR by a rising edge with a nonzero
//     error code, both cleared by a write of 1 (W1C); a rising edge while the clear is in
//     flight leaves the bit unknown until the next edge or clear; a read of IRQ_STATUS answers
//     the bits whenever they are known over the read;
//   - irq_o is |(IRQ_STATUS & IRQ_ENABLE) of the cycle before, whenever both are known.
// The register block's own rules are vta_regs_props' (jobs regs-*).
module vta_shell_props #(
  parameter int unsigned AddrStatus = 0, AddrIrqEnable = 0, AddrIrqStatus = 0,
  parameter int unsigned StatusBusyLsb = 0, StatusDoneLsb = 0, StatusErrorLsb = 0,
  parameter int unsigned IrqFinishLsb = 0, IrqErrorLsb = 0,
  localparam int unsigned DataW = vta_pkg::AXI_DATA_WIDTH
) (
  input logic               clk_i,
  input logic               rst_ni,
  input logic               awvalid_i,
  input logic [11:0]        awaddr_i,
  input logic               wvalid_i,
  input logic [31:0]        wdata_i,
  input logic [3:0]         wstrb_i,
  input logic               bready_i,
  input logic               arvalid_i,
  input logic [11:0]        araddr_i,
  input logic               rready_i,
  // the DRAM side: free
  input logic               m_arready_i,
  input logic [3:0]         m_rid_i,
  input logic [DataW-1:0]   m_rdata_i,
  input logic [1:0]         m_rresp_i,
  input logic               m_rlast_i,
  input logic               m_rvalid_i,
  input logic               m_awready_i,
  input logic               m_wready_i,
  input logic [3:0]         m_bid_i,
  input logic [1:0]         m_bresp_i,
  input logic               m_bvalid_i
);
  logic        awready, wready, bvalid, arready, rvalid, irq;
  logic [1:0]  bresp, rresp;
  logic [31:0] rdata;

  vta_shell dut (
    .clk_i, .rst_ni,
    .s_axil_awaddr_i(awaddr_i), .s_axil_awvalid_i(awvalid_i), .s_axil_awready_o(awready),
    .s_axil_wdata_i(wdata_i), .s_axil_wstrb_i(wstrb_i), .s_axil_wvalid_i(wvalid_i),
    .s_axil_wready_o(wready), .s_axil_bresp_o(bresp), .s_axil_bvalid_o(bvalid),
    .s_axil_bready_i(bready_i), .s_axil_araddr_i(araddr_i), .s_axil_arvalid_i(arvalid_i),
    .s_axil_arready_o(arready), .s_axil_rdata_o(rdata), .s_axil_rresp_o(rresp),
    .s_axil_rvalid_o(rvalid), .s_axil_rready_i(rready_i), .irq_o(irq),
    .m_axi_arid_o(), .m_axi_araddr_o(), .m_axi_arlen_o(), .m_axi_arsize_o(),
    .m_axi_arburst_o(), .m_axi_arvalid_o(), .m_axi_arready_i(m_arready_i),
    .m_axi_rid_i(m_rid_i), .m_axi_rdata_i(m_rdata_i), .m_axi_rresp_i(m_rresp_i),
    .m_axi_rlast_i(m_rlast_i), .m_axi_rvalid_i(m_rvalid_i), .m_axi_rready_o(),
    .m_axi_awid_o(), .m_axi_awaddr_o(), .m_axi_awlen_o(), .m_axi_awsize_o(),
    .m_axi_awburst_o(), .m_axi_awvalid_o(), .m_axi_awready_i(m_awready_i),
    .m_axi_wdata_o(), .m_axi_wstrb_o(), .m_axi_wlast_o(), .m_axi_wvalid_o(),
    .m_axi_wready_i(m_wready_i), .m_axi_bid_i(m_bid_i), .m_axi_bresp_i(m_bresp_i),
    .m_axi_bvalid_i(m_bvalid_i), .m_axi_bready_o()
  );

  // the cut core's outputs, read inside the shell (connected by the flow)
  logic       f_core_done, f_core_busy;
  logic [7:0] f_core_error;

  // ---------------------------------------------------------------------------------------------
  // The host: AXI rules, one transaction at a time
  logic f_past = 1'b0;
  always @(posedge clk_i) f_past <= 1'b1;
  initial assume (!rst_ni);
  always @* begin
    if (f_past) assume (rst_ni);
    if (!rst_ni) assume (!awvalid_i && !wvalid_i && !arvalid_i);
  end
  logic aw_hs, w_hs, b_hs, ar_hs, r_hs;
  assign aw_hs = awvalid_i && awready;
  assign w_hs  = wvalid_i && wready;
  assign b_hs  = bvalid && bready_i;
  assign ar_hs = arvalid_i && arready;
  assign r_hs  = rvalid && rready_i;
  logic        wr_q = 1'b0, aw_q = 1'b0, w_q = 1'b0, rd_q = 1'b0;  // in flight, taken
  logic [9:0]  wr_addr_q, rd_addr_q;
  logic [31:0] wr_data_q;
  logic [3:0]  wr_strb_q;
  always @* begin
    if (rd_q || wr_q) assume (!arvalid_i);
    if (rd_q) assume (!awvalid_i && !wvalid_i);
    if (wr_q && aw_q) assume (!awvalid_i);
    if (wr_q && w_q) assume (!wvalid_i);
    if (!rd_q && !wr_q) assume (!(arvalid_i && (awvalid_i || wvalid_i)));
  end
  always @(posedge clk_i) begin
    if (f_past && $past(rst_ni)) begin
      if ($past(awvalid_i && !awready)) assume (awvalid_i && awaddr_i == $past(awaddr_i));
      if ($past(wvalid_i && !wready)) begin
        assume (wvalid_i && wdata_i == $past(wdata_i) && wstrb_i == $past(wstrb_i));
      end
      if ($past(arvalid_i && !arready)) assume (arvalid_i && araddr_i == $past(araddr_i));
    end
    if (rst_ni) begin
      if (aw_hs) begin
        wr_q <= 1'b1;
        aw_q <= 1'b1;
        wr_addr_q <= awaddr_i[11:2];
      end
      if (w_hs) begin
        wr_q <= 1'b1;
        w_q <= 1'b1;
        wr_data_q <= wdata_i;
        wr_strb_q <= wstrb_i;
      end
      if (b_hs) begin
        wr_q <= 1'b0;
        aw_q <= 1'b0;
        w_q <= 1'b0;
      end
      if (ar_hs) begin
        rd_q <= 1'b1;
        rd_addr_q <= araddr_i[11:2];
      end
      if (r_hs) begin
        rd_q <= 1'b0;
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Reference: the interrupt causes (the spec's rising edge of done) and enables
  logic       done_q = 1'b0;
  logic [1:0] cause_q = '0, unknown_q = '0, en_q = '0, seen_q = '0;  // {error, finish}
  logic [1:0] set;
  always @(posedge clk_i) if (rst_ni) done_q <= f_core_done;
  assign set = {f_core_done && !done_q && f_core_error != 8'd0, f_core_done && !done_q};
  logic clear_wr, en_wr;  // the write in flight goes to IRQ_STATUS / IRQ_ENABLE
  assign clear_wr = wr_q && aw_q && wr_addr_q == 10'(AddrIrqStatus / 4);
  assign en_wr    = wr_q && aw_q && wr_addr_q == 10'(AddrIrqEnable / 4);
  logic [1:0] wr_bits;  // the write's data at IRQ_STATUS's / IRQ_ENABLE's bits, strobed
  assign wr_bits = {wr_data_q[IrqErrorLsb] && wr_strb_q[IrqErrorLsb / 8],
                    wr_data_q[IrqFinishLsb] && wr_strb_q[IrqFinishLsb / 8]};
  always @(posedge clk_i) begin
    if (rst_ni) begin
      seen_q <= wr_q ? seen_q | set : '0;  // edges while the write is in flight
      if (b_hs && clear_wr) begin
        for (int k = 0; k < 2; k++) begin
          if (wr_bits[k]) begin
            if (seen_q[k]) unknown_q[k] <= 1'b1;
            else cause_q[k] <= 1'b0;
          end
        end
      end
      if (b_hs && en_wr) begin
        if (wr_strb_q[IrqFinishLsb / 8]) en_q[0] <= wr_bits[0];
        if (wr_strb_q[IrqErrorLsb / 8]) en_q[1] <= wr_bits[1];
      end
      for (int k = 0; k < 2; k++) begin
        if (set[k]) begin
          cause_q[k] <= 1'b1;
          unknown_q[k] <= 1'b0;
        end
      end
    end
  end
  logic known;  // IRQ_STATUS and IRQ_ENABLE as the reference says
  assign known = unknown_q == '0 && !clear_wr && !en_wr;

  // a read's window: what it answers held from its AR on
  logic stable_q = 1'b0, irq_stable_q = 1'b0;
  logic [2:0] core, core_q;  // {error != 0, done, busy}, and in the cycle before
  assign core = {f_core_error != 8'd0, f_core_done, f_core_busy};
  always @(posedge clk_i) begin
    core_q <= core;
    if (ar_hs) begin
      stable_q <= 1'b1;
      irq_stable_q <= known && set == '0;
    end else if (rd_q) begin
      if (core_q != core) stable_q <= 1'b0;
      if (!known || set != '0) irq_stable_q <= 1'b0;
    end
  end
  logic core_same;
  assign core_same = core_q == core;

  logic [31:0] status_ref, irq_ref;
  always_comb begin
    status_ref = '0;
    status_ref[StatusBusyLsb]  = f_core_busy;
    status_ref[StatusDoneLsb]  = f_core_done;
    status_ref[StatusErrorLsb] = f_core_error != 8'd0;
    irq_ref = '0;
    irq_ref[IrqFinishLsb] = cause_q[0];
    irq_ref[IrqErrorLsb]  = cause_q[1];
  end
  logic irq_known_q = 1'b0;
  logic irq_expect_q = 1'b0;
  always @(posedge clk_i) begin
    irq_known_q  <= rst_ni && known;
    irq_expect_q <= |(cause_q & en_q);
  end

  always @(posedge clk_i) begin
    if (rst_ni && rvalid) begin
      if (rd_addr_q == 10'(AddrStatus / 4) && stable_q && core_same) begin
        status_read: assert ((rdata & 32'(1 << StatusBusyLsb | 1 << StatusDoneLsb
                                          | 1 << StatusErrorLsb)) == status_ref);
      end
      if (rd_addr_q == 10'(AddrIrqStatus / 4) && irq_stable_q && known && set == '0) begin
        irq_status_read: assert (rdata == irq_ref);
      end
    end
    if (rst_ni && irq_known_q && known) begin
      irq_output: assert (irq == irq_expect_q);
    end
    if (rst_ni && f_past && $past(rst_ni)) begin
      cover_status_error: cover (rvalid && rd_addr_q == 10'(AddrStatus / 4) && stable_q
                                 && core_same && rdata[StatusErrorLsb]);
      cover_clear_while_done: cover (rvalid && rd_addr_q == 10'(AddrIrqStatus / 4)
                                     && irq_stable_q && f_core_done && !cause_q[0]);
      cover_irq_raised: cover (irq_known_q && irq);
    end
  end
endmodule : vta_shell_props
