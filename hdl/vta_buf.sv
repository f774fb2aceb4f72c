// vta_buf: an on-chip tile buffer (uop, inp, wgt, acc) of Depth elements of ElemBytes.
// It is built from banks of plain synchronous RAM (vta_sram) so that one bus-wide
// window (BusBytes) can be written per cycle whatever the element size:
//   - elements smaller than the bus: NumLanes = BusBytes/ElemBytes banks, element e in
//     bank e % NumLanes; a window write stores up to NumLanes consecutive elements;
//   - elements larger than the bus: NumSlices = ElemBytes/BusBytes banks, slice k of
//     every element in bank k; a window write stores one slice.
// Ports: window write (DMA; byte address of window lane 0 inside the buffer, lanes
// enabled by win_mask_i at chunk granularity), whole-element write (compute), NumRd
// element reads (1-cycle latency). The two write ports must not be used in the same cycle
// (the element write wins).
module vta_buf #(
  parameter int unsigned ElemBytes = 16,
  parameter int unsigned Depth     = 2048,
  parameter int unsigned BusBytes  = 64,
  parameter int unsigned NumRd     = 1,
  localparam int unsigned IdxW     = $clog2(Depth),
  localparam int unsigned ByteW    = $clog2(Depth * ElemBytes),
  localparam int unsigned ElemW    = ElemBytes * 8,
  localparam int unsigned BusW     = BusBytes * 8
) (
  input  logic                        clk_i,
  input  logic                        win_we_i,
  input  logic [ByteW-1:0]            win_addr_i,
  input  logic [BusBytes-1:0]         win_mask_i,
  input  logic [BusW-1:0]             win_data_i,
  input  logic                        elem_we_i,
  input  logic [IdxW-1:0]             elem_idx_i,
  input  logic [ElemW-1:0]            elem_data_i,
  input  logic [NumRd-1:0][IdxW-1:0]  rd_idx_i,
  output logic [NumRd-1:0][ElemW-1:0] rd_data_o
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

  logic [NumBanks-1:0][NumRd-1:0][ChunkW-1:0] bank_rdata;
  logic [NumBanks-1:0][NumRd-1:0][BankAw-1:0] bank_raddr;
  logic [31:0] win_c0;

  assign win_c0 = 32'(win_addr_i) >> LogChunk;

  for (genvar b = 0; b < NumBanks; b++) begin : g_bank
    logic                          we;
    logic [BankAw-1:0]             waddr;
    logic [ChunkW-1:0]             wdata;
    logic [31:0]                   lane;      // window lane that maps to this bank
    logic [31:0]                   chunk;     // chunk index that lane writes
    logic                          lane_en;

    always_comb begin
      lane    = (32'(b) + 32'(NumBanks) - (win_c0 & 32'(NumBanks - 1))) & 32'(NumBanks - 1);
      chunk   = (win_c0 + lane) & 32'(TotalChunks - 1);
      lane_en = (lane < 32'(NumLanes)) && win_mask_i[(lane & 32'(NumLanes - 1)) * ChunkBytes];
      we      = win_we_i & lane_en;
      waddr   = BankAw'(chunk >> LogBanks);
      wdata   = ChunkW'(win_data_i >> ((lane & 32'(NumLanes - 1)) * ChunkW));
      if (elem_we_i) begin
        if (NumSlices == 1) begin
          we    = ((32'(elem_idx_i) & 32'(NumBanks - 1)) == 32'(b));
          waddr = BankAw'(32'(elem_idx_i) >> LogBanks);
          wdata = ChunkW'(elem_data_i);
        end else begin
          we    = 1'b1;
          waddr = BankAw'(elem_idx_i);
          wdata = ChunkW'(elem_data_i >> (b * ChunkW));
        end
      end
    end

    for (genvar r = 0; r < NumRd; r++) begin : g_raddr
      if (NumSlices == 1) begin : g_lanes
        assign bank_raddr[b][r] = BankAw'(32'(rd_idx_i[r]) >> LogBanks);
      end else begin : g_slices
        assign bank_raddr[b][r] = BankAw'(rd_idx_i[r]);
      end
    end

    vta_sram #(
      .Width (ChunkW),
      .Depth (BankDepth),
      .NumRd (NumRd)
    ) u_ram (
      .clk_i   (clk_i),
      .we_i    (we),
      .waddr_i (waddr),
      .wdata_i (wdata),
      .raddr_i (bank_raddr[b]),
      .rdata_o (bank_rdata[b])
    );
  end

  // Read data: concatenation of the slices, or the bank that holds the element.
  localparam int unsigned SelW = (LogBanks > 0) ? LogBanks : 1;
  logic [NumRd-1:0][SelW-1:0] sel_q;

  if (NumSlices == 1 && NumBanks > 1) begin : g_rd_sel
    always_ff @(posedge clk_i) begin
      for (int unsigned r = 0; r < NumRd; r++) begin
        sel_q[r] <= SelW'(rd_idx_i[r]);
      end
    end
    always_comb begin
      for (int unsigned r = 0; r < NumRd; r++) begin
        rd_data_o[r] = bank_rdata[sel_q[r]][r];
      end
    end
  end else begin : g_rd_cat
    assign sel_q = '0;
    logic unused_sel;
    assign unused_sel = ^sel_q;
    always_comb begin
      for (int unsigned r = 0; r < NumRd; r++) begin
        for (int unsigned b = 0; b < NumBanks; b++) begin
          rd_data_o[r][b*ChunkW +: ChunkW] = bank_rdata[b][r];
        end
      end
    end
  end

endmodule : vta_buf
