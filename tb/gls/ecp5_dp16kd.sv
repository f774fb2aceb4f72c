// DP16KD: a behavioural model of the Lattice ECP5 18 Kbit dual-port block RAM, for the gate-level
// simulation of `make gls` (vtabench/rtl/gls.py, docs/fpga.md). Yosys ships this cell as a black
// box only (share/lattice/cells_sim_ecp5.v), so the netlist `synth_ecp5` writes cannot be simulated
// without a model of its block RAMs.
//
// What it models: the configurations Yosys' own mapping (share/lattice/brams_map_16kd.v) produces,
// as Lattice's ECP5 memory guide (TN1264) describes them:
// - data widths 1, 2, 4, 9, 18 and 36; 36 only as the write port A and the read port B of a
//   pseudo dual-port RAM, with its data on the A pins (bits 17:0) and the B pins (35:18);
// - the word address in the top bits of ADx (x1: 13:0, x2: 13:1, x4: 13:2, x9: 13:3, x18: 13:4,
//   x36: 13:5); in x18 mode ADx[1:0], in x36 mode ADA[3:0] enable the 9-bit byte lanes of a write;
// - a write at the clock edge (CLKxMUX "INV": the falling edge) when CEx and WEx are high and the
//   chip select matches; the output register loaded at the same edge when CEx: with a write on the
//   same port the old word (READBEFOREWRITE), the new one (WRITETHROUGH) or no change (NORMAL);
// - a read of a word the other port writes at the same edge returns the old word, the result
//   Yosys' mapping relies on (tests/test_gls.py: vta_sram's netlist matches its RTL with it);
//   with VTA_GLS_COLLISION_POISON defined it returns the old word inverted instead, so that a
//   netlist whose result depends on that collision shows where (docs/fpga.md, gate level);
// - RSTx with RESETMODE "SYNC" clears that port's output register at the edge;
// - the contents start from INITVAL_00..3F (16 words of 18 bits in 20-bit slots per parameter).
// Anything else (REGMODE other than NOREG, a chip-select decode, an asynchronous reset used, mixed
// widths across the 16-bit and 18-bit layouts) stops the simulation with the instance's name.
module DP16KD (
  input  DIA17, DIA16, DIA15, DIA14, DIA13, DIA12, DIA11, DIA10, DIA9, DIA8, DIA7, DIA6, DIA5, DIA4, DIA3, DIA2, DIA1, DIA0,
  input  ADA13, ADA12, ADA11, ADA10, ADA9, ADA8, ADA7, ADA6, ADA5, ADA4, ADA3, ADA2, ADA1, ADA0,
  input  CEA, OCEA, CLKA, WEA, RSTA,
  input  CSA2, CSA1, CSA0,
  output DOA17, DOA16, DOA15, DOA14, DOA13, DOA12, DOA11, DOA10, DOA9, DOA8, DOA7, DOA6, DOA5, DOA4, DOA3, DOA2, DOA1, DOA0,
  input  DIB17, DIB16, DIB15, DIB14, DIB13, DIB12, DIB11, DIB10, DIB9, DIB8, DIB7, DIB6, DIB5, DIB4, DIB3, DIB2, DIB1, DIB0,
  input  ADB13, ADB12, ADB11, ADB10, ADB9, ADB8, ADB7, ADB6, ADB5, ADB4, ADB3, ADB2, ADB1, ADB0,
  input  CEB, OCEB, CLKB, WEB, RSTB,
  input  CSB2, CSB1, CSB0,
  output DOB17, DOB16, DOB15, DOB14, DOB13, DOB12, DOB11, DOB10, DOB9, DOB8, DOB7, DOB6, DOB5, DOB4, DOB3, DOB2, DOB1, DOB0
);
  parameter integer DATA_WIDTH_A = 18;
  parameter integer DATA_WIDTH_B = 18;
  parameter REGMODE_A = "NOREG";
  parameter REGMODE_B = "NOREG";
  parameter RESETMODE = "SYNC";
  parameter ASYNC_RESET_RELEASE = "SYNC";
  parameter CSDECODE_A = "0b000";
  parameter CSDECODE_B = "0b000";
  parameter WRITEMODE_A = "NORMAL";
  parameter WRITEMODE_B = "NORMAL";
  parameter CLKAMUX = "CLKA";
  parameter CLKBMUX = "CLKB";
  parameter GSR = "ENABLED";
  parameter INIT_DATA = "STATIC";
  parameter [319:0] INITVAL_00 = 320'h0;
  parameter [319:0] INITVAL_01 = 320'h0;
  parameter [319:0] INITVAL_02 = 320'h0;
  parameter [319:0] INITVAL_03 = 320'h0;
  parameter [319:0] INITVAL_04 = 320'h0;
  parameter [319:0] INITVAL_05 = 320'h0;
  parameter [319:0] INITVAL_06 = 320'h0;
  parameter [319:0] INITVAL_07 = 320'h0;
  parameter [319:0] INITVAL_08 = 320'h0;
  parameter [319:0] INITVAL_09 = 320'h0;
  parameter [319:0] INITVAL_0A = 320'h0;
  parameter [319:0] INITVAL_0B = 320'h0;
  parameter [319:0] INITVAL_0C = 320'h0;
  parameter [319:0] INITVAL_0D = 320'h0;
  parameter [319:0] INITVAL_0E = 320'h0;
  parameter [319:0] INITVAL_0F = 320'h0;
  parameter [319:0] INITVAL_10 = 320'h0;
  parameter [319:0] INITVAL_11 = 320'h0;
  parameter [319:0] INITVAL_12 = 320'h0;
  parameter [319:0] INITVAL_13 = 320'h0;
  parameter [319:0] INITVAL_14 = 320'h0;
  parameter [319:0] INITVAL_15 = 320'h0;
  parameter [319:0] INITVAL_16 = 320'h0;
  parameter [319:0] INITVAL_17 = 320'h0;
  parameter [319:0] INITVAL_18 = 320'h0;
  parameter [319:0] INITVAL_19 = 320'h0;
  parameter [319:0] INITVAL_1A = 320'h0;
  parameter [319:0] INITVAL_1B = 320'h0;
  parameter [319:0] INITVAL_1C = 320'h0;
  parameter [319:0] INITVAL_1D = 320'h0;
  parameter [319:0] INITVAL_1E = 320'h0;
  parameter [319:0] INITVAL_1F = 320'h0;
  parameter [319:0] INITVAL_20 = 320'h0;
  parameter [319:0] INITVAL_21 = 320'h0;
  parameter [319:0] INITVAL_22 = 320'h0;
  parameter [319:0] INITVAL_23 = 320'h0;
  parameter [319:0] INITVAL_24 = 320'h0;
  parameter [319:0] INITVAL_25 = 320'h0;
  parameter [319:0] INITVAL_26 = 320'h0;
  parameter [319:0] INITVAL_27 = 320'h0;
  parameter [319:0] INITVAL_28 = 320'h0;
  parameter [319:0] INITVAL_29 = 320'h0;
  parameter [319:0] INITVAL_2A = 320'h0;
  parameter [319:0] INITVAL_2B = 320'h0;
  parameter [319:0] INITVAL_2C = 320'h0;
  parameter [319:0] INITVAL_2D = 320'h0;
  parameter [319:0] INITVAL_2E = 320'h0;
  parameter [319:0] INITVAL_2F = 320'h0;
  parameter [319:0] INITVAL_30 = 320'h0;
  parameter [319:0] INITVAL_31 = 320'h0;
  parameter [319:0] INITVAL_32 = 320'h0;
  parameter [319:0] INITVAL_33 = 320'h0;
  parameter [319:0] INITVAL_34 = 320'h0;
  parameter [319:0] INITVAL_35 = 320'h0;
  parameter [319:0] INITVAL_36 = 320'h0;
  parameter [319:0] INITVAL_37 = 320'h0;
  parameter [319:0] INITVAL_38 = 320'h0;
  parameter [319:0] INITVAL_39 = 320'h0;
  parameter [319:0] INITVAL_3A = 320'h0;
  parameter [319:0] INITVAL_3B = 320'h0;
  parameter [319:0] INITVAL_3C = 320'h0;
  parameter [319:0] INITVAL_3D = 320'h0;
  parameter [319:0] INITVAL_3E = 320'h0;
  parameter [319:0] INITVAL_3F = 320'h0;

  localparam int unsigned Words = 1024;  // 18-bit words: 18,432 bits

  logic [17:0] di_a, di_b, do_a_q;
  logic [35:0] do_b_q;
  logic [13:0] ad_a, ad_b;
  assign di_a = {DIA17, DIA16, DIA15, DIA14, DIA13, DIA12, DIA11, DIA10, DIA9, DIA8, DIA7, DIA6, DIA5, DIA4, DIA3, DIA2, DIA1, DIA0};
  assign di_b = {DIB17, DIB16, DIB15, DIB14, DIB13, DIB12, DIB11, DIB10, DIB9, DIB8, DIB7, DIB6, DIB5, DIB4, DIB3, DIB2, DIB1, DIB0};
  assign ad_a = {ADA13, ADA12, ADA11, ADA10, ADA9, ADA8, ADA7, ADA6, ADA5, ADA4, ADA3, ADA2, ADA1, ADA0};
  assign ad_b = {ADB13, ADB12, ADB11, ADB10, ADB9, ADB8, ADB7, ADB6, ADB5, ADB4, ADB3, ADB2, ADB1, ADB0};
  // A x36 read (port B) leaves bits 17:0 on the A pins and 35:18 on the B pins.
  assign {DOA17, DOA16, DOA15, DOA14, DOA13, DOA12, DOA11, DOA10, DOA9, DOA8, DOA7, DOA6, DOA5, DOA4, DOA3, DOA2, DOA1, DOA0} = DATA_WIDTH_B == 36 ? do_b_q[17:0] : do_a_q;
  assign {DOB17, DOB16, DOB15, DOB14, DOB13, DOB12, DOB11, DOB10, DOB9, DOB8, DOB7, DOB6, DOB5, DOB4, DOB3, DOB2, DOB1, DOB0} = DATA_WIDTH_B == 36 ? do_b_q[35:18] : do_b_q[17:0];

  logic [17:0] mem_q [Words];

  function automatic logic wide(input integer w);
    return w == 9 || w == 18 || w == 36;
  endfunction

  // The 18-bit word holding the access (x36: the lower of the two), and the position of the
  // access's bit 0 in it: the 1/2/4 layouts leave out each word's two parity bits (8 and 17).
  function automatic int unsigned word_of(input integer w, input logic [13:0] ad);
    unique case (w)
      1: return 32'(ad) / 16;
      2: return 32'(ad[13:1]) * 2 / 16;
      4: return 32'(ad[13:2]) * 4 / 16;
      36: return 32'(ad[13:5]) * 2;
      default: return 32'(ad[13:4]);  // 9, 18
    endcase
  endfunction

  // Position in the word (pair, for x36) of bit b of the access.
  function automatic int unsigned pos_of(input integer w, input logic [13:0] ad, input integer b);
    int unsigned first;
    unique case (w)
      1: first = 32'(ad) % 16;
      2: first = 32'(ad[13:1]) * 2 % 16;
      4: first = 32'(ad[13:2]) * 4 % 16;
      default: first = 0;
    endcase
    if (w == 9) return (ad[3] ? 9 : 0) + 32'(b);
    if (wide(w)) return 32'(b);
    return (first + 32'(b)) / 8 * 9 + (first + 32'(b)) % 8;
  endfunction

  // Whether bit b of a write is enabled: the byte lanes of x18 and x36, every bit otherwise.
  function automatic logic lane_en(input integer w, input logic [13:0] ad, input integer b);
    if (w == 18 || w == 36) return ad[b / 9];
    return 1'b1;
  endfunction

  initial begin
    logic [64*320-1:0] init;
    init = {INITVAL_3F, INITVAL_3E, INITVAL_3D, INITVAL_3C, INITVAL_3B, INITVAL_3A, INITVAL_39, INITVAL_38, INITVAL_37, INITVAL_36, INITVAL_35, INITVAL_34, INITVAL_33, INITVAL_32, INITVAL_31, INITVAL_30, INITVAL_2F, INITVAL_2E, INITVAL_2D, INITVAL_2C, INITVAL_2B, INITVAL_2A, INITVAL_29, INITVAL_28, INITVAL_27, INITVAL_26, INITVAL_25, INITVAL_24, INITVAL_23, INITVAL_22, INITVAL_21, INITVAL_20, INITVAL_1F, INITVAL_1E, INITVAL_1D, INITVAL_1C, INITVAL_1B, INITVAL_1A, INITVAL_19, INITVAL_18, INITVAL_17, INITVAL_16, INITVAL_15, INITVAL_14, INITVAL_13, INITVAL_12, INITVAL_11, INITVAL_10, INITVAL_0F, INITVAL_0E, INITVAL_0D, INITVAL_0C, INITVAL_0B, INITVAL_0A, INITVAL_09, INITVAL_08, INITVAL_07, INITVAL_06, INITVAL_05, INITVAL_04, INITVAL_03, INITVAL_02, INITVAL_01, INITVAL_00};
    for (int i = 0; i < Words; i++) mem_q[i] = init[(i / 16) * 320 + (i % 16) * 20 +: 18];
    do_a_q = '0;
    do_b_q = '0;
    if (REGMODE_A != "NOREG" || REGMODE_B != "NOREG")
      $fatal(1, "DP16KD %m: REGMODE %s/%s is not modelled (NOREG only)", REGMODE_A, REGMODE_B);
    if (CSDECODE_A != "0b000" || CSDECODE_B != "0b000")
      $fatal(1, "DP16KD %m: CSDECODE %s/%s is not modelled (0b000 only)", CSDECODE_A, CSDECODE_B);
    if (wide(DATA_WIDTH_A) != wide(DATA_WIDTH_B))
      $fatal(1, "DP16KD %m: widths %0d and %0d mix the 16-bit and 18-bit layouts", DATA_WIDTH_A,
             DATA_WIDTH_B);
  end

  logic sel_a, sel_b, clk_a, clk_b;
  assign sel_a = {CSA2, CSA1, CSA0} == 3'b000;
  assign sel_b = {CSB2, CSB1, CSB0} == 3'b000;
  assign clk_a = CLKAMUX == "INV" ? ~CLKA : CLKA;
  assign clk_b = CLKBMUX == "INV" ? ~CLKB : CLKB;

  // One port: its word pair (old contents), what a write makes of it, and the read data.
  function automatic logic [35:0] pair_of(input int unsigned word);
    return {mem_q[(word + 1) % Words], mem_q[word]};
  endfunction

  function automatic logic [35:0] read_bits(input logic [35:0] pair, input integer w,
                                            input logic [13:0] ad);
    logic [35:0] r = '0;
    for (int b = 0; b < w; b++) r[b] = pair[pos_of(w, ad, b)];
    return r;
  endfunction

  function automatic logic [35:0] merge(input logic [35:0] pair, input integer w,
                                        input logic [13:0] ad, input logic [35:0] wd);
    logic [35:0] r = pair;
    for (int b = 0; b < w; b++) if (lane_en(w, ad, b)) r[pos_of(w, ad, b)] = wd[b];
    return r;
  endfunction

  // Whether a port's access and a write of the other port at the same edge touch one word.
  function automatic logic collides(input int unsigned word, input integer w,
                                    input int unsigned other, input integer other_w);
    int unsigned last = word + (w == 36 ? 1 : 0);
    int unsigned other_last = other + (other_w == 36 ? 1 : 0);
    return word <= other_last && other <= last;
  endfunction

  // What a read that collides with the other port's write inverts (see the header).
