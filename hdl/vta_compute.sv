// vta_compute: the compute stage. Takes LOAD UOP / LOAD ACC / LOAD ACC_8BIT, GEMM, ALU
// and FINISH in order from its command queue. Token pops (l2g, s2g) before, pushes
// (g2l, g2s) after each instruction. Loads run through its own vta_dma_rd into the uop
// or acc buffer. GEMM and ALU run the two-level micro-op loop in a pipeline with no
// stall: one GEMM or ALU iteration per cycle (MUL: every second cycle):
//   G0 loop counters, uop read          G1 index add + range check, inp/wgt read
//   G2 .. GEMM datapath (vta_gemm_dp: operand registers, products, adder tree); the
//         iteration's acc indices ride along as its tag. G1's range check verdict is
//         registered: an iteration flagged bad in G2 does not enter the datapath, and the
//         loop stops (error) in that cycle; the one iteration G0 issued behind it is dropped
//         from G1
//   R  acc reads (dst, src) issued      A  forward, operands registered
//   X  accumulate (GEMM) / ALU op, result registered; MUL: partial products registered
//   X2 MUL only: partial products summed, result registered
//   W  acc + out write
// Accumulator read-after-write: a read issued in R misses the writes of the iterations
// then in X, X2 and W and of the one written in the cycle of the read (WB). A forwards
// the W and WB results when their dst matches (dst, and the ALU src); an iteration right
// behind one whose dst is its dst or ALU src takes that predecessor's result from W in X
// (flags set in A against the iteration about to enter W). MUL iterations are two cycles
// apart, so that their predecessor's sum is in W when they are in X. Older writes are
// already in the RAM, so any dst sequence gives the sequential result. A pipeline drains before the next instruction starts. An
// out-of-range index stops the loop before the bad iteration writes anything and reports
// the error.
module vta_compute import vta_pkg::*; import vta_err_pkg::*; #(
  parameter int unsigned AxiAddrWidth = 64,
  parameter int unsigned BusBytes     = 64,
  localparam int unsigned Aw          = AxiAddrWidth,
  localparam int unsigned BusW        = BusBytes * 8,
  localparam int unsigned WinBytes    = ACC8_WIN_BEATS * BusBytes,  // uop / acc window
  localparam int unsigned WinW        = WinBytes * 8,
  localparam int unsigned QW          = 32 + INSN_WIDTH,
  localparam int unsigned InpW        = BATCH * BLOCK_IN * INP_WIDTH,
  localparam int unsigned WgtW        = BLOCK_OUT * BLOCK_IN * WGT_WIDTH,
  localparam int unsigned AccW        = BATCH * BLOCK_OUT * ACC_WIDTH,
  localparam int unsigned OutW        = BATCH * BLOCK_OUT * OUT_WIDTH
) (
  input  logic                          clk_i,
  input  logic                          rst_ni,
  input  logic                          clr_i,
  input  logic                          halt_i,
  input  logic [Aw-1:0]                 dram_off_i,
  input  logic [Aw-1:0]                 dram_size_i,
  // command queue
  input  logic                          cmd_valid_i,
  output logic                          cmd_ready_o,
  input  logic [QW-1:0]                 cmd_i,
  // tokens
  input  logic                          l2g_valid_i,
  output logic                          l2g_pop_o,
  input  logic                          s2g_valid_i,
  output logic                          s2g_pop_o,
  input  logic                          g2l_ready_i,
  output logic                          g2l_push_o,
  input  logic                          g2s_ready_i,
  output logic                          g2s_push_o,
  // status
  output logic                          busy_o,
  output logic                          retire_o,
  output logic                          finish_o,
  output logic                          acc_wr_o,
  output logic [ERR_WIDTH-1:0]             err_o,
  output logic [31:0]                   err_idx_o,
  // trace (observation only): waiting for l2g / s2g tokens, for room in g2l / g2s, for memory
  // (executing a LOAD, no buffer write this cycle)
  output logic                          pop_wait_o,
  output logic                          push_wait_o,
  output logic                          mem_wait_o,
  // memory engine read client
  output logic                          req_valid_o,
  input  logic                          req_ready_i,
  output logic [Aw-1:0]                 req_addr_o,
  output logic [31:0]                   req_len_o,
  input  logic                          r_valid_i,
  output logic                          r_ready_o,
  input  logic [BusW-1:0]               r_data_i,
  input  logic                          r_err_i,
  // window writes into uop / acc (loads)
  output logic                          uop_we_o,
  output logic                          acc_win_we_o,
  output logic [31:0]                   w_addr_o,
  output logic [WinBytes-1:0]           w_mask_o,
  output logic [WinW-1:0]               w_data_o,
  // buffer reads
  output logic [LOG_UOP_DEPTH-1:0]      uop_idx_o,
  input  logic [UOP_WIDTH-1:0]          uop_data_i,
  output logic [LOG_INP_DEPTH-1:0]      inp_idx_o,
  input  logic [InpW-1:0]               inp_data_i,
  output logic [LOG_WGT_DEPTH-1:0]      wgt_idx_o,
  input  logic [WgtW-1:0]               wgt_data_i,
  output logic [1:0][LOG_ACC_DEPTH-1:0] acc_idx_o,
  input  logic [1:0][AccW-1:0]          acc_data_i,
  // acc + out element write
  output logic                          res_we_o,
  output logic [LOG_ACC_DEPTH-1:0]      res_idx_o,
  output logic [AccW-1:0]               res_acc_o,
  output logic [OutW-1:0]               res_out_o
);

  localparam int unsigned Lanes = BATCH * BLOCK_OUT;

  // the run of an instruction (vta_stage_ctrl's S_RUN): a LOAD, or a micro-op loop and the
  // drain of its pipeline
  typedef enum logic [1:0] {PH_LOAD, PH_LOOP, PH_DRAIN} phase_e;

  phase_e ph_q, ph_d;
  logic [INSN_WIDTH-1:0] insn;
  logic        finish_q, finish_d;
  logic        take, in_pop, in_run, ctrl_busy;
  logic        start_skip, run_done, bad_abort;
  logic [ERR_WIDTH-1:0] start_err, run_err, bad_err;

  // ---------------------------------------------------------------- decode
  logic [OPCODE_WIDTH-1:0] opcode;
  logic [ALUOP_WIDTH-1:0]  alu_op;
  logic        pop_prev, pop_next, push_prev, push_next;
  logic        is_alu, reset_reg, use_imm;
  logic [31:0] uop_bgn, uop_end, iter_out, iter_in;
  logic [31:0] dfo, dfi, sfo, sfi, wfo, wfi;
  logic [31:0] imm;

  always_comb begin
    opcode    = insn[GEMM_OPCODE_LSB +: OPCODE_WIDTH];
    pop_prev  = insn[GEMM_POP_PREV_DEP_LSB];
    pop_next  = insn[GEMM_POP_NEXT_DEP_LSB];
    push_prev = insn[GEMM_PUSH_PREV_DEP_LSB];
    push_next = insn[GEMM_PUSH_NEXT_DEP_LSB];
    is_alu    = (opcode == OPCODE_WIDTH'(OPCODE_ALU));
    reset_reg = insn[GEMM_RESET_REG_LSB];
    uop_bgn   = 32'(insn[GEMM_UOP_BGN_LSB +: GEMM_UOP_BGN_WIDTH]);
    uop_end   = 32'(insn[GEMM_UOP_END_LSB +: GEMM_UOP_END_WIDTH]);
    iter_out  = 32'(insn[GEMM_ITER_OUT_LSB +: GEMM_ITER_OUT_WIDTH]);
    iter_in   = 32'(insn[GEMM_ITER_IN_LSB +: GEMM_ITER_IN_WIDTH]);
    dfo       = 32'(insn[GEMM_DST_FACTOR_OUT_LSB +: GEMM_DST_FACTOR_OUT_WIDTH]);
    dfi       = 32'(insn[GEMM_DST_FACTOR_IN_LSB +: GEMM_DST_FACTOR_IN_WIDTH]);
    wfo       = 32'(insn[GEMM_WGT_FACTOR_OUT_LSB +: GEMM_WGT_FACTOR_OUT_WIDTH]);
    wfi       = 32'(insn[GEMM_WGT_FACTOR_IN_LSB +: GEMM_WGT_FACTOR_IN_WIDTH]);
    if (is_alu) begin
      sfo = 32'(insn[ALU_SRC_FACTOR_OUT_LSB +: ALU_SRC_FACTOR_OUT_WIDTH]);
      sfi = 32'(insn[ALU_SRC_FACTOR_IN_LSB +: ALU_SRC_FACTOR_IN_WIDTH]);
    end else begin
      sfo = 32'(insn[GEMM_SRC_FACTOR_OUT_LSB +: GEMM_SRC_FACTOR_OUT_WIDTH]);
      sfi = 32'(insn[GEMM_SRC_FACTOR_IN_LSB +: GEMM_SRC_FACTOR_IN_WIDTH]);
    end
    alu_op  = insn[ALU_ALU_OPCODE_LSB +: ALUOP_WIDTH];
    use_imm = insn[ALU_USE_IMM_LSB];
    imm     = 32'($signed(insn[ALU_IMM_LSB +: IMM_WIDTH]));
  end

  // ---------------------------------------------------------------- loop generator (G0)
  // u: micro-op index; i0 / i1: outer / inner iteration; *_out: an index's offset at the start
  // of the outer iteration, *_cur: its offset now (running sums of the factors, no multiplier)
  logic [31:0] u_q, u_d, i0_q, i0_d, i1_q, i1_d;
  logic [31:0] dst_out_q, dst_out_d, dst_cur_q, dst_cur_d;
  logic [31:0] src_out_q, src_out_d, src_cur_q, src_cur_d;
  logic [31:0] wgt_out_q, wgt_out_d, wgt_cur_q, wgt_cur_d;
  logic        gen, gen_last;

  // ---------------------------------------------------------------- pipeline registers
  logic        g1_q, g2_q, g2_d, a_q, a_d, x_q, x_d, x2_q, x2_d, w_q, w_d, wb_q;
  logic        bad2_q, bad2_d;  // G2: its iteration failed G1's index check (it goes no further)
  logic [1:0]  gap_q, gap_d;    // cycles until the loop may issue the next iteration
  logic [31:0] g1_dst_off_q, g1_src_off_q, g1_wgt_off_q;
  logic [LOG_ACC_DEPTH-1:0] g2_a_q, g2_s_q, a_a_q, a_s_q, x_a_q, x2_a_q, w_a_q, wb_a_q;
  logic        x_fwd_q, x_fwd_d;     // X: its dst is the dst of the iteration ahead of it (now in W)
  logic        x_fwd_b_q, x_fwd_b_d; // X: its ALU src is the dst of the iteration ahead of it
  logic [AccW-1:0] x_op_a_q, x_op_b_q, x_dot_q, w_res_q, w_res_d, wb_data_q;
  logic [LOG_ACC_DEPTH-1:0] w_a_d;

  // G1: indices and checks (the verdict is registered in bad2_q)
  logic [31:0] a1, s1, w1;
  logic        bad1;

  always_comb begin
    a1   = 32'(uop_data_i[UOP_DST_IDX_LSB +: UOP_DST_IDX_WIDTH]) + g1_dst_off_q;
    s1   = 32'(uop_data_i[UOP_SRC_IDX_LSB +: UOP_SRC_IDX_WIDTH]) + g1_src_off_q;
    w1   = 32'(uop_data_i[UOP_WGT_IDX_LSB +: UOP_WGT_IDX_WIDTH]) + g1_wgt_off_q;
    bad1 = (a1 >= 32'(ACC_DEPTH));
    if (is_alu) begin
      if (!use_imm && s1 >= 32'(ACC_DEPTH)) bad1 = 1'b1;
    end else if (!reset_reg) begin
      if (s1 >= 32'(INP_DEPTH) || w1 >= 32'(WGT_DEPTH)) bad1 = 1'b1;
    end
    bad1 = bad1 && g1_q;
  end

  assign uop_idx_o = LOG_UOP_DEPTH'(u_q);
  assign inp_idx_o = LOG_INP_DEPTH'(s1);
  assign wgt_idx_o = LOG_WGT_DEPTH'(w1);
  // G2 .. R: the GEMM datapath; every iteration (ALU too) takes its path, so that its tag
  // (the acc indices) reaches R one cycle ahead of its dot product
  logic                         r_valid, gemm_busy;
  logic [1:0][LOG_ACC_DEPTH-1:0] r_idx;
  logic [AccW-1:0]              dot;

  vta_gemm_dp #(
    .TagW (2 * LOG_ACC_DEPTH)
  ) u_gemm (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .valid_i (g2_q && !bad2_q && !halt_i),
    .tag_i   ({g2_s_q, g2_a_q}),
    .inp_i   (inp_data_i),
    .wgt_i   (wgt_data_i),
    .valid_o (r_valid),
    .tag_o   (r_idx),
    .dot_o   (dot),
    .busy_o  (gemm_busy)
  );

  assign acc_idx_o = r_idx;   // R: port 0 dst, port 1 src

  // A: forward (W is newer than WB), register the operands; next_w: the iteration that
  // enters W next cycle, whose result X forwards
  logic [AccW-1:0] op_a, op_b, alu_b;
  logic                     next_w;
  logic [LOG_ACC_DEPTH-1:0] next_w_a;

  assign next_w   = is_mul ? x2_q : x_q;
  assign next_w_a = is_mul ? x2_a_q : x_a_q;

  always_comb begin
    op_a = acc_data_i[0];
    op_b = acc_data_i[1];
    if (wb_q && wb_a_q == a_a_q) op_a = wb_data_q;
    if (wb_q && wb_a_q == a_s_q) op_b = wb_data_q;
    if (w_q && w_a_q == a_a_q) op_a = w_res_q;
    if (w_q && w_a_q == a_s_q) op_b = w_res_q;
    alu_b = use_imm ? {Lanes{imm}} : op_b;
  end

  // X: accumulate / ALU op, result mux; X2: MUL's sum
  logic [AccW-1:0] acc_in, src_in, alu_y, mul_y, gemm_y, res;

  always_comb begin
    acc_in = x_fwd_q ? w_res_q : x_op_a_q;
    src_in = x_fwd_b_q ? w_res_q : x_op_b_q;
    for (int unsigned l = 0; l < Lanes; l++) begin
      gemm_y[l*32 +: 32] = acc_in[l*32 +: 32] + x_dot_q[l*32 +: 32];
    end
    if (is_alu)         res = alu_y;
    else if (reset_reg) res = '0;
    else                res = gemm_y;
  end

  vta_alu u_alu (
    .clk_i (clk_i),
    .op_i  (alu_op),
    .a_i   (acc_in),
    .b_i   (src_in),
    .y_o   (alu_y),
    .mul_o (mul_y)
  );

  // W: write acc and out
  always_comb begin
    for (int unsigned l = 0; l < Lanes; l++) begin
      res_out_o[l*8 +: 8] = w_res_q[l*32 +: 8];
    end
  end

  assign res_we_o  = w_q && !halt_i;
  assign res_idx_o = w_a_q;
  assign res_acc_o = w_res_q;
  assign acc_wr_o  = res_we_o;

  // ---------------------------------------------------------------- loads
  logic        dma_start, dma_busy, dma_done, dma_w;
  logic [ERR_WIDTH-1:0] dma_err;
  logic [MEMTYPE_WIDTH-1:0] dma_mtype;

  vta_dma_rd #(
    .AxiAddrWidth (AxiAddrWidth),
    .BusBytes     (BusBytes),
    .WinBytes     (WinBytes)
  ) u_dma (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .halt_i      (halt_i),
    .start_i     (dma_start),
    .insn_i      (insn),
    .dram_off_i  (dram_off_i),
    .dram_size_i (dram_size_i),
    .busy_o      (dma_busy),
    .done_o      (dma_done),
    .err_o       (dma_err),
    .mtype_o     (dma_mtype),
    .req_valid_o (req_valid_o),
    .req_ready_i (req_ready_i),
    .req_addr_o  (req_addr_o),
    .req_len_o   (req_len_o),
    .r_valid_i   (r_valid_i),
    .r_ready_o   (r_ready_o),
    .r_data_i    (r_data_i),
    .r_err_i     (r_err_i),
    .w_valid_o   (dma_w),
    .w_addr_o    (w_addr_o),
    .w_mask_o    (w_mask_o),
    .w_data_o    (w_data_o)
  );

  assign uop_we_o     = dma_w && (dma_mtype == MEMTYPE_WIDTH'(MEM_ID_UOP));
  assign acc_win_we_o = dma_w && (dma_mtype != MEMTYPE_WIDTH'(MEM_ID_UOP));

  // ---------------------------------------------------------------- control
  logic tokens_ok, push_ok, loop_empty, uop_bad, is_mul;

  assign tokens_ok  = (!pop_prev || l2g_valid_i) && (!pop_next || s2g_valid_i);
  assign push_ok    = (!push_prev || g2l_ready_i) && (!push_next || g2s_ready_i);
  assign loop_empty = (iter_out == '0) || (iter_in == '0) || (uop_bgn == uop_end);
  assign uop_bad    = (uop_bgn > uop_end) || (uop_end > 32'(UOP_DEPTH));
  assign is_mul     = is_alu && (alu_op == ALUOP_WIDTH'(ALU_OPCODE_MUL));
  assign gen        = in_run && (ph_q == PH_LOOP) && !halt_i && !bad2_q && (gap_q == '0);
  assign gen_last   = (u_q + 32'd1 >= uop_end) && (i1_q + 32'd1 >= iter_in) &&
                      (i0_q + 32'd1 >= iter_out);

  // take, pop l2g / s2g, run (PH_LOAD, or PH_LOOP then PH_DRAIN), push g2l / g2s
  vta_stage_ctrl u_ctrl (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .clr_i        (clr_i),
    .halt_i       (halt_i),
    .cmd_valid_i  (cmd_valid_i),
    .cmd_ready_o  (cmd_ready_o),
    .cmd_i        (cmd_i),
    .insn_o       (insn),
    .pop_ok_i     (tokens_ok),
    .take_o       (take),
    .push_ok_i    (push_ok),
    .retire_o     (retire_o),
    .start_err_i  (start_err),
    .start_skip_i (start_skip),
    .run_done_i   (run_done),
    .run_err_i    (run_err),
    .abort_i      (bad_abort),
    .abort_err_i  (bad_err),
    .in_pop_o     (in_pop),
    .in_run_o     (in_run),
    .busy_o       (ctrl_busy),
    .err_o        (err_o),
    .err_idx_o    (err_idx_o),
    .pop_wait_o   (pop_wait_o),
    .push_wait_o  (push_wait_o)
  );

  assign l2g_pop_o  = take && pop_prev;
  assign s2g_pop_o  = take && pop_next;
  assign g2l_push_o = retire_o && push_prev;
  assign g2s_push_o = retire_o && push_next;
  assign dma_start  = take && (opcode == OPCODE_WIDTH'(OPCODE_LOAD));
  // an iteration failed its index check (registered verdict): the instruction stops
  assign bad_abort  = bad2_q;
  assign bad_err    = is_alu ? ERR_SRAM_ALU : ERR_SRAM_GEMM;

  // how an instruction goes on once its tokens are taken
  always_comb begin
    start_err  = ERR_NONE;
    start_skip = 1'b0;
    unique case (opcode)
      OPCODE_WIDTH'(OPCODE_LOAD): ;
      OPCODE_WIDTH'(OPCODE_GEMM), OPCODE_WIDTH'(OPCODE_ALU): begin
        if (uop_bad) begin
          start_err = ERR_SRAM_UOP;
        end else if (loop_empty) begin
          start_skip = 1'b1;
        end
      end
      OPCODE_WIDTH'(OPCODE_FINISH): start_skip = 1'b1;
      default: start_err = ERR_OPCODE;  // STORE and the undefined opcodes
    endcase
  end

  // the run's phases: a LOAD ends with its DMA (and its error), a loop with its drain
  always_comb begin
    ph_d     = ph_q;
    run_done = 1'b0;
    run_err  = ERR_NONE;
    finish_d = finish_q;
    unique case (ph_q)
      PH_LOAD: begin
        run_done = dma_done;
        run_err  = dma_err;
      end
      PH_LOOP: begin
        if (gen && gen_last) ph_d = PH_DRAIN;
      end
      PH_DRAIN: begin
        // the last iteration writes in W at the end of this cycle at the latest
        run_done = !g1_q && !g2_q && !gemm_busy && !a_q && !x_q && !x2_q;
      end
      default: ph_d = PH_LOOP;  // unused encoding
    endcase
    if (!in_run) ph_d = ph_q;
    if (take) begin
      ph_d = (opcode == OPCODE_WIDTH'(OPCODE_LOAD)) ? PH_LOAD : PH_LOOP;
      if (opcode == OPCODE_WIDTH'(OPCODE_FINISH)) finish_d = 1'b1;
    end
    if (clr_i) finish_d = 1'b0;
  end

  // G0: the loop counters; S_POP loads them for the instruction taken next
  always_comb begin
    u_d       = u_q;
    i0_d      = i0_q;
    i1_d      = i1_q;
    dst_out_d = dst_out_q;
    dst_cur_d = dst_cur_q;
    src_out_d = src_out_q;
    src_cur_d = src_cur_q;
    wgt_out_d = wgt_out_q;
    wgt_cur_d = wgt_cur_q;
    if (in_pop) begin
      u_d       = uop_bgn;
      i0_d      = '0;
      i1_d      = '0;
      dst_out_d = '0;
      dst_cur_d = '0;
      src_out_d = '0;
      src_cur_d = '0;
      wgt_out_d = '0;
      wgt_cur_d = '0;
    end else if (gen) begin
      if (u_q + 32'd1 < uop_end) begin
        u_d = u_q + 32'd1;
      end else begin
        u_d = uop_bgn;
        if (i1_q + 32'd1 < iter_in) begin
          i1_d      = i1_q + 32'd1;
          dst_cur_d = dst_cur_q + dfi;
          src_cur_d = src_cur_q + sfi;
          wgt_cur_d = wgt_cur_q + wfi;
        end else begin
          i1_d      = '0;
          i0_d      = i0_q + 32'd1;
          dst_out_d = dst_out_q + dfo;
          src_out_d = src_out_q + sfo;
          wgt_out_d = wgt_out_q + wfo;
          dst_cur_d = dst_out_q + dfo;
          src_cur_d = src_out_q + sfo;
          wgt_cur_d = wgt_out_q + wfo;
        end
      end
    end
  end

  // the pipeline's valid bits, the MUL spacing and the forwarding flags
  always_comb begin
    // G1 moves to G2 unless the iteration ahead of it (now in G2) failed its check; a
    // failing iteration moves on flagged, and only the first one of an instruction counts
    g2_d      = g1_q && !bad2_q && !halt_i;
    bad2_d    = bad1 && !bad2_q && !clr_i;
    gap_d     = gap_q;
    if (gen)                gap_d = is_mul ? 2'd1 : 2'd0;
    else if (gap_q != '0)   gap_d = gap_q - 2'd1;
    a_d       = r_valid && !halt_i;
    x_d       = a_q && !halt_i;
    x_fwd_d   = next_w && (next_w_a == a_a_q);
    x_fwd_b_d = next_w && (next_w_a == a_s_q) && is_alu && !use_imm;
    x2_d      = x_q && is_mul && !halt_i;
    w_d       = (is_mul ? x2_q : x_q) && !halt_i;
    w_a_d     = is_mul ? x2_a_q : x_a_q;
    w_res_d   = is_mul ? mul_y : res;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ph_q         <= PH_LOAD;
      finish_q     <= 1'b0;
      u_q          <= '0;
      i0_q         <= '0;
      i1_q         <= '0;
      dst_out_q    <= '0;
      dst_cur_q    <= '0;
      src_out_q    <= '0;
      src_cur_q    <= '0;
      wgt_out_q    <= '0;
      wgt_cur_q    <= '0;
      g1_q         <= 1'b0;
      g2_q         <= 1'b0;
      bad2_q       <= 1'b0;
      a_q          <= 1'b0;
      x_q          <= 1'b0;
      x2_q         <= 1'b0;
      w_q          <= 1'b0;
      gap_q        <= '0;
      g1_dst_off_q <= '0;
      g1_src_off_q <= '0;
      g1_wgt_off_q <= '0;
      g2_a_q       <= '0;
      g2_s_q       <= '0;
      a_a_q        <= '0;
      a_s_q        <= '0;
      x_a_q        <= '0;
      x_fwd_q      <= 1'b0;
      x_fwd_b_q    <= 1'b0;
      x2_a_q       <= '0;
      w_a_q        <= '0;
      wb_q         <= 1'b0;
      wb_a_q       <= '0;
    end else begin
      ph_q         <= ph_d;
      finish_q     <= finish_d;
      u_q          <= u_d;
      i0_q         <= i0_d;
      i1_q         <= i1_d;
      dst_out_q    <= dst_out_d;
      dst_cur_q    <= dst_cur_d;
      src_out_q    <= src_out_d;
      src_cur_q    <= src_cur_d;
      wgt_out_q    <= wgt_out_d;
      wgt_cur_q    <= wgt_cur_d;
      g1_q         <= gen;
      g1_dst_off_q <= dst_cur_q;
      g1_src_off_q <= src_cur_q;
      g1_wgt_off_q <= wgt_cur_q;
      g2_q         <= g2_d;
      bad2_q       <= bad2_d;
      g2_a_q       <= LOG_ACC_DEPTH'(a1);
      g2_s_q       <= LOG_ACC_DEPTH'(s1);
      gap_q        <= gap_d;
      a_q          <= a_d;
      a_a_q        <= r_idx[0];
      a_s_q        <= r_idx[1];
      x_q          <= x_d;
      x_a_q        <= a_a_q;
      x_fwd_q      <= x_fwd_d;
      x_fwd_b_q    <= x_fwd_b_d;
      x2_q         <= x2_d;
      x2_a_q       <= x_a_q;
      w_q          <= w_d;
      w_a_q        <= w_a_d;
      wb_q         <= res_we_o;
      wb_a_q       <= w_a_q;
    end
  end

  // the datapath's registers (no reset: their valid bits above qualify them)
  always_ff @(posedge clk_i) begin
    x_op_a_q  <= op_a;
    x_op_b_q  <= alu_b;
    x_dot_q   <= dot;
    w_res_q   <= w_res_d;
    wb_data_q <= w_res_q;
  end

  logic unused_uop;  // micro-op bits above the three index fields (configuration dependent)
  assign unused_uop = ^uop_data_i;

  assign busy_o    = ctrl_busy || dma_busy || g1_q || g2_q || gemm_busy || a_q || x_q ||
                     x2_q || w_q;
  assign finish_o  = finish_q;

`ifndef SYNTHESIS
`include "vta_assert.svh"
  `VTA_ASSERT_ARMED
  // ---------------------------------------------------------------- assertions (simulation)
  logic [INSN_WIDTH-1:0] cmd_insn;
  logic [OPCODE_WIDTH-1:0]  cmd_op;
  logic [MEMTYPE_WIDTH-1:0] cmd_mtype;
  assign cmd_insn  = cmd_i[INSN_WIDTH-1:0];
  assign cmd_op    = cmd_insn[GEMM_OPCODE_LSB +: OPCODE_WIDTH];
  assign cmd_mtype = cmd_insn[MEM_MEMORY_TYPE_LSB +: MEMTYPE_WIDTH];

  a_state_legal: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF)
      ph_q inside {PH_LOAD, PH_LOOP, PH_DRAIN})
    else $error("compute: illegal phase %0d", ph_q);
  // what fetch routes here (vta_fetch): LOAD of UOP / ACC / ACC_8BIT, GEMM, legal ALU, FINISH
  a_cmd_routed: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF)
      cmd_valid_i && cmd_ready_o |->
      (cmd_op == OPCODE_WIDTH'(OPCODE_LOAD) && cmd_mtype inside {MEMTYPE_WIDTH'(MEM_ID_UOP), MEMTYPE_WIDTH'(MEM_ID_ACC),
                                                       MEMTYPE_WIDTH'(MEM_ID_ACC_8BIT)}) ||
      cmd_op == OPCODE_WIDTH'(OPCODE_GEMM) || cmd_op == OPCODE_WIDTH'(OPCODE_FINISH) ||
      (cmd_op == OPCODE_WIDTH'(OPCODE_ALU) && !cmd_insn[ALU_RESET_REG_LSB] &&
       cmd_insn[ALU_ALU_OPCODE_LSB +: ALUOP_WIDTH] <= ALUOP_WIDTH'(ALU_OPCODE_MUL)))
    else $error("compute: took an instruction fetch does not route here (opcode %0d)", cmd_op);
  // the pipeline runs only in the loop and its drain
  a_pipe_in_loop: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF)
      g1_q |-> !ctrl_busy || (in_run && ph_q inside {PH_LOOP, PH_DRAIN}))
    else $error("compute: a micro-op in flight outside the loop (phase %0d)", ph_q);
  // an iteration that failed its index check writes nothing: the loop stops with it, and the
  // iteration behind it never leaves G1
  a_bad_stops: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF)
      bad2_q && !clr_i |=> !g2_q && !g1_q && !ctrl_busy && err_o != ERR_NONE)
    else $error("compute: the loop went on after an index error");
  // MUL iterations are two cycles apart: X never needs a sum X2 has not made yet
  a_mul_spacing: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF)
      a_q && x_q |-> !is_mul)
    else $error("compute: MUL iterations in A and X together");
`endif

  assign mem_wait_o  = in_run && (ph_q == PH_LOAD) && !dma_w;

endmodule : vta_compute
