// Properties of vta_fifo at its ports for any producer and consumer (wvalid_i, rready_i and
// wdata_i free: a push into a full FIFO and a pop of an empty one are tried too). The data
// order (a scoreboard that follows one solver-chosen word to the head) and the invariants that
// let k-induction close sit in vta_fifo.sv's `ifdef FORMAL` block, which this flow reads.
module vta_fifo_props #(
  parameter int unsigned Width  = 8,
  parameter int unsigned Depth  = 4,
  parameter bit          LutRam = 1'b0,
  localparam int unsigned Cw    = $clog2(Depth + 1)
) (
  input logic             clk_i,
  input logic             rst_ni,
  input logic             clr_i,
  input logic             wvalid_i,
  input logic [Width-1:0] wdata_i,
  input logic             rready_i
);
  logic             wready, rvalid;
  logic [Width-1:0] rdata;
  logic [Cw-1:0]    count;

  vta_fifo #(.Width(Width), .Depth(Depth), .LutRam(LutRam)) dut (
    .clk_i, .rst_ni, .clr_i, .wvalid_i, .wready_o(wready), .wdata_i, .rvalid_o(rvalid),
    .rready_i, .rdata_o(rdata), .count_o(count)
  );

  logic f_past = 1'b0;
  always @(posedge clk_i) f_past <= 1'b1;
  initial assume (!rst_ni);

  always @(posedge clk_i) begin
    count_in_range: assert (count <= Cw'(Depth));
    full_flag: assert (wready == (count != Cw'(Depth)));
    empty_flag: assert (rvalid == (count != '0));
    if (f_past && !$past(rst_ni)) begin
      reset_empties: assert (count == '0);
    end
    if (f_past && $past(rst_ni) && rst_ni) begin
      if ($past(clr_i)) begin
        clear_empties: assert (count == '0);
      end else begin
        count_step: assert (count == $past(count) + Cw'($past(wvalid_i && wready))
                                                - Cw'($past(rready_i && rvalid)));
      end
      if (!$past(clr_i) && $past(wvalid_i && !wready && !rready_i)) begin
        no_overflow: assert (count == Cw'(Depth));
      end
      if (!$past(clr_i) && $past(rready_i && !rvalid && !wvalid_i)) begin
        no_underflow: assert (count == '0);
      end
      // a word pushed into an empty FIFO is the head one cycle later (the bypass register)
      if (!$past(clr_i) && $past(wvalid_i && count == '0)) begin
        push_to_empty_is_head: assert (rvalid && rdata == $past(wdata_i));
      end
      // the head stays until it is popped
      if (!$past(clr_i) && $past(rvalid && !rready_i)) begin
        head_held: assert (rvalid && rdata == $past(rdata));
      end
      cover_full: cover (!wready);
      // full, a push refused and a pop taken: one word less
      cover_push_pop_full: cover ($past(wvalid_i && rready_i && !wready && !clr_i)
                                  && count == Cw'(Depth - 1));
      cover_push_pop_one: cover ($past(wvalid_i && rready_i && count == Cw'(1) && !clr_i)
                                 && rvalid);
      cover_drained_after_full: cover ($past(count == Cw'(1) && rready_i && !wvalid_i
                                            && !clr_i) && count == '0);
    end
  end
endmodule : vta_fifo_props