`ifdef VTA_GLS_COLLISION_POISON
  localparam logic [35:0] Poison = '1;
`else
  localparam logic [35:0] Poison = '0;
`endif

  logic a_writes, b_writes;
  assign a_writes = CEA && sel_a && WEA;
  assign b_writes = CEB && sel_b && WEB;

  // Port A (in x36 mode its data bits 35:18 arrive on the B data pins).
  always @(posedge clk_a) begin
    int unsigned word;
    logic [35:0] pair, wd, next;
    word = word_of(DATA_WIDTH_A, ad_a);
    pair = pair_of(word);
    wd = DATA_WIDTH_A == 36 ? {di_b, di_a} : {18'b0, di_a};
    next = merge(pair, DATA_WIDTH_A, ad_a, wd);
    if (a_writes) begin
      mem_q[word] <= next[17:0];
      if (DATA_WIDTH_A == 36) mem_q[word + 1] <= next[35:18];
    end
    if (RSTA && RESETMODE == "SYNC") do_a_q <= '0;
    else if (CEA && sel_a && DATA_WIDTH_A != 36) begin
      if (b_writes && collides(word, DATA_WIDTH_A, word_of(DATA_WIDTH_B, ad_b), DATA_WIDTH_B))
        do_a_q <= 18'(Poison) ^ 18'(read_bits(pair, DATA_WIDTH_A, ad_a));
      else if (!WEA || WRITEMODE_A == "READBEFOREWRITE")
        do_a_q <= read_bits(pair, DATA_WIDTH_A, ad_a);
      else if (WRITEMODE_A == "WRITETHROUGH") do_a_q <= read_bits(next, DATA_WIDTH_A, ad_a);
    end
  end

  // Port B.
  always @(posedge clk_b) begin
    int unsigned word;
    logic [35:0] pair, next;
    word = word_of(DATA_WIDTH_B, ad_b);
    pair = pair_of(word);
    next = merge(pair, DATA_WIDTH_B, ad_b, {18'b0, di_b});
    if (b_writes) begin
      if (DATA_WIDTH_B == 36) $fatal(1, "DP16KD %m: a write on a x36 port B is not modelled");
      mem_q[word] <= next[17:0];
    end
    if (RSTB && RESETMODE == "SYNC") do_b_q <= '0;
    else if (CEB && sel_b) begin
      if (a_writes && collides(word, DATA_WIDTH_B, word_of(DATA_WIDTH_A, ad_a), DATA_WIDTH_A))
        do_b_q <= Poison ^ read_bits(pair, DATA_WIDTH_B, ad_b);
      else if (!WEB || WRITEMODE_B == "READBEFOREWRITE")
        do_b_q <= read_bits(pair, DATA_WIDTH_B, ad_b);
      else if (WRITEMODE_B == "WRITETHROUGH") do_b_q <= read_bits(next, DATA_WIDTH_B, ad_b);
    end
  end

  always @* begin
    if (RESETMODE == "ASYNC" && (RSTA || RSTB))
      $fatal(1, "DP16KD %m: an asynchronous reset (RESETMODE ASYNC) is not modelled");
  end
endmodule
