// vta_stage_ctrl: the control machine of an execution stage (vta_load, vta_compute, vta_store):
// take the next instruction from the stage's command queue, wait until every token queue it
// pops holds a token and take them (take_o), run it (the stage's datapath, in_run_o until
// run_done_i), then wait until every queue it pushes has room, push and retire (retire_o). The
// stage decodes the instruction (insn_o) and says which tokens it needs (pop_ok_i, push_ok_i)
// and how it runs; the machine owns the order of these steps, the instruction and its index,
// and the stage's error:
//   S_IDLE  take an instruction when the queue has one and no error is pending
//   S_POP   wait for pop_ok_i; in that cycle (take_o) the stage pops its tokens and the
//           instruction fails (start_err_i), needs no run (start_skip_i) or starts its run
//   S_RUN   wait for run_done_i; run_err_i != ERR_NONE ends the instruction with that error
//   S_PUSH  wait for push_ok_i; in that cycle (retire_o) the stage pushes its tokens, and the
//           next instruction is taken at once when the queue has one (back to back)
// abort_i stops the stage with abort_err_i in any state (compute's index check). An error
// leaves the stage idle, keeping err_o until clr_i (the launch of the next run); halt_i sends
// it idle at once (the core stops on any stage's error).
module vta_stage_ctrl import vta_pkg::*; import vta_err_pkg::*; #(
  localparam int unsigned IdxW = 32,                // index of an instruction in the stream
  localparam int unsigned QW   = IdxW + INSN_WIDTH  // a command queue entry: {index, insn}
) (
  input  logic                  clk_i,
  input  logic                  rst_ni,
  input  logic                  clr_i,
  input  logic                  halt_i,
  // command queue
  input  logic                  cmd_valid_i,
  output logic                  cmd_ready_o,
  input  logic [QW-1:0]         cmd_i,
  output logic [INSN_WIDTH-1:0] insn_o,        // the instruction taken, held until the next
  // tokens: every queue the instruction pops holds one / every queue it pushes has room
  input  logic                  pop_ok_i,
  output logic                  take_o,        // pop the tokens, start the instruction
  input  logic                  push_ok_i,
  output logic                  retire_o,      // push the tokens, the instruction is done
  // how the instruction goes on after take_o
  input  logic [ERR_WIDTH-1:0]  start_err_i,   // != ERR_NONE: it fails at once
  input  logic                  start_skip_i,  // nothing to run: straight to the push
  input  logic                  run_done_i,    // in S_RUN: the run is over ...
  input  logic [ERR_WIDTH-1:0]  run_err_i,     // ... with this error (ERR_NONE: push)
  input  logic                  abort_i,       // any state: stop with abort_err_i
  input  logic [ERR_WIDTH-1:0]  abort_err_i,
  // state
  output logic                  in_pop_o,
  output logic                  in_run_o,
  output logic                  busy_o,        // not idle
  output logic [ERR_WIDTH-1:0]  err_o,
  output logic [IdxW-1:0]       err_idx_o,     // index of the instruction taken last
  // trace: waiting for a token, for room to push one
  output logic                  pop_wait_o,
  output logic                  push_wait_o
);

  typedef enum logic [1:0] {S_IDLE, S_POP, S_RUN, S_PUSH} state_e;

  state_e                state_q, state_d;
  logic [ERR_WIDTH-1:0]  err_q, err_d;
  logic [INSN_WIDTH-1:0] insn_q;
  logic [IdxW-1:0]       idx_q;

  always_comb begin
    state_d     = state_q;
    err_d       = err_q;
    cmd_ready_o = 1'b0;
    take_o      = 1'b0;
    retire_o    = 1'b0;
    unique case (state_q)
      S_IDLE: begin
        if (cmd_valid_i && err_q == ERR_NONE) begin
          cmd_ready_o = 1'b1;
          state_d     = S_POP;
        end
      end
      S_POP: begin
        if (pop_ok_i) begin
          take_o = 1'b1;
          if (start_err_i != ERR_NONE) begin
            err_d   = start_err_i;
            state_d = S_IDLE;
          end else if (start_skip_i) begin
            state_d = S_PUSH;
          end else begin
            state_d = S_RUN;
          end
        end
      end
      S_RUN: begin
        if (run_done_i) begin
          if (run_err_i != ERR_NONE) begin
            err_d   = run_err_i;
            state_d = S_IDLE;
          end else begin
            state_d = S_PUSH;
          end
        end
      end
      S_PUSH: begin
        if (push_ok_i) begin
          retire_o = 1'b1;
          state_d  = S_IDLE;
          if (cmd_valid_i) begin  // back to back: take the next instruction now
            cmd_ready_o = 1'b1;
            state_d     = S_POP;
          end
        end
      end
    endcase
    if (abort_i) begin
      err_d   = abort_err_i;
      state_d = S_IDLE;
    end
    if (halt_i || clr_i) state_d = S_IDLE;
    if (clr_i) err_d = ERR_NONE;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q <= S_IDLE;
      err_q   <= ERR_NONE;
      insn_q  <= '0;
      idx_q   <= '0;
    end else begin
      state_q <= state_d;
      err_q   <= err_d;
      if (cmd_ready_o) begin
        insn_q <= cmd_i[INSN_WIDTH-1:0];
        idx_q  <= cmd_i[QW-1:INSN_WIDTH];
      end
    end
  end

  assign insn_o      = insn_q;
  assign in_pop_o    = (state_q == S_POP);
  assign in_run_o    = (state_q == S_RUN);
  assign busy_o      = (state_q != S_IDLE);
  assign err_o       = err_q;
  assign err_idx_o   = idx_q;
  assign pop_wait_o  = (state_q == S_POP) && !pop_ok_i;
  assign push_wait_o = (state_q == S_PUSH) && !push_ok_i;

`ifndef SYNTHESIS
`include "vta_assert.svh"
  `VTA_ASSERT_ARMED
  // ---------------------------------------------------------------- assertions (simulation)
  // an instruction is taken only from a queue that holds one, and only with no error pending
  a_cmd_taken_valid: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF)
      cmd_ready_o |-> cmd_valid_i && err_q == ERR_NONE)
    else $error("stage_ctrl: took an instruction from an empty queue or with an error pending");
  // the tokens of one instruction are taken once: S_POP is left in the cycle of take_o
  a_take_once: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF)
      take_o |=> !in_pop_o)
    else $error("stage_ctrl: still in S_POP after taking the tokens");
  // an error leaves the stage idle until clr_i
  a_err_idle: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF)
      err_q != ERR_NONE |-> state_q == S_IDLE)
    else $error("stage_ctrl: busy with an error pending");
`endif

endmodule : vta_stage_ctrl
