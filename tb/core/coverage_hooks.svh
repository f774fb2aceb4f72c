// coverage_hooks.svh: the coverage bench hooks of a bench top (tb/csrc/coverage.cpp): the
// counts start at the end of the first reset, so the random power-up state counts nothing.
// Included inside the top module (the core bench's vta_tb_top, tests/test_coverage_closure.py's
// small module); it needs clk_i and an active-low rst_ni there.
  /* verilator coverage_off */  // the hooks are the bench's: no points
  import "DPI-C" function void coverage_start();
  import "DPI-C" function void coverage_first_reset();
  import "DPI-C" function void coverage_final();
  bit in_first_reset_q = 1'b0, counting_q = 1'b0;
  always @(posedge clk_i) begin
    if (!rst_ni) begin
      in_first_reset_q <= 1'b1;
    end else if (in_first_reset_q && !counting_q) begin
      coverage_first_reset();
      counting_q <= 1'b1;
    end
  end
  initial coverage_start();
  final coverage_final();
  /* verilator coverage_on */
