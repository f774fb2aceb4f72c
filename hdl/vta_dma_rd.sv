// vta_dma_rd: the load/padding path shared by the load stage (INP, WGT) and the
// compute stage (UOP, ACC, ACC_8BIT). For one LOAD instruction it checks pads, SRAM
// range and DRAM range first (any violation: done_o with err_o, nothing requested),
// then runs two decoupled processes. The checks are pipelined over three cycles, so that
// no clock cycle holds more than one multiplier or two carry chains of them: at start_i
// the pad sums (the SRAM row and column counts) and dram_base + x_size are registered;
// S_SUM registers the SRAM end (sram_base + rows * row elements) and the DRAM end (a
// multiply-add); S_CMP registers their compares with the buffer depth and the DRAM size;
// S_CHECK decides. The two processes:
//   - issue: one memory-engine request per DRAM row (x_size elements), rows x_stride
//     elements apart, up to DescDepth rows ahead of the writer;
//   - write: walks the SRAM rows in order, writing zero padding one bus window per
//     cycle and the row data one beat per cycle as it arrives (byte-window writes into
//     the target buffer, see vta_buf). ACC_8BIT beats are sign-extended int8 -> int32:
//     one beat per cycle with a 4-bus-wide window (WinBytes = 4 * BusBytes), else in four
//     quarter-beat writes.
// done_o pulses when the last SRAM write is done.
module vta_dma_rd import vta_pkg::*; import vta_err_pkg::*; #(
  parameter int unsigned AxiAddrWidth = 64,
  parameter int unsigned BusBytes     = 64,
  // width of the buffer write window: BusBytes, or 4 * BusBytes for a DMA that loads
  // ACC_8BIT (one beat of int8 becomes four beats of int32, written in one cycle)
  parameter int unsigned WinBytes     = BusBytes,
  localparam int unsigned Aw          = AxiAddrWidth,
  localparam int unsigned BusW        = BusBytes * 8,
  localparam int unsigned WinW        = WinBytes * 8
) (
  input  logic                  clk_i,
  input  logic                  rst_ni,
  input  logic                  halt_i,
  input  logic                  start_i,
  input  logic [INSN_WIDTH-1:0] insn_i,
  input  logic [Aw-1:0]         dram_off_i,
  input  logic [Aw-1:0]         dram_size_i,
  output logic                  busy_o,
  output logic                  done_o,
  output logic [ERR_WIDTH-1:0]  err_o,
  output logic [MEMTYPE_WIDTH-1:0] mtype_o,
  // memory engine read client
  output logic                  req_valid_o,
  input  logic                  req_ready_i,
  output logic [Aw-1:0]         req_addr_o,
  output logic [31:0]           req_len_o,
  input  logic                  r_valid_i,
  output logic                  r_ready_o,
  input  logic [BusW-1:0]       r_data_i,
  input  logic                  r_err_i,
  // buffer window write (byte address inside the target buffer)
  output logic                  w_valid_o,
  output logic [31:0]           w_addr_o,
  output logic [WinBytes-1:0]   w_mask_o,
  output logic [WinW-1:0]       w_data_o
);

  localparam int unsigned LogBus    = $clog2(BusBytes);
  localparam int unsigned DescDepth = 128;  // rows in flight (hides ~200 cycles of latency)
  localparam int unsigned SrcPerSub = WinBytes / 4;           // ACC_8BIT source bytes per write
  localparam int unsigned ExpSub    = BusBytes / SrcPerSub;    // ACC_8BIT writes per beat (1 or 4)
  localparam int unsigned RowW      = SIZE_WIDTH + 1;          // rows or elements with pads

  typedef enum logic [2:0] {S_IDLE, S_SUM, S_CMP, S_CHECK, S_RUN, S_DONE} state_e;
  typedef enum logic [1:0] {P_LEAD, P_DATA, P_TRAIL} phase_e;

  state_e state_q, state_d;
  phase_e phase_q, phase_d;

  // instruction fields (registered at start)
  logic [MEMTYPE_WIDTH-1:0]   mtype_q, mtype_d;
  logic [SRAM_ADDR_WIDTH-1:0] sram_base_q, sram_base_d;
  logic [SIZE_WIDTH-1:0]      y_size_q, y_size_d, x_size_q, x_size_d;
  logic [STRIDE_WIDTH-1:0]    x_stride_q, x_stride_d;
  logic [DRAM_ADDR_WIDTH-1:0] dram_base_q, dram_base_d;
  logic [PAD_WIDTH-1:0]       yp0_q, yp0_d, yp1_q, yp1_d, xp0_q, xp0_d, xp1_q, xp1_d;
  logic [ERR_WIDTH-1:0]       err_q, err_d;
  // check operands (registered at start) and sums (registered in S_SUM)
  logic [RowW-1:0] row_elems_q, row_elems_d;  // SRAM elements per row (pads too)
  logic [RowW-1:0] total_rows_q, total_rows_d; // SRAM rows (pads too)
  logic [SIZE_WIDTH-1:0] y_last_q, y_last_d;  // y_size - 1 (as wide as y_size, as the DRAM end takes it)
  logic [47:0] dram_bx_q, dram_bx_d;          // dram_base + x_size
  logic [33:0] sram_end_q, sram_end_d;        // sram_base + total_rows * row_elems
  logic [47:0] dram_end_q, dram_end_d;        // DRAM byte end of the last row
  logic        sram_over_q, sram_over_d;      // S_CMP: the range checks' verdicts
  logic        dram_over_q, dram_over_d;

  // per memory type constants
  logic [3:0]  leb, lseb;                 // log2 element bytes in DRAM / SRAM
  logic [31:0] depth;
  logic        expand, pad_ok;
  logic [ERR_WIDTH-1:0] sram_err;

  always_comb begin
    leb      = 4'($clog2(INP_ELEM_BYTES));
    lseb     = 4'($clog2(INP_ELEM_BYTES));
    depth    = 32'(INP_DEPTH);
    expand   = 1'b0;
    pad_ok   = 1'b1;
    sram_err = ERR_SRAM_LOAD;
    unique case (mtype_q)
      MEMTYPE_WIDTH'(MEM_ID_UOP): begin
        leb = 4'($clog2(UOP_ELEM_BYTES)); lseb = leb; depth = 32'(UOP_DEPTH);
        pad_ok = 1'b0; sram_err = ERR_SRAM_UOP;
      end
      MEMTYPE_WIDTH'(MEM_ID_WGT): begin
        leb = 4'($clog2(WGT_ELEM_BYTES)); lseb = leb; depth = 32'(WGT_DEPTH); pad_ok = 1'b0;
      end
      MEMTYPE_WIDTH'(MEM_ID_ACC): begin
        leb = 4'($clog2(ACC_ELEM_BYTES)); lseb = leb; depth = 32'(ACC_DEPTH);
      end
      MEMTYPE_WIDTH'(MEM_ID_ACC_8BIT): begin
        leb = 4'($clog2(ACC8_ELEM_BYTES)); lseb = 4'($clog2(ACC_ELEM_BYTES));
        depth = 32'(ACC_DEPTH); expand = 1'b1;
      end
      MEMTYPE_WIDTH'(MEM_ID_INP): ;
      default: ;  // OUT and the undefined types: legal_type reports them
    endcase
  end

  // ---------------------------------------------------------------- checks
  logic [33:0] sram_end;
  logic [47:0] dram_end;
  logic        noop, any_pad, legal_type;

  always_comb begin
    // S_SUM: one multiply and one add each, from the registers start_i loaded
    sram_end    = 34'(sram_base_q) + 34'(row_elems_q) * 34'(total_rows_q);
    dram_end    = (dram_bx_q + 48'(y_last_q) * 48'(x_stride_q)) << leb;
    noop        = (x_size_q == '0) || (y_size_q == '0);
    any_pad     = |{yp0_q, yp1_q, xp0_q, xp1_q};
    legal_type  = (mtype_q == MEMTYPE_WIDTH'(MEM_ID_UOP)) || (mtype_q == MEMTYPE_WIDTH'(MEM_ID_WGT)) ||
                  (mtype_q == MEMTYPE_WIDTH'(MEM_ID_INP)) || (mtype_q == MEMTYPE_WIDTH'(MEM_ID_ACC)) ||
                  (mtype_q == MEMTYPE_WIDTH'(MEM_ID_ACC_8BIT));
  end

  // ---------------------------------------------------------------- issue process
  logic [SIZE_WIDTH-1:0] iss_y_q, iss_y_d;       // rows requested
  logic [Aw-1:0] iss_addr_q, iss_addr_d;          // DRAM byte address of the next row
  logic [31:0]  row_len, stride_bytes;
  logic         df_ready, df_valid, df_pop;
  logic [LogBus-1:0] df_alo;

  assign row_len      = 32'(x_size_q) << leb;
  assign stride_bytes = 32'(x_stride_q) << leb;
  assign req_valid_o  = (state_q == S_RUN) && !halt_i && (iss_y_q < y_size_q) && df_ready;
  assign req_addr_o   = iss_addr_q;
  assign req_len_o    = row_len;

  vta_fifo #(
    .Width (LogBus),
    .Depth (DescDepth)
  ) u_desc (
    .clk_i    (clk_i),
    .rst_ni   (rst_ni),
    .clr_i    (start_i),
    .wvalid_i (req_valid_o && req_ready_i),
    .wready_o (df_ready),
    .wdata_i  (LogBus'(iss_addr_q)),
    .rvalid_o (df_valid),
    .rready_i (df_pop),
    .rdata_o  (df_alo),
    .count_o  ()
  );

  // ---------------------------------------------------------------- write process
  logic [RowW-1:0] wy_q, wy_d;
  logic [31:0] pad_left_q, pad_left_d;
  logic [31:0] ptr_q, ptr_d;
  logic signed [33:0] off_q, off_d, off_cur;
  logic [31:0] src_off;  // an ACC_8BIT write's first source byte in the row (an address offset)
  logic        first_q, first_d;
  logic [1:0]  sub_q, sub_d;
  logic [31:0] xp0_bytes, xp1_bytes, row_bytes, data_bytes;
  logic [31:0] pad_n;
  logic        beat_last;
  logic [BusBytes-1:0] beat_mask;
  logic [SrcPerSub-1:0] q_mask;
  // the row's beats, without a wide add per beat. With R = row_len - 1 + alo (the row's last
  // byte, counted from its first beat's start), beat k is the last when R >> LogBus == k, and
  // its last byte is R mod BusBytes. Split row_len - 1 = lhi * BusBytes + lm1_lo (registered in
  // S_SUM): R mod BusBytes = (lm1_lo + alo) mod BusBytes and R >> LogBus = lhi + carry, a
  // LogBus-bit add of the descriptor. A down-counter of the beats left (cnt_q, from the first
  // beat on) with its zero flag registered gives the last beat: an equality, not a compare.
  localparam int unsigned CntW = 32 - LogBus;
  logic [LogBus-1:0] lm1_lo_q, lm1_lo_d;    // (row_len - 1) mod BusBytes
  logic [CntW-1:0]   lhi_q, lhi_d;          // (row_len - 1) >> LogBus ...
  logic [CntW-1:0]   lhi_m1_q, lhi_m1_d;    // ... and that minus 1
  logic              lhi_zero_q, lhi_zero_d; // lhi_q == 0
  logic              lhi_one_q, lhi_one_d;   // lhi_q == 1
  logic [CntW-1:0]   cnt_q, cnt_d;          // beats of the row after the current one
  logic              cnt_zero_q, cnt_zero_d;
  logic [LogBus:0]   lo_sum;                // lm1_lo + alo
  logic              lo_carry;              // R >> LogBus = lhi + lo_carry
  logic [LogBus-1:0] r_lo;                  // R mod BusBytes: the last beat's last byte

  assign xp0_bytes  = 32'(xp0_q) << lseb;
  assign xp1_bytes  = 32'(xp1_q) << lseb;
  assign row_bytes  = 32'(row_elems_q) << lseb;
  assign data_bytes = 32'(x_size_q) << lseb;

  always_comb begin
    off_cur   = first_q ? -$signed(34'(df_alo)) : off_q;
    src_off   = 32'(off_cur) + 32'(sub_q) * 32'(SrcPerSub);
    // the source bytes of an ACC_8BIT write are bytes sub_q * SrcPerSub .. of the beat
    q_mask    = beat_mask[32'(sub_q) * SrcPerSub +: SrcPerSub];
    pad_n = (pad_left_q < 32'(WinBytes)) ? pad_left_q : 32'(WinBytes);
  end

  // byte i of the beat is row data when 0 <= off_cur + i < row_len: on the first beat
  // (off_cur = -alo) from byte alo on, on the last up to byte r_lo; the beat is the row's last
  // when row_len - off_cur <= BusBytes
  always_comb begin
    lo_sum    = (LogBus + 1)'(lm1_lo_q) + (LogBus + 1)'(df_alo);
    lo_carry  = lo_sum[LogBus];
    r_lo      = lo_sum[LogBus-1:0];
    beat_last = first_q ? (lhi_zero_q && !lo_carry) : cnt_zero_q;
    for (int unsigned i = 0; i < BusBytes; i++) begin
      beat_mask[i] = (!first_q || (LogBus'(i) >= df_alo)) && (!beat_last || (LogBus'(i) <= r_lo));
    end
  end

  // what the writer does at the start of SRAM row er_y (0 after the checks, else the next row)
  logic [RowW-1:0] er_y;
  logic        er_done, er_data;
  phase_e      er_phase;
  logic [31:0] er_pad;
  logic        next_row;                  // the writer moves on to SRAM row er_y this cycle

  always_comb begin
    er_y     = (state_q == S_CHECK) ? '0 : wy_q + RowW'(1);
    er_done  = (er_y == total_rows_q);
    er_data  = 1'b0;
    er_phase = P_DATA;
    er_pad   = '0;
    if (er_y < RowW'(yp0_q) || er_y >= RowW'(yp0_q) + RowW'(y_size_q)) begin
      er_phase = P_TRAIL;
      er_pad   = row_bytes;
    end else if (xp0_q != '0) begin
      er_phase = P_LEAD;
      er_pad   = xp0_bytes;
    end else begin
      er_data  = 1'b1;
    end
  end

  always_comb begin
    state_d    = state_q;
    phase_d    = phase_q;
    err_d      = err_q;
    wy_d       = wy_q;
    pad_left_d = pad_left_q;
    ptr_d      = ptr_q;
    off_d      = off_q;
    first_d    = first_q;
    sub_d      = sub_q;
    cnt_d      = cnt_q;
    cnt_zero_d = cnt_zero_q;
    next_row   = 1'b0;
    r_ready_o  = 1'b0;
    df_pop     = 1'b0;
    w_valid_o  = 1'b0;
    w_addr_o   = ptr_q;
    w_mask_o   = '0;
    w_data_o   = '0;
    unique case (state_q)
      S_IDLE: ;
      S_SUM: state_d = S_CMP;
      S_CMP: state_d = S_CHECK;
      S_CHECK: begin
        state_d = S_DONE;
        if (!legal_type) begin
          err_d = ERR_MEM_TYPE;
        end else if (any_pad && (noop || !pad_ok)) begin
          err_d = ERR_MEM_TYPE;
        end else if (!noop) begin
          if (sram_over_q) begin
            err_d = sram_err;
          end else if (dram_over_q) begin
            err_d = ERR_DRAM_RANGE;
          end else begin
            state_d = S_RUN;
            ptr_d   = 32'(sram_base_q) << lseb;
            sub_d   = '0;
            next_row = 1'b1;
          end
        end
      end
      S_RUN: begin
        unique case (phase_q)
          P_LEAD, P_TRAIL: begin
            w_valid_o  = 1'b1;
            w_mask_o   = {WinBytes{1'b1}} >> (32'(WinBytes) - pad_n);
            ptr_d      = ptr_q + pad_n;
            pad_left_d = pad_left_q - pad_n;
            if (pad_left_q == pad_n) begin
              if (phase_q == P_LEAD) begin
                phase_d = P_DATA;
                first_d = 1'b1;
              end else begin
                next_row = 1'b1;
              end
            end
          end
          P_DATA: begin
            if (df_valid && r_valid_i) begin
              w_valid_o = 1'b1;
              if (!expand) begin
                r_ready_o = 1'b1;
                w_addr_o  = ptr_q + 32'(off_cur);
                w_mask_o  = WinBytes'(beat_mask);
                w_data_o  = WinW'(r_data_i);
              end else begin
                r_ready_o = (32'(sub_q) == 32'(ExpSub - 1));
                w_addr_o  = ptr_q + (32'(src_off) << 2);
                for (int i = 0; i < SrcPerSub; i++) begin
                  w_mask_o[4*i +: 4] = {4{q_mask[i]}};
                  w_data_o[32*i +: 32] = 32'($signed(r_data_i[(32'(sub_q) * SrcPerSub + 32'(i)) * 8 +: 8]));
                end
                sub_d = r_ready_o ? 2'd0 : sub_q + 2'd1;
              end
              if (r_ready_o) begin
                if (r_err_i) begin
                  err_d   = ERR_AXI_RD;
                  state_d = S_DONE;
                end
                first_d = 1'b0;
                off_d   = off_cur + 34'(BusBytes);
                // beats left after this one: lhi + lo_carry - 1 after the first, then down by 1
                if (first_q) begin
                  cnt_d      = lo_carry ? lhi_q : lhi_m1_q;
                  cnt_zero_d = lo_carry ? lhi_zero_q : lhi_one_q;
                end else begin
                  cnt_d      = cnt_q - CntW'(1);
                  cnt_zero_d = (cnt_q == CntW'(1));
                end
                if (beat_last) begin
                  df_pop = 1'b1;
                  ptr_d  = ptr_q + data_bytes;
                  if (xp1_q != '0) begin
                    phase_d    = P_TRAIL;
                    pad_left_d = xp1_bytes;
                  end else begin
                    next_row = 1'b1;
                  end
                end
              end
            end
          end
          default: ;  // unused encoding (a_phase_legal)
        endcase
        if (err_d != ERR_NONE) state_d = S_DONE;
      end
      S_DONE: state_d = S_IDLE;
      default: state_d = S_IDLE;  // unused encodings (a_state_legal)
    endcase
    // the writer moves on to SRAM row er_y (done after the last row); it overrides the row
    // fields the case set, and in those cycles the case only ever moves state_d to S_RUN
    // (S_CHECK) or S_DONE, so applying it here, before start_i / halt_i, changes nothing
    if (next_row) begin
      wy_d       = er_y;
      phase_d    = er_phase;
      pad_left_d = er_pad;
      first_d    = er_data;
      if (er_done) state_d = S_DONE;
    end
    if (start_i) begin
      state_d = S_SUM;
      err_d   = ERR_NONE;
    end
    if (halt_i) state_d = S_IDLE;
  end

  // the instruction's fields and the check pipeline (start_i, S_SUM, S_CMP), the issue process
  always_comb begin
    mtype_d      = mtype_q;
    sram_base_d  = sram_base_q;
    dram_base_d  = dram_base_q;
    y_size_d     = y_size_q;
    x_size_d     = x_size_q;
    x_stride_d   = x_stride_q;
    yp0_d        = yp0_q;
    yp1_d        = yp1_q;
    xp0_d        = xp0_q;
    xp1_d        = xp1_q;
    row_elems_d  = row_elems_q;
    total_rows_d = total_rows_q;
    y_last_d     = y_last_q;
    dram_bx_d    = dram_bx_q;
    sram_end_d   = sram_end_q;
    dram_end_d   = dram_end_q;
    sram_over_d  = sram_over_q;
    dram_over_d  = dram_over_q;
    lm1_lo_d     = lm1_lo_q;
    lhi_d        = lhi_q;
    lhi_m1_d     = lhi_m1_q;
    lhi_zero_d   = lhi_zero_q;
    lhi_one_d    = lhi_one_q;
    iss_y_d      = iss_y_q;
    iss_addr_d   = iss_addr_q;
    if (state_q == S_SUM) begin
      sram_end_d = sram_end;
      dram_end_d = dram_end;
      // the row's beats (row_len >= 1 whenever a row runs; lhi_m1_q is used when lhi_q >= 1)
      lm1_lo_d   = LogBus'(row_len - 32'd1);
      lhi_d      = CntW'((row_len - 32'd1) >> LogBus);
      lhi_m1_d   = CntW'((row_len - 32'(BusBytes + 1)) >> LogBus);
      lhi_zero_d = (row_len <= 32'(BusBytes));
      lhi_one_d  = (row_len > 32'(BusBytes)) && (row_len <= 32'(2 * BusBytes));
    end
    if (state_q == S_CMP) begin
      sram_over_d = sram_end_q > 34'(depth);
      dram_over_d = 64'(dram_end_q) > 64'(dram_size_i);
    end
    if (start_i) begin
      mtype_d      = insn_i[MEM_MEMORY_TYPE_LSB +: MEMTYPE_WIDTH];
      sram_base_d  = insn_i[MEM_SRAM_BASE_LSB +: SRAM_ADDR_WIDTH];
      dram_base_d  = insn_i[MEM_DRAM_BASE_LSB +: DRAM_ADDR_WIDTH];
      y_size_d     = insn_i[MEM_Y_SIZE_LSB +: SIZE_WIDTH];
      x_size_d     = insn_i[MEM_X_SIZE_LSB +: SIZE_WIDTH];
      x_stride_d   = insn_i[MEM_X_STRIDE_LSB +: STRIDE_WIDTH];
      yp0_d        = insn_i[MEM_Y_PAD_0_LSB +: PAD_WIDTH];
      yp1_d        = insn_i[MEM_Y_PAD_1_LSB +: PAD_WIDTH];
      xp0_d        = insn_i[MEM_X_PAD_0_LSB +: PAD_WIDTH];
      xp1_d        = insn_i[MEM_X_PAD_1_LSB +: PAD_WIDTH];
      row_elems_d  = RowW'(xp0_d) + RowW'(x_size_d) + RowW'(xp1_d);
      total_rows_d = RowW'(yp0_d) + RowW'(y_size_d) + RowW'(yp1_d);
      y_last_d     = y_size_d - SIZE_WIDTH'(1);
      dram_bx_d    = 48'(dram_base_d) + 48'(x_size_d);
      iss_y_d      = '0;
    end else if (state_q == S_CHECK) begin
      iss_addr_d  = dram_off_i + (Aw'(dram_base_q) << leb);
    end else if (req_valid_o && req_ready_i) begin
      iss_y_d     = iss_y_q + SIZE_WIDTH'(1);
      iss_addr_d  = iss_addr_q + Aw'(stride_bytes);
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q      <= S_IDLE;
      phase_q      <= P_LEAD;
      err_q        <= ERR_NONE;
      wy_q         <= '0;
      pad_left_q   <= '0;
      ptr_q        <= '0;
      off_q        <= '0;
      first_q      <= 1'b0;
      sub_q        <= '0;
      cnt_q        <= '0;
      cnt_zero_q   <= 1'b0;
      mtype_q      <= '0;
      sram_base_q  <= '0;
      dram_base_q  <= '0;
      y_size_q     <= '0;
      x_size_q     <= '0;
      x_stride_q   <= '0;
      yp0_q        <= '0;
      yp1_q        <= '0;
      xp0_q        <= '0;
      xp1_q        <= '0;
      row_elems_q  <= '0;
      total_rows_q <= '0;
      y_last_q     <= '0;
      dram_bx_q    <= '0;
      sram_end_q   <= '0;
      dram_end_q   <= '0;
      sram_over_q  <= 1'b0;
      dram_over_q  <= 1'b0;
      lm1_lo_q     <= '0;
      lhi_q        <= '0;
      lhi_m1_q     <= '0;
      lhi_zero_q   <= 1'b0;
      lhi_one_q    <= 1'b0;
      iss_y_q      <= '0;
      iss_addr_q   <= '0;
    end else begin
      state_q      <= state_d;
      phase_q      <= phase_d;
      err_q        <= err_d;
      wy_q         <= wy_d;
      pad_left_q   <= pad_left_d;
      ptr_q        <= ptr_d;
      off_q        <= off_d;
      first_q      <= first_d;
      sub_q        <= sub_d;
      cnt_q        <= cnt_d;
      cnt_zero_q   <= cnt_zero_d;
      mtype_q      <= mtype_d;
      sram_base_q  <= sram_base_d;
      dram_base_q  <= dram_base_d;
      y_size_q     <= y_size_d;
      x_size_q     <= x_size_d;
      x_stride_q   <= x_stride_d;
      yp0_q        <= yp0_d;
      yp1_q        <= yp1_d;
      xp0_q        <= xp0_d;
      xp1_q        <= xp1_d;
      row_elems_q  <= row_elems_d;
      total_rows_q <= total_rows_d;
      y_last_q     <= y_last_d;
      dram_bx_q    <= dram_bx_d;
      sram_end_q   <= sram_end_d;
      dram_end_q   <= dram_end_d;
      sram_over_q  <= sram_over_d;
      dram_over_q  <= dram_over_d;
      lm1_lo_q     <= lm1_lo_d;
      lhi_q        <= lhi_d;
      lhi_m1_q     <= lhi_m1_d;
      lhi_zero_q   <= lhi_zero_d;
      lhi_one_q    <= lhi_one_d;
      iss_y_q      <= iss_y_d;
      iss_addr_q   <= iss_addr_d;
    end
  end

`ifndef SYNTHESIS
`include "vta_assert.svh"
  `VTA_ASSERT_ARMED
  // ---------------------------------------------------------------- assertions (simulation)
  a_state_legal: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF)
      state_q inside {S_IDLE, S_SUM, S_CMP, S_CHECK, S_RUN, S_DONE})
    else $error("dma_rd: illegal state %0d", state_q);
  a_phase_legal: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF)
      state_q != S_RUN || phase_q inside {P_LEAD, P_DATA, P_TRAIL})
    else $error("dma_rd: illegal phase %0d", phase_q);
  // the check pipeline: S_CMP compares the ends of this instruction's fields
  logic [RowW-1:0] row_elems_ref, total_rows_ref;
  logic [47:0] dram_end_ref;
  assign row_elems_ref  = RowW'(xp0_q) + RowW'(x_size_q) + RowW'(xp1_q);
  assign total_rows_ref = RowW'(yp0_q) + RowW'(y_size_q) + RowW'(yp1_q);
  // y_size - 1 in SIZE_WIDTH bits, as y_last_q holds it (it differs from the wider difference only
  // for y_size 0, a no-op, whose DRAM end is never looked at)
  assign dram_end_ref   = (48'(dram_base_q) + 48'(SIZE_WIDTH'(y_size_q - SIZE_WIDTH'(1))) * 48'(x_stride_q) +
                           48'(x_size_q)) << leb;
  a_check_pipeline: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF)
      state_q == S_CMP |->
      sram_end_q == 34'(sram_base_q) + 34'(row_elems_ref) * 34'(total_rows_ref) &&
      dram_end_q == dram_end_ref)
    else $error("dma_rd: range check pipeline out of step with the instruction");
  // a row descriptor is queued for every row requested: room is checked before the request
  // the beat masks and last beats are those of the span the row's offsets give (vta_span_mask,
  // the wide add and compares they replace)
  logic [BusBytes-1:0] beat_mask_ref;
  logic                beat_last_ref;
  vta_span_mask #(
    .Lanes    (BusBytes),
    .OffWidth (34),
    .LenWidth (32)
  ) u_beat_span_ref (
    .off_i  (off_cur),
    .len_i  (row_len),
    .mask_o (beat_mask_ref),
    .last_o (beat_last_ref)
  );
  a_beat_span: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF)
      state_q == S_RUN && phase_q == P_DATA && df_valid |->
      beat_mask == beat_mask_ref && beat_last == beat_last_ref)
    else $error("dma_rd: beat mask %h last %0d, the row's span gives %h last %0d",
                beat_mask, beat_last, beat_mask_ref, beat_last_ref);
  a_desc_room: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF)
      req_valid_o && req_ready_i |-> df_ready)
    else $error("dma_rd: a row request found the descriptor FIFO full");
`endif

  logic unused_insn;  // opcode and token flags are the stage's business
  assign unused_insn = ^insn_i;

  assign busy_o  = (state_q != S_IDLE);
  assign done_o  = (state_q == S_DONE);
  assign err_o   = err_q;
  assign mtype_o = mtype_q;

endmodule : vta_dma_rd
