// vta_store: the store stage. Takes STORE instructions in order, waits for a g2s token
// when pop_prev_dep is set, checks pads (must be 0), out-buffer range and DRAM range,
// then copies y_size rows of x_size out elements to DRAM rows x_stride elements apart:
// one write request per row to the memory engine, and one bus beat per cycle read from
// the out buffer (byte window, strobes for the row's bytes) through a small W FIFO.
// Finally pushes an s2g token when push_prev_dep is set.
// The range checks are pipelined so that no cycle holds more than one multiplier or carry
// chain of them: the products are registered every cycle from the instruction register (so
// they are ready when S_POP ends), PH_SUM registers the SRAM and DRAM ends, PH_CHECK compares.
// The steps around the run (take, tokens, retire, the error) are vta_stage_ctrl's.
module vta_store import vta_pkg::*; import vta_err_pkg::*; #(
  parameter int unsigned AxiAddrWidth = 64,
  parameter int unsigned BusBytes     = 64,
  localparam int unsigned Aw          = AxiAddrWidth,
  localparam int unsigned BusW        = BusBytes * 8,
  localparam int unsigned QW          = 32 + INSN_WIDTH
) (
  input  logic                clk_i,
  input  logic                rst_ni,
  input  logic                clr_i,
  input  logic                halt_i,
  input  logic [Aw-1:0]       dram_off_i,
  input  logic [Aw-1:0]       dram_size_i,
  // command queue
  input  logic                cmd_valid_i,
  output logic                cmd_ready_o,
  input  logic [QW-1:0]       cmd_i,
  // tokens
  input  logic                g2s_valid_i,
  output logic                g2s_pop_o,
  input  logic                s2g_ready_i,
  output logic                s2g_push_o,
  // status
  output logic                busy_o,
  output logic                retire_o,
  output logic [ERR_WIDTH-1:0]   err_o,
  output logic [31:0]         err_idx_o,
  // trace (observation only): waiting for a g2s token, for room in s2g, for memory (copying,
  // no W beat accepted this cycle)
  output logic                pop_wait_o,
  output logic                push_wait_o,
  output logic                mem_wait_o,
  // out buffer window read (1-cycle latency)
  output logic [31:0]         out_addr_o,
  input  logic [BusW-1:0]     out_data_i,
  // memory engine write client
  output logic                req_valid_o,
  input  logic                req_ready_i,
  output logic [Aw-1:0]       req_addr_o,
  output logic [31:0]         req_len_o,
  output logic                w_valid_o,
  input  logic                w_ready_i,
  output logic [BusW-1:0]     w_data_o,
  output logic [BusBytes-1:0] w_strb_o
);

  localparam int unsigned LogEb   = $clog2(OUT_ELEM_BYTES);
  localparam int unsigned LogBus  = $clog2(BusBytes);
  localparam int unsigned WfDepth = 4;

  // the run of a STORE (vta_stage_ctrl's S_RUN): register the range check's ends, compare,
  // copy the rows
  typedef enum logic [1:0] {PH_SUM, PH_CHECK, PH_COPY} phase_e;

  phase_e ph_q, ph_d;
  logic [INSN_WIDTH-1:0] insn;
  logic        pop_ok, push_ok, take, in_run, copy;
  logic        run_done;
  logic [ERR_WIDTH-1:0] run_err;

  logic        pop_prev, push_prev;
  logic [SRAM_ADDR_WIDTH-1:0] sram_base;
  logic [SIZE_WIDTH-1:0]      y_size, x_size;
  logic [STRIDE_WIDTH-1:0]    x_stride;
  logic [DRAM_ADDR_WIDTH-1:0] dram_base;
  logic        any_pad, noop;
  logic [47:0] dram_end;
  logic [32:0] sram_end;
  // check pipeline: products and dram_base + x_size (every cycle, from insn), ends (PH_SUM)
  logic [31:0] sram_prod_q, sram_prod_d;   // y_size * x_size
  logic [31:0] dram_prod_q, dram_prod_d;   // (y_size - 1) * x_stride
  logic [47:0] dram_bx_q, dram_bx_d;       // dram_base + x_size
  logic [32:0] sram_end_q, sram_end_d;
  logic [47:0] dram_end_q, dram_end_d;
  logic [31:0] row_len, stride_bytes;
  logic [Aw-1:0] first_row;             // DRAM byte address of the first row

  always_comb begin
    pop_prev     = insn[MEM_POP_PREV_DEP_LSB];
    push_prev    = insn[MEM_PUSH_PREV_DEP_LSB];
    sram_base    = insn[MEM_SRAM_BASE_LSB +: SRAM_ADDR_WIDTH];
    dram_base    = insn[MEM_DRAM_BASE_LSB +: DRAM_ADDR_WIDTH];
    y_size       = insn[MEM_Y_SIZE_LSB +: SIZE_WIDTH];
    x_size       = insn[MEM_X_SIZE_LSB +: SIZE_WIDTH];
    x_stride     = insn[MEM_X_STRIDE_LSB +: STRIDE_WIDTH];
    any_pad      = |{insn[MEM_Y_PAD_0_LSB +: PAD_WIDTH], insn[MEM_Y_PAD_1_LSB +: PAD_WIDTH],
                     insn[MEM_X_PAD_0_LSB +: PAD_WIDTH], insn[MEM_X_PAD_1_LSB +: PAD_WIDTH]};
    noop         = (x_size == '0) || (y_size == '0);
    sram_end     = 33'(sram_base) + 33'(sram_prod_q);
    dram_end     = (dram_bx_q + 48'(dram_prod_q)) << LogEb;
    row_len      = 32'(x_size) << LogEb;
    stride_bytes = 32'(x_stride) << LogEb;
    first_row    = dram_off_i + (Aw'(dram_base) << LogEb);
  end

  // ---------------------------------------------------------------- request process
  logic [SIZE_WIDTH-1:0] rq_y_q, rq_y_d;         // rows requested
  logic [Aw-1:0]         rq_addr_q, rq_addr_d;   // DRAM byte address of the next row

  assign req_valid_o = copy && !halt_i && (rq_y_q < y_size);
  assign req_addr_o  = rq_addr_q;
  assign req_len_o   = row_len;

  // ---------------------------------------------------------------- beat process
  logic [SIZE_WIDTH-1:0] bt_y_q, bt_y_d;         // rows read
  logic [Aw-1:0]      bt_row_q, bt_row_d;       // DRAM byte address of the row
  logic [31:0]        bt_sram_q, bt_sram_d;     // out-buffer byte address of the row
  logic signed [33:0] bt_off_q, bt_off_d;       // beat address - row address
  logic               rd_pend_q;                // an out-buffer read is on its way to the W FIFO
  logic [BusBytes-1:0] strb_q, strb;            // its strobes
  logic               issue, beat_last;
  logic               wf_ready, wf_valid;
  logic [$clog2(WfDepth+1)-1:0] wf_count;
  logic [Aw-1:0]      next_row;

  // byte i of the beat is row data (its strobe) when 0 <= bt_off_q + i < row_len; the beat is
  // the row's last when row_len - bt_off_q <= BusBytes
  vta_span_mask #(
    .Lanes    (BusBytes),
    .OffWidth (34),
    .LenWidth (32)
  ) u_strb_span (
    .off_i  (bt_off_q),
    .len_i  (row_len),
    .mask_o (strb),
    .last_o (beat_last)
  );

  always_comb begin
    issue     = copy && !halt_i && (bt_y_q < y_size) &&
                (32'(wf_count) + 32'(rd_pend_q) < 32'(WfDepth));
    next_row  = bt_row_q + Aw'(stride_bytes);
  end

  assign out_addr_o = bt_sram_q + 32'(bt_off_q);

  vta_fifo #(
    .Width (BusW + BusBytes),
    .Depth (WfDepth)
  ) u_wfifo (
    .clk_i    (clk_i),
    .rst_ni   (rst_ni),
    .clr_i    (clr_i),
    .wvalid_i (rd_pend_q),
    .wready_o (wf_ready),
    .wdata_i  ({strb_q, out_data_i}),
    .rvalid_o (wf_valid),
    .rready_i (w_ready_i),
    .rdata_o  ({w_strb_o, w_data_o}),
    .count_o  (wf_count)
  );

  assign w_valid_o = wf_valid && !halt_i;

  // ---------------------------------------------------------------- control
  assign pop_ok  = !pop_prev || g2s_valid_i;
  assign push_ok = !push_prev || s2g_ready_i;

  // take, pop g2s, run (PH_SUM, PH_CHECK, PH_COPY), push s2g
  vta_stage_ctrl u_ctrl (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .clr_i        (clr_i),
    .halt_i       (halt_i),
    .cmd_valid_i  (cmd_valid_i),
    .cmd_ready_o  (cmd_ready_o),
    .cmd_i        (cmd_i),
    .insn_o       (insn),
    .pop_ok_i     (pop_ok),
    .take_o       (take),
    .push_ok_i    (push_ok),
    .retire_o     (retire_o),
    .start_err_i  (ERR_NONE),
    .start_skip_i (1'b0),
    .run_done_i   (run_done),
    .run_err_i    (run_err),
    .abort_i      (1'b0),
    .abort_err_i  (ERR_NONE),
    .in_pop_o     (),
    .in_run_o     (in_run),
    .busy_o       (busy_o),
    .err_o        (err_o),
    .err_idx_o    (err_idx_o),
    .pop_wait_o   (pop_wait_o),
    .push_wait_o  (push_wait_o)
  );

  assign g2s_pop_o  = take && pop_prev;
  assign s2g_push_o = retire_o && push_prev;
  assign copy       = in_run && (ph_q == PH_COPY);

  // the run's phases; the check ends it with an error, or with nothing to copy (a no-op)
  always_comb begin
    ph_d     = ph_q;
    run_done = 1'b0;
    run_err  = ERR_NONE;
    unique case (ph_q)
      PH_SUM: ph_d = PH_CHECK;
      PH_CHECK: begin
        ph_d     = PH_COPY;
        run_done = 1'b1;
        if (any_pad) begin
          run_err = ERR_MEM_TYPE;
        end else if (noop) begin
          run_err = ERR_NONE;  // nothing to copy: straight to the push
        end else if (sram_end_q > 33'(OUT_DEPTH)) begin
          run_err = ERR_SRAM_STORE;
        end else if (64'(dram_end_q) > 64'(dram_size_i)) begin
          run_err = ERR_DRAM_RANGE;
        end else begin
          run_done = 1'b0;
        end
      end
      PH_COPY: begin
        run_done = (rq_y_q == y_size && bt_y_q == y_size && !rd_pend_q && !wf_valid);
      end
      default: ph_d = PH_SUM;  // unused encoding
    endcase
    if (!in_run) ph_d = ph_q;
    if (take) ph_d = PH_SUM;
  end

  // the check pipeline's registers and the two processes' counters
  always_comb begin
    sram_prod_d = 32'(y_size) * 32'(x_size);
    dram_prod_d = 32'(y_size - SIZE_WIDTH'(1)) * 32'(x_stride);
    dram_bx_d   = 48'(dram_base) + 48'(x_size);
    sram_end_d  = sram_end_q;
    dram_end_d  = dram_end_q;
    rq_y_d      = rq_y_q;
    rq_addr_d   = rq_addr_q;
    bt_y_d      = bt_y_q;
    bt_row_d    = bt_row_q;
    bt_sram_d   = bt_sram_q;
    bt_off_d    = bt_off_q;
    if (in_run && ph_q == PH_SUM) begin
      sram_end_d = sram_end;
      dram_end_d = dram_end;
    end
    if (in_run && ph_q == PH_CHECK) begin
      rq_y_d    = '0;
      rq_addr_d = first_row;
      bt_y_d    = '0;
      bt_row_d  = first_row;
      bt_sram_d = 32'(sram_base) << LogEb;
      bt_off_d  = -$signed(34'(LogBus'(first_row)));
    end else begin
      if (req_valid_o && req_ready_i) begin
        rq_y_d    = rq_y_q + SIZE_WIDTH'(1);
        rq_addr_d = rq_addr_q + Aw'(stride_bytes);
      end
      if (issue) begin
        if (beat_last) begin
          bt_y_d    = bt_y_q + SIZE_WIDTH'(1);
          bt_row_d  = next_row;
          bt_sram_d = bt_sram_q + row_len;
          bt_off_d  = -$signed(34'(LogBus'(next_row)));
        end else begin
          bt_off_d  = bt_off_q + 34'(BusBytes);
        end
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ph_q        <= PH_SUM;
      rq_y_q      <= '0;
      rq_addr_q   <= '0;
      bt_y_q      <= '0;
      bt_row_q    <= '0;
      bt_sram_q   <= '0;
      bt_off_q    <= '0;
      rd_pend_q   <= 1'b0;
      strb_q      <= '0;
      sram_prod_q <= '0;
      dram_prod_q <= '0;
      dram_bx_q   <= '0;
      sram_end_q  <= '0;
      dram_end_q  <= '0;
    end else begin
      ph_q        <= ph_d;
      rq_y_q      <= rq_y_d;
      rq_addr_q   <= rq_addr_d;
      bt_y_q      <= bt_y_d;
      bt_row_q    <= bt_row_d;
      bt_sram_q   <= bt_sram_d;
      bt_off_q    <= bt_off_d;
      rd_pend_q   <= issue;
      strb_q      <= strb;
      sram_prod_q <= sram_prod_d;
      dram_prod_q <= dram_prod_d;
      dram_bx_q   <= dram_bx_d;
      sram_end_q  <= sram_end_d;
      dram_end_q  <= dram_end_d;
    end
  end

`ifndef SYNTHESIS
`include "vta_assert.svh"
  `VTA_ASSERT_ARMED
  // ---------------------------------------------------------------- assertions (simulation)
  logic [INSN_WIDTH-1:0] cmd_insn;
  assign cmd_insn = cmd_i[INSN_WIDTH-1:0];

  a_state_legal: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF)
      ph_q inside {PH_SUM, PH_CHECK, PH_COPY})
    else $error("store: illegal phase %0d", ph_q);
  // what fetch routes here (vta_fetch): STORE of OUT, no token of the next stage
  a_cmd_routed: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF)
      cmd_valid_i && cmd_ready_o |->
      cmd_insn[MEM_OPCODE_LSB +: OPCODE_WIDTH] == OPCODE_WIDTH'(OPCODE_STORE) &&
      cmd_insn[MEM_MEMORY_TYPE_LSB +: MEMTYPE_WIDTH] == MEMTYPE_WIDTH'(MEM_ID_OUT) &&
      !cmd_insn[MEM_POP_NEXT_DEP_LSB] && !cmd_insn[MEM_PUSH_NEXT_DEP_LSB])
    else $error("store: took an instruction fetch does not route here");
  // the check pipeline: the products PH_SUM adds are those of the instruction being checked
  // (insn holds still from the cycle before S_POP)
  a_check_products: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF)
      in_run && ph_q == PH_SUM |-> sram_prod_q == 32'(y_size) * 32'(x_size) &&
                           dram_prod_q == 32'(y_size - SIZE_WIDTH'(1)) * 32'(x_stride) &&
                           dram_bx_q == 48'(dram_base) + 48'(x_size))
    else $error("store: range check products of another instruction");
  // the W FIFO credit: a beat read from the out buffer always finds room
  a_wfifo_room: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF) rd_pend_q |-> wf_ready)
    else $error("store: an out-buffer beat found the W FIFO full");
`endif

  assign mem_wait_o  = copy && !(w_valid_o && w_ready_i);

  logic unused;
  assign unused = wf_ready;

endmodule : vta_store
