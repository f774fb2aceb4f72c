// vta_compute_tb: the top of vta_compute's unit bench (tb/unit/test_compute.py). The compute
// stage sits between the buffers it uses in vta_core (uop, inp, wgt, acc with its
// ACC8_WIN_BEATS-beat window and two read ports, out) and is the memory engine's read client 1
// (clients 0 and 2 idle), whose AXI4 read channels are ports named as cocotbext-axi expects
// (m_axi_ar*, m_axi_r*) for its AxiRamRead; the write side of the engine is idle. The command
// queue and the token handshakes are ports for the bench to drive and check; the inp and wgt
// buffers are filled through their window port (pre_*: the load stage's port in vta_core), and
// the stage's buffer writes (uop / acc window, acc + out element) are outputs to check.
module vta_compute_tb import vta_pkg::*; import vta_err_pkg::*; #(
  localparam int unsigned Aw     = 64,
  localparam int unsigned Dw     = AXI_DATA_WIDTH,
  localparam int unsigned Bb     = Dw / 8,
  localparam int unsigned IdW    = 4,
  localparam int unsigned QW     = 32 + INSN_WIDTH,
  localparam int unsigned NRd    = 3,
  localparam int unsigned WinB   = ACC8_WIN_BEATS * Bb,
  localparam int unsigned InpW   = BATCH * BLOCK_IN * INP_WIDTH,
  localparam int unsigned WgtW   = BLOCK_OUT * BLOCK_IN * WGT_WIDTH,
  localparam int unsigned AccW   = BATCH * BLOCK_OUT * ACC_WIDTH,
  localparam int unsigned OutW   = BATCH * BLOCK_OUT * OUT_WIDTH
) (
  input  logic                     clk_i,
  input  logic                     rst_ni,
  input  logic                     clr_i,
  input  logic                     halt_i,
  input  logic [Aw-1:0]            dram_off_i,
  input  logic [Aw-1:0]            dram_size_i,
  input  logic                     cmd_valid_i,
  output logic                     cmd_ready_o,
  input  logic [QW-1:0]            cmd_i,
  input  logic                     l2g_valid_i,
  output logic                     l2g_pop_o,
  input  logic                     s2g_valid_i,
  output logic                     s2g_pop_o,
  input  logic                     g2l_ready_i,
  output logic                     g2l_push_o,
  input  logic                     g2s_ready_i,
  output logic                     g2s_push_o,
  output logic                     busy_o,
  output logic                     retire_o,
  output logic                     finish_o,
  output logic [ERR_WIDTH-1:0]     err_o,
  output logic [31:0]              err_idx_o,
  output logic                     idle_o,
  // inp / wgt fill (window writes of one bus beat)
  input  logic                     pre_inp_we_i,
  input  logic                     pre_wgt_we_i,
  input  logic [31:0]              pre_addr_i,
  input  logic [Bb-1:0]            pre_mask_i,
  input  logic [Dw-1:0]            pre_data_i,
  // the stage's buffer writes
  output logic                     uop_we_o,
  output logic                     acc_win_we_o,
  output logic [31:0]              w_addr_o,
  output logic [WinB-1:0]          w_mask_o,
  output logic [WinB*8-1:0]        w_data_o,
  output logic                     res_we_o,
  output logic [LOG_ACC_DEPTH-1:0] res_idx_o,
  output logic [AccW-1:0]          res_acc_o,
  output logic [OutW-1:0]          res_out_o,
  // AXI4 read channels
  output logic [IdW-1:0]           m_axi_arid,
  output logic [Aw-1:0]            m_axi_araddr,
  output logic [7:0]               m_axi_arlen,
  output logic [2:0]               m_axi_arsize,
  output logic [1:0]               m_axi_arburst,
  output logic                     m_axi_arvalid,
  input  logic                     m_axi_arready,
  input  logic [IdW-1:0]           m_axi_rid,
  input  logic [Dw-1:0]            m_axi_rdata,
  input  logic [1:0]               m_axi_rresp,
  input  logic                     m_axi_rlast,
  input  logic                     m_axi_rvalid,
  output logic                     m_axi_rready
);

  logic [NRd-1:0]         rd_req_valid, rd_req_ready, rd_valid, rd_ready;
  logic [NRd-1:0][Aw-1:0] rd_req_addr;
  logic [NRd-1:0][31:0]   rd_req_len;
  logic [Dw-1:0]          rd_data;
  logic                   rd_err;

  // clients 0 (fetch) and 2 (load): no requests, beats accepted
  assign rd_req_valid[0] = 1'b0;
  assign rd_req_addr[0]  = '0;
  assign rd_req_len[0]   = '0;
  assign rd_ready[0]     = 1'b1;
  assign rd_req_valid[2] = 1'b0;
  assign rd_req_addr[2]  = '0;
  assign rd_req_len[2]   = '0;
  assign rd_ready[2]     = 1'b1;

  logic [LOG_UOP_DEPTH-1:0]      uop_idx;
  logic [UOP_WIDTH-1:0]          uop_data;
  logic [LOG_INP_DEPTH-1:0]      inp_idx;
  logic [InpW-1:0]               inp_data;
  logic [LOG_WGT_DEPTH-1:0]      wgt_idx;
  logic [WgtW-1:0]               wgt_data;
  logic [1:0][LOG_ACC_DEPTH-1:0] acc_idx;
  logic [1:0][AccW-1:0]          acc_data;

  vta_compute #(
    .AxiAddrWidth (Aw),
    .BusBytes     (Bb)
  ) u_compute (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .clr_i        (clr_i),
    .halt_i       (halt_i),
    .dram_off_i   (dram_off_i),
    .dram_size_i  (dram_size_i),
    .cmd_valid_i  (cmd_valid_i),
    .cmd_ready_o  (cmd_ready_o),
    .cmd_i        (cmd_i),
    .l2g_valid_i  (l2g_valid_i),
    .l2g_pop_o    (l2g_pop_o),
    .s2g_valid_i  (s2g_valid_i),
    .s2g_pop_o    (s2g_pop_o),
    .g2l_ready_i  (g2l_ready_i),
    .g2l_push_o   (g2l_push_o),
    .g2s_ready_i  (g2s_ready_i),
    .g2s_push_o   (g2s_push_o),
    .busy_o       (busy_o),
    .retire_o     (retire_o),
    .finish_o     (finish_o),
    .acc_wr_o     (),
    .err_o        (err_o),
    .err_idx_o    (err_idx_o),
    .pop_wait_o   (),
    .push_wait_o  (),
    .mem_wait_o   (),
    .req_valid_o  (rd_req_valid[1]),
    .req_ready_i  (rd_req_ready[1]),
    .req_addr_o   (rd_req_addr[1]),
    .req_len_o    (rd_req_len[1]),
    .r_valid_i    (rd_valid[1]),
    .r_ready_o    (rd_ready[1]),
    .r_data_i     (rd_data),
    .r_err_i      (rd_err),
    .uop_we_o     (uop_we_o),
    .acc_win_we_o (acc_win_we_o),
    .w_addr_o     (w_addr_o),
    .w_mask_o     (w_mask_o),
    .w_data_o     (w_data_o),
    .uop_idx_o    (uop_idx),
    .uop_data_i   (uop_data),
    .inp_idx_o    (inp_idx),
    .inp_data_i   (inp_data),
    .wgt_idx_o    (wgt_idx),
    .wgt_data_i   (wgt_data),
    .acc_idx_o    (acc_idx),
    .acc_data_i   (acc_data),
    .res_we_o     (res_we_o),
    .res_idx_o    (res_idx_o),
    .res_acc_o    (res_acc_o),
    .res_out_o    (res_out_o)
  );

  vta_buf #(
    .ElemBytes (UOP_ELEM_BYTES), .Depth (UOP_DEPTH), .BusBytes (Bb), .NumRd (1)
  ) u_uop_buf (
    .clk_i       (clk_i),
    .win_we_i    (uop_we_o),
    .win_addr_i  ($clog2(UOP_DEPTH * UOP_ELEM_BYTES)'(w_addr_o)),
    .win_mask_i  (w_mask_o[Bb-1:0]),   // UOP loads use one beat
    .win_data_i  (w_data_o[Dw-1:0]),
    .elem_we_i   (1'b0),
    .elem_idx_i  ('0),
    .elem_data_i ('0),
    .rd_idx_i    (uop_idx),
    .rd_data_o   (uop_data)
  );

  vta_buf #(
    .ElemBytes (INP_ELEM_BYTES), .Depth (INP_DEPTH), .BusBytes (Bb), .NumRd (1)
  ) u_inp_buf (
    .clk_i       (clk_i),
    .win_we_i    (pre_inp_we_i),
    .win_addr_i  ($clog2(INP_DEPTH * INP_ELEM_BYTES)'(pre_addr_i)),
    .win_mask_i  (pre_mask_i),
    .win_data_i  (pre_data_i),
    .elem_we_i   (1'b0),
    .elem_idx_i  ('0),
    .elem_data_i ('0),
    .rd_idx_i    (inp_idx),
    .rd_data_o   (inp_data)
  );

  vta_buf #(
    .ElemBytes (WGT_ELEM_BYTES), .Depth (WGT_DEPTH), .BusBytes (Bb), .NumRd (1)
  ) u_wgt_buf (
    .clk_i       (clk_i),
    .win_we_i    (pre_wgt_we_i),
    .win_addr_i  ($clog2(WGT_DEPTH * WGT_ELEM_BYTES)'(pre_addr_i)),
    .win_mask_i  (pre_mask_i),
    .win_data_i  (pre_data_i),
    .elem_we_i   (1'b0),
    .elem_idx_i  ('0),
    .elem_data_i ('0),
    .rd_idx_i    (wgt_idx),
    .rd_data_o   (wgt_data)
  );

  vta_buf #(
    .ElemBytes (ACC_ELEM_BYTES), .Depth (ACC_DEPTH), .BusBytes (Bb), .WinBytes (WinB),
    .NumRd (2)
  ) u_acc_buf (
    .clk_i       (clk_i),
    .win_we_i    (acc_win_we_o),
    .win_addr_i  ($clog2(ACC_DEPTH * ACC_ELEM_BYTES)'(w_addr_o)),
    .win_mask_i  (w_mask_o),
    .win_data_i  (w_data_o),
    .elem_we_i   (res_we_o),
    .elem_idx_i  (res_idx_o),
    .elem_data_i (res_acc_o),
    .rd_idx_i    (acc_idx),
    .rd_data_o   (acc_data)
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

endmodule : vta_compute_tb
