// vta_buf: an on-chip tile buffer (uop, inp, wgt, acc) of Depth elements of ElemBytes.
// It is built from banks of plain synchronous RAM (vta_sram) so that one write window of
// WinBytes (a bus beat, or four for the acc buffer's ACC_8BIT loads) is stored per cycle
// whatever the element size. Storage is cut into chunks of min(ElemBytes, BusBytes):
//   NumSlices = chunks per element, NumLanes = chunks per window,
//   NumBanks  = max(NumSlices, NumLanes), chunk c lives in bank c % NumBanks, row c / NumBanks,
// so the chunks of one window, and the slices of one element, are in distinct banks.
// Ports: window write (DMA; byte address of window lane 0 inside the buffer, lanes enabled
// by win_mask_i at chunk granularity), whole-element write (compute), NumRd element reads
// (1-cycle latency). The two write ports must not be used in the same cycle (the element
// write wins).
module vta_buf #(
  parameter int unsigned ElemBytes = 16,
  parameter int unsigned Depth     = 2048,
  parameter int unsigned BusBytes  = 64,
  parameter int unsigned WinBytes  = BusBytes,
  parameter int unsigned NumRd     = 1,
  localparam int unsigned IdxW     = $clog2(Depth),
  localparam int unsigned ByteW    = $clog2(Depth * ElemBytes),
  localparam int unsigned ElemW    = ElemBytes * 8,
  localparam int unsigned WinW     = WinBytes * 8
) (
  input  logic                        clk_i,
  input  logic                        win_we_i,
  input  logic [ByteW-1:0]            win_addr_i,
  input  logic [WinBytes-1:0]         win_mask_i,
  input  logic [WinW-1:0]             win_data_i,
  input  logic                        elem_we_i,
  input  logic [IdxW-1:0]             elem_idx_i,
  input  logic [ElemW-1:0]            elem_data_i,
  input  logic [NumRd-1:0][IdxW-1:0]  rd_idx_i,
  output logic [NumRd-1:0][ElemW-1:0] rd_data_o
);

  localparam int unsigned ChunkBytes  = (ElemBytes < BusBytes) ? ElemBytes : BusBytes;
  localparam int unsigned ChunkW      = ChunkBytes * 8;
  localparam int unsigned NumLanes    = WinBytes / ChunkBytes;
  localparam int unsigned NumSlices   = ElemBytes / ChunkBytes;
  localparam int unsigned NumBanks    = (NumLanes > NumSlices) ? NumLanes : NumSlices;
  localparam int unsigned NumGroups   = NumBanks / NumSlices;   // elements per bank row
  localparam int unsigned LogChunk    = $clog2(ChunkBytes);
  localparam int unsigned LogBanks    = $clog2(NumBanks);
  localparam int unsigned LogGroups   = $clog2(NumGroups);
  localparam int unsigned TotalChunks = Depth * NumSlices;
  localparam int unsigned BankDepth   = TotalChunks / NumBanks;
  localparam int unsigned BankAw      = (BankDepth > 1) ? $clog2(BankDepth) : 1;
  localparam int unsigned SelW        = (LogGroups > 0) ? LogGroups : 1;

  logic [NumBanks-1:0][NumRd-1:0][ChunkW-1:0] bank_rdata;
  logic [NumBanks-1:0][NumRd-1:0][BankAw-1:0] bank_raddr;
  logic [31:0] win_c0;

  assign win_c0 = 32'(win_addr_i) >> LogChunk;

  for (genvar b = 0; b < NumBanks; b++) begin : g_bank
    localparam int unsigned Group = b / NumSlices;   // element group this bank serves
    localparam int unsigned Slice = b % NumSlices;   // slice of the element it holds
    logic              we;
    logic [BankAw-1:0] waddr;
    logic [ChunkW-1:0] wdata;
    logic [31:0]       lane;      // window lane that maps to this bank
    logic [31:0]       chunk;     // chunk index that lane writes
    logic              lane_en;

    always_comb begin
      lane    = (32'(b) + 32'(NumBanks) - (win_c0 & 32'(NumBanks - 1))) & 32'(NumBanks - 1);
      chunk   = (win_c0 + lane) & 32'(TotalChunks - 1);
      lane_en = (lane < 32'(NumLanes)) && win_mask_i[(lane & 32'(NumLanes - 1)) * ChunkBytes];
      we      = win_we_i & lane_en;
      waddr   = BankAw'(chunk >> LogBanks);
      wdata   = ChunkW'(win_data_i >> ((lane & 32'(NumLanes - 1)) * ChunkW));
      if (elem_we_i) begin
        we    = ((32'(elem_idx_i) & 32'(NumGroups - 1)) == 32'(Group));
        waddr = BankAw'(32'(elem_idx_i) >> LogGroups);
        wdata = ChunkW'(elem_data_i >> (Slice * ChunkW));
      end
    end

    for (genvar r = 0; r < NumRd; r++) begin : g_raddr
      assign bank_raddr[b][r] = BankAw'(32'(rd_idx_i[r]) >> LogGroups);
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

  // Read data: the slices of the element's group (registered group select).
  logic [NumRd-1:0][SelW-1:0] sel_q;

  always_ff @(posedge clk_i) begin
    for (int unsigned r = 0; r < NumRd; r++) begin
      sel_q[r] <= SelW'(32'(rd_idx_i[r]) & 32'(NumGroups - 1));
    end
  end

  always_comb begin
    for (int unsigned r = 0; r < NumRd; r++) begin
      for (int unsigned k = 0; k < NumSlices; k++) begin
        rd_data_o[r][k*ChunkW +: ChunkW] = bank_rdata[k][r];
        for (int unsigned g = 1; g < NumGroups; g++) begin
          if (32'(sel_q[r]) == g) begin
            rd_data_o[r][k*ChunkW +: ChunkW] = bank_rdata[g*NumSlices + k][r];
          end
        end
      end
    end
  end

endmodule : vta_buf
