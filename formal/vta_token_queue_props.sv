// Properties of vta_token_queue for any stage behaviour: push_i and pop_i are free, so a push
// into a full queue and a pop of an empty one are tried too (the unit must ignore them).
// Proven by k-induction: count_o is the whole state, and the asserts below hold it in range.
module vta_token_queue_props #(
  parameter int unsigned Depth = 4,
  localparam int unsigned Cw   = $clog2(Depth + 1)
) (
  input logic clk_i,
  input logic rst_ni,
  input logic clr_i,
  input logic push_i,
  input logic pop_i
);
  logic          ready, valid;
  logic [Cw-1:0] count;

  vta_token_queue #(.Depth(Depth)) dut (
    .clk_i, .rst_ni, .clr_i, .push_i, .ready_o(ready), .pop_i, .valid_o(valid), .count_o(count)
  );

  // the queue starts in reset; f_past: a previous cycle exists (for $past)
  logic f_past = 1'b0;
  always @(posedge clk_i) f_past <= 1'b1;
  initial assume (!rst_ni);

  // expected count: +1 for a push that finds room, -1 for a pop that finds a token
  always @(posedge clk_i) begin
    count_in_range: assert (count <= Cw'(Depth));
    full_flag: assert (ready == (count != Cw'(Depth)));
    empty_flag: assert (valid == (count != '0));
    if (f_past && $past(rst_ni) && rst_ni) begin
      if ($past(clr_i)) begin
        clear_empties: assert (count == '0);
      end else begin
        count_step: assert (count == $past(count) + Cw'($past(push_i && ready))
                                                - Cw'($past(pop_i && valid)));
      end
      if (!$past(clr_i) && $past(push_i && !ready && !pop_i)) begin
        no_overflow: assert (count == Cw'(Depth));
      end
      if (!$past(clr_i) && $past(pop_i && !valid && !push_i)) begin
        no_underflow: assert (count == '0);
      end
    end
    if (f_past && !$past(rst_ni)) begin
      reset_empties: assert (count == '0);
    end
    if (rst_ni && f_past && $past(rst_ni)) begin
      cover_full: cover (!ready);
      cover_push_when_full: cover ($past(push_i && !ready) && !ready);
      cover_pop_when_empty: cover ($past(pop_i && !valid && !clr_i));
      cover_push_pop_full: cover ($past(push_i && pop_i && !ready && !clr_i));
    end
  end
endmodule : vta_token_queue_props
