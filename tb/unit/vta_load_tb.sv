// vta_load_tb: the top of vta_load's unit bench (tb/unit/test_load.py). The load stage is the
// memory engine's read client 2, as in vta_core (clients 0 and 1 idle), and the engine's AXI4
// read channels are ports named as cocotbext-axi expects (m_axi_ar*, m_axi_r*), served by its
// AxiRamRead; the write side of the engine is idle. The command queue, the token queue
// handshakes and the buffer write port are ports for the bench to drive and check.
module vta_load_tb import vta_pkg::*; import vta_err_pkg::*; #(
  localparam int unsigned Aw   = 64,
  localparam int unsigned Dw   = AXI_DATA_WIDTH,
  localparam int unsigned Bb   = Dw / 8,
  localparam int unsigned IdW  = 4,
  localparam int unsigned QW   = 32 + INSN_WIDTH,
  localparam int unsigned NRd  = 3
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
  input  logic                 g2l_valid_i,
  output logic                 g2l_pop_o,
  input  logic                 l2g_ready_i,
  output logic                 l2g_push_o,
  output logic                 busy_o,
  output logic                 retire_o,
  output logic [ERR_WIDTH-1:0] err_o,
  output logic [31:0]          err_idx_o,
  output logic                 inp_we_o,
  output logic                 wgt_we_o,
  output logic [31:0]          w_addr_o,
  output logic [Bb-1:0]        w_mask_o,
  output logic [Dw-1:0]        w_data_o,
  output logic                 idle_o,
  // AXI4 read channels
  output logic [IdW-1:0]       m_axi_arid,
  output logic [Aw-1:0]        m_axi_araddr,
  output logic [7:0]           m_axi_arlen,
  output logic [2:0]           m_axi_arsize,
  output logic [1:0]           m_axi_arburst,
  output logic                 m_axi_arvalid,
  input  logic                 m_axi_arready,
  input  logic [IdW-1:0]       m_axi_rid,
  input  logic [Dw-1:0]        m_axi_rdata,
  input  logic [1:0]           m_axi_rresp,
  input  logic                 m_axi_rlast,
  input  logic                 m_axi_rvalid,
  output logic                 m_axi_rready
);

  logic [NRd-1:0]         rd_req_valid, rd_req_ready, rd_valid, rd_ready;
  logic [NRd-1:0][Aw-1:0] rd_req_addr;
  logic [NRd-1:0][31:0]   rd_req_len;
  logic [Dw-1:0]          rd_data;
  logic                   rd_err;

  // clients 0 (fetch) and 1 (compute): no requests, beats accepted
  assign rd_req_valid[1:0] = '0;
  assign rd_req_addr[1:0]  = '0;
  assign rd_req_len[1:0]   = '0;
  assign rd_ready[1:0]     = '1;

  vta_load #(
    .AxiAddrWidth (Aw),
    .BusBytes     (Bb)
  ) u_load (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .clr_i       (clr_i),
    .halt_i      (halt_i),
    .dram_off_i  (dram_off_i),
    .dram_size_i (dram_size_i),
    .cmd_valid_i (cmd_valid_i),
    .cmd_ready_o (cmd_ready_o),
    .cmd_i       (cmd_i),
    .g2l_valid_i (g2l_valid_i),
    .g2l_pop_o   (g2l_pop_o),
    .l2g_ready_i (l2g_ready_i),
    .l2g_push_o  (l2g_push_o),
    .busy_o      (busy_o),
    .retire_o    (retire_o),
    .err_o       (err_o),
    .err_idx_o   (err_idx_o),
    .pop_wait_o  (),
    .push_wait_o (),
    .mem_wait_o  (),
    .req_valid_o (rd_req_valid[2]),
    .req_ready_i (rd_req_ready[2]),
    .req_addr_o  (rd_req_addr[2]),
    .req_len_o   (rd_req_len[2]),
    .r_valid_i   (rd_valid[2]),
    .r_ready_o   (rd_ready[2]),
    .r_data_i    (rd_data),
    .r_err_i     (rd_err),
    .inp_we_o    (inp_we_o),
    .wgt_we_o    (wgt_we_o),
    .w_addr_o    (w_addr_o),
    .w_mask_o    (w_mask_o),
    .w_data_o    (w_data_o)
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
    .wr_idle_o       (),
    .rd_req_valid_i  (rd_req_valid),
    .rd_req_ready_o  (rd_req_ready),
    .rd_req_addr_i   (rd_req_addr),
    .rd_req_len_i    (rd_req_len),
    .rd_valid_o      (rd_valid),
    .rd_ready_i      (rd_ready),
    .rd_data_o       (rd_data),
    .rd_err_o        (rd_err),
    .wr_req_valid_i  (1'b0),
    .wr_req_ready_o  (),
    .wr_req_addr_i   ('0),
    .wr_req_len_i    ('0),
    .wr_valid_i      (1'b0),
    .wr_ready_o      (),
    .wr_data_i       ('0),
    .wr_strb_i       ('0),
    .wr_err_o        (),
    .m_axi_arid_o    (m_axi_arid),
    .m_axi_araddr_o  (m_axi_araddr),
    .m_axi_arlen_o   (m_axi_arlen),
    .m_axi_arsize_o  (m_axi_arsize),
    .m_axi_arburst_o (m_axi_arburst),
    .m_axi_arvalid_o (m_axi_arvalid),
    .m_axi_arready_i (m_axi_arready),
    .m_axi_rid_i     (m_axi_rid),
    .m_axi_rdata_i   (m_axi_rdata),
    .m_axi_rresp_i   (m_axi_rresp),
    .m_axi_rlast_i   (m_axi_rlast),
    .m_axi_rvalid_i  (m_axi_rvalid),
    .m_axi_rready_o  (m_axi_rready),
    .m_axi_awid_o    (),
    .m_axi_awaddr_o  (),
    .m_axi_awlen_o   (),
    .m_axi_awsize_o  (),
    .m_axi_awburst_o (),
    .m_axi_awvalid_o (),
    .m_axi_awready_i (1'b0),
    .m_axi_wdata_o   (),
    .m_axi_wstrb_o   (),
    .m_axi_wlast_o   (),
    .m_axi_wvalid_o  (),
    .m_axi_wready_i  (1'b0),
    .m_axi_bid_i     ('0),
    .m_axi_bresp_i   ('0),
    .m_axi_bvalid_i  (1'b0),
    .m_axi_bready_o  ()
  );

endmodule : vta_load_tb
