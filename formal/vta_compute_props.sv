// The compute stage's token glue (hdl/vta_compute.sv): it pops l2g and s2g only when each queue
// it pops holds a token and pushes g2l and g2s only when each queue it pushes has room, for any
// instruction stream, any token queue state, any buffer contents and any memory (vta_gemm_dp,
// vta_alu and vta_dma_rd are cut out: their outputs free every cycle). The stage machine inside
// is vta_stage_ctrl (its own rules: stage_ctrl). Proven by k-induction.
module vta_compute_props import vta_pkg::*; #(
  localparam int unsigned Aw   = 64,
  localparam int unsigned BusW = AXI_DATA_WIDTH,
  localparam int unsigned QW   = 32 + INSN_WIDTH,
  localparam int unsigned InpW = BATCH * BLOCK_IN * INP_WIDTH,
  localparam int unsigned WgtW = BLOCK_OUT * BLOCK_IN * WGT_WIDTH,
  localparam int unsigned AccW = BATCH * BLOCK_OUT * ACC_WIDTH
) (
  input logic                 clk_i,
  input logic                 rst_ni,
  input logic                 clr_i,
  input logic                 halt_i,
  input logic [Aw-1:0]        dram_off_i,
  input logic [Aw-1:0]        dram_size_i,
  input logic                 cmd_valid_i,
  input logic [QW-1:0]        cmd_i,
  input logic                 l2g_valid_i,
  input logic                 s2g_valid_i,
  input logic                 g2l_ready_i,
  input logic                 g2s_ready_i,
  input logic                 req_ready_i,
  input logic                 r_valid_i,
  input logic [BusW-1:0]      r_data_i,
  input logic                 r_err_i,
  input logic [UOP_WIDTH-1:0] uop_data_i,
  input logic [InpW-1:0]      inp_data_i,
  input logic [WgtW-1:0]      wgt_data_i,
  input logic [1:0][AccW-1:0] acc_data_i
);
  logic l2g_pop, s2g_pop, g2l_push, g2s_push;

  vta_compute #(.AxiAddrWidth(Aw), .BusBytes(BusW / 8)) dut (
    .clk_i, .rst_ni, .clr_i, .halt_i, .dram_off_i, .dram_size_i, .cmd_valid_i,
    .cmd_ready_o(), .cmd_i, .l2g_valid_i, .l2g_pop_o(l2g_pop), .s2g_valid_i,
    .s2g_pop_o(s2g_pop), .g2l_ready_i, .g2l_push_o(g2l_push), .g2s_ready_i,
    .g2s_push_o(g2s_push), .busy_o(), .retire_o(), .finish_o(), .acc_wr_o(), .err_o(),
    .err_idx_o(), .pop_wait_o(), .push_wait_o(), .mem_wait_o(), .req_valid_o(), .req_ready_i,
    .req_addr_o(), .req_len_o(), .r_valid_i, .r_ready_o(), .r_data_i, .r_err_i, .uop_we_o(),
    .acc_win_we_o(), .w_addr_o(), .w_mask_o(), .w_data_o(), .uop_idx_o(), .uop_data_i,
    .inp_idx_o(), .inp_data_i, .wgt_idx_o(), .wgt_data_i, .acc_idx_o(), .acc_data_i,
    .res_we_o(), .res_idx_o(), .res_acc_o(), .res_out_o()
  );

  initial assume (!rst_ni);

  always @(posedge clk_i) begin
    if (rst_ni) begin
      pop_has_token: assert ((!l2g_pop || l2g_valid_i) && (!s2g_pop || s2g_valid_i));
      push_has_room: assert ((!g2l_push || g2l_ready_i) && (!g2s_push || g2s_ready_i));
      cover_pop_both: cover (l2g_pop && s2g_pop);
      cover_push_both: cover (g2l_push && g2s_push);
    end
  end
endmodule : vta_compute_props
