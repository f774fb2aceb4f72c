// vta_token_queue: a dependency-token queue (l2g, g2l, g2s, s2g). Tokens carry no
// data, so the queue is a counter of Depth tokens. A push when full (overflow) and a pop
// when empty (underflow) are errors of the stage that does them (the stages only push on
// ready_o and pop on valid_o): assertions in simulation; in hardware they are ignored.
module vta_token_queue #(
  parameter int unsigned Depth = 256,
  localparam int unsigned Cw   = $clog2(Depth + 1)
) (
  input  logic          clk_i,
  input  logic          rst_ni,
  input  logic          clr_i,
  input  logic          push_i,
  output logic          ready_o,   // room for a push
  input  logic          pop_i,
  output logic          valid_o,   // a token is there to pop
  output logic [Cw-1:0] count_o
);

  logic [Cw-1:0] count_q;
  logic push, pop;

  assign ready_o = (count_q != Cw'(Depth));
  assign valid_o = (count_q != '0);
  assign push    = push_i & ready_o;
  assign pop     = pop_i & valid_o;
  assign count_o = count_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      count_q <= '0;
    end else if (clr_i) begin
      count_q <= '0;
    end else begin
      count_q <= count_q + Cw'(push) - Cw'(pop);
    end
  end

`ifndef SYNTHESIS
`include "vta_assert.svh"
  `VTA_ASSERT_ARMED
  a_no_overflow: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF) push_i |-> ready_o)
    else $error("token queue overflow: push with %0d of %0d tokens", count_q, Depth);
  a_no_underflow: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF) pop_i |-> valid_o)
    else $error("token queue underflow: pop of an empty queue");
`endif

endmodule : vta_token_queue
