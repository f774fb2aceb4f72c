// Properties of vta_stage_ctrl, the control machine of the load, compute and store stages, in
// a stage as they build it: the token flags of the instruction taken (the dependency bits of
// the ISA) pick the queues it pops and pushes, pop_ok_i / push_ok_i say every picked queue
// holds a token / has room, and the stage pops on take_o and pushes on retire_o. The four
// token queues are the real vta_token_queue (Depth 2: full is reached in two pushes); their
// peers push and pop as the spec allows (a push only with room, a pop only with a token) at
// any time. The stage's datapath is free: any start error, skip, run length, run error, abort,
// halt and clear.
//   - the stage never pops an empty queue nor pushes into a full one;
//   - one take and at most one retire per instruction, in that order; the instruction and its
//     index are held from the take on; an error is kept, and nothing is taken, until clear;
//   - liveness, bounded: under a fair environment (the peers deliver a token or room within
//     Fair cycles of the stage waiting, a run ends within Fair cycles) an instruction taken
//     leaves the machine (retired, failed, halted or cleared) within 3 * Fair cycles, and
//     an idle machine with no error takes a pending instruction at once.
// Proven by k-induction: the machine's state is visible at its outputs.
module vta_stage_ctrl_props import vta_pkg::*; import vta_err_pkg::*; #(
  parameter int unsigned  Fair  = 3,
  localparam int unsigned IdxW  = 32,
  localparam int unsigned QW    = IdxW + INSN_WIDTH,
  localparam int unsigned Depth = 2,
  localparam int unsigned Cw    = $clog2(Depth + 1),
  localparam int unsigned Tw    = 4  // wait counters: up to 3 * Fair
) (
  input logic                 clk_i,
  input logic                 rst_ni,
  input logic                 clr_i,
  input logic                 halt_i,
  input logic                 cmd_valid_i,
  input logic [QW-1:0]        cmd_i,
  input logic [ERR_WIDTH-1:0] start_err_i,
  input logic                 start_skip_i,
  input logic                 run_done_i,
  input logic [ERR_WIDTH-1:0] run_err_i,
  input logic                 abort_i,
  input logic [ERR_WIDTH-1:0] abort_err_i,
  input logic [3:0]           peer_push_i,      // the peers: {push_next, push_prev, pop ...}
  input logic [3:0]           peer_pop_i
);
  logic                  cmd_ready, take, retire, in_pop, in_run, busy, pop_wait, push_wait;
  logic                  pop_ok, push_ok;
  logic [INSN_WIDTH-1:0] insn;
  logic [ERR_WIDTH-1:0]  err;
  logic [IdxW-1:0]       err_idx;

  vta_stage_ctrl dut (
    .clk_i, .rst_ni, .clr_i, .halt_i, .cmd_valid_i, .cmd_ready_o(cmd_ready), .cmd_i,
    .insn_o(insn), .pop_ok_i(pop_ok), .take_o(take), .push_ok_i(push_ok), .retire_o(retire),
    .start_err_i, .start_skip_i, .run_done_i,
    .run_err_i, .abort_i, .abort_err_i, .in_pop_o(in_pop), .in_run_o(in_run), .busy_o(busy),
    .err_o(err), .err_idx_o(err_idx), .pop_wait_o(pop_wait), .push_wait_o(push_wait)
  );

  // the stage's glue: queues 0 and 1 are popped (prev, next), 2 and 3 pushed (prev, next)
  logic [3:0]          flag, q_push, q_pop, q_ready, q_valid;
  logic [3:0][Cw-1:0]  q_count;
  assign flag = {insn[MEM_PUSH_NEXT_DEP_LSB], insn[MEM_PUSH_PREV_DEP_LSB],
                 insn[MEM_POP_NEXT_DEP_LSB], insn[MEM_POP_PREV_DEP_LSB]};
  assign pop_ok  = (!flag[0] || q_valid[0]) && (!flag[1] || q_valid[1]);
  assign push_ok = (!flag[2] || q_ready[2]) && (!flag[3] || q_ready[3]);
  for (genvar q = 0; q < 4; q++) begin : g_queue
    logic stage_side;  // the stage's own end of the queue: pop (0, 1) or push (2, 3)
    assign stage_side = (q < 2) ? take && flag[q] : retire && flag[q];
    assign q_pop[q]  = (q < 2) ? stage_side : peer_pop_i[q];
    assign q_push[q] = (q < 2) ? peer_push_i[q] : stage_side;
    vta_token_queue #(.Depth(Depth)) u_q (
      .clk_i, .rst_ni, .clr_i(1'b0), .push_i(q_push[q]), .ready_o(q_ready[q]),
      .pop_i(q_pop[q]), .valid_o(q_valid[q]), .count_o(q_count[q])
    );
  end

  logic queues_ok;
  always_comb begin
    queues_ok = 1'b1;
    for (int q = 0; q < 4; q++) begin
      if (q_count[q] > Cw'(Depth) || q_valid[q] != (q_count[q] != '0)
          || q_ready[q] != (q_count[q] != Cw'(Depth))) queues_ok = 1'b0;
    end
  end

  logic f_past = 1'b0;
  always @(posedge clk_i) f_past <= 1'b1;
  initial assume (!rst_ni);

  // the peers follow the spec: a push only with room, a pop only with a token
  always @* begin
    for (int q = 0; q < 4; q++) begin
      if (q < 2 && peer_push_i[q]) assume (q_ready[q]);
      if (q >= 2 && peer_pop_i[q]) assume (q_valid[q]);
    end
  end

  // fairness: how long the stage has waited for a token, for room, for its run
  logic [Tw-1:0] pop_wait_q = '0, push_wait_q = '0, run_q = '0;
  always @(posedge clk_i) begin
    pop_wait_q  <= (rst_ni && pop_wait) ? pop_wait_q + Tw'(1) : '0;
    push_wait_q <= (rst_ni && push_wait) ? push_wait_q + Tw'(1) : '0;
    run_q       <= (rst_ni && in_run && !run_done_i) ? run_q + Tw'(1) : '0;
  end
  logic fair;  // the environment delivers in time (assumed only where liveness is checked)
  assign fair = pop_wait_q < Tw'(Fair) && push_wait_q < Tw'(Fair) && run_q < Tw'(Fair);
  always @* if (rst_ni) assume (fair);

  // the instruction taken: one take and at most one retire, in order; held until the next
  logic [QW-1:0] taken_q = '0;
  logic          took_q = 1'b0, retired_q = 1'b0, live_q = 1'b0;
  logic [Tw-1:0] age_q = '0;
  logic          busy_next;  // the machine stays busy into the next cycle
  assign busy_next = !(halt_i || clr_i || abort_i) && busy && !(retire && !cmd_ready)
                     && !(take && start_err_i != ERR_NONE)
                     && !(in_run && run_done_i && run_err_i != ERR_NONE);
  always @(posedge clk_i) begin
    if (!rst_ni) begin
      took_q <= 1'b0;
      retired_q <= 1'b0;
      live_q <= 1'b0;
      age_q <= '0;
    end else begin
      if (cmd_ready) begin
        taken_q <= cmd_i;
        took_q <= 1'b0;
        retired_q <= 1'b0;
      end
      if (take) took_q <= 1'b1;
      if (retire && !cmd_ready) retired_q <= 1'b1;
      // live: between the command taken and its leaving the machine
      live_q <= cmd_ready || (live_q && busy_next);
      age_q <= (cmd_ready || !busy_next) ? '0 : age_q + Tw'(1);
    end
  end

  always @(posedge clk_i) begin
    if (rst_ni) begin
      // token queues: never popped empty, never pushed full
      pop_has_token_prev: assert (!(take && flag[0]) || q_valid[0]);
      pop_has_token_next: assert (!(take && flag[1]) || q_valid[1]);
      push_has_room_prev: assert (!(retire && flag[2]) || q_ready[2]);
      push_has_room_next: assert (!(retire && flag[3]) || q_ready[3]);
      // the queues' own invariants (vta_token_queue's proofs), for the induction
      queue_counts: assert (queues_ok);
      // the command queue: taken only with an entry there and no error pending
      if (cmd_ready) cmd_from_queue: assert (cmd_valid_i && err == ERR_NONE);
      // one take and at most one retire per instruction, in order
      if (take) take_once: assert (in_pop && !took_q);
      if (retire) retire_after_take: assert (took_q && !retired_q);
      // the state the outputs show, and what the machine keeps
      state_shown: assert (!(in_pop && in_run) && (busy || (!in_pop && !in_run)));
      if (in_pop) pop_state: assert (!took_q);
      if (in_run) run_state: assert (took_q && !retired_q);
      if (err != ERR_NONE) error_idles: assert (!busy);
      if (busy || took_q) insn_held: assert (insn == taken_q[INSN_WIDTH-1:0]
                                             && err_idx == taken_q[QW-1:INSN_WIDTH]);
      if (busy) live_while_busy: assert (live_q);
      // liveness (bounded): leave within 3 Fair cycles (Fair each in S_POP, S_RUN, S_PUSH);
      // a pending command is taken at once
      retires_in_time: assert (age_q < Tw'(3 * Fair));
      if (!busy && cmd_valid_i && err == ERR_NONE) taken_at_once: assert (cmd_ready);
    end
    if (f_past && $past(rst_ni) && rst_ni) begin
      // an error stays until clear (abort_i replaces it: compute's check, see docs/formal.md)
      if ($past(err != ERR_NONE && !clr_i && !abort_i)) error_kept: assert (err == $past(err));
      if ($past(clr_i)) clear_clears: assert (err == ERR_NONE && !busy);
    end
  end

  // covers: each wait and each exit is reachable
  logic [1:0] retired_n_q = '0;
  always @(posedge clk_i) begin
    if (rst_ni && retire && retired_n_q != 2'd3) retired_n_q <= retired_n_q + 2'd1;
  end
  always @(posedge clk_i) begin
    if (rst_ni) begin
      cover_pop_wait: cover (pop_wait && flag[1] && pop_wait_q == Tw'(Fair - 1));
      cover_push_wait_full: cover (push_wait && flag[3] && !q_ready[3]);
      cover_back_to_back: cover (retire && cmd_ready);
      cover_three_retired: cover (retired_n_q == 2'd3);
      cover_run_error: cover (in_run && run_done_i && run_err_i != ERR_NONE);
      cover_start_error: cover (take && start_err_i != ERR_NONE);
      cover_skip: cover (take && start_skip_i && start_err_i == ERR_NONE);
      cover_abort: cover (busy && abort_i);
      cover_oldest_age: cover (retire && age_q == Tw'(3 * Fair - 1));
    end
  end
endmodule : vta_stage_ctrl_props
