// vta_sram_pair_tb: the gate-level check of one small module (tests/test_gls.py, make test): the
// RTL vta_sram and its synth_ecp5 netlist (renamed vta_sram_gl, block RAMs as DP16KD with the
// model in this folder) side by side, under the same random stimulus, their read data compared
// every cycle. A prologue writes every address (the RTL's memory starts random, the block RAM's
// from its INITVAL); then random writes and reads, one read in four at the address written in
// that cycle (the RAM's read-during-write case, where the RTL defines the old data). Run with
// Built with --binary --timing; prints "PASS <cycles>" or stops at the first difference.
module vta_sram_pair_tb #(
  parameter int unsigned Width  = 72,
  parameter int unsigned Depth  = 512,
  parameter int unsigned NumRd  = 2,
  parameter int unsigned Cycles = 20000
);
  localparam int unsigned Aw = (Depth > 1) ? $clog2(Depth) : 1;

  logic                        clk = 1'b0;
  logic                        we;
  logic [Aw-1:0]               waddr;
  logic [Width-1:0]            wdata;
  logic [NumRd-1:0][Aw-1:0]    raddr;
  logic [NumRd-1:0][Width-1:0] rdata_rtl, rdata_gl;

  vta_sram #(.Width(Width), .Depth(Depth), .NumRd(NumRd)) u_rtl (
    .clk_i  (clk),
    .we_i   (we),
    .waddr_i(waddr),
    .wdata_i(wdata),
    .raddr_i(raddr),
    .rdata_o(rdata_rtl)
  );

  vta_sram_gl u_gl (
    .clk_i  (clk),
    .we_i   (we),
    .waddr_i(waddr),
    .wdata_i(wdata),
    .raddr_i(raddr),
    .rdata_o(rdata_gl)
  );

  always #5 clk = ~clk;

  function automatic logic [Width-1:0] random_word();
    logic [Width-1:0] w;
    for (int i = 0; i < Width; i += 32) w[i +: 32] = $urandom;  // (the last slice clips)
    return w;
  endfunction

  int unsigned compared = 0;
  logic checking = 1'b0;

  // Each cycle's read data (registered at the rising edge) compared at the falling edge.
  always @(negedge clk) begin
    if (checking) begin
      if (rdata_rtl !== rdata_gl) begin
        $display("MISMATCH at cycle %0d: rtl %h netlist %h (raddr %h)", compared, rdata_rtl,
                 rdata_gl, raddr);
        $fatal(1, "vta_sram_pair_tb: the netlist differs from the RTL");
      end
      compared++;
    end
  end

  initial begin
    we = 1'b0;
    waddr = '0;
    wdata = '0;
    raddr = '0;
    for (int a = 0; a < Depth; a++) begin
      @(negedge clk);
      we = 1'b1;
      waddr = Aw'(a);
      wdata = random_word();
    end
    @(negedge clk);
    checking = 1'b1;
    for (int c = 0; c < Cycles; c++) begin
      we = ($urandom % 2) == 0;
      waddr = Aw'($urandom % Depth);
      wdata = random_word();
      for (int r = 0; r < NumRd; r++) raddr[r] = ($urandom % 4 == 0) ? waddr : Aw'($urandom % Depth);
      @(negedge clk);
    end
    $display("PASS %0d cycles compared", compared);
    $finish;
  end
endmodule
