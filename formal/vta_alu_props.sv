// vta_alu against reference expressions for all operands and every op, on every lane of the
// configuration's package (vta_pkg): MIN / MAX signed, ADD wrapping, SHR with the spec's
// saturating amount (>= 32: A >>> 31; 0..31: A >>> B; -31..-1: A << -B; <= -32: 0), other
// opcodes pass A; mul_o is the low word of the previous cycle's A * B.
//
// MUL's reference is the schoolbook product of the operands' 16-bit halves, each partial
// product W bits wide: al * bl + ((al * bh + ah * bl) << W/2), modulo 2^W. It equals the low
// word of A * B by the ring identity (al + 2^H ah)(bl + 2^H bh) = al bl + 2^H (al bh + ah bl)
// + 2^2H ah bh, whose last term is 0 modulo 2^W (2H = W). Against A * B itself the solver has
// to match two unrelated multiplier circuits: one lane of edge8 did not finish in 300 s; against
// the halves every lane is proven in seconds (docs/formal.md).
module vta_alu_props import vta_pkg::*; #(
  parameter bit           CheckMul = 1'b0,  // the multiplier (4 products a lane), not the ops
  localparam int unsigned Lanes = BATCH * BLOCK_OUT,
  localparam int unsigned W     = ACC_WIDTH,
  localparam int unsigned AccW  = Lanes * W
) (
  input logic            clk_i,
  input logic [2:0]      op_i,
  input logic [AccW-1:0] a_i,
  input logic [AccW-1:0] b_i
);
  logic [AccW-1:0] y, mul;

  vta_alu dut (.clk_i, .op_i, .a_i, .b_i, .y_o(y), .mul_o(mul));

  logic f_past = 1'b0;
  always @(posedge clk_i) f_past <= 1'b1;
  logic [Lanes-1:0] y_ok, mul_ok;  // per lane: the result equals the reference

  if (!CheckMul) begin : g_ops  // the multiplier's jobs leave the other ops to the others
    always @* begin
      op_result: assert (&y_ok);  // every op but MUL, every lane
    end
  end else begin : g_mul
    always @* begin
      if (f_past) begin
        mul_low_word: assert (&mul_ok);
      end
    end
    always @(posedge clk_i) begin
      cover_mul_cross: cover (f_past && mul[W-1:0] != '0 && $past(a_i[W/2-1:0] == '0));
    end
  end

  for (genvar l = 0; l < Lanes; l++) begin : g_lane
    logic signed [W-1:0] a, b, ref_y;
    logic [W-1:0] ref_mul;  // a * b of the previous cycle
    logic [W-1:0] al, ah, bl, bh;  // the operands' halves, zero-extended to W bits
    assign a = $signed(a_i[l*W +: W]);
    assign b = $signed(b_i[l*W +: W]);
    assign al = W'(a[W/2-1:0]);
    assign ah = W'(a[W-1:W/2]);
    assign bl = W'(b[W/2-1:0]);
    assign bh = W'(b[W-1:W/2]);
    always_comb begin
      if (op_i == 3'(ALU_OPCODE_MIN))      ref_y = (a <= b) ? a : b;
      else if (op_i == 3'(ALU_OPCODE_MAX)) ref_y = (a >= b) ? a : b;
      else if (op_i == 3'(ALU_OPCODE_ADD)) ref_y = W'(a + b);
      else if (op_i == 3'(ALU_OPCODE_SHR)) begin
        if (b > 31)                        ref_y = {W{a[W-1]}};
        else if (b >= 0)                   ref_y = a >>> b;
        else if (b >= -31)                 ref_y = a << (-b);
        else                               ref_y = '0;
      end else                             ref_y = a;
    end
    always @(posedge clk_i) ref_mul <= al * bl + ((al * bh + ah * bl) << (W / 2));
    assign y_ok[l]   = (op_i == 3'(ALU_OPCODE_MUL)) || (y[l*W +: W] == ref_y);
    assign mul_ok[l] = (mul[l*W +: W] == ref_mul);
  end

  always @(posedge clk_i) begin
    cover_shr_saturate: cover (op_i == 3'(ALU_OPCODE_SHR) && $signed(b_i[W-1:0]) > 31);
    cover_shl_31: cover (op_i == 3'(ALU_OPCODE_SHR) && $signed(b_i[W-1:0]) == -31
                         && y[W-1:0] != '0);
    cover_shl_zeroed: cover (op_i == 3'(ALU_OPCODE_SHR) && $signed(b_i[W-1:0]) < -31);
    cover_max_negative: cover (op_i == 3'(ALU_OPCODE_MAX) && a_i[W-1] != b_i[W-1]);
  end
endmodule : vta_alu_props
