// vta_span_mask against its definition for every input (off_i, len_i free; combinational, so
// one step proves it): lane i is set when 0 <= off_i + i < len_i, last_o when
// len_i - off_i <= Lanes, computed here in wide signed arithmetic without the unit's shared
// thermometer codes.
module vta_span_mask_props #(
  parameter int unsigned Lanes    = 64,
  parameter int unsigned OffWidth = 34,
  parameter int unsigned LenWidth = 32
) (
  input logic                       clk_i,
  input logic signed [OffWidth-1:0] off_i,
  input logic [LenWidth-1:0]        len_i
);
  localparam int unsigned Ww = 48;  // wider than either operand and their difference
  logic [Lanes-1:0] mask, ref_mask;
  logic             last, ref_last;
  logic signed [Ww-1:0] off, len, pos [Lanes];

  vta_span_mask #(.Lanes(Lanes), .OffWidth(OffWidth), .LenWidth(LenWidth)) dut (
    .off_i, .len_i, .mask_o(mask), .last_o(last)
  );

  assign off = Ww'(off_i);                       // sign-extended
  assign len = $signed({{(Ww - LenWidth){1'b0}}, len_i});
  for (genvar i = 0; i < Lanes; i++) begin : g_ref
    assign pos[i]      = off + Ww'(i);
    assign ref_mask[i] = (pos[i] >= 0) && (pos[i] < len);
  end
  assign ref_last = (len - off <= $signed(Ww'(Lanes)));

  always @* begin
    mask_is_span: assert (mask == ref_mask);
    last_is_end: assert (last == ref_last);
  end
  always @(posedge clk_i) begin
    cover_partial_start: cover (!mask[0] && mask[Lanes-1] && !last);
    cover_partial_end: cover (mask[0] && !mask[Lanes-1] && last);
    cover_inside: cover (mask[Lanes/2] && !mask[0] && !mask[Lanes-1]);
    cover_full_window: cover (&mask && !last);
    cover_empty_window: cover (mask == '0 && !last);
    cover_last_exact: cover (&mask && last);
  end
endmodule : vta_span_mask_props
