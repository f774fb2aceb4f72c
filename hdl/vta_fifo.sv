// vta_fifo: synchronous first-word-fall-through FIFO (command queues, beat buffers,
// row descriptors). Depth: a power of two (1: both pointers stay 0). clr_i empties it.
// The storage is a RAM with a registered read port, so that synthesis maps it to block RAM
// (or, when small, LUT RAM with an output register): its read address is the read pointer
// after this cycle's pop, so the RAM's output register always holds the head. The one case
// the RAM cannot serve is a write into the slot being read in the same cycle (a push into a
// FIFO that is empty after this cycle's pop): that word goes to rdata_o from a bypass
// register. Timing is that of a register FIFO: a word pushed in cycle t is at rdata_o with
// rvalid_o in cycle t+1, one pop per cycle. LutRam asks synthesis for LUT RAM instead of
// block RAM: for a shallow, wide FIFO whose width would take many block RAMs (fetch's beats).
// The pop (and push) select between values registered one cycle earlier (the read pointer and
// its successor, the count and its neighbours) instead of entering an adder: the pop is the
// last of a consumer's decisions, and the read address it chooses feeds the RAM. The RAM
// carries no_rw_check: the one read of the slot being written (the bypass case above) is
// never looked at, so synthesis needs no collision logic (a compare of the read address with
// the write address and a register of the written word behind the RAM's output).
module vta_fifo #(
  parameter int unsigned Width  = 32,
  parameter int unsigned Depth  = 4,
  parameter bit          LutRam = 1'b0,
  localparam int unsigned Aw   = (Depth > 1) ? $clog2(Depth) : 1,
  localparam int unsigned Cw   = $clog2(Depth + 1)
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  input  logic             clr_i,
  input  logic             wvalid_i,
  output logic             wready_o,
  input  logic [Width-1:0] wdata_i,
  output logic             rvalid_o,
  input  logic             rready_i,
  output logic [Width-1:0] rdata_o,
  output logic [Cw-1:0]    count_o
);

  logic [Width-1:0] ram_q, byp_data_q;
  logic [Aw-1:0] wptr_q, rptr_q, rptr_d, rptr_nx_q;   // rptr_nx_q = rptr_q + 1
  logic [Cw-1:0] count_q, count_d;
  logic push, pop, byp_q;

  assign wready_o = (count_q != Cw'(Depth));
  assign rvalid_o = (count_q != '0);
  assign push     = wvalid_i & wready_o;
  assign pop      = rready_i & rvalid_o;
  assign rptr_d   = pop ? rptr_nx_q : rptr_q;
  assign rdata_o  = byp_q ? byp_data_q : ram_q;
  assign count_o  = count_q;

  // count_q + push - pop: +1, -1 or unchanged
  always_comb begin
    unique case ({push, pop})
      2'b10:   count_d = count_q + Cw'(1);
      2'b01:   count_d = count_q - Cw'(1);
      default: count_d = count_q;
    endcase
  end

  if (LutRam) begin : g_lutram
    (* ram_style = "distributed", no_rw_check *) logic [Width-1:0] mem_q [0:Depth-1];
    always_ff @(posedge clk_i) begin
      if (push) begin
        mem_q[wptr_q] <= wdata_i;
      end
      ram_q <= mem_q[rptr_d];
    end
  end else begin : g_ram
    (* no_rw_check *) logic [Width-1:0] mem_q [0:Depth-1];
    always_ff @(posedge clk_i) begin
      if (push) begin
        mem_q[wptr_q] <= wdata_i;
      end
      ram_q <= mem_q[rptr_d];
    end
  end

  always_ff @(posedge clk_i) begin
    byp_data_q <= wdata_i;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      wptr_q    <= '0;
      rptr_q    <= '0;
      rptr_nx_q <= Aw'(Depth > 1);
      count_q   <= '0;
      byp_q     <= 1'b0;
    end else if (clr_i) begin
      wptr_q    <= '0;
      rptr_q    <= '0;
      rptr_nx_q <= Aw'(Depth > 1);
      count_q   <= '0;
      byp_q     <= 1'b0;
    end else begin
      if (push) wptr_q <= wptr_q + Aw'(Depth > 1);
      rptr_q  <= rptr_d;
      if (pop) rptr_nx_q <= rptr_nx_q + Aw'(Depth > 1);
      count_q <= count_d;
      // the pushed word is the next head: count_q == pop
      byp_q   <= push && (pop ? (count_q == Cw'(1)) : (count_q == '0));
    end
  end

`ifndef SYNTHESIS
`include "vta_assert.svh"
  `VTA_ASSERT_ARMED
  a_rptr_next: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF)
      rptr_nx_q == rptr_q + Aw'(Depth > 1))
    else $error("fifo: the read pointer's successor %0d is not %0d + 1", rptr_nx_q, rptr_q);
  // no_rw_check: a RAM read of the slot being written is replaced by the bypass register
  a_collision_bypassed: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF)
      push && !clr_i && (rptr_d == wptr_q) |=> byp_q)
    else $error("fifo: the RAM read the slot being written and its word is used");
`endif

`ifdef FORMAL
  // Read by the formal flow only (`vtabench formal`, formal/vta_fifo_props.sv states the port
  // properties). The internal invariants that let k-induction close, and the data-order
  // scoreboard: one word, chosen by the solver among all pushes (f_pick), is followed to the
  // head; it must come out unchanged after exactly the words pushed before it.
  logic [Width-1:0] f_mem_head;
  if (LutRam) begin : g_f_lutram
    assign f_mem_head = g_lutram.mem_q[rptr_q];
  end else begin : g_f_ram
    assign f_mem_head = g_ram.mem_q[rptr_q];
  end
  logic             f_tracked;  // the picked word is in the FIFO
  logic [Width-1:0] f_word;     // its value
  logic [Cw-1:0]    f_ahead;    // words in front of it
  // sums held in wires of their width: Yosys sizes a compare of an unsized sum at 32 bits
  logic [Aw-1:0] f_rptr_inc, f_wptr_exp, f_slot_addr;
  assign f_rptr_inc  = rptr_q + Aw'(Depth > 1);
  assign f_wptr_exp  = rptr_q + Aw'(count_q % Depth);
  assign f_slot_addr = rptr_q + Aw'(f_ahead);
  (* anyseq *) logic f_pick;
  logic [Width-1:0] f_slot;     // the RAM slot that holds it
  if (LutRam) begin : g_f_slot_lutram
    assign f_slot = g_lutram.mem_q[f_slot_addr];
  end else begin : g_f_slot_ram
    assign f_slot = g_ram.mem_q[f_slot_addr];
  end
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      f_tracked <= 1'b0;
      f_ahead   <= '0;
    end else if (clr_i) begin
      f_tracked <= 1'b0;
      f_ahead   <= '0;
    end else if (f_tracked) begin
      if (pop) begin
        f_tracked <= (f_ahead != '0);
        f_ahead   <= f_ahead - Cw'(1);
      end
    end else if (push && f_pick) begin
      f_tracked <= 1'b1;
      f_word    <= wdata_i;
      f_ahead   <= count_q - Cw'(pop);
    end
  end
  // combinational: each state of a trace is checked as it is (a clocked immediate assert is
  // sampled at the edge, where the asynchronous reset of the cycle has already acted)
  always @* begin
    if (rst_ni) begin
      f_count_range: assert (count_q <= Cw'(Depth));
      f_rptr_next: assert (rptr_nx_q == f_rptr_inc);
      f_wptr: assert (wptr_q == f_wptr_exp);
      if (count_q != '0) begin
        f_head: assert (rdata_o == f_mem_head);
      end
      if (f_tracked) begin
        f_ahead_in_fifo: assert (f_ahead < count_q);
        f_word_kept: assert (f_slot == f_word);
        if (f_ahead == '0) begin
          f_order: assert (rvalid_o && rdata_o == f_word);
        end
      end
    end
  end
`endif

endmodule : vta_fifo
