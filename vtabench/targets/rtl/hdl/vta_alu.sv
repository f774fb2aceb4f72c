// vta_alu: the tensor ALU, BATCH x BLOCK_OUT int32 lanes, combinational.
// MIN / MAX signed, ADD wrapping, MUL low 32 bits, SHR with the spec's saturating
// signed amount: 0..31 arithmetic right shift, >= 32 -> A >>> 31, -31..-1 left shift
// by -B, <= -32 -> 0. Other opcodes give A (the fetch stage rejects them).
module vta_alu import vta_pkg::*; #(
  localparam int unsigned Lanes = BATCH * BLOCK_OUT,
  localparam int unsigned AccW  = Lanes * ACC_WIDTH
) (
  input  logic [2:0]      op_i,
  input  logic [AccW-1:0] a_i,
  input  logic [AccW-1:0] b_i,
  output logic [AccW-1:0] y_o
);

  for (genvar l = 0; l < Lanes; l++) begin : g_lane
    logic signed [31:0] a, b, y;
    logic [4:0] lsh;

    assign a   = $signed(a_i[l*32 +: 32]);
    assign b   = $signed(b_i[l*32 +: 32]);
    assign lsh = 5'(-b);

    always_comb begin
      case (op_i)
        3'(ALU_OPCODE_MIN): y = (a < b) ? a : b;
        3'(ALU_OPCODE_MAX): y = (a > b) ? a : b;
        3'(ALU_OPCODE_ADD): y = a + b;
        3'(ALU_OPCODE_MUL): y = a * b;
        3'(ALU_OPCODE_SHR): begin
          if (b >= 32'sd32)        y = a >>> 31;
          else if (b >= 32'sd0)    y = a >>> b[4:0];
          else if (b >= -32'sd31)  y = a << lsh;
          else                     y = '0;
        end
        default: y = a;
      endcase
    end

    assign y_o[l*32 +: 32] = y;
  end

endmodule : vta_alu
