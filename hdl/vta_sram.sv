// vta_sram: plain synchronous-read RAM, one write port and NumRd read ports.
// Read data appears one cycle after the address; a read and a write of the same
// address in one cycle return the old data (the compute stage forwards around it).
module vta_sram #(
  parameter int unsigned Width = 32,
  parameter int unsigned Depth = 16,
  parameter int unsigned NumRd = 1,
  localparam int unsigned Aw   = (Depth > 1) ? $clog2(Depth) : 1
) (
  input  logic                        clk_i,
  input  logic                        we_i,
  input  logic [Aw-1:0]               waddr_i,
  input  logic [Width-1:0]            wdata_i,
  input  logic [NumRd-1:0][Aw-1:0]    raddr_i,
  output logic [NumRd-1:0][Width-1:0] rdata_o
);

  logic [Width-1:0] mem_q [0:Depth-1];
  logic [NumRd-1:0][Width-1:0] rdata_q;

  always_ff @(posedge clk_i) begin
    if (we_i) begin
      mem_q[waddr_i] <= wdata_i;
    end
  end

  for (genvar r = 0; r < NumRd; r++) begin : g_rd
    always_ff @(posedge clk_i) begin
      rdata_q[r] <= mem_q[raddr_i[r]];
    end
  end

  assign rdata_o = rdata_q;

endmodule : vta_sram
