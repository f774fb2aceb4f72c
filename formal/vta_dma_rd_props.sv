// vta_dma_rd (hdl/vta_dma_rd.sv) against a reference of the LOAD it runs, for every
// instruction field (type, SRAM and DRAM base, sizes, stride, the four pads), every DRAM
// offset and size, and any memory timing (req_ready_i, r_valid_i, r_data_i, r_err_i free every
// cycle). The reference walks the definition of a 2-D load with its own counters, one write at
// a time, as the DUT writes:
//   - the verdict: an illegal type, pads on a no-op or on UOP / WGT (ERR_MEM_TYPE), the SRAM
//     end sram_base + (yp0 + y + yp1) * (xp0 + x + xp1) past the buffer (ERR_SRAM_LOAD /
//     ERR_SRAM_UOP), the DRAM end (dram_base + (y - 1) * stride + x) * element bytes past
//     dram_size (ERR_DRAM_RANGE), an error beat (ERR_AXI_RD), else none; done_o ends every
//     instruction with it, and an instruction that does not run requests and writes nothing;
//   - the requests: row j of y at dram_off + (dram_base + j * stride) * element bytes, x
//     elements long, in order, exactly y of them;
//   - the writes: SRAM row r of yp0 + y + yp1 at (sram_base + r * row elements) * SRAM element
//     bytes; a pad row is written zero, one window (WinBytes) at a time; a data row is its
//     leading pad, the row's data beats, its trailing pad. Data beat k of a row read at DRAM
//     address A (A mod BusBytes = alo) holds row bytes off + i, off = k * BusBytes - alo; it is
//     written at the row's data start + off with the lanes 0 <= off + i < len set (the
//     definition vta_span_mask implements), the row's last beat the one with len - off <=
//     BusBytes; ACC_8BIT: each beat in BusBytes / (WinBytes / 4) writes of WinBytes / 4 int8
//     sign-extended to int32 (addresses and lanes scaled by 4); the data bytes are the beat's.
//   - progress: pads are written one window a cycle, a beat as soon as it is there, a row is
//     requested as soon as the descriptor FIFO has room: no stall of the DUT's own.
// The descriptor FIFO (vta_fifo, 128 entries) is cut out and modelled here: its count follows
// the DUT's pushes and pops (valid: count > 0; ready: count < 128), and its head is the
// alignment of the oldest requested row not yet written, the reference's (vta_fifo's order is
// proven by its own jobs; the DUT pushes the low bits of req_addr_o, which req_addr_is_row
// asserts to be the reference's row address at every push, so a wrong push fails there first).
// The inv_* asserts tie the DUT's registers (read through the flow's observe list, f_<net>) to
// the reference's: the invariants a k-induction needs. With them the base case passes, but the
// induction step did not finish in 10 minutes here, so the jobs are bmc (docs/formal.md).
module vta_dma_rd_props import vta_pkg::*; import vta_err_pkg::*; #(
  // 1: the compute stage's instance (a window of ACC8_WIN_BEATS beats); 0: the load stage's
  parameter int unsigned  Compute   = 0,
  localparam int unsigned Aw        = 64,
  localparam int unsigned BusBytes  = AXI_DATA_WIDTH / 8,
  localparam int unsigned WinBytes  = (Compute != 0) ? ACC8_WIN_BEATS * BusBytes : BusBytes,
  localparam int unsigned BusW      = BusBytes * 8,
  localparam int unsigned WinW      = WinBytes * 8,
  localparam int unsigned LogBus    = $clog2(BusBytes),
  localparam int unsigned SrcPerSub = WinBytes / 4,
  localparam int unsigned ExpSub    = BusBytes / SrcPerSub,
  localparam int unsigned RowW      = SIZE_WIDTH + 1,
  localparam int unsigned CntW      = 32 - LogBus,
  localparam int unsigned DescDepth = 128,
  localparam int unsigned GW        = RowW + 1,        // the reference's row count
  localparam int unsigned NW        = SIZE_WIDTH + 1   // its counts of DRAM rows
) (
  input logic                  clk_i,
  input logic                  rst_ni,
  input logic                  halt_i,
  input logic                  start_i,
  input logic [INSN_WIDTH-1:0] insn_i,
  input logic [Aw-1:0]         dram_off_i,
  input logic [Aw-1:0]         dram_size_i,
  input logic                  req_ready_i,
  input logic                  r_valid_i,
  input logic [BusW-1:0]       r_data_i,
  input logic                  r_err_i
);
  logic                     busy, done, req_valid, r_ready, w_valid;
  logic [ERR_WIDTH-1:0]     err;
  logic [Aw-1:0]            req_addr;
  logic [31:0]              req_len, w_addr;
  logic [WinBytes-1:0]      w_mask;
  logic [WinW-1:0]          w_data;

  vta_dma_rd #(.AxiAddrWidth(Aw), .BusBytes(BusBytes), .WinBytes(WinBytes)) dut (
    .clk_i, .rst_ni, .halt_i, .start_i, .insn_i, .dram_off_i, .dram_size_i, .busy_o(busy),
    .done_o(done), .err_o(err), .mtype_o(), .req_valid_o(req_valid), .req_ready_i,
    .req_addr_o(req_addr), .req_len_o(req_len), .r_valid_i, .r_ready_o(r_ready), .r_data_i,
    .r_err_i, .w_valid_o(w_valid), .w_addr_o(w_addr), .w_mask_o(w_mask), .w_data_o(w_data)
  );

  // the DUT's registers and the cut FIFO's nets (connected by the flow: Job.observe)
  logic [2:0]                 f_state_q;
  logic [1:0]                 f_phase_q, f_sub_q;
  logic [RowW-1:0]            f_wy_q, f_row_elems_q, f_total_rows_q;
  logic [31:0]                f_pad_left_q, f_ptr_q;
  logic signed [33:0]         f_off_q;
  logic                       f_first_q, f_cnt_zero_q, f_sram_over_q, f_dram_over_q;
  logic [CntW-1:0]            f_cnt_q, f_lhi_q, f_lhi_m1_q;
  logic                       f_lhi_zero_q, f_lhi_one_q;
  logic [LogBus-1:0]          f_lm1_lo_q, f_df_alo;
  logic [SIZE_WIDTH-1:0]      f_iss_y_q, f_y_last_q;
  logic [Aw-1:0]              f_iss_addr_q;
  logic [47:0]                f_dram_bx_q, f_dram_end_q;
  logic [33:0]                f_sram_end_q;
  logic                       f_df_valid, f_df_ready, f_df_pop;
  logic [MEMTYPE_WIDTH-1:0]   f_mtype_q;
  logic [SRAM_ADDR_WIDTH-1:0] f_sram_base_q;
  logic [DRAM_ADDR_WIDTH-1:0] f_dram_base_q;
  logic [SIZE_WIDTH-1:0]      f_y_size_q, f_x_size_q;
  logic [STRIDE_WIDTH-1:0]    f_x_stride_q;
  logic [PAD_WIDTH-1:0]       f_yp0_q, f_yp1_q, f_xp0_q, f_xp1_q;

  localparam logic [2:0] S_IDLE = 3'd0, S_SUM = 3'd1, S_CMP = 3'd2, S_CHECK = 3'd3,
                         S_RUN = 3'd4, S_DONE = 3'd5;
  localparam logic [1:0] P_LEAD = 2'd0, P_DATA = 2'd1, P_TRAIL = 2'd2;

  // ------------------------------------------------------------------------- environment
  // reset in the first cycle only; a start only while the DMA is idle (the stages start it for
  // an instruction they took, after the previous one's done_o); dram_off_i and dram_size_i (the run's registers)
  // held from a start to the end of its instruction
  logic f_init = 1'b1;
  always @(posedge clk_i) f_init <= 1'b0;
  logic                       g_busy;
  logic [INSN_WIDTH-1:0]      g_insn;
  logic [Aw-1:0]              g_doff, g_dsize;
  always @* begin
    assume (rst_ni == !f_init);
    if (start_i) assume (!busy);
    if (g_busy && !start_i) assume (dram_off_i == g_doff && dram_size_i == g_dsize);
  end

  // ------------------------------------------------------------------------- the instruction
  // c_*: the instruction of this cycle (insn_i at a start, else the one the reference holds)
  logic [INSN_WIDTH-1:0]      c_insn;
  logic [Aw-1:0]              c_doff, c_dsize;
  assign c_insn  = start_i ? insn_i : g_insn;
  assign c_doff  = start_i ? dram_off_i : g_doff;
  assign c_dsize = start_i ? dram_size_i : g_dsize;
  logic [MEMTYPE_WIDTH-1:0]   mtype;
  logic [SRAM_ADDR_WIDTH-1:0] sram_base;
  logic [DRAM_ADDR_WIDTH-1:0] dram_base;
  logic [SIZE_WIDTH-1:0]      ys, xs;
  logic [STRIDE_WIDTH-1:0]    stride;
  logic [PAD_WIDTH-1:0]       yp0, yp1, xp0, xp1;
  assign mtype     = c_insn[MEM_MEMORY_TYPE_LSB +: MEMTYPE_WIDTH];
  assign sram_base = c_insn[MEM_SRAM_BASE_LSB +: SRAM_ADDR_WIDTH];
  assign dram_base = c_insn[MEM_DRAM_BASE_LSB +: DRAM_ADDR_WIDTH];
  assign ys        = c_insn[MEM_Y_SIZE_LSB +: SIZE_WIDTH];
  assign xs        = c_insn[MEM_X_SIZE_LSB +: SIZE_WIDTH];
  assign stride    = c_insn[MEM_X_STRIDE_LSB +: STRIDE_WIDTH];
  assign yp0       = c_insn[MEM_Y_PAD_0_LSB +: PAD_WIDTH];
  assign yp1       = c_insn[MEM_Y_PAD_1_LSB +: PAD_WIDTH];
  assign xp0       = c_insn[MEM_X_PAD_0_LSB +: PAD_WIDTH];
  assign xp1       = c_insn[MEM_X_PAD_1_LSB +: PAD_WIDTH];

  // the memory type: element bytes in DRAM (eb = 2^leb) and in SRAM (2^lseb), buffer depth
  logic [3:0]  leb, lseb;
  logic [31:0] depth;
  logic        expand, pad_ok, legal;
  logic [ERR_WIDTH-1:0] sram_err;
  always @* begin
    leb = 4'd0; lseb = 4'd0; depth = 32'd0; expand = 1'b0; pad_ok = 1'b0; legal = 1'b1;
    sram_err = ERR_SRAM_LOAD;
    case (mtype)
      MEMTYPE_WIDTH'(MEM_ID_UOP): begin
        leb = 4'($clog2(UOP_ELEM_BYTES)); lseb = leb; depth = UOP_DEPTH; sram_err = ERR_SRAM_UOP;
      end
      MEMTYPE_WIDTH'(MEM_ID_WGT): begin
        leb = 4'($clog2(WGT_ELEM_BYTES)); lseb = leb; depth = WGT_DEPTH;
      end
      MEMTYPE_WIDTH'(MEM_ID_INP): begin
        leb = 4'($clog2(INP_ELEM_BYTES)); lseb = leb; depth = INP_DEPTH; pad_ok = 1'b1;
      end
      MEMTYPE_WIDTH'(MEM_ID_ACC): begin
        leb = 4'($clog2(ACC_ELEM_BYTES)); lseb = leb; depth = ACC_DEPTH; pad_ok = 1'b1;
      end
      MEMTYPE_WIDTH'(MEM_ID_ACC_8BIT): begin
        leb = 4'($clog2(ACC8_ELEM_BYTES)); lseb = 4'($clog2(ACC_ELEM_BYTES));
        depth = ACC_DEPTH; pad_ok = 1'b1; expand = 1'b1;
      end
      default: legal = 1'b0;
    endcase
  end

  // the definition's quantities (bytes unless said), wide enough to be exact
  logic [RowW-1:0]  row_elems, total_rows;        // SRAM elements a row, SRAM rows (pads too)
  // the two ends with their products (SRAM: sram_base + rows * row elements; DRAM: (dram_base
  // + x + (y - 1) * stride) * element bytes) are the DUT's S_SUM sums (f_sram_end, f_dram_end:
  // those expressions of its field registers, which inv_fields and inv_derived prove to be the
  // instruction's), taken in that cycle: a second multiplier here would leave the solver to
  // prove two multipliers equal, which it does not in minutes. The compares with the buffer
  // depth and the DRAM size, and the verdict, are the reference's.
  logic [33:0]      f_sram_end, g_sram_end;
  logic [47:0]      f_dram_end, g_dram_end;
  logic [47:0]      dram_end;
  logic [31:0]      row_len, data_bytes, xp0_bytes, xp1_bytes, row_bytes, stride_bytes;
  logic [31:0]      sram_start;
  logic [Aw-1:0]    dram_first;                   // row 0's DRAM byte address
  logic             noop, any_pad, ref_run;
  logic [ERR_WIDTH-1:0] ref_err;
  assign row_elems    = RowW'(xp0) + RowW'(xs) + RowW'(xp1);
  assign total_rows   = RowW'(yp0) + RowW'(ys) + RowW'(yp1);
  assign dram_end     = g_dram_end;
  assign row_len      = 32'(xs) << leb;
  assign data_bytes   = 32'(xs) << lseb;
  assign xp0_bytes    = 32'(xp0) << lseb;
  assign xp1_bytes    = 32'(xp1) << lseb;
  assign row_bytes    = 32'(row_elems) << lseb;
  assign stride_bytes = 32'(stride) << leb;
  assign sram_start   = 32'(sram_base) << lseb;
  assign dram_first   = c_doff + (Aw'(dram_base) << leb);
  assign noop         = (xs == '0) || (ys == '0);
  assign any_pad      = |{yp0, yp1, xp0, xp1};
  always @* begin
    ref_err = ERR_NONE;
    if (!legal || (any_pad && (noop || !pad_ok))) ref_err = ERR_MEM_TYPE;
    else if (!noop && g_sram_end > 34'(depth)) ref_err = sram_err;
    else if (!noop && 64'(dram_end) > 64'(c_dsize)) ref_err = ERR_DRAM_RANGE;
  end
  assign ref_run = (ref_err == ERR_NONE) && !noop;

  // ------------------------------------------------------------------------- the reference
  // g_stage: which part of SRAM row g_row the next write is (G_FIN: all rows written)
  localparam logic [2:0] G_PADROW = 3'd0, G_LEAD = 3'd1, G_DATA = 3'd2, G_TRAIL = 3'd3,
                         G_FIN = 3'd4;
  logic [2:0]          g_stage;
  logic [GW-1:0]       g_row;
  logic [31:0]         g_rowaddr;   // SRAM byte address of row g_row
  logic [31:0]         g_pos;       // bytes of the pad segment written
  logic signed [33:0]  g_off;       // the data beat's offset in the row: k * BusBytes - alo
  logic                g_first;     // the row's first beat
  logic [1:0]          g_sub;       // ACC_8BIT: the write of the beat
  logic [LogBus-1:0]   g_walo;      // alignment of the row being written (its DRAM address)
  logic [NW-1:0] g_j;         // data rows written
  logic [NW-1:0] g_iss_n;     // rows requested
  logic [Aw-1:0]       g_iss_addr;  // DRAM address of the next row to request
  logic [7:0]          g_fcount;    // the descriptor FIFO's count
  logic                g_axi_err;   // an error beat was taken

  logic act;  // the reference expects writes
  assign act = g_busy && ref_run && !g_axi_err && (g_stage != G_FIN);

  // the expected write of this cycle
  logic [31:0]          seg_len, seg_addr, pad_n, exp_addr;
  logic signed [33:0]   src_off;
  logic [WinBytes-1:0]  exp_mask;
  logic                 is_pad, beat_end, ref_last;
  logic signed [35:0]   sx_len;
  assign sx_len = 36'(row_len);
  always @* begin
    is_pad   = (g_stage == G_PADROW) || (g_stage == G_LEAD) || (g_stage == G_TRAIL);
    seg_len  = (g_stage == G_PADROW) ? row_bytes : (g_stage == G_LEAD) ? xp0_bytes : xp1_bytes;
    seg_addr = g_rowaddr + ((g_stage == G_TRAIL) ? xp0_bytes + data_bytes : 32'd0) + g_pos;
    pad_n    = (seg_len - g_pos < 32'(WinBytes)) ? seg_len - g_pos : 32'(WinBytes);
    src_off  = expand ? g_off + 34'(g_sub) * 34'(SrcPerSub) : g_off;
    beat_end = !expand || (g_sub == 2'(ExpSub - 1));
    ref_last = (sx_len - 36'(g_off) <= $signed(36'(BusBytes)));
    exp_mask = '0;
    if (is_pad) begin
      exp_addr = seg_addr;
      for (int i = 0; i < WinBytes; i++) exp_mask[i] = (32'(i) < pad_n);
    end else begin
      exp_addr = g_rowaddr + xp0_bytes + (expand ? 32'(src_off) << 2 : 32'(src_off));
      if (expand) begin
        for (int i = 0; i < SrcPerSub; i++)
          exp_mask[4*i +: 4] = {4{(36'(src_off) + 36'(i) >= 0) && (36'(src_off) + 36'(i) < sx_len)}};
      end else begin
        for (int i = 0; i < BusBytes; i++)
          exp_mask[i] = (36'(src_off) + 36'(i) >= 0) && (36'(src_off) + 36'(i) < sx_len);
      end
    end
  end
  // the data of the masked lanes: zero for a pad, the beat's byte, the beat's int8 extended
  logic data_ok;
  always @* begin
    data_ok = 1'b1;
    if (is_pad) begin
      for (int i = 0; i < WinBytes; i++)
        if (exp_mask[i] && w_data[8*i +: 8] != 8'd0) data_ok = 1'b0;
    end else if (expand) begin
      for (int i = 0; i < SrcPerSub; i++)
        if (exp_mask[4*i] && w_data[32*i +: 32] !=
            {{24{r_data_i[(32'(g_sub) * SrcPerSub + i) * 8 + 7]}},
             r_data_i[(32'(g_sub) * SrcPerSub + i) * 8 +: 8]}) data_ok = 1'b0;
    end else begin
      for (int i = 0; i < BusBytes; i++)
        if (exp_mask[i] && w_data[8*i +: 8] != r_data_i[8*i +: 8]) data_ok = 1'b0;
    end
  end

  // the reference's next state: a write moves it on; entering SRAM row e_row
  logic wr, seg_end, row_end, data_row_end, next_row;
  logic [GW-1:0]      e_row;
  logic [31:0]        e_rowaddr;
  logic [LogBus-1:0]  e_walo;
  logic [2:0]         e_stage;
  always @* begin
    wr           = w_valid && act;
    seg_end      = is_pad && (g_pos + pad_n == seg_len);
    data_row_end = !is_pad && beat_end && ref_last && !r_err_i;
    next_row     = wr && ((seg_end && g_stage != G_LEAD) || (data_row_end && xp1_bytes == '0));
    e_row        = start_i ? '0 : g_row + 1'b1;
    e_rowaddr    = start_i ? sram_start : g_rowaddr + row_bytes;
    e_walo       = start_i ? LogBus'(dram_first)
                 : (wr && data_row_end) ? g_walo + LogBus'(stride_bytes) : g_walo;
    if (e_row == GW'(total_rows)) e_stage = G_FIN;
    else if (e_row < GW'(yp0) || e_row >= GW'(yp0) + GW'(ys))
      e_stage = G_PADROW;
    else if (xp0 != '0) e_stage = G_LEAD;
    else e_stage = G_DATA;
  end

  logic push, pop;
  assign push = req_valid && req_ready_i && f_df_ready;
  assign pop  = f_df_pop && f_df_valid;

  always @(posedge clk_i) begin
    if (!rst_ni) begin
      g_busy <= 1'b0; g_insn <= '0; g_doff <= '0; g_dsize <= '0; g_stage <= G_PADROW;
      g_row <= '0; g_rowaddr <= '0; g_pos <= '0; g_off <= '0; g_first <= 1'b0; g_sub <= '0;
      g_walo <= '0; g_j <= '0; g_iss_n <= '0; g_iss_addr <= '0; g_fcount <= '0;
      g_axi_err <= 1'b0; g_sram_end <= '0; g_dram_end <= '0;
    end else begin
      if (f_state_q == S_SUM) begin
        g_sram_end <= f_sram_end;
        g_dram_end <= f_dram_end;
      end
      // the descriptor FIFO
      if (start_i) g_fcount <= '0;
      else g_fcount <= g_fcount + 8'(push) - 8'(pop);
      if (done) g_busy <= 1'b0;
      if (halt_i) g_busy <= 1'b0;
      if (start_i) begin
        g_busy <= !halt_i;
        g_insn <= insn_i; g_doff <= dram_off_i; g_dsize <= dram_size_i;
        g_j <= '0; g_iss_n <= '0; g_iss_addr <= dram_first; g_axi_err <= 1'b0;
      end else begin
        if (push) begin
          g_iss_n    <= g_iss_n + 1'b1;
          g_iss_addr <= g_iss_addr + Aw'(stride_bytes);
        end
        if (wr) begin
          if (is_pad) begin
            g_pos <= g_pos + pad_n;
            if (seg_end && g_stage == G_LEAD) begin
              g_stage <= G_DATA; g_off <= -(34'(g_walo)); g_first <= 1'b1; g_sub <= '0;
            end
          end else if (!beat_end) begin
            g_sub <= g_sub + 1'b1;
          end else if (r_err_i) begin
            g_axi_err <= 1'b1;
          end else if (ref_last) begin
            g_j <= g_j + 1'b1; g_sub <= '0;
            if (xp1_bytes != '0) begin
              g_stage <= G_TRAIL; g_pos <= '0;
            end
          end else begin
            g_off <= g_off + 34'(BusBytes); g_first <= 1'b0; g_sub <= '0;
          end
        end
      end
      g_walo <= e_walo;
      if (start_i || next_row) begin
        g_row <= e_row; g_rowaddr <= e_rowaddr; g_stage <= e_stage; g_pos <= '0;
        g_off <= -(34'(e_walo)); g_first <= 1'b1; g_sub <= '0;
      end
    end
  end

  // the cut FIFO: valid and ready from its count, its head the oldest unwritten row's alignment
  always @* begin
    if (rst_ni) begin
      assume (f_df_valid == (g_fcount != '0));
      assume (f_df_ready == (g_fcount != 8'(DescDepth)));
      if (g_fcount != '0 && g_busy && !g_axi_err) assume (f_df_alo == g_walo);
    end
  end

  // ------------------------------------------------------------------------- properties
  logic [ERR_WIDTH-1:0] exp_err;
  assign exp_err = g_axi_err ? ERR_AXI_RD : ref_err;
  always @* begin
    if (rst_ni) begin
      // the requests: the reference's rows, in order, none past the last, none for an
      // instruction that does not run
      if (req_valid) begin
        req_in_run: assert (g_busy && ref_run && !g_axi_err && g_iss_n < NW'(ys));
        req_addr_is_row: assert (req_addr == g_iss_addr);
        req_len_is_row: assert (req_len == row_len);
      end
      // the writes: the reference's, in order
      if (w_valid) begin
        write_in_run: assert (act);
        write_addr: assert (w_addr == exp_addr);
        write_mask: assert (w_mask == exp_mask);
        write_data: assert (data_ok);
        beat_taken: assert (r_ready == (!is_pad && beat_end));
      end else begin
        beat_taken_with_write: assert (!r_ready);
      end
      desc_pop: assert (f_df_pop == (wr && !is_pad && beat_end && ref_last));
      // the end: every instruction with its verdict; a run only after all its rows
      if (done) begin
        done_of_insn: assert (g_busy);
        done_err: assert (err == exp_err);
        done_after_rows: assert (exp_err != ERR_NONE || !ref_run || g_stage == G_FIN);
      end
      busy_is_insn: assert (busy == g_busy);
      // progress: no stall of the DUT's own
      if (f_state_q == S_RUN && !halt_i && act) begin
        pad_no_stall: assert (!is_pad || w_valid);
        beat_no_stall: assert (is_pad || !r_valid_i || g_fcount == '0 || w_valid);
        if (g_iss_n < NW'(ys) && g_fcount != 8'(DescDepth)) begin
          req_no_stall: assert (req_valid);
        end
      end
    end
  end

  // ------------------------------------------------------------------------- invariants
  // (asserts too: they hold in every reachable state; k-induction needs them)
  logic [31:0]   lm1;
  logic [35:0]   left;  // row bytes from the beat's offset to the row's last byte
  assign lm1  = row_len - 32'd1;
  assign left = 36'(sx_len - 36'(g_off) - 36'sd1);
  always @* begin
    if (rst_ni) begin
      inv_fields: assert (f_mtype_q == g_insn[MEM_MEMORY_TYPE_LSB +: MEMTYPE_WIDTH] &&
        f_sram_base_q == g_insn[MEM_SRAM_BASE_LSB +: SRAM_ADDR_WIDTH] &&
        f_dram_base_q == g_insn[MEM_DRAM_BASE_LSB +: DRAM_ADDR_WIDTH] &&
        f_y_size_q == g_insn[MEM_Y_SIZE_LSB +: SIZE_WIDTH] &&
        f_x_size_q == g_insn[MEM_X_SIZE_LSB +: SIZE_WIDTH] &&
        f_x_stride_q == g_insn[MEM_X_STRIDE_LSB +: STRIDE_WIDTH] &&
        f_yp0_q == g_insn[MEM_Y_PAD_0_LSB +: PAD_WIDTH] &&
        f_yp1_q == g_insn[MEM_Y_PAD_1_LSB +: PAD_WIDTH] &&
        f_xp0_q == g_insn[MEM_X_PAD_0_LSB +: PAD_WIDTH] &&
        f_xp1_q == g_insn[MEM_X_PAD_1_LSB +: PAD_WIDTH]);
      inv_state: assert (f_state_q <= S_DONE && g_stage <= G_FIN);
      if (!start_i && g_busy) begin
        inv_derived: assert (f_row_elems_q == row_elems && f_total_rows_q == total_rows &&
                             f_y_last_q == SIZE_WIDTH'(ys - 1'b1) &&
                             f_dram_bx_q == 48'(dram_base) + 48'(xs));
        // (an illegal type ends with ERR_MEM_TYPE whatever the sums)
        if (f_state_q != S_SUM && legal) begin
          inv_sums: assert (f_sram_end_q == g_sram_end && f_dram_end_q == dram_end);
          inv_row_beats: assert (f_lm1_lo_q == LogBus'(lm1) && f_lhi_q == CntW'(lm1 >> LogBus) &&
            f_lhi_m1_q == CntW'((row_len - 32'(BusBytes + 1)) >> LogBus) &&
            f_lhi_zero_q == (row_len <= 32'(BusBytes)) &&
            f_lhi_one_q == (row_len > 32'(BusBytes) && row_len <= 32'(2 * BusBytes)));
        end
        if ((f_state_q == S_CHECK || f_state_q == S_RUN) && legal) begin
          inv_verdicts: assert (f_sram_over_q == (g_sram_end > 34'(depth)) &&
                                f_dram_over_q == (64'(dram_end) > 64'(c_dsize)));
        end
        if (f_state_q != S_DONE) begin
          inv_no_err: assert (err == ERR_NONE);
        end
        if (f_state_q != S_RUN && f_state_q != S_DONE) begin
          inv_fresh: assert (g_row == '0 && g_rowaddr == sram_start && g_pos == '0 &&
            g_stage == ((total_rows == '0) ? G_FIN : (yp0 != '0 || ys == '0) ? G_PADROW :
                        (xp0 != '0) ? G_LEAD : G_DATA) &&
            g_off == -(34'(g_walo)) && g_first && g_sub == '0 && g_walo == LogBus'(dram_first) &&
            g_j == '0 && g_iss_n == '0 && g_iss_addr == dram_first && g_fcount == '0 &&
            !g_axi_err && f_iss_y_q == '0);
        end
        if (f_state_q == S_RUN) begin
          inv_run: assert (ref_run && !g_axi_err && g_stage != G_FIN);
          inv_issue: assert (32'(f_iss_y_q) == 32'(g_iss_n) && f_iss_addr_q == g_iss_addr &&
                             g_iss_n <= NW'(ys));
          inv_fifo: assert (32'(g_fcount) == 32'(g_iss_n) - 32'(g_j) &&
                            g_fcount <= 8'(DescDepth) && g_j <= g_iss_n);
          inv_row: assert (32'(f_wy_q) == 32'(g_row) && g_row < GW'(total_rows) &&
            ((g_row < GW'(yp0) || g_row >= GW'(yp0) + GW'(ys)) ==
             (g_stage == G_PADROW)) && (g_stage != G_LEAD || xp0 != '0) &&
            (g_stage != G_TRAIL || xp1 != '0));
          inv_sub: assert (f_sub_q == g_sub && (g_stage == G_DATA || g_sub == '0) &&
                           32'(g_sub) < 32'(ExpSub) && (expand || g_sub == '0));
          if (is_pad) begin
            inv_pad: assert (f_phase_q == ((g_stage == G_LEAD) ? P_LEAD : P_TRAIL) &&
                             f_ptr_q == seg_addr && f_pad_left_q == seg_len - g_pos &&
                             g_pos < seg_len);
          end else begin
            inv_data: assert (f_phase_q == P_DATA && f_ptr_q == g_rowaddr + xp0_bytes &&
                              f_first_q == g_first && g_off < sx_len &&
                              (g_first ? g_off == -(34'(g_walo)) : g_off > 0) &&
                              LogBus'(g_off) == LogBus'(-(34'(g_walo))));
            if (!g_first) begin
              inv_beats_left: assert (f_off_q == g_off && f_cnt_q == CntW'(left >> LogBus) &&
                                      f_cnt_zero_q == (CntW'(left >> LogBus) == '0));
            end
          end
        end
      end
    end
  end

  // ------------------------------------------------------------------------- covers
  always @(posedge clk_i) begin
    if (rst_ni) begin
      cover_pad_row: cover (w_valid && g_stage == G_PADROW);
      cover_lead_pad: cover (w_valid && g_stage == G_LEAD);
      cover_trail_pad: cover (w_valid && g_stage == G_TRAIL);
      cover_first_beat_partial: cover (w_valid && !is_pad && g_first && g_walo != '0 && !ref_last);
      cover_last_beat_partial: cover (w_valid && !is_pad && !g_first && ref_last &&
                                      !(&w_mask[BusBytes-1:0]));
      cover_one_beat_row: cover (w_valid && !is_pad && g_first && ref_last && g_walo != '0);
      cover_acc8: cover (w_valid && !is_pad && expand && beat_end && w_data[31]);
      cover_done_rows: cover (done && err == ERR_NONE && ref_run && total_rows >= 3);
      cover_noop: cover (done && err == ERR_NONE && noop);
      cover_err_type: cover (done && err == ERR_MEM_TYPE);
      cover_err_sram: cover (done && err == sram_err);
      cover_err_dram: cover (done && err == ERR_DRAM_RANGE);
      cover_err_axi: cover (done && err == ERR_AXI_RD);
      cover_rows_ahead: cover (w_valid && is_pad && g_fcount >= 8'd2);
      cover_halt_run: cover (halt_i && f_state_q == S_RUN);
    end
  end
endmodule : vta_dma_rd_props
