// vta_buf_out: the out buffer (Depth elements of ElemBytes int8 tiles). The compute
// stage writes one whole element per cycle; the store stage reads one bus-wide window
// per cycle (byte address of window lane 0 inside the buffer; 1-cycle latency; lanes
// whose address wraps return don't-care data, the store masks them with strobes).
// Banked like vta_buf so that a window of several small elements is one read.
module vta_buf_out #(
  parameter int unsigned ElemBytes = 16,
  parameter int unsigned Depth     = 2048,
  parameter int unsigned BusBytes  = 64,
  localparam int unsigned IdxW     = $clog2(Depth),
  localparam int unsigned ByteW    = $clog2(Depth * ElemBytes),
  localparam int unsigned ElemW    = ElemBytes * 8,
  localparam int unsigned BusW     = BusBytes * 8
) (
  input  logic             clk_i,
  input  logic             elem_we_i,
  input  logic [IdxW-1:0]  elem_idx_i,
  input  logic [ElemW-1:0] elem_data_i,
  input  logic [ByteW-1:0] win_addr_i,
  output logic [BusW-1:0]  win_data_o
);

  localparam int unsigned ChunkBytes  = (ElemBytes < BusBytes) ? ElemBytes : BusBytes;
  localparam int unsigned ChunkW      = ChunkBytes * 8;
  localparam int unsigned NumLanes    = BusBytes / ChunkBytes;
  localparam int unsigned NumSlices   = ElemBytes / ChunkBytes;
  localparam int unsigned NumBanks    = (NumLanes > NumSlices) ? NumLanes : NumSlices;
  localparam int unsigned LogChunk    = $clog2(ChunkBytes);
  localparam int unsigned LogBanks    = $clog2(NumBanks);
  localparam int unsigned TotalChunks = Depth * NumSlices;
  localparam int unsigned BankDepth   = TotalChunks / NumBanks;
  localparam int unsigned BankAw      = (BankDepth > 1) ? $clog2(BankDepth) : 1;

  logic [NumBanks-1:0][ChunkW-1:0] bank_rdata;
  logic [31:0] c0, c0_q;

  assign c0 = 32'(win_addr_i) >> LogChunk;

  always_ff @(posedge clk_i) begin
    c0_q <= c0;
  end

  for (genvar b = 0; b < NumBanks; b++) begin : g_bank
    logic              we;
    logic [BankAw-1:0] waddr;
    logic [ChunkW-1:0] wdata;
    logic [BankAw-1:0] raddr;
    logic [31:0]       lane;
    logic [31:0]       chunk;

    always_comb begin
      lane  = (32'(b) + 32'(NumBanks) - (c0 & 32'(NumBanks - 1))) & 32'(NumBanks - 1);
      chunk = (c0 + lane) & 32'(TotalChunks - 1);
      raddr = BankAw'(chunk >> LogBanks);
      if (NumSlices == 1) begin
        we    = elem_we_i && ((32'(elem_idx_i) & 32'(NumBanks - 1)) == 32'(b));
        waddr = BankAw'(32'(elem_idx_i) >> LogBanks);
        wdata = ChunkW'(elem_data_i);
      end else begin
        we    = elem_we_i;
        waddr = BankAw'(elem_idx_i);
        wdata = ChunkW'(elem_data_i >> (b * ChunkW));
      end
    end

    vta_sram #(
      .Width (ChunkW),
      .Depth (BankDepth),
      .NumRd (1)
    ) u_ram (
      .clk_i   (clk_i),
      .we_i    (we),
      .waddr_i (waddr),
      .wdata_i (wdata),
      .raddr_i (raddr),
      .rdata_o (bank_rdata[b])
    );
  end

  // Window lane j comes from bank (c0 + j) % NumBanks.
  always_comb begin
    for (int unsigned j = 0; j < NumLanes; j++) begin
      win_data_o[j*ChunkW +: ChunkW] =
          bank_rdata[LogBanks > 0 ? ((c0_q + 32'(j)) & 32'(NumBanks - 1)) : 32'd0];
    end
  end

endmodule : vta_buf_out
