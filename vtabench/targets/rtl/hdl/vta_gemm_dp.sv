// vta_gemm_dp: the GEMM datapath, BATCH x BLOCK_IN x BLOCK_OUT signed int8 MACs per
// cycle. dot_o[b][oc] = sum_ic inp[b][ic] * wgt[oc][ic] (int32, wrapping), registered.
// Tiles are row-major, little-endian: inp byte b*BLOCK_IN+ic, wgt byte oc*BLOCK_IN+ic,
// dot word b*BLOCK_OUT+oc.
module vta_gemm_dp import vta_pkg::*; #(
  localparam int unsigned InpW = BATCH * BLOCK_IN * INP_WIDTH,
  localparam int unsigned WgtW = BLOCK_OUT * BLOCK_IN * WGT_WIDTH,
  localparam int unsigned AccW = BATCH * BLOCK_OUT * ACC_WIDTH
) (
  input  logic            clk_i,
  input  logic            en_i,     // register a new result
  input  logic [InpW-1:0] inp_i,
  input  logic [WgtW-1:0] wgt_i,
  output logic [AccW-1:0] dot_o
);

  logic [AccW-1:0] dot_d, dot_q;
  logic signed [31:0] sum;
  logic signed [15:0] prod;

  always_comb begin
    dot_d = '0;
    for (int unsigned b = 0; b < BATCH; b++) begin
      for (int unsigned oc = 0; oc < BLOCK_OUT; oc++) begin
        sum = '0;
        for (int unsigned ic = 0; ic < BLOCK_IN; ic++) begin
          prod = $signed(inp_i[(b*BLOCK_IN + ic)*8 +: 8]) * $signed(wgt_i[(oc*BLOCK_IN + ic)*8 +: 8]);
          sum  = sum + 32'(prod);
        end
        dot_d[(b*BLOCK_OUT + oc)*32 +: 32] = sum;
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (en_i) begin
      dot_q <= dot_d;
    end
  end

  assign dot_o = dot_q;

endmodule : vta_gemm_dp
