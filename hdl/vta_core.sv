// vta_core: the VTA accelerator core (top level). Fetch routes the instruction stream
// into the load, compute and store command queues; the three stages run concurrently,
// synchronised only by the four dependency-token queues (l2g, g2l, g2s, s2g); the
// on-chip buffers (uop, inp, wgt, acc, out) sit between them; one AXI4 master (memory
// engine) serves fetch, the compute stage's loads (uop, acc) and the load stage (inp,
// wgt) with fixed priority in that order, and the store stage's writes.
// launch_i starts a run (ignored while busy); done_o rises when FINISH has executed, the
// load and store stages have drained and every write is acknowledged, or, after an
// error (error_o != 0), when the AXI master is quiet. See docs/rtl.md.
module vta_core import vta_pkg::*; import vta_err_pkg::*; import vta_stage_pkg::*; #(
  parameter int unsigned AxiAddrWidth = 64,
  parameter int unsigned AxiDataWidth = vta_pkg::AXI_DATA_WIDTH,
  parameter int unsigned AxiIdWidth   = 4
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  input  logic                      launch_i,
  input  logic [31:0]               insn_count_i,
  input  logic [AxiAddrWidth-1:0]   insn_base_i,
  input  logic [AxiAddrWidth-1:0]   dram_base_i,
  input  logic [AxiAddrWidth-1:0]   dram_size_i,
  output logic                      busy_o,
  output logic                      done_o,
  output logic [7:0]                error_o,
  output logic [31:0]               error_insn_o,
  output logic [31:0]               cycles_o,
  output logic [31:0]               load_busy_o,
  output logic [31:0]               compute_busy_o,
  output logic [31:0]               store_busy_o,
  output logic [31:0]               load_insns_o,
  output logic [31:0]               compute_insns_o,
  output logic [31:0]               store_insns_o,
  output logic [31:0]               acc_writes_o,
  // pipeline trace, observation only (the benches' event log reads it; docs/visualize.md);
  // each [2:0] vector is indexed by stage id (STAGE_LOAD, STAGE_COMPUTE, STAGE_STORE)
  output logic [32+INSN_WIDTH-1:0]  trace_cmd_o,        // {index, instruction} fetch routes
  output logic [2:0]                trace_dispatch_o,   // that stage's queue took trace_cmd_o
  output logic [2:0]                trace_take_o,       // the stage took its next instruction
  output logic [2:0]                trace_retire_o,     // the stage retired trace_idx_o
  output logic [2:0][31:0]          trace_idx_o,        // index of the stage's instruction
  output logic [2:0]                trace_pop_wait_o,   // waiting for a token
  output logic [2:0]                trace_push_wait_o,  // waiting for room to push a token
  output logic [2:0]                trace_mem_wait_o,   // in a LOAD / STORE, no data moved
  // AXI4 master
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

  localparam int unsigned Aw       = AxiAddrWidth;
  localparam int unsigned BusBytes = AxiDataWidth / 8;
  localparam int unsigned BusW     = AxiDataWidth;
  localparam int unsigned QW       = 32 + INSN_WIDTH;
  localparam int unsigned InpW     = BATCH * BLOCK_IN * INP_WIDTH;
  localparam int unsigned WgtW     = BLOCK_OUT * BLOCK_IN * WGT_WIDTH;
  localparam int unsigned AccW     = BATCH * BLOCK_OUT * ACC_WIDTH;
  localparam int unsigned OutW     = BATCH * BLOCK_OUT * OUT_WIDTH;
  localparam int unsigned NumRd    = 3;   // 0 fetch, 1 compute (uop, acc), 2 load (inp, wgt)
  // The compute stage's DMA window (uop and acc loads): ACC8_WIN_BEATS bus beats, so that a
  // LOAD ACC_8BIT beat (int8 -> int32, four beats of int32) is written in one cycle (4) or in
  // four quarter-beat cycles (1; the acc buffer then has a quarter of the write banks).
  // vta_compute's vta_dma_rd window (its w_mask_o, w_data_o) must be as wide: Verilator's
  // -Wall lint reports a port width mismatch. (vtabench.spec.config admits 1 and 4, the two
  // windows vta_dma_rd implements.)
  localparam int unsigned CpWinBytes = ACC8_WIN_BEATS * BusBytes;

  // ---------------------------------------------------------------- run control
  logic        start, running_q, done_q, halt;
  logic [7:0]  err_q;
  logic [31:0] err_idx_q;
  logic [Aw-1:0] dram_base_q, dram_size_q;

  assign start = launch_i && !running_q;
  assign halt  = (err_q != ERR_NONE);

  // ---------------------------------------------------------------- memory engine
  logic [NumRd-1:0]         rd_req_valid, rd_req_ready, rd_valid, rd_ready;
  logic [NumRd-1:0][Aw-1:0] rd_req_addr;
  logic [NumRd-1:0][31:0]   rd_req_len;
  logic [BusW-1:0]          rd_data;
  logic                     rd_err;
  logic                     wr_req_valid, wr_req_ready, wr_valid, wr_ready, wr_err;
  logic [Aw-1:0]            wr_req_addr;
  logic [31:0]              wr_req_len;
  logic [BusW-1:0]          wr_data;
  logic [BusBytes-1:0]      wr_strb;
  logic                     mem_idle, mem_wr_idle;

  vta_mem_engine #(
    .AxiAddrWidth (AxiAddrWidth),
    .AxiDataWidth (AxiDataWidth),
    .AxiIdWidth   (AxiIdWidth),
    .NumRd        (NumRd)
  ) u_mem (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .halt_i          (halt),
    .idle_o          (mem_idle),
    .wr_idle_o       (mem_wr_idle),
    .rd_req_valid_i  (rd_req_valid),
    .rd_req_ready_o  (rd_req_ready),
    .rd_req_addr_i   (rd_req_addr),
    .rd_req_len_i    (rd_req_len),
    .rd_valid_o      (rd_valid),
    .rd_ready_i      (rd_ready),
    .rd_data_o       (rd_data),
    .rd_err_o        (rd_err),
    .wr_req_valid_i  (wr_req_valid),
    .wr_req_ready_o  (wr_req_ready),
    .wr_req_addr_i   (wr_req_addr),
    .wr_req_len_i    (wr_req_len),
    .wr_valid_i      (wr_valid),
    .wr_ready_o      (wr_ready),
    .wr_data_i       (wr_data),
    .wr_strb_i       (wr_strb),
    .wr_err_o        (wr_err),
    .m_axi_arid_o    (m_axi_arid_o),
    .m_axi_araddr_o  (m_axi_araddr_o),
    .m_axi_arlen_o   (m_axi_arlen_o),
    .m_axi_arsize_o  (m_axi_arsize_o),
    .m_axi_arburst_o (m_axi_arburst_o),
    .m_axi_arvalid_o (m_axi_arvalid_o),
    .m_axi_arready_i (m_axi_arready_i),
    .m_axi_rid_i     (m_axi_rid_i),
    .m_axi_rdata_i   (m_axi_rdata_i),
    .m_axi_rresp_i   (m_axi_rresp_i),
    .m_axi_rlast_i   (m_axi_rlast_i),
    .m_axi_rvalid_i  (m_axi_rvalid_i),
    .m_axi_rready_o  (m_axi_rready_o),
    .m_axi_awid_o    (m_axi_awid_o),
    .m_axi_awaddr_o  (m_axi_awaddr_o),
    .m_axi_awlen_o   (m_axi_awlen_o),
    .m_axi_awsize_o  (m_axi_awsize_o),
    .m_axi_awburst_o (m_axi_awburst_o),
    .m_axi_awvalid_o (m_axi_awvalid_o),
    .m_axi_awready_i (m_axi_awready_i),
    .m_axi_wdata_o   (m_axi_wdata_o),
    .m_axi_wstrb_o   (m_axi_wstrb_o),
    .m_axi_wlast_o   (m_axi_wlast_o),
    .m_axi_wvalid_o  (m_axi_wvalid_o),
    .m_axi_wready_i  (m_axi_wready_i),
    .m_axi_bid_i     (m_axi_bid_i),
    .m_axi_bresp_i   (m_axi_bresp_i),
    .m_axi_bvalid_i  (m_axi_bvalid_i),
    .m_axi_bready_o  (m_axi_bready_o)
  );

  // ---------------------------------------------------------------- fetch + command queues
  logic [QW-1:0] fq_data;
  logic          f_ld_valid, f_ld_ready, f_cp_valid, f_cp_ready, f_st_valid, f_st_ready;
  logic          fetch_done;
  logic [7:0]    fetch_err;
  logic [31:0]   fetch_err_idx;

  vta_fetch #(
    .AxiAddrWidth (AxiAddrWidth),
    .BusBytes     (BusBytes)
  ) u_fetch (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .start_i      (start),
    .halt_i       (halt),
    .insn_count_i (insn_count_i),
    .insn_base_i  (insn_base_i),
    .done_o       (fetch_done),
    .err_o        (fetch_err),
    .err_idx_o    (fetch_err_idx),
    .req_valid_o  (rd_req_valid[0]),
    .req_ready_i  (rd_req_ready[0]),
    .req_addr_o   (rd_req_addr[0]),
    .req_len_o    (rd_req_len[0]),
    .r_valid_i    (rd_valid[0]),
    .r_ready_o    (rd_ready[0]),
    .r_data_i     (rd_data),
    .r_err_i      (rd_err),
    .q_data_o     (fq_data),
    .ld_valid_o   (f_ld_valid),
    .ld_ready_i   (f_ld_ready),
    .cp_valid_o   (f_cp_valid),
    .cp_ready_i   (f_cp_ready),
    .st_valid_o   (f_st_valid),
    .st_ready_i   (f_st_ready)
  );

  logic          ld_cmd_valid, ld_cmd_ready, cp_cmd_valid, cp_cmd_ready, st_cmd_valid, st_cmd_ready;
  logic [QW-1:0] ld_cmd, cp_cmd, st_cmd;

  vta_fifo #(.Width (QW), .Depth (CMD_QUEUE_DEPTH)) u_ld_q (
    .clk_i (clk_i), .rst_ni (rst_ni), .clr_i (start),
    .wvalid_i (f_ld_valid), .wready_o (f_ld_ready), .wdata_i (fq_data),
    .rvalid_o (ld_cmd_valid), .rready_i (ld_cmd_ready), .rdata_o (ld_cmd), .count_o ()
  );
  vta_fifo #(.Width (QW), .Depth (CMD_QUEUE_DEPTH)) u_cp_q (
    .clk_i (clk_i), .rst_ni (rst_ni), .clr_i (start),
    .wvalid_i (f_cp_valid), .wready_o (f_cp_ready), .wdata_i (fq_data),
    .rvalid_o (cp_cmd_valid), .rready_i (cp_cmd_ready), .rdata_o (cp_cmd), .count_o ()
  );
  vta_fifo #(.Width (QW), .Depth (CMD_QUEUE_DEPTH)) u_st_q (
    .clk_i (clk_i), .rst_ni (rst_ni), .clr_i (start),
    .wvalid_i (f_st_valid), .wready_o (f_st_ready), .wdata_i (fq_data),
    .rvalid_o (st_cmd_valid), .rready_i (st_cmd_ready), .rdata_o (st_cmd), .count_o ()
  );

  // ---------------------------------------------------------------- token queues
  logic l2g_push, l2g_ready, l2g_pop, l2g_valid;
  logic g2l_push, g2l_ready, g2l_pop, g2l_valid;
  logic g2s_push, g2s_ready, g2s_pop, g2s_valid;
  logic s2g_push, s2g_ready, s2g_pop, s2g_valid;

  vta_token_queue #(.Depth (TOKEN_QUEUE_DEPTH)) u_l2g (
    .clk_i (clk_i), .rst_ni (rst_ni), .clr_i (start), .push_i (l2g_push), .ready_o (l2g_ready),
    .pop_i (l2g_pop), .valid_o (l2g_valid), .count_o ()
  );
  vta_token_queue #(.Depth (TOKEN_QUEUE_DEPTH)) u_g2l (
    .clk_i (clk_i), .rst_ni (rst_ni), .clr_i (start), .push_i (g2l_push), .ready_o (g2l_ready),
    .pop_i (g2l_pop), .valid_o (g2l_valid), .count_o ()
  );
  vta_token_queue #(.Depth (TOKEN_QUEUE_DEPTH)) u_g2s (
    .clk_i (clk_i), .rst_ni (rst_ni), .clr_i (start), .push_i (g2s_push), .ready_o (g2s_ready),
    .pop_i (g2s_pop), .valid_o (g2s_valid), .count_o ()
  );
  vta_token_queue #(.Depth (TOKEN_QUEUE_DEPTH)) u_s2g (
    .clk_i (clk_i), .rst_ni (rst_ni), .clr_i (start), .push_i (s2g_push), .ready_o (s2g_ready),
    .pop_i (s2g_pop), .valid_o (s2g_valid), .count_o ()
  );

  // ---------------------------------------------------------------- buffers
  logic                      inp_we, wgt_we, uop_we, acc_win_we;
  logic [31:0]               ld_w_addr, cp_w_addr;
  logic [BusBytes-1:0]       ld_w_mask;
  logic [BusW-1:0]           ld_w_data;
  logic [CpWinBytes-1:0]     cp_w_mask;      // ACC8_WIN_BEATS beats wide (see CpWinBytes)
  logic [CpWinBytes*8-1:0]   cp_w_data;
  logic [LOG_UOP_DEPTH-1:0]  uop_idx;
  logic [UOP_WIDTH-1:0]      uop_data;
  logic [LOG_INP_DEPTH-1:0]  inp_idx;
  logic [InpW-1:0]           inp_data;
  logic [LOG_WGT_DEPTH-1:0]  wgt_idx;
  logic [WgtW-1:0]           wgt_data;
  logic [1:0][LOG_ACC_DEPTH-1:0] acc_idx;
  logic [1:0][AccW-1:0]      acc_data;
  logic                      res_we;
  logic [LOG_ACC_DEPTH-1:0]  res_idx;
  logic [AccW-1:0]           res_acc;
  logic [OutW-1:0]           res_out;
  logic [31:0]               out_addr;
  logic [BusW-1:0]           out_data;

  vta_buf #(
    .ElemBytes (UOP_ELEM_BYTES), .Depth (UOP_DEPTH), .BusBytes (BusBytes), .NumRd (1)
  ) u_uop_buf (
    .clk_i       (clk_i),
    .win_we_i    (uop_we),
    .win_addr_i  ($clog2(UOP_DEPTH * UOP_ELEM_BYTES)'(cp_w_addr)),
    .win_mask_i  (cp_w_mask[BusBytes-1:0]),   // UOP loads use one beat
    .win_data_i  (cp_w_data[BusW-1:0]),
    .elem_we_i   (1'b0),
    .elem_idx_i  ('0),
    .elem_data_i ('0),
    .rd_idx_i    (uop_idx),
    .rd_data_o   (uop_data)
  );

  vta_buf #(
    .ElemBytes (INP_ELEM_BYTES), .Depth (INP_DEPTH), .BusBytes (BusBytes), .NumRd (1)
  ) u_inp_buf (
    .clk_i       (clk_i),
    .win_we_i    (inp_we),
    .win_addr_i  ($clog2(INP_DEPTH * INP_ELEM_BYTES)'(ld_w_addr)),
    .win_mask_i  (ld_w_mask),
    .win_data_i  (ld_w_data),
    .elem_we_i   (1'b0),
    .elem_idx_i  ('0),
    .elem_data_i ('0),
    .rd_idx_i    (inp_idx),
    .rd_data_o   (inp_data)
  );

  vta_buf #(
    .ElemBytes (WGT_ELEM_BYTES), .Depth (WGT_DEPTH), .BusBytes (BusBytes), .NumRd (1)
  ) u_wgt_buf (
    .clk_i       (clk_i),
    .win_we_i    (wgt_we),
    .win_addr_i  ($clog2(WGT_DEPTH * WGT_ELEM_BYTES)'(ld_w_addr)),
    .win_mask_i  (ld_w_mask),
    .win_data_i  (ld_w_data),
    .elem_we_i   (1'b0),
    .elem_idx_i  ('0),
    .elem_data_i ('0),
    .rd_idx_i    (wgt_idx),
    .rd_data_o   (wgt_data)
  );

  vta_buf #(
    .ElemBytes (ACC_ELEM_BYTES), .Depth (ACC_DEPTH), .BusBytes (BusBytes),
    .WinBytes (CpWinBytes), .NumRd (2)
  ) u_acc_buf (
    .clk_i       (clk_i),
    .win_we_i    (acc_win_we),
    .win_addr_i  ($clog2(ACC_DEPTH * ACC_ELEM_BYTES)'(cp_w_addr)),
    .win_mask_i  (cp_w_mask),
    .win_data_i  (cp_w_data),
    .elem_we_i   (res_we),
    .elem_idx_i  (res_idx),
    .elem_data_i (res_acc),
    .rd_idx_i    (acc_idx),
    .rd_data_o   (acc_data)
  );

  vta_buf_out #(
    .ElemBytes (OUT_ELEM_BYTES), .Depth (OUT_DEPTH), .BusBytes (BusBytes)
  ) u_out_buf (
    .clk_i       (clk_i),
    .elem_we_i   (res_we),
    .elem_idx_i  (res_idx),
    .elem_data_i (res_out),
    .win_addr_i  ($clog2(OUT_DEPTH * OUT_ELEM_BYTES)'(out_addr)),
    .win_data_o  (out_data)
  );

  // ---------------------------------------------------------------- stages
  logic        ld_busy, ld_retire, cp_busy, cp_retire, cp_finish, cp_acc_wr, st_busy, st_retire;
  logic [7:0]  ld_err, cp_err, st_err;
  logic [31:0] ld_err_idx, cp_err_idx, st_err_idx;

  vta_load #(
    .AxiAddrWidth (AxiAddrWidth),
    .BusBytes     (BusBytes)
  ) u_load (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .clr_i       (start),
    .halt_i      (halt),
    .dram_off_i  (dram_base_q),
    .dram_size_i (dram_size_q),
    .cmd_valid_i (ld_cmd_valid),
    .cmd_ready_o (ld_cmd_ready),
    .cmd_i       (ld_cmd),
    .g2l_valid_i (g2l_valid),
    .g2l_pop_o   (g2l_pop),
    .l2g_ready_i (l2g_ready),
    .l2g_push_o  (l2g_push),
    .busy_o      (ld_busy),
    .retire_o    (ld_retire),
    .err_o       (ld_err),
    .err_idx_o   (ld_err_idx),
    .pop_wait_o  (trace_pop_wait_o[STAGE_LOAD]),
    .push_wait_o (trace_push_wait_o[STAGE_LOAD]),
    .mem_wait_o  (trace_mem_wait_o[STAGE_LOAD]),
    .req_valid_o (rd_req_valid[2]),
    .req_ready_i (rd_req_ready[2]),
    .req_addr_o  (rd_req_addr[2]),
    .req_len_o   (rd_req_len[2]),
    .r_valid_i   (rd_valid[2]),
    .r_ready_o   (rd_ready[2]),
    .r_data_i    (rd_data),
    .r_err_i     (rd_err),
    .inp_we_o    (inp_we),
    .wgt_we_o    (wgt_we),
    .w_addr_o    (ld_w_addr),
    .w_mask_o    (ld_w_mask),
    .w_data_o    (ld_w_data)
  );

  vta_compute #(
    .AxiAddrWidth (AxiAddrWidth),
    .BusBytes     (BusBytes)
  ) u_compute (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .clr_i        (start),
    .halt_i       (halt),
    .dram_off_i   (dram_base_q),
    .dram_size_i  (dram_size_q),
    .cmd_valid_i  (cp_cmd_valid),
    .cmd_ready_o  (cp_cmd_ready),
    .cmd_i        (cp_cmd),
    .l2g_valid_i  (l2g_valid),
    .l2g_pop_o    (l2g_pop),
    .s2g_valid_i  (s2g_valid),
    .s2g_pop_o    (s2g_pop),
    .g2l_ready_i  (g2l_ready),
    .g2l_push_o   (g2l_push),
    .g2s_ready_i  (g2s_ready),
    .g2s_push_o   (g2s_push),
    .busy_o       (cp_busy),
    .retire_o     (cp_retire),
    .finish_o     (cp_finish),
    .acc_wr_o     (cp_acc_wr),
    .err_o        (cp_err),
    .err_idx_o    (cp_err_idx),
    .pop_wait_o   (trace_pop_wait_o[STAGE_COMPUTE]),
    .push_wait_o  (trace_push_wait_o[STAGE_COMPUTE]),
    .mem_wait_o   (trace_mem_wait_o[STAGE_COMPUTE]),
    .req_valid_o  (rd_req_valid[1]),
    .req_ready_i  (rd_req_ready[1]),
    .req_addr_o   (rd_req_addr[1]),
    .req_len_o    (rd_req_len[1]),
    .r_valid_i    (rd_valid[1]),
    .r_ready_o    (rd_ready[1]),
    .r_data_i     (rd_data),
    .r_err_i      (rd_err),
    .uop_we_o     (uop_we),
    .acc_win_we_o (acc_win_we),
    .w_addr_o     (cp_w_addr),
    .w_mask_o     (cp_w_mask),
    .w_data_o     (cp_w_data),
    .uop_idx_o    (uop_idx),
    .uop_data_i   (uop_data),
    .inp_idx_o    (inp_idx),
    .inp_data_i   (inp_data),
    .wgt_idx_o    (wgt_idx),
    .wgt_data_i   (wgt_data),
    .acc_idx_o    (acc_idx),
    .acc_data_i   (acc_data),
    .res_we_o     (res_we),
    .res_idx_o    (res_idx),
    .res_acc_o    (res_acc),
    .res_out_o    (res_out)
  );

  vta_store #(
    .AxiAddrWidth (AxiAddrWidth),
    .BusBytes     (BusBytes)
  ) u_store (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .clr_i       (start),
    .halt_i      (halt),
    .dram_off_i  (dram_base_q),
    .dram_size_i (dram_size_q),
    .cmd_valid_i (st_cmd_valid),
    .cmd_ready_o (st_cmd_ready),
    .cmd_i       (st_cmd),
    .g2s_valid_i (g2s_valid),
    .g2s_pop_o   (g2s_pop),
    .s2g_ready_i (s2g_ready),
    .s2g_push_o  (s2g_push),
    .busy_o      (st_busy),
    .retire_o    (st_retire),
    .err_o       (st_err),
    .err_idx_o   (st_err_idx),
    .pop_wait_o  (trace_pop_wait_o[STAGE_STORE]),
    .push_wait_o (trace_push_wait_o[STAGE_STORE]),
    .mem_wait_o  (trace_mem_wait_o[STAGE_STORE]),
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

  // ---------------------------------------------------------------- errors, completion, counters
  logic [7:0]  err_d;
  logic [31:0] err_idx_d;
  logic        finished;

  // performance counters: count while running, cleared at start, hold after done
  typedef struct packed {
    logic [31:0] cycles;
    logic [31:0] load_busy;
    logic [31:0] compute_busy;
    logic [31:0] store_busy;
    logic [31:0] load_insns;
    logic [31:0] compute_insns;
    logic [31:0] store_insns;
    logic [31:0] acc_writes;
  } perf_t;
  perf_t perf_q;

  always_comb begin
    err_d     = err_q;
    err_idx_d = err_idx_q;
    if (err_q == ERR_NONE && running_q) begin
      if (ld_err != ERR_NONE) begin
        err_d = ld_err;    err_idx_d = ld_err_idx;
      end else if (cp_err != ERR_NONE) begin
        err_d = cp_err;    err_idx_d = cp_err_idx;
      end else if (st_err != ERR_NONE) begin
        err_d = st_err;    err_idx_d = st_err_idx;
      end else if (wr_err) begin
        err_d = ERR_AXI_WR; err_idx_d = st_err_idx;
      end else if (fetch_err != ERR_NONE) begin
        err_d = fetch_err; err_idx_d = fetch_err_idx;
      end
    end
  end

  assign finished = cp_finish && fetch_done && !ld_cmd_valid && !ld_busy && !st_cmd_valid &&
                    !st_busy && !cp_busy && mem_wr_idle && mem_idle;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      running_q       <= 1'b0;
      done_q          <= 1'b0;
      err_q           <= ERR_NONE;
      err_idx_q       <= '0;
      dram_base_q     <= '0;
      dram_size_q     <= '0;
      perf_q          <= '0;
    end else if (start) begin
      running_q       <= 1'b1;
      done_q          <= 1'b0;
      err_q           <= ERR_NONE;
      err_idx_q       <= '0;
      dram_base_q     <= dram_base_i;
      dram_size_q     <= dram_size_i;
      if ((dram_base_i & Aw'(BusBytes - 1)) != '0) begin
        err_q <= ERR_ALIGN;
      end
      perf_q          <= '0;
    end else if (running_q) begin
      err_q           <= err_d;
      err_idx_q       <= err_idx_d;
      perf_q.cycles        <= perf_q.cycles + 32'd1;
      perf_q.load_busy     <= perf_q.load_busy + 32'(ld_busy);
      perf_q.compute_busy  <= perf_q.compute_busy + 32'(cp_busy);
      perf_q.store_busy    <= perf_q.store_busy + 32'(st_busy);
      perf_q.load_insns    <= perf_q.load_insns + 32'(ld_retire);
      perf_q.compute_insns <= perf_q.compute_insns + 32'(cp_retire);
      perf_q.store_insns   <= perf_q.store_insns + 32'(st_retire);
      perf_q.acc_writes    <= perf_q.acc_writes + 32'(cp_acc_wr);
      if ((halt && mem_idle) || finished) begin
        running_q <= 1'b0;
        done_q    <= 1'b1;
      end
    end
  end

`ifndef SYNTHESIS
`include "vta_assert.svh"
  `VTA_ASSERT_ARMED
  // ---------------------------------------------------------------- assertions (simulation)
  // vta_buf: its window (DMA) and element (compute) write ports are never used together
  a_acc_one_writer: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF)
      !(acc_win_we && res_we))
    else $error("acc buffer: a LOAD window write and a compute write in one cycle");
`endif

  // address bits above a buffer's size are not used (the stages compute in 32 bits)
  logic unused_addr;
  assign unused_addr = ^{ld_w_addr, cp_w_addr, out_addr};

  assign busy_o       = running_q;
  assign done_o       = done_q;
  assign error_o      = err_q;
  assign error_insn_o = err_idx_q;

  assign cycles_o        = perf_q.cycles;
  assign load_busy_o     = perf_q.load_busy;
  assign compute_busy_o  = perf_q.compute_busy;
  assign store_busy_o    = perf_q.store_busy;
  assign load_insns_o    = perf_q.load_insns;
  assign compute_insns_o = perf_q.compute_insns;
  assign store_insns_o   = perf_q.store_insns;
  assign acc_writes_o    = perf_q.acc_writes;

  assign trace_cmd_o                     = fq_data;
  assign trace_dispatch_o[STAGE_LOAD]    = f_ld_valid && f_ld_ready;
  assign trace_dispatch_o[STAGE_COMPUTE] = f_cp_valid && f_cp_ready;
  assign trace_dispatch_o[STAGE_STORE]   = f_st_valid && f_st_ready;
  assign trace_take_o[STAGE_LOAD]        = ld_cmd_valid && ld_cmd_ready;
  assign trace_take_o[STAGE_COMPUTE]     = cp_cmd_valid && cp_cmd_ready;
  assign trace_take_o[STAGE_STORE]       = st_cmd_valid && st_cmd_ready;
  assign trace_retire_o[STAGE_LOAD]      = ld_retire;
  assign trace_retire_o[STAGE_COMPUTE]   = cp_retire;
  assign trace_retire_o[STAGE_STORE]     = st_retire;
  assign trace_idx_o[STAGE_LOAD]         = ld_err_idx;
  assign trace_idx_o[STAGE_COMPUTE]      = cp_err_idx;
  assign trace_idx_o[STAGE_STORE]        = st_err_idx;

endmodule : vta_core
