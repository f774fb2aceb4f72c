// The store stage's token glue (hdl/vta_store.sv): it pops g2s only when the queue holds a token
// and pushes s2g only when the queue has room, for any instruction stream, any token queue
// state, any store run and any memory (vta_span_mask and vta_fifo are cut out: their outputs
// free every cycle). The stage machine inside is vta_stage_ctrl (its own rules: stage_ctrl).
// Proven by k-induction.
module vta_store_props import vta_pkg::*; #(
  localparam int unsigned Aw   = 64,
  localparam int unsigned BusW = AXI_DATA_WIDTH,
  localparam int unsigned QW   = 32 + INSN_WIDTH
) (
  input logic            clk_i,
  input logic            rst_ni,
  input logic            clr_i,
  input logic            halt_i,
  input logic [Aw-1:0]   dram_off_i,
  input logic [Aw-1:0]   dram_size_i,
  input logic            cmd_valid_i,
  input logic [QW-1:0]   cmd_i,
  input logic            g2s_valid_i,
  input logic            s2g_ready_i,
  input logic [BusW-1:0] out_data_i,
  input logic            req_ready_i,
  input logic            w_ready_i
);
  logic g2s_pop, s2g_push, retire;

  vta_store #(.AxiAddrWidth(Aw), .BusBytes(BusW / 8)) dut (
    .clk_i, .rst_ni, .clr_i, .halt_i, .dram_off_i, .dram_size_i, .cmd_valid_i,
    .cmd_ready_o(), .cmd_i, .g2s_valid_i, .g2s_pop_o(g2s_pop), .s2g_ready_i,
    .s2g_push_o(s2g_push), .busy_o(), .retire_o(retire), .err_o(), .err_idx_o(),
    .pop_wait_o(), .push_wait_o(), .mem_wait_o(), .out_addr_o(), .out_data_i, .req_valid_o(),
    .req_ready_i, .req_addr_o(), .req_len_o(), .w_valid_o(), .w_ready_i, .w_data_o(),
    .w_strb_o()
  );

  initial assume (!rst_ni);

  always @(posedge clk_i) begin
    if (rst_ni) begin
      pop_has_token: assert (!g2s_pop || g2s_valid_i);
      push_has_room: assert (!s2g_push || s2g_ready_i);
      cover_pop: cover (g2s_pop);
      cover_push: cover (s2g_push);
      cover_retire_no_push: cover (retire && !s2g_push);
    end
  end
endmodule : vta_store_props
