// vta_alu: the tensor ALU, BATCH x BLOCK_OUT int32 lanes.
// MIN / MAX signed, ADD wrapping, SHR with the spec's saturating signed amount: 0..31
// arithmetic right shift, >= 32 -> A >>> 31, -31..-1 left shift by -B, <= -32 -> 0:
// combinational, y_o (other opcodes give A; MUL's lanes are don't-care there).
// MUL (low 32 bits of A * B) is pipelined for DSP blocks: the three 16 x 16 partial
// products that reach the low word (lo*lo, lo*hi, hi*lo) are registered (a multiplier's
// output register), and mul_o is their sum one cycle after the operands.
module vta_alu import vta_pkg::*; #(
  localparam int unsigned Lanes = BATCH * BLOCK_OUT,
  localparam int unsigned AccW  = Lanes * ACC_WIDTH
) (
  input  logic            clk_i,
  input  logic [2:0]      op_i,
  input  logic [AccW-1:0] a_i,
  input  logic [AccW-1:0] b_i,
  output logic [AccW-1:0] y_o,
  output logic [AccW-1:0] mul_o     // a_i * b_i of the previous cycle
);

  localparam int unsigned W = ACC_WIDTH;
  localparam int unsigned H = ACC_WIDTH / 2;

  for (genvar l = 0; l < Lanes; l++) begin : g_lane
    logic signed [W-1:0] a, b, y;
    logic [4:0] lsh;
    logic [W-1:0] p_ll_q;            // a[lo] * b[lo]
    logic [H-1:0] p_lh_q, p_hl_q;    // low halves of a[lo] * b[hi], a[hi] * b[lo]

    assign a   = $signed(a_i[l*W +: W]);
    assign b   = $signed(b_i[l*W +: W]);
    assign lsh = 5'(-b);

    always_comb begin
      unique case (op_i)
        3'(ALU_OPCODE_MIN): y = (a < b) ? a : b;
        3'(ALU_OPCODE_MAX): y = (a > b) ? a : b;
        3'(ALU_OPCODE_ADD): y = a + b;
        3'(ALU_OPCODE_SHR): begin
          if (b >= 32'sd32)        y = a >>> 31;
          else if (b >= 32'sd0)    y = a >>> b[4:0];
          else if (b >= -32'sd31)  y = a << lsh;
          else                     y = '0;
        end
        default: y = a;
      endcase
    end

    always_ff @(posedge clk_i) begin
      p_ll_q <= W'(a[H-1:0]) * W'(b[H-1:0]);
      p_lh_q <= H'(a[H-1:0] * b[W-1:H]);
      p_hl_q <= H'(a[W-1:H] * b[H-1:0]);
    end

    assign y_o[l*W +: W]   = y;
    assign mul_o[l*W +: W] = p_ll_q + {p_lh_q + p_hl_q, H'(0)};
  end

endmodule : vta_alu
