// vta_store_tb: the top of vta_store's unit bench (tb/unit/test_store.py). The store stage
// reads the out buffer (vta_buf_out, whose element write port, the compute stage's in vta_core,
// is a port for the bench to fill it) and is the memory engine's write client, as in vta_core
// (the read clients idle); the engine's AXI4 write channels are ports named as cocotbext-axi
// expects (m_axi_aw*, m_axi_w*, m_axi_b*), served by its AxiRamWrite. The command queue and the
// token queue handshakes are ports for the bench to drive and check.
module vta_store_tb import vta_pkg::*; import vta_err_pkg::*; #(
  localparam int unsigned Aw   = 64,
  localparam int unsigned Dw   = AXI_DATA_WIDTH,
  localparam int unsigned Bb   = Dw / 8,
  localparam int unsigned IdW  = 4,
  localparam int unsigned QW   = 32 + INSN_WIDTH,
  localparam int unsigned NRd  = 3,
  localparam int unsigned OutW = OUT_ELEM_BYTES * 8,
  localparam int unsigned OIdx = $clog2(OUT_DEPTH)
) (
  input  logic                 clk_i,
  input  logic                 rst_ni,
  input  logic                 clr_i,
  input  logic                 halt_i,
  input  logic [Aw-1:0]        dram_off_i,
  input  logic [Aw-1:0]        dram_size_i,
  input  logic                 cmd_valid_i,
  output logic                 cmd_ready_o,
  input  logic [QW-1:0]        cmd_i,
  input  logic                 g2s_valid_i,
  output logic                 g2s_pop_o,
  input  logic                 s2g_ready_i,
  output logic                 s2g_push_o,
  output logic                 busy_o,
  output logic                 retire_o,
  output logic [ERR_WIDTH-1:0] err_o,
  output logic [31:0]          err_idx_o,
  input  logic                 elem_we_i,
  input  logic [OIdx-1:0]      elem_idx_i,
  input  logic [OutW-1:0]      elem_data_i,
  output logic                 idle_o,
  output logic                 wr_idle_o,
  output logic                 wr_err_o,
  // AXI4 write channels
  output logic [IdW-1:0]       m_axi_awid,
  output logic [Aw-1:0]        m_axi_awaddr,
  output logic [7:0]           m_axi_awlen,
  output logic [2:0]           m_axi_awsize,
  output logic [1:0]           m_axi_awburst,
  output logic                 m_axi_awvalid,
  input  logic                 m_axi_awready,
  output logic [Dw-1:0]        m_axi_wdata,
  output logic [Bb-1:0]        m_axi_wstrb,
  output logic                 m_axi_wlast,
  output logic                 m_axi_wvalid,
  input  logic                 m_axi_wready,
  input  logic [IdW-1:0]       m_axi_bid,
  input  logic [1:0]           m_axi_bresp,
  input  logic                 m_axi_bvalid,
  output logic                 m_axi_bready
);

  logic          wr_req_valid, wr_req_ready, wr_valid, wr_ready;
  logic [Aw-1:0] wr_req_addr;
  logic [31:0]   wr_req_len, out_addr;
  logic [Dw-1:0] wr_data, out_data;
  logic [Bb-1:0] wr_strb;

  vta_buf_out #(
    .ElemBytes (OUT_ELEM_BYTES),
    .Depth     (OUT_DEPTH),
    .BusBytes  (Bb)
  ) u_out (
    .clk_i       (clk_i),
    .elem_we_i   (elem_we_i),
    .elem_idx_i  (elem_idx_i),
    .elem_data_i (elem_data_i),
    .win_addr_i  ($clog2(OUT_DEPTH * OUT_ELEM_BYTES)'(out_addr)),
    .win_data_o  (out_data)
  );

  vta_store #(
    .AxiAddrWidth (Aw),
    .BusBytes     (Bb)
  ) u_store (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .clr_i       (clr_i),
    .halt_i      (halt_i),
    .dram_off_i  (dram_off_i),
    .dram_size_i (dram_size_i),
    .cmd_valid_i (cmd_valid_i),
    .cmd_ready_o (cmd_ready_o),
    .cmd_i       (cmd_i),
    .g2s_valid_i (g2s_valid_i),
    .g2s_pop_o   (g2s_pop_o),
    .s2g_ready_i (s2g_ready_i),
    .s2g_push_o  (s2g_push_o),
    .busy_o      (busy_o),
    .retire_o    (retire_o),
    .err_o       (err_o),
    .err_idx_o   (err_idx_o),
    .pop_wait_o  (),
    .push_wait_o (),
    .mem_wait_o  (),
    .out_addr_o  (out_addr),
    .out_data_i  (out_data),
    .req_valid_o (wr_req_valid),
    .req_ready_i (wr_req_ready),
    .req_addr_o  (wr_req_addr),
    .req_len_o   (wr_req_len),
    .w_valid_o   (wr_valid),
    .w_ready_i   (wr_ready),
    .w_data_o    (wr_data),
    .w_strb_o    (wr_strb)
  );

  vta_mem_engine #(
    .AxiAddrWidth (Aw),
    .AxiDataWidth (Dw),
    .AxiIdWidth   (IdW),
    .NumRd        (NRd)
  ) u_mem (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .halt_i          (halt_i),
    .idle_o          (idle_o),
    .wr_idle_o       (wr_idle_o),
    .rd_req_valid_i  ('0),
    .rd_req_ready_o  (),
    .rd_req_addr_i   ('0),
    .rd_req_len_i    ('0),
    .rd_valid_o      (),
    .rd_ready_i      ('1),
    .rd_data_o       (),
    .rd_err_o        (),
    .wr_req_valid_i  (wr_req_valid),
    .wr_req_ready_o  (wr_req_ready),
    .wr_req_addr_i   (wr_req_addr),
    .wr_req_len_i    (wr_req_len),
    .wr_valid_i      (wr_valid),
    .wr_ready_o      (wr_ready),
    .wr_data_i       (wr_data),
    .wr_strb_i       (wr_strb),
    .wr_err_o        (wr_err_o),
    .m_axi_arid_o    (),
    .m_axi_araddr_o  (),
    .m_axi_arlen_o   (),
    .m_axi_arsize_o  (),
    .m_axi_arburst_o (),
    .m_axi_arvalid_o (),
    .m_axi_arready_i (1'b0),
    .m_axi_rid_i     ('0),
    .m_axi_rdata_i   ('0),
    .m_axi_rresp_i   ('0),
    .m_axi_rlast_i   (1'b0),
    .m_axi_rvalid_i  (1'b0),
    .m_axi_rready_o  (),
    .m_axi_awid_o    (m_axi_awid),
    .m_axi_awaddr_o  (m_axi_awaddr),
    .m_axi_awlen_o   (m_axi_awlen),
    .m_axi_awsize_o  (m_axi_awsize),
    .m_axi_awburst_o (m_axi_awburst),
    .m_axi_awvalid_o (m_axi_awvalid),
    .m_axi_awready_i (m_axi_awready),
    .m_axi_wdata_o   (m_axi_wdata),
    .m_axi_wstrb_o   (m_axi_wstrb),
    .m_axi_wlast_o   (m_axi_wlast),
    .m_axi_wvalid_o  (m_axi_wvalid),
    .m_axi_wready_i  (m_axi_wready),
    .m_axi_bid_i     (m_axi_bid),
    .m_axi_bresp_i   (m_axi_bresp),
    .m_axi_bvalid_i  (m_axi_bvalid),
    .m_axi_bready_o  (m_axi_bready)
  );

endmodule : vta_store_tb
