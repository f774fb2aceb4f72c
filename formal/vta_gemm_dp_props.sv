// vta_gemm_dp against the dot product: the pipeline has no enable (a gap in valid_i is a
// bubble that travels with the pairs, the only stall it knows), so dot_o is, every cycle, the
// int32 (wrapping) dot product of the operands that entered Latency cycles before, whatever
// valid_i did in between; valid_o and tag_o show valid_i and tag_i Latency - 1 cycles later
// (valid_o cleared by reset). The reference is computed from a history of the inputs kept
// here.
module vta_gemm_dp_props import vta_pkg::*; #(
  localparam int unsigned TagW    = 2,
  localparam int unsigned InpW    = BATCH * BLOCK_IN * INP_WIDTH,
  localparam int unsigned WgtW    = BLOCK_OUT * BLOCK_IN * WGT_WIDTH,
  localparam int unsigned Dots    = BATCH * BLOCK_OUT,
  localparam int unsigned AccW    = Dots * ACC_WIDTH,
  localparam int unsigned Latency = 2 + ($clog2(BLOCK_IN) + 1) / 2,
  localparam int unsigned Lead    = Latency - 1
) (
  input logic            clk_i,
  input logic            rst_ni,
  input logic            valid_i,
  input logic [TagW-1:0] tag_i,
  input logic [InpW-1:0] inp_i,
  input logic [WgtW-1:0] wgt_i
);
  logic            valid_o, busy_o;
  logic [TagW-1:0] tag_o;
  logic [AccW-1:0] dot_o;

  vta_gemm_dp #(.TagW(TagW)) dut (.clk_i, .rst_ni, .valid_i, .tag_i, .inp_i, .wgt_i,
                                  .valid_o, .tag_o, .dot_o, .busy_o);

  // reset in the first cycle only; age counts the cycles since (saturating at Latency)
  logic f_init = 1'b1;
  logic [3:0] age = '0;
  always @(posedge clk_i) begin
    f_init <= 1'b0;
    if (age < 4'(Latency)) age <= age + 4'd1;
  end
  always @* assume (rst_ni == !f_init);

  // the inputs of the last Latency cycles: [0] one cycle ago
  logic [Latency-1:0][InpW-1:0] inp_h;
  logic [Latency-1:0][WgtW-1:0] wgt_h;
  logic [Latency-1:0][TagW-1:0] tag_h;
  logic [Latency-1:0]           valid_h;
  always @(posedge clk_i) begin
    inp_h   <= {inp_h[Latency-2:0], inp_i};
    wgt_h   <= {wgt_h[Latency-2:0], wgt_i};
    tag_h   <= {tag_h[Latency-2:0], tag_i};
    valid_h <= rst_ni ? {valid_h[Latency-2:0], valid_i} : '0;
  end

  // reference: each dot the sum of its products in ACC_WIDTH-bit arithmetic, added pairwise
  // (channel 2n with 2n + 1, then the sums likewise: the order of the unit's tree, which lets
  // the solver match its nodes; the unit's narrow node widths and its pipeline registers are
  // what is checked)
  localparam int unsigned Levels = $clog2(BLOCK_IN);
  logic [Dots-1:0][BLOCK_IN-1:0][ACC_WIDTH-1:0] node [Levels + 1];
  localparam int unsigned ProdW = INP_WIDTH + WGT_WIDTH;
  logic signed [ProdW-1:0] prod;
  logic [AccW-1:0] ref_dot;
  always @* begin
    for (int unsigned b = 0; b < BATCH; b++) begin
      for (int unsigned oc = 0; oc < BLOCK_OUT; oc++) begin
        for (int unsigned ic = 0; ic < BLOCK_IN; ic++) begin
          // the int8 x int8 product, exact in ProdW bits, then sign-extended (a multiplier
          // of ACC_WIDTH bits would hide the match from the solver)
          prod = ProdW'($signed(inp_h[Latency-1][(b*BLOCK_IN + ic)*INP_WIDTH +: INP_WIDTH]) *
                        $signed(wgt_h[Latency-1][(oc*BLOCK_IN + ic)*WGT_WIDTH +: WGT_WIDTH]));
          node[0][b*BLOCK_OUT + oc][ic] = ACC_WIDTH'(prod);
        end
      end
    end
    for (int unsigned l = 1; l <= Levels; l++) begin
      for (int unsigned d = 0; d < Dots; d++) begin
        for (int unsigned n = 0; n < BLOCK_IN; n++) begin
          node[l][d][n] = (n < (BLOCK_IN >> l)) ?
              node[l-1][d][2*n] + node[l-1][d][2*n + 1] : '0;
        end
      end
    end
    for (int unsigned d = 0; d < Dots; d++) begin
      ref_dot[d*ACC_WIDTH +: ACC_WIDTH] = node[Levels][d][0];
    end
  end

  always @* begin
    if (age >= 4'(Latency)) dot_is_product: assert (dot_o == ref_dot);
    if (!f_init) valid_delayed: assert (valid_o == valid_h[Lead-1]);
    if (age >= 4'(Lead)) tag_delayed: assert (tag_o == tag_h[Lead-1]);
    if (!f_init) busy_is_valid_in_flight: assert (busy_o == |valid_h[Lead-1:0]);
  end

  // covers: a pair out right behind another and one behind a bubble, the largest dot (every
  // product -128 * -128)
  always @(posedge clk_i) begin
    cover_back_to_back: cover (valid_o && valid_h[Lead] && age >= 4'(Latency));
    cover_after_bubble: cover (valid_o && !valid_h[Lead] && age >= 4'(Latency));
    cover_largest_dot: cover (age >= 4'(Latency) &&
                              dot_o[ACC_WIDTH-1:0] == ACC_WIDTH'(BLOCK_IN * 16384));
  end
endmodule : vta_gemm_dp_props
