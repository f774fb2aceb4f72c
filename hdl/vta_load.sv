// vta_load: the load stage. Takes LOAD INP / LOAD WGT instructions in order from its
// command queue, waits for a g2l token when pop_next_dep is set, runs the load/padding
// path (vta_dma_rd) into the inp or wgt buffer, then pushes an l2g token when
// push_next_dep is set (waiting while the l2g queue is full).
module vta_load import vta_pkg::*; import vta_err_pkg::*; #(
  parameter int unsigned AxiAddrWidth = 64,
  parameter int unsigned BusBytes     = 64,
  localparam int unsigned Aw          = AxiAddrWidth,
  localparam int unsigned BusW        = BusBytes * 8,
  localparam int unsigned QW          = 32 + INSN_WIDTH
) (
  input  logic                clk_i,
  input  logic                rst_ni,
  input  logic                clr_i,
  input  logic                halt_i,
  input  logic [Aw-1:0]       dram_off_i,
  input  logic [Aw-1:0]       dram_size_i,
  // command queue
  input  logic                cmd_valid_i,
  output logic                cmd_ready_o,
  input  logic [QW-1:0]       cmd_i,
  // tokens
  input  logic                g2l_valid_i,
  output logic                g2l_pop_o,
  input  logic                l2g_ready_i,
  output logic                l2g_push_o,
  // status
  output logic                busy_o,
  output logic                retire_o,
  output logic [7:0]          err_o,
  output logic [31:0]         err_idx_o,
  // trace (observation only): waiting for a g2l token, for room in l2g, for memory (executing,
  // no buffer write this cycle)
  output logic                pop_wait_o,
  output logic                push_wait_o,
  output logic                mem_wait_o,
  // memory engine read client
  output logic                req_valid_o,
  input  logic                req_ready_i,
  output logic [Aw-1:0]       req_addr_o,
  output logic [31:0]         req_len_o,
  input  logic                r_valid_i,
  output logic                r_ready_o,
  input  logic [BusW-1:0]     r_data_i,
  input  logic                r_err_i,
  // buffer writes
  output logic                inp_we_o,
  output logic                wgt_we_o,
  output logic [31:0]         w_addr_o,
  output logic [BusBytes-1:0] w_mask_o,
  output logic [BusW-1:0]     w_data_o
);

  typedef enum logic [1:0] {S_IDLE, S_POP, S_EXEC, S_PUSH} state_e;

  state_e state_q, state_d;
  logic [INSN_WIDTH-1:0] insn_q;
  logic [31:0] idx_q;
  logic [7:0]  err_q, err_d;
  logic        pop_next, push_next;
  logic        dma_start, dma_busy, dma_done, w_valid;
  logic [7:0]  dma_err;
  logic [2:0]  dma_mtype;

  assign pop_next  = insn_q[MEM_POP_NEXT_DEP_LSB];
  assign push_next = insn_q[MEM_PUSH_NEXT_DEP_LSB];

  always_comb begin
    state_d     = state_q;
    err_d       = err_q;
    cmd_ready_o = 1'b0;
    g2l_pop_o   = 1'b0;
    l2g_push_o  = 1'b0;
    dma_start   = 1'b0;
    retire_o    = 1'b0;
    case (state_q)
      S_IDLE: begin
        if (cmd_valid_i && err_q == ERR_NONE) begin
          cmd_ready_o = 1'b1;
          state_d     = S_POP;
        end
      end
      S_POP: begin
        if (!pop_next || g2l_valid_i) begin
          g2l_pop_o = pop_next;
          dma_start = 1'b1;
          state_d   = S_EXEC;
        end
      end
      S_EXEC: begin
        if (dma_done) begin
          if (dma_err != ERR_NONE) begin
            err_d   = dma_err;
            state_d = S_IDLE;
          end else begin
            state_d = S_PUSH;
          end
        end
      end
      default: begin  // S_PUSH
        if (!push_next || l2g_ready_i) begin
          l2g_push_o = push_next;
          retire_o   = 1'b1;
          state_d    = S_IDLE;
          if (cmd_valid_i) begin  // back to back: take the next instruction now
            cmd_ready_o = 1'b1;
            state_d     = S_POP;
          end
        end
      end
    endcase
    if (halt_i || clr_i) state_d = S_IDLE;
    if (clr_i) err_d = ERR_NONE;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q <= S_IDLE;
      insn_q  <= '0;
      idx_q   <= '0;
      err_q   <= ERR_NONE;
    end else begin
      state_q <= state_d;
      err_q   <= err_d;
      if (cmd_ready_o) begin
        insn_q <= cmd_i[INSN_WIDTH-1:0];
        idx_q  <= cmd_i[QW-1:INSN_WIDTH];
      end
    end
  end

  vta_dma_rd #(
    .AxiAddrWidth (AxiAddrWidth),
    .BusBytes     (BusBytes)
  ) u_dma (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .halt_i      (halt_i),
    .start_i     (dma_start),
    .insn_i      (insn_q),
    .dram_off_i  (dram_off_i),
    .dram_size_i (dram_size_i),
    .busy_o      (dma_busy),
    .done_o      (dma_done),
    .err_o       (dma_err),
    .mtype_o     (dma_mtype),
    .req_valid_o (req_valid_o),
    .req_ready_i (req_ready_i),
    .req_addr_o  (req_addr_o),
    .req_len_o   (req_len_o),
    .r_valid_i   (r_valid_i),
    .r_ready_o   (r_ready_o),
    .r_data_i    (r_data_i),
    .r_err_i     (r_err_i),
    .w_valid_o   (w_valid),
    .w_addr_o    (w_addr_o),
    .w_mask_o    (w_mask_o),
    .w_data_o    (w_data_o)
  );

  assign inp_we_o  = w_valid && (dma_mtype == 3'(MEM_ID_INP));
  assign wgt_we_o  = w_valid && (dma_mtype == 3'(MEM_ID_WGT));
  assign busy_o    = (state_q != S_IDLE) || dma_busy;
  assign err_o     = err_q;
  assign err_idx_o = idx_q;

`ifndef SYNTHESIS
`include "vta_assert.svh"
  `VTA_ASSERT_ARMED
  // ---------------------------------------------------------------- assertions (simulation)
  logic [INSN_WIDTH-1:0] cmd_insn;
  assign cmd_insn = cmd_i[INSN_WIDTH-1:0];

  // what fetch routes here (vta_fetch): LOAD of INP / WGT, no token of the previous stage
  a_cmd_routed: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF)
      cmd_valid_i && cmd_ready_o |->
      cmd_insn[MEM_OPCODE_LSB +: 3] == 3'(OPCODE_LOAD) &&
      cmd_insn[MEM_MEMORY_TYPE_LSB +: 3] inside {3'(MEM_ID_INP), 3'(MEM_ID_WGT)} &&
      !cmd_insn[MEM_POP_PREV_DEP_LSB] && !cmd_insn[MEM_PUSH_PREV_DEP_LSB])
    else $error("load: took an instruction fetch does not route here");
`endif

  assign pop_wait_o  = (state_q == S_POP) && pop_next && !g2l_valid_i;
  assign push_wait_o = (state_q == S_PUSH) && push_next && !l2g_ready_i;
  assign mem_wait_o  = (state_q == S_EXEC) && !w_valid;

endmodule : vta_load
