// vta_load: the load stage. Takes LOAD INP / LOAD WGT instructions in order from its
// command queue, waits for a g2l token when pop_next_dep is set, runs the load/padding
// path (vta_dma_rd) into the inp or wgt buffer, then pushes an l2g token when
// push_next_dep is set (waiting while the l2g queue is full): the steps of vta_stage_ctrl.
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
  output logic [ERR_WIDTH-1:0]   err_o,
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

  logic [INSN_WIDTH-1:0] insn;
  logic        pop_next, push_next, pop_ok, push_ok, take, retire, in_run, ctrl_busy;
  logic        dma_busy, dma_done, w_valid;
  logic [ERR_WIDTH-1:0] dma_err;
  logic [MEMTYPE_WIDTH-1:0] dma_mtype;

  assign pop_next  = insn[MEM_POP_NEXT_DEP_LSB];
  assign push_next = insn[MEM_PUSH_NEXT_DEP_LSB];
  assign pop_ok  = !pop_next || g2l_valid_i;
  assign push_ok = !push_next || l2g_ready_i;

  // take, pop g2l, run the load (a failed check ends it with the error), push l2g
  vta_stage_ctrl u_ctrl (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .clr_i        (clr_i),
    .halt_i       (halt_i),
    .cmd_valid_i  (cmd_valid_i),
    .cmd_ready_o  (cmd_ready_o),
    .cmd_i        (cmd_i),
    .insn_o       (insn),
    .pop_ok_i     (pop_ok),
    .take_o       (take),
    .push_ok_i    (push_ok),
    .retire_o     (retire),
    .start_err_i  (ERR_NONE),
    .start_skip_i (1'b0),
    .run_done_i   (dma_done),
    .run_err_i    (dma_err),
    .abort_i      (1'b0),
    .abort_err_i  (ERR_NONE),
    .in_pop_o     (),
    .in_run_o     (in_run),
    .busy_o       (ctrl_busy),
    .err_o        (err_o),
    .err_idx_o    (err_idx_o),
    .pop_wait_o   (pop_wait_o),
    .push_wait_o  (push_wait_o)
  );

  assign g2l_pop_o  = take && pop_next;
  assign l2g_push_o = retire && push_next;
  assign retire_o   = retire;

  vta_dma_rd #(
    .AxiAddrWidth (AxiAddrWidth),
    .BusBytes     (BusBytes)
  ) u_dma (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .halt_i      (halt_i),
    .start_i     (take),
    .insn_i      (insn),
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

  assign inp_we_o  = w_valid && (dma_mtype == MEMTYPE_WIDTH'(MEM_ID_INP));
  assign wgt_we_o  = w_valid && (dma_mtype == MEMTYPE_WIDTH'(MEM_ID_WGT));
  assign busy_o    = ctrl_busy || dma_busy;

`ifndef SYNTHESIS
`include "vta_assert.svh"
  `VTA_ASSERT_ARMED
  // ---------------------------------------------------------------- assertions (simulation)
  logic [INSN_WIDTH-1:0] cmd_insn;
  assign cmd_insn = cmd_i[INSN_WIDTH-1:0];

  // what fetch routes here (vta_fetch): LOAD of INP / WGT, no token of the previous stage
  a_cmd_routed: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF)
      cmd_valid_i && cmd_ready_o |->
      cmd_insn[MEM_OPCODE_LSB +: OPCODE_WIDTH] == OPCODE_WIDTH'(OPCODE_LOAD) &&
      cmd_insn[MEM_MEMORY_TYPE_LSB +: MEMTYPE_WIDTH] inside {MEMTYPE_WIDTH'(MEM_ID_INP), MEMTYPE_WIDTH'(MEM_ID_WGT)} &&
      !cmd_insn[MEM_POP_PREV_DEP_LSB] && !cmd_insn[MEM_PUSH_PREV_DEP_LSB])
    else $error("load: took an instruction fetch does not route here");
`endif

  assign mem_wait_o  = in_run && !w_valid;

endmodule : vta_load
