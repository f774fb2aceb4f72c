// vta_span_mask: which lanes of a bus window lie inside a span (the DMA byte masks and write
// strobes). Lane i (0 <= i < Lanes) sits at position off_i + i relative to the start of a span
// of len_i positions; mask_o[i] is set when 0 <= off_i + i < len_i. last_o is set when the
// span ends inside or at the end of the window (len_i - off_i <= Lanes): the next window
// (off_i + Lanes) holds none of it. Exact for every input: off_i far below 0 or beyond len_i,
// len_i = 0, len_i > Lanes.
// Instead of two wide adds and compares per lane (a carry chain each, 2 * Lanes chains), three
// wide operations are shared by all lanes and each lane's tests are narrow (Lb = log2(Lanes)):
//   start: off_i + i >= 0. True for every lane when off_i >= 0, for none when off_i < -2^Lb;
//          otherwise (off_near) off_i = x - 2^Lb with x = off_i[Lb-1:0], and the test is
//          x > 2^Lb - 1 - i, a bit of the thermometer code of x.
//   end:   off_i + i < len_i, i.e. i <= rem = len_i - off_i - 1 = len_i + ~off_i (one wide
//          add). False for every lane when rem < 0, true when rem >= 2^Lb (rem_big, a compare
//          of rem), otherwise i <= rem[Lb-1:0], a bit of the thermometer code of rem's low bits.
// The codes depend on Lb low bits only (the chain's first cells); the wide results (off_near,
// the sign of rem, rem_big) enter each lane's last gate only. Purely combinational: the DMA
// callers use the mask in the cycle its offset is known (vta_store registers its strobes
// itself); a caller that needs a shorter path registers off_i / len_i or the outputs.
module vta_span_mask #(
  parameter int unsigned Lanes    = 64,
  parameter int unsigned OffWidth = 34,  // off_i: signed (two's complement)
  parameter int unsigned LenWidth = 32,  // len_i: unsigned
  localparam int unsigned Lb      = (Lanes > 1) ? $clog2(Lanes) : 1,  // 2^Lb >= Lanes
  // len_i - off_i - 1 without overflow, signed
  localparam int unsigned Dw      = ((LenWidth + 1 > OffWidth) ? LenWidth + 1 : OffWidth) + 1
) (
  input  logic signed [OffWidth-1:0] off_i,
  input  logic [LenWidth-1:0]        len_i,
  output logic [Lanes-1:0]           mask_o,
  output logic                       last_o
);

  // The thermometer codes: the Lb-bit values x = off_i[Lb-1:0] and r = rem[Lb-1:0]
  // (zero-extended to Lp >= 2 bits) are split into a high part (Sh bits) and a low part (Sl
  // bits); for a constant c = {ch, cl}, x > c is (xh > ch) | (xh == ch) & (xl > cl), each term
  // from a one-hot decode of a few bits. No comparison with a constant is left per lane for
  // synthesis to turn into a carry chain.
  localparam int unsigned Lp = (Lb > 1) ? Lb : 2;
  localparam int unsigned Sl = Lp / 2;
  localparam int unsigned Sh = Lp - Sl;
  localparam int unsigned Nh = 2**Sh;
  localparam int unsigned Nl = 2**Sl;

  logic                 off_neg, off_near;
  logic signed [Dw-1:0] rem;  // len_i - off_i - 1: the last lane (if any) inside the span
  logic                 rem_neg, rem_big;
  logic [Sh-1:0]        xh, rh;
  logic [Sl-1:0]        xl, rl;
  logic [Nh-1:0]        xh_eq, rh_eq;  // one-hot decodes
  logic [Nl-1:0]        xl_eq, rl_eq;
  // start: x > c (xh > a, xh == a, xl > b); end: r >= c (rh > a, rh == a, rl >= b)
  logic [Nh-1:0]        st_gt_h, st_eq_h, en_ge_h, en_eq_h;
  logic [Nl-1:0]        st_gt_l, en_ge_l;
  // the codes per lane; kept as nets so that synthesis (ABC) builds them as LUT4s of three
  // shared terms, not a wide-mux function per lane: synth_ecp5 of 64 lanes between registers,
  // deepest path by fpga.deepest_paths' estimate: 344 LUT4, 3 PFUMX, 7.4 ns (4 LUT4 after 3
  // carry cells) with the attribute; 312 LUT4, 59 PFUMX, 6 L6MUX21, 7.9 ns without
  (* keep *) logic [Lanes-1:0] start_ok, end_ok;

  always_comb begin
    off_neg  = off_i[OffWidth-1];
    off_near = (off_i >= -$signed(OffWidth'(2**Lb)));  // off_i >= -2^Lb
    rem      = $signed({{(Dw - LenWidth){1'b0}}, len_i}) +
               $signed({{(Dw - OffWidth){~off_i[OffWidth-1]}}, ~off_i});
    rem_neg  = rem[Dw-1];
    rem_big  = (rem >= $signed(Dw'(2**Lb)));         // every lane is before the end
    {xh, xl} = Lp'(off_i[Lb-1:0]);
    {rh, rl} = Lp'(rem[Lb-1:0]);
    for (int unsigned a = 0; a < Nh; a++) begin
      xh_eq[a] = (xh == Sh'(a));
      rh_eq[a] = (rh == Sh'(a));
    end
    for (int unsigned b = 0; b < Nl; b++) begin
      xl_eq[b] = (xl == Sl'(b));
      rl_eq[b] = (rl == Sl'(b));
    end
    for (int unsigned a = 0; a < Nh; a++) begin
      st_gt_h[a] = |(xh_eq >> (a + 1));
      st_eq_h[a] = xh_eq[a];
      en_ge_h[a] = |(rh_eq >> (a + 1));
      en_eq_h[a] = rh_eq[a];
    end
    for (int unsigned b = 0; b < Nl; b++) begin
      st_gt_l[b] = |(xl_eq >> (b + 1));
      en_ge_l[b] = |(rl_eq >> b);
    end
    for (int unsigned i = 0; i < Lanes; i++) begin
      // start: off_i + i >= 0, i.e. x > c with c = 2^Lb - 1 - i; end: i <= rem
      start_ok[i] = st_gt_h[(2**Lb - 1 - i) / Nl] ||
                    (st_eq_h[(2**Lb - 1 - i) / Nl] && st_gt_l[(2**Lb - 1 - i) % Nl]);
      end_ok[i]   = en_ge_h[i / Nl] || (en_eq_h[i / Nl] && en_ge_l[i % Nl]);
    end
    // the wide results gate the codes in each lane's last gate
    mask_o = ({Lanes{!off_neg}} | ({Lanes{off_near}} & start_ok)) &
             ({Lanes{rem_big}} | ({Lanes{!rem_neg}} & end_ok));
  end

  // last_o: rem <= Lanes - 1
  if (Lanes == 2**Lb) begin : gen_last_pow2
    assign last_o = !rem_big;
  end else begin : gen_last
    assign last_o = rem_neg || (!rem_big && (rem[Lb-1:0] < Lb'(Lanes)));
  end

`ifndef SYNTHESIS
  // off_i must hold -2^Lb (off_near)
  initial begin
    assert (OffWidth > Lb && Lanes > 0)
      else $fatal(1, "vta_span_mask: OffWidth %0d must exceed log2(Lanes) = %0d", OffWidth, Lb);
  end
`endif

endmodule : vta_span_mask
