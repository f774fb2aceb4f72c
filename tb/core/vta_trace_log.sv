// vta_trace_log: the pipeline event log of the benches (docs/visualize.md). Bound into every
// vta_core (vta_trace_bind.sv), it reads the core's trace port and, only when the simulator was
// given a trace file (+vta_trace=FILE, else the environment variable VTA_TRACE_FILE), writes
// records through DPI-C (tb/csrc/trace.cpp): a launch, an
// instruction dispatched into a stage's command queue, an instruction retired by a stage (with
// the cycle its stage took it and the cycles it waited for a token, for memory and for room to
// push a token), and the end of a run with the core's own counters. A few records per
// instruction, none per cycle; without a trace file no DPI function is called. Cycle numbers are
// the core's cycles_o (0 in the first busy cycle of a run).
/* verilator coverage_off */
module vta_trace_log import vta_pkg::*; (
  input  logic                     clk_i,
  input  logic                     rst_ni,
  input  logic                     busy_i,
  input  logic                     done_i,
  input  logic [7:0]               error_i,
  input  logic [31:0]              insn_count_i,
  input  logic [31:0]              cycles_i,
  input  logic [31:0]              load_busy_i,
  input  logic [31:0]              compute_busy_i,
  input  logic [31:0]              store_busy_i,
  input  logic [31:0]              load_insns_i,
  input  logic [31:0]              compute_insns_i,
  input  logic [31:0]              store_insns_i,
  input  logic [32+INSN_WIDTH-1:0] cmd_i,
  input  logic [2:0]               dispatch_i,
  input  logic [2:0]               take_i,
  input  logic [2:0]               retire_i,
  input  logic [2:0][31:0]         idx_i,
  input  logic [2:0]               pop_wait_i,
  input  logic [2:0]               push_wait_i,
  input  logic [2:0]               mem_wait_i
);

  import "DPI-C" function int vta_trace_open(input string path);
  import "DPI-C" function void vta_trace_close();
  import "DPI-C" function void vta_trace_launch(input int unsigned insn_count);
  import "DPI-C" function void vta_trace_dispatch(input int unsigned cycle,
                                                  input int unsigned stage,
                                                  input int unsigned idx,
                                                  input bit [INSN_WIDTH-1:0] insn);
  import "DPI-C" function void vta_trace_retire(input int unsigned stage, input int unsigned idx,
                                                input int unsigned take,
                                                input int unsigned retire,
                                                input int unsigned pop_wait,
                                                input int unsigned mem_wait,
                                                input int unsigned push_wait);
  import "DPI-C" function void vta_trace_done(input int unsigned cycles, input int unsigned error,
                                              input int unsigned load_busy,
                                              input int unsigned compute_busy,
                                              input int unsigned store_busy,
                                              input int unsigned load_insns,
                                              input int unsigned compute_insns,
                                              input int unsigned store_insns);

  bit    enabled;  // a trace file is open
  bit    armed;    // a reset was seen: before it, registers hold random values (x-initial)
  string path;

  initial begin
    armed = 1'b0;
    if ($value$plusargs("vta_trace=%s", path) == 0) path = "";
    enabled = vta_trace_open(path) != 0;
  end

  always @(posedge clk_i) begin
    if (!rst_ni) armed <= 1'b1;
  end

  final begin
    if (enabled) vta_trace_close();
  end

  // per stage: the cycle the current instruction was taken, its wait cycles so far
  logic             busy_q, done_q;
  logic [2:0][31:0] take_q, pop_q, push_q, mem_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      busy_q <= 1'b0;
      done_q <= 1'b0;
      take_q <= '0;
      pop_q  <= '0;
      push_q <= '0;
      mem_q  <= '0;
    end else if (enabled && armed) begin
      busy_q <= busy_i;
      done_q <= done_i;
      if (busy_i && !busy_q) vta_trace_launch(insn_count_i);
      for (int unsigned s = 0; s < 3; s++) begin
        if (dispatch_i[s]) begin
          vta_trace_dispatch(cycles_i, s, cmd_i[INSN_WIDTH +: 32], cmd_i[INSN_WIDTH-1:0]);
        end
        if (retire_i[s]) begin
          vta_trace_retire(s, idx_i[s], take_q[s], cycles_i, pop_q[s], mem_q[s], push_q[s]);
        end
        if (take_i[s]) begin
          take_q[s] <= cycles_i;
          pop_q[s]  <= '0;
          push_q[s] <= '0;
          mem_q[s]  <= '0;
        end else begin
          pop_q[s]  <= pop_q[s] + 32'(pop_wait_i[s]);
          push_q[s] <= push_q[s] + 32'(push_wait_i[s]);
          mem_q[s]  <= mem_q[s] + 32'(mem_wait_i[s]);
        end
      end
      if (done_i && !done_q) begin
        vta_trace_done(cycles_i, 32'(error_i), load_busy_i, compute_busy_i, store_busy_i,
                       load_insns_i, compute_insns_i, store_insns_i);
      end
    end
  end

endmodule : vta_trace_log
/* verilator coverage_on */
