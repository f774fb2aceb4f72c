// vta_gemm_dp: the GEMM datapath, BATCH x BLOCK_IN x BLOCK_OUT signed int8 MACs per
// cycle, pipelined: dot_o[b][oc] = sum_ic inp[b][ic] * wgt[oc][ic] (int32, wrapping).
// Tiles are row-major, little-endian: inp byte b*BLOCK_IN+ic, wgt byte oc*BLOCK_IN+ic,
// dot word b*BLOCK_OUT+oc.
//   stage 1  operand registers (a DSP's input registers)
//   stage 2  int8 x int8 products, registered (its output register)
//   then     the adder tree, log2(BLOCK_IN) levels, registered after every second level
//            and after the last; node widths grow one bit per level (16 + level)
// One operand pair enters per cycle; valid_i / tag_i travel with it: valid_o / tag_o show
// them Latency - 1 cycles later, one cycle ahead of the pair's dot_o (the compute stage
// carries its micro-op's acc indices in the tag and issues the acc read with them, so the
// accumulator value and the dot product arrive together).
module vta_gemm_dp import vta_pkg::*; #(
  parameter int unsigned  TagW    = 1,
  localparam int unsigned InpW    = BATCH * BLOCK_IN * INP_WIDTH,
  localparam int unsigned WgtW    = BLOCK_OUT * BLOCK_IN * WGT_WIDTH,
  localparam int unsigned AccW    = BATCH * BLOCK_OUT * ACC_WIDTH,
  localparam int unsigned Levels  = $clog2(BLOCK_IN),
  localparam int unsigned Latency = 2 + (Levels + 1) / 2
) (
  input  logic            clk_i,
  input  logic            rst_ni,
  input  logic            valid_i,
  input  logic [TagW-1:0] tag_i,
  input  logic [InpW-1:0] inp_i,
  input  logic [WgtW-1:0] wgt_i,
  output logic            valid_o,
  output logic [TagW-1:0] tag_o,
  output logic [AccW-1:0] dot_o,
  output logic            busy_o    // an operand pair is in the pipeline
);

  localparam int unsigned Dots  = BATCH * BLOCK_OUT;
  localparam int unsigned ProdW = INP_WIDTH + WGT_WIDTH;

  // ---------------------------------------------------------------- operands and products
  logic [InpW-1:0] inp_q;
  logic [WgtW-1:0] wgt_q;
  logic [Dots*BLOCK_IN*ProdW-1:0] prod_q;

  always_ff @(posedge clk_i) begin
    inp_q <= inp_i;
    wgt_q <= wgt_i;
    for (int unsigned b = 0; b < BATCH; b++) begin
      for (int unsigned oc = 0; oc < BLOCK_OUT; oc++) begin
        for (int unsigned ic = 0; ic < BLOCK_IN; ic++) begin
          prod_q[((b*BLOCK_OUT + oc)*BLOCK_IN + ic)*ProdW +: ProdW] <=
              ProdW'($signed(inp_q[(b*BLOCK_IN + ic)*INP_WIDTH +: INP_WIDTH]) *
                     $signed(wgt_q[(oc*BLOCK_IN + ic)*WGT_WIDTH +: WGT_WIDTH]));
        end
      end
    end
  end

  // ---------------------------------------------------------------- adder tree
  // level l: Dots x (BLOCK_IN >> l) nodes of ProdW + l bits; level 0 is prod_q
  for (genvar l = 1; l <= Levels; l++) begin : g_lvl
    localparam int unsigned N  = BLOCK_IN >> l;
    localparam int unsigned W  = ProdW + l;
    localparam int unsigned Wi = W - 1;
    logic [Dots*2*N*Wi-1:0] in;
    logic [Dots*N*W-1:0]    sum_d, sum;

    if (l == 1) begin : g_first
      assign in = prod_q;
    end else begin : g_next
      assign in = g_lvl[l-1].sum;
    end

    always_comb begin
      for (int unsigned d = 0; d < Dots; d++) begin
        for (int unsigned n = 0; n < N; n++) begin
          sum_d[(d*N + n)*W +: W] = W'($signed(in[(d*2*N + 2*n)*Wi +: Wi])) +
                                    W'($signed(in[(d*2*N + 2*n + 1)*Wi +: Wi]));
        end
      end
    end

    if (l % 2 == 0 || l == Levels) begin : g_reg
      logic [Dots*N*W-1:0] sum_q;
      always_ff @(posedge clk_i) begin
        sum_q <= sum_d;
      end
      assign sum = sum_q;
    end else begin : g_comb
      assign sum = sum_d;
    end
  end

  always_comb begin
    for (int unsigned d = 0; d < Dots; d++) begin
      dot_o[d*ACC_WIDTH +: ACC_WIDTH] =
          ACC_WIDTH'($signed(g_lvl[Levels].sum[d*(ProdW + Levels) +: ProdW + Levels]));
    end
  end

  // ---------------------------------------------------------------- valid and tag
  // valid_q[k] / tag_q[k]: the pair that entered k + 1 cycles ago; dot_o is Latency cycles
  localparam int unsigned Lead = Latency - 1;
  logic [Lead-1:0]           valid_q;
  logic [Lead-1:0][TagW-1:0] tag_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      valid_q <= '0;
    end else begin
      valid_q <= Lead'({valid_q, valid_i});
    end
  end

  always_ff @(posedge clk_i) begin
    tag_q <= (Lead*TagW)'({tag_q, tag_i});
  end

  assign valid_o = valid_q[Lead-1];
  assign tag_o   = tag_q[Lead-1];
  assign busy_o  = |valid_q;

endmodule : vta_gemm_dp
