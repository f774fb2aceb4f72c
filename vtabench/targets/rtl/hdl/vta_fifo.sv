// vta_fifo: synchronous first-word-fall-through FIFO (command queues, beat buffers,
// row descriptors). Depth must be a power of two. clr_i empties it.
module vta_fifo #(
  parameter int unsigned Width = 32,
  parameter int unsigned Depth = 4,
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

  logic [Width-1:0] mem_q [0:Depth-1];
  logic [Aw-1:0] wptr_q, rptr_q;
  logic [Cw-1:0] count_q;
  logic push, pop;

  assign wready_o = (count_q != Cw'(Depth));
  assign rvalid_o = (count_q != '0);
  assign push     = wvalid_i & wready_o;
  assign pop      = rready_i & rvalid_o;
  assign rdata_o  = mem_q[rptr_q];
  assign count_o  = count_q;

  always_ff @(posedge clk_i) begin
    if (push) begin
      mem_q[wptr_q] <= wdata_i;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      wptr_q  <= '0;
      rptr_q  <= '0;
      count_q <= '0;
    end else if (clr_i) begin
      wptr_q  <= '0;
      rptr_q  <= '0;
      count_q <= '0;
    end else begin
      if (push) wptr_q <= wptr_q + Aw'(1);
      if (pop)  rptr_q <= rptr_q + Aw'(1);
      count_q <= count_q + Cw'(push) - Cw'(pop);
    end
  end

endmodule : vta_fifo
