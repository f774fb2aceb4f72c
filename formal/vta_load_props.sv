// The load stage's token glue (hdl/vta_load.sv): it pops g2l only when the queue holds a token
// and pushes l2g only when the queue has room, for any instruction stream, any token queue
// state and any load run (vta_dma_rd is cut out: its outputs free every cycle). The stage
// machine inside is vta_stage_ctrl (its own rules: stage_ctrl). Proven by k-induction.
module vta_load_props import vta_pkg::*; #(
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
  input logic            g2l_valid_i,
  input logic            l2g_ready_i,
  input logic            req_ready_i,
  input logic            r_valid_i,
  input logic [BusW-1:0] r_data_i,
  input logic            r_err_i
);
  logic g2l_pop, l2g_push, retire;

  vta_load #(.AxiAddrWidth(Aw), .BusBytes(BusW / 8)) dut (
    .clk_i, .rst_ni, .clr_i, .halt_i, .dram_off_i, .dram_size_i, .cmd_valid_i,
    .cmd_ready_o(), .cmd_i, .g2l_valid_i, .g2l_pop_o(g2l_pop), .l2g_ready_i,
    .l2g_push_o(l2g_push), .busy_o(), .retire_o(retire), .err_o(), .err_idx_o(),
    .pop_wait_o(), .push_wait_o(), .mem_wait_o(), .req_valid_o(), .req_ready_i,
    .req_addr_o(), .req_len_o(), .r_valid_i, .r_ready_o(), .r_data_i, .r_err_i, .inp_we_o(),
    .wgt_we_o(), .w_addr_o(), .w_mask_o(), .w_data_o()
  );

  initial assume (!rst_ni);

  always @(posedge clk_i) begin
    if (rst_ni) begin
      pop_has_token: assert (!g2l_pop || g2l_valid_i);
      push_has_room: assert (!l2g_push || l2g_ready_i);
      cover_pop: cover (g2l_pop);
      cover_push: cover (l2g_push);
      cover_retire_no_push: cover (retire && !l2g_push);
    end
  end
endmodule : vta_load_props
