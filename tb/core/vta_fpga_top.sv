// vta_fpga_top: the place-and-route harness of the FPGA flow (vtabench/rtl/fpga/, docs/fpga.md).
// The shell (core + register block) has about 600 input and 800 output bits, far more than a
// package has pins, so the harness gives it registered ports the way an interconnect would:
// every input of the shell comes from a flip-flop of a shift chain fed 8 bits per cycle from
// din_i, and every output goes into a flip-flop, folded by a registered XOR tree into dout_o.
// Nothing of the shell can be optimised away (every input is a live register, every output
// reaches a pin), and every path the timing analysis reports starts and ends at a flip-flop
// inside the device: the Fmax is the shell's, not the pads'. The harness adds about
// NumIn + NumOut + 72 flip-flops and a few hundred LUTs (counted in the report).
module vta_fpga_top #(
  parameter int unsigned AxiAddrWidth = 64,
  parameter int unsigned AxiDataWidth = vta_pkg::AXI_DATA_WIDTH,
  parameter int unsigned AxiIdWidth   = 4
) (
  input  logic       clk_i,
  input  logic       rst_ni,   // asynchronous, synchronised here
  input  logic [7:0] din_i,
  output logic [7:0] dout_o
);

  localparam int unsigned Aw = AxiAddrWidth;
  localparam int unsigned Dw = AxiDataWidth;
  localparam int unsigned Iw = AxiIdWidth;
  localparam int unsigned Sw = AxiDataWidth / 8;

  typedef struct packed {   // the shell's inputs
    logic [11:0]   s_axil_awaddr;
    logic          s_axil_awvalid;
    logic [31:0]   s_axil_wdata;
    logic [3:0]    s_axil_wstrb;
    logic          s_axil_wvalid;
    logic          s_axil_bready;
    logic [11:0]   s_axil_araddr;
    logic          s_axil_arvalid;
    logic          s_axil_rready;
    logic          m_arready;
    logic [Iw-1:0] m_rid;
    logic [Dw-1:0] m_rdata;
    logic [1:0]    m_rresp;
    logic          m_rlast;
    logic          m_rvalid;
    logic          m_awready;
    logic          m_wready;
    logic [Iw-1:0] m_bid;
    logic [1:0]    m_bresp;
    logic          m_bvalid;
  } in_t;

  typedef struct packed {   // the shell's outputs
    logic          s_axil_awready;
    logic          s_axil_wready;
    logic [1:0]    s_axil_bresp;
    logic          s_axil_bvalid;
    logic          s_axil_arready;
    logic [31:0]   s_axil_rdata;
    logic [1:0]    s_axil_rresp;
    logic          s_axil_rvalid;
    logic          irq;
    logic [Iw-1:0] m_arid;
    logic [Aw-1:0] m_araddr;
    logic [7:0]    m_arlen;
    logic [2:0]    m_arsize;
    logic [1:0]    m_arburst;
    logic          m_arvalid;
    logic          m_rready;
    logic [Iw-1:0] m_awid;
    logic [Aw-1:0] m_awaddr;
    logic [7:0]    m_awlen;
    logic [2:0]    m_awsize;
    logic [1:0]    m_awburst;
    logic          m_awvalid;
    logic [Dw-1:0] m_wdata;
    logic [Sw-1:0] m_wstrb;
    logic          m_wlast;
    logic          m_wvalid;
    logic          m_bready;
  } out_t;

  in_t  in_q;
  out_t out;

  localparam int unsigned NumIn  = $bits(in_q);
  localparam int unsigned NumOut = $bits(out);
  localparam int unsigned Groups = 64;                             // first XOR stage
  localparam int unsigned PerGrp = (NumOut + Groups - 1) / Groups;

  // ---------------------------------------------------------------- reset synchroniser
  // asserted asynchronously, released synchronously: its last stage is the shell's reset
  /* verilator lint_off SYNCASYNCNET */
  logic [1:0] rst_sync_q;
  /* verilator lint_on SYNCASYNCNET */
  logic       rst_n;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) rst_sync_q <= '0;
    else         rst_sync_q <= {rst_sync_q[0], 1'b1};
  end
  assign rst_n = rst_sync_q[1];

  // ---------------------------------------------------------------- inputs: a shift chain
  always_ff @(posedge clk_i) begin
    in_q <= {in_q[NumIn-9:0], din_i};
  end

  // ---------------------------------------------------------------- the shell
  vta_shell #(
    .AxiAddrWidth (AxiAddrWidth),
    .AxiDataWidth (AxiDataWidth),
    .AxiIdWidth   (AxiIdWidth)
  ) u_shell (
    .clk_i            (clk_i),
    .rst_ni           (rst_n),
    .s_axil_awaddr_i  (in_q.s_axil_awaddr),
    .s_axil_awvalid_i (in_q.s_axil_awvalid),
    .s_axil_awready_o (out.s_axil_awready),
    .s_axil_wdata_i   (in_q.s_axil_wdata),
    .s_axil_wstrb_i   (in_q.s_axil_wstrb),
    .s_axil_wvalid_i  (in_q.s_axil_wvalid),
    .s_axil_wready_o  (out.s_axil_wready),
    .s_axil_bresp_o   (out.s_axil_bresp),
    .s_axil_bvalid_o  (out.s_axil_bvalid),
    .s_axil_bready_i  (in_q.s_axil_bready),
    .s_axil_araddr_i  (in_q.s_axil_araddr),
    .s_axil_arvalid_i (in_q.s_axil_arvalid),
    .s_axil_arready_o (out.s_axil_arready),
    .s_axil_rdata_o   (out.s_axil_rdata),
    .s_axil_rresp_o   (out.s_axil_rresp),
    .s_axil_rvalid_o  (out.s_axil_rvalid),
    .s_axil_rready_i  (in_q.s_axil_rready),
    .irq_o            (out.irq),
    .m_axi_arid_o     (out.m_arid),
    .m_axi_araddr_o   (out.m_araddr),
    .m_axi_arlen_o    (out.m_arlen),
    .m_axi_arsize_o   (out.m_arsize),
    .m_axi_arburst_o  (out.m_arburst),
    .m_axi_arvalid_o  (out.m_arvalid),
    .m_axi_arready_i  (in_q.m_arready),
    .m_axi_rid_i      (in_q.m_rid),
    .m_axi_rdata_i    (in_q.m_rdata),
    .m_axi_rresp_i    (in_q.m_rresp),
    .m_axi_rlast_i    (in_q.m_rlast),
    .m_axi_rvalid_i   (in_q.m_rvalid),
    .m_axi_rready_o   (out.m_rready),
    .m_axi_awid_o     (out.m_awid),
    .m_axi_awaddr_o   (out.m_awaddr),
    .m_axi_awlen_o    (out.m_awlen),
    .m_axi_awsize_o   (out.m_awsize),
    .m_axi_awburst_o  (out.m_awburst),
    .m_axi_awvalid_o  (out.m_awvalid),
    .m_axi_awready_i  (in_q.m_awready),
    .m_axi_wdata_o    (out.m_wdata),
    .m_axi_wstrb_o    (out.m_wstrb),
    .m_axi_wlast_o    (out.m_wlast),
    .m_axi_wvalid_o   (out.m_wvalid),
    .m_axi_wready_i   (in_q.m_wready),
    .m_axi_bid_i      (in_q.m_bid),
    .m_axi_bresp_i    (in_q.m_bresp),
    .m_axi_bvalid_i   (in_q.m_bvalid),
    .m_axi_bready_o   (out.m_bready)
  );

  // ---------------------------------------------------------------- outputs: registered XOR tree
  logic [Groups*PerGrp-1:0] out_q;
  logic [Groups-1:0]        grp_q;
  logic [7:0]               dout_q;

  always_ff @(posedge clk_i) begin
    out_q <= (Groups*PerGrp)'(out);
    for (int unsigned g = 0; g < Groups; g++) begin
      grp_q[g] <= ^out_q[g*PerGrp +: PerGrp];
    end
    for (int unsigned k = 0; k < 8; k++) begin
      dout_q[k] <= ^grp_q[k*(Groups/8) +: Groups/8];
    end
  end

  assign dout_o = dout_q;

endmodule : vta_fpga_top
