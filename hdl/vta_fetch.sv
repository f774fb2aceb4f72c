// vta_fetch: reads the instruction stream (insn_count 16-byte instructions from
// insn_base) through the memory engine and routes each instruction, tagged with its
// index, to the load, compute or store command queue (spec section 3). It requests at
// most a beat buffer's worth of data ahead (credits), so it always accepts its read
// beats and never blocks the shared R channel. It checks what routing needs: opcode,
// memory type, the token flags a stage must not use, ALU opcode / reset_reg, and the
// FINISH rule (exactly once, last, no other field set); the first violation is reported
// in err_o / err_idx_o and fetch stops.
// For the clock, no address arithmetic sits in front of the memory engine or the router:
// the next request (address, length, beats, credit check) is worked out from registers and
// presented from registers one cycle later (one idle cycle between requests), and the
// router keeps the instruction's lane in its beat and the "last instruction" flag in
// registers instead of deriving them from the instruction's address and index.
module vta_fetch import vta_pkg::*; import vta_err_pkg::*; import vta_stage_pkg::*; #(
  parameter int unsigned AxiAddrWidth = 64,
  parameter int unsigned BusBytes     = 64,
  localparam int unsigned Aw          = AxiAddrWidth,
  localparam int unsigned IdxW        = 32,              // index of an instruction
  localparam int unsigned QW          = IdxW + INSN_WIDTH
) (
  input  logic              clk_i,
  input  logic              rst_ni,
  input  logic              start_i,
  input  logic              halt_i,
  input  logic [IdxW-1:0]   insn_count_i,
  input  logic [Aw-1:0]     insn_base_i,
  output logic              done_o,       // every instruction routed
  output logic [ERR_WIDTH-1:0] err_o,     // first error, held until start_i
  output logic [IdxW-1:0]   err_idx_o,
  // memory engine read client
  output logic              req_valid_o,
  input  logic              req_ready_i,
  output logic [Aw-1:0]     req_addr_o,
  output logic [31:0]       req_len_o,
  input  logic              r_valid_i,
  output logic              r_ready_o,
  input  logic [BusBytes*8-1:0] r_data_i,
  input  logic              r_err_i,
  // command queues: {index, instruction}
  output logic [QW-1:0]     q_data_o,
  output logic              ld_valid_o,
  input  logic              ld_ready_i,
  output logic              cp_valid_o,
  input  logic              cp_ready_i,
  output logic              st_valid_o,
  input  logic              st_ready_i
);

  localparam int unsigned InsnBytes   = INSN_WIDTH / 8;
  localparam int unsigned LogInsn     = $clog2(InsnBytes);
  localparam int unsigned LogBus      = $clog2(BusBytes);
  localparam int unsigned InsnPerBeat = BusBytes / InsnBytes;
  localparam int unsigned GroupBeats  = FETCH_GROUP_BEATS;       // beats per request at most
  localparam int unsigned GroupBytes  = GroupBeats * BusBytes;
  localparam int unsigned BufBeats    = 8 * GroupBeats;  // 256 insns at 512 bits, 64 at 128
  localparam int unsigned CredW       = 8;
  localparam int unsigned LogGroup    = $clog2(GroupBytes);
  localparam int unsigned LaneW       = (InsnPerBeat > 1) ? $clog2(InsnPerBeat) : 1;
  localparam int unsigned GrpW        = LogGroup + 1;            // 0..GroupBytes
  localparam int unsigned BeatW       = LogGroup - LogBus + 2;   // 0..2*GroupBeats

  logic              act_q, act_d;
  logic [IdxW-1:0]   count_q, count_d;
  logic [Aw-1:0]     base_q, base_d;
  logic [Aw-1:0]     req_addr_q, req_addr_d;   // byte address of the next instruction to request
  logic [IdxW-1:0]   req_rem_q, req_rem_d;     // instructions still to request
  logic              rq_valid_q, rq_valid_d;   // the registered request below is presented
  logic [31:0]       rq_bytes_q, rq_bytes_d;   // its length in bytes ...
  logic [IdxW-1:0]   rq_n_q, rq_n_d;           // ... and instructions
  logic [CredW-1:0]  rq_beats_q, rq_beats_d;   // its beats
  logic [IdxW-1:0]   idx_q, idx_d;             // next instruction to route
  logic [LaneW-1:0]  lane_q, lane_d;           // lane of instruction idx_q in its beat
  logic              last_q, last_d;           // idx_q is the last instruction
  logic              more_q, more_d;           // idx_q < count_q
  logic [CredW-1:0]  cred_q, cred_d;           // beats requested and not yet popped
  logic [ERR_WIDTH-1:0] err_q, err_d;
  logic [IdxW-1:0]   err_idx_q, err_idx_d;

  // ---------------------------------------------------------------- requests
  // the next request, from registers; registered into rq_*_q while none is presented. The
  // arithmetic is as wide as a group (GrpW bits) and its beats (BeatW), not 32 bits: a request
  // never leaves its group, so the remaining bytes only matter below GroupBytes (rem_small).
  logic [GrpW-1:0]  grp_off, grp_end;      // req_addr_q and its last byte inside the group
  logic [GrpW-1:0]  grp_bytes, rem_low, req_bytes;
  logic [31:0]      rem_bytes;
  logic [IdxW-1:0]  req_n;
  logic [BeatW-1:0] req_beats;
  logic [CredW:0]   cred_need;
  logic             rem_small, req_ok, req_hs;

  always_comb begin
    grp_off   = GrpW'(req_addr_q[LogGroup-1:0]);
    rem_bytes = req_rem_q << LogInsn;
    rem_low   = rem_bytes[GrpW-1:0];
    rem_small = (rem_bytes[31:GrpW] == '0);
    grp_bytes = GrpW'(GroupBytes) - grp_off;
    req_bytes = (rem_small && rem_low < grp_bytes) ? rem_low : grp_bytes;
    req_n     = IdxW'(req_bytes >> LogInsn);
    // the request stays inside its group: its beats are those of its offsets in the group
    grp_end   = grp_off + req_bytes - GrpW'(1);
    req_beats = BeatW'(grp_end >> LogBus) - BeatW'(grp_off >> LogBus) + BeatW'(1);
    cred_need = (CredW + 1)'(cred_q) + (CredW + 1)'(req_beats);
    req_ok    = act_q && !halt_i && (err_q == ERR_NONE) && (req_rem_q != '0) &&
                (cred_need <= (CredW + 1)'(BufBeats));
  end

  assign req_valid_o = rq_valid_q && !halt_i && (err_q == ERR_NONE);
  assign req_addr_o  = req_addr_q;
  assign req_len_o   = rq_bytes_q;
  assign req_hs      = req_valid_o && req_ready_i;

  // ---------------------------------------------------------------- beat buffer
  logic                  bf_valid, bf_pop;
  logic [BusBytes*8-1:0] bf_data;

  vta_fifo #(
    .Width  (BusBytes * 8),
    .Depth  (BufBeats),
    .LutRam (1'b0)       // block RAM, not LUT RAM (ECP5: 15 DP16KD at 512 bits, 4 at 128)
  ) u_beats (
    .clk_i    (clk_i),
    .rst_ni   (rst_ni),
    .clr_i    (start_i),
    .wvalid_i (r_valid_i),
    .wready_o (r_ready_o),
    .wdata_i  (r_data_i),
    .rvalid_o (bf_valid),
    .rready_i (bf_pop),
    .rdata_o  (bf_data),
    .count_o  ()
  );

  // ---------------------------------------------------------------- decode and route
  logic [INSN_WIDTH-1:0] insn;
  logic [OPCODE_WIDTH-1:0]  opcode;
  logic [MEMTYPE_WIDTH-1:0] mtype;
  logic [ALUOP_WIDTH-1:0]   aluop;
  logic        pop_prev, pop_next, push_prev, push_next, reset_reg;
  logic [STAGE_WIDTH-1:0] target;          // the stage the instruction goes to
  logic [ERR_WIDTH-1:0] dec_err;
  logic        last, lane_last, route, tgt_ready;
  logic [31:0] lane;

  always_comb begin
    lane      = 32'(lane_q) & 32'(InsnPerBeat - 1);
    insn      = INSN_WIDTH'(bf_data >> (lane * INSN_WIDTH));
    opcode    = insn[MEM_OPCODE_LSB +: OPCODE_WIDTH];
    pop_prev  = insn[MEM_POP_PREV_DEP_LSB];
    pop_next  = insn[MEM_POP_NEXT_DEP_LSB];
    push_prev = insn[MEM_PUSH_PREV_DEP_LSB];
    push_next = insn[MEM_PUSH_NEXT_DEP_LSB];
    mtype     = insn[MEM_MEMORY_TYPE_LSB +: MEMTYPE_WIDTH];
    aluop     = insn[ALU_ALU_OPCODE_LSB +: ALUOP_WIDTH];
    reset_reg = insn[ALU_RESET_REG_LSB];
    last      = last_q;
    lane_last = (lane == 32'(InsnPerBeat - 1)) || last;
    target    = STAGE_COMPUTE;
    dec_err   = ERR_NONE;
    unique case (opcode)
      OPCODE_WIDTH'(OPCODE_LOAD): begin
        if (mtype == MEMTYPE_WIDTH'(MEM_ID_INP) || mtype == MEMTYPE_WIDTH'(MEM_ID_WGT)) begin
          target = STAGE_LOAD;
          if (pop_prev || push_prev) dec_err = ERR_MEM_TYPE;
        end else if (mtype == MEMTYPE_WIDTH'(MEM_ID_UOP) || mtype == MEMTYPE_WIDTH'(MEM_ID_ACC) ||
                     mtype == MEMTYPE_WIDTH'(MEM_ID_ACC_8BIT)) begin
          target = STAGE_COMPUTE;
        end else begin
          dec_err = ERR_MEM_TYPE;
        end
      end
      OPCODE_WIDTH'(OPCODE_STORE): begin
        target = STAGE_STORE;
        if (mtype != MEMTYPE_WIDTH'(MEM_ID_OUT)) dec_err = ERR_MEM_TYPE;
        else if (pop_next || push_next) dec_err = ERR_MEM_TYPE;
      end
      OPCODE_WIDTH'(OPCODE_GEMM): target = STAGE_COMPUTE;
      OPCODE_WIDTH'(OPCODE_ALU): begin
        target = STAGE_COMPUTE;
        if (aluop > ALUOP_WIDTH'(ALU_OPCODE_MUL) || reset_reg) dec_err = ERR_ALU_OP;
      end
      OPCODE_WIDTH'(OPCODE_FINISH): begin
        target = STAGE_COMPUTE;
        if (!last || (insn[INSN_WIDTH-1:3] != '0)) dec_err = ERR_FINISH;
      end
      default: dec_err = ERR_OPCODE;
    endcase
    if (dec_err == ERR_NONE && last && opcode != OPCODE_WIDTH'(OPCODE_FINISH)) dec_err = ERR_FINISH;
    unique case (target)
      STAGE_LOAD:    tgt_ready = ld_ready_i;
      STAGE_COMPUTE: tgt_ready = cp_ready_i;
      STAGE_STORE:   tgt_ready = st_ready_i;
      default:       tgt_ready = 1'b0;  // no stage has this id
    endcase
    route = act_q && !halt_i && (err_q == ERR_NONE) && bf_valid && more_q &&
            (dec_err == ERR_NONE) && tgt_ready;
  end

  assign bf_pop     = route && lane_last;
  assign q_data_o   = {idx_q, insn};
  assign ld_valid_o = route && (target == STAGE_LOAD);
  assign cp_valid_o = route && (target == STAGE_COMPUTE);
  assign st_valid_o = route && (target == STAGE_STORE);

  always_comb begin
    act_d       = act_q;
    count_d     = count_q;
    base_d      = base_q;
    req_addr_d  = req_addr_q;
    req_rem_d   = req_rem_q;
    rq_valid_d  = rq_valid_q;
    rq_bytes_d  = rq_bytes_q;
    rq_n_d      = rq_n_q;
    rq_beats_d  = rq_beats_q;
    idx_d       = idx_q;
    lane_d      = lane_q;
    last_d      = last_q;
    more_d      = more_q;
    cred_d      = cred_q;
    err_d       = err_q;
    err_idx_d   = err_idx_q;
    if (start_i) begin
      act_d      = 1'b1;
      count_d    = insn_count_i;
      base_d     = insn_base_i;
      req_addr_d = insn_base_i;
      req_rem_d  = insn_count_i;
      rq_valid_d = 1'b0;
      idx_d      = '0;
      lane_d     = LaneW'(insn_base_i >> LogInsn);
      last_d     = (insn_count_i == IdxW'(1));
      more_d     = (insn_count_i != '0);
      cred_d     = '0;
      err_d      = ERR_NONE;
      err_idx_d  = '0;
      if (insn_count_i == '0) begin
        err_d = ERR_FINISH;
      end else if (insn_base_i[LogInsn-1:0] != '0) begin
        err_d = ERR_ALIGN;
      end
    end else begin
      if (req_hs) begin
        rq_valid_d = 1'b0;
        req_addr_d = req_addr_q + Aw'(rq_bytes_q);
        req_rem_d  = req_rem_q - rq_n_q;
      end else if (!rq_valid_q) begin
        rq_valid_d = req_ok;
        rq_bytes_d = 32'(req_bytes);
        rq_n_d     = req_n;
        rq_beats_d = CredW'(req_beats);
      end
      cred_d = cred_q + (req_hs ? rq_beats_q : '0) - CredW'(bf_pop);
      if (route) begin
        idx_d  = idx_q + IdxW'(1);
        lane_d = lane_q + LaneW'(1);
        last_d = (idx_q + IdxW'(2) == count_q);
        more_d = !last_q;
      end
      if (act_q && !halt_i && err_q == ERR_NONE) begin
        if (r_valid_i && r_err_i) begin
          err_d     = ERR_AXI_RD;
          err_idx_d = idx_q;
        end else if (bf_valid && idx_q < count_q && dec_err != ERR_NONE) begin
          err_d     = dec_err;
          err_idx_d = idx_q;
        end
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      act_q      <= 1'b0;
      count_q    <= '0;
      base_q     <= '0;
      req_addr_q <= '0;
      req_rem_q  <= '0;
      rq_valid_q <= 1'b0;
      rq_bytes_q <= '0;
      rq_n_q     <= '0;
      rq_beats_q <= '0;
      idx_q      <= '0;
      lane_q     <= '0;
      last_q     <= 1'b0;
      more_q     <= 1'b0;
      cred_q     <= '0;
      err_q      <= ERR_NONE;
      err_idx_q  <= '0;
    end else begin
      act_q      <= act_d;
      count_q    <= count_d;
      base_q     <= base_d;
      req_addr_q <= req_addr_d;
      req_rem_q  <= req_rem_d;
      rq_valid_q <= rq_valid_d;
      rq_bytes_q <= rq_bytes_d;
      rq_n_q     <= rq_n_d;
      rq_beats_q <= rq_beats_d;
      idx_q      <= idx_d;
      lane_q     <= lane_d;
      last_q     <= last_d;
      more_q     <= more_d;
      cred_q     <= cred_d;
      err_q      <= err_d;
      err_idx_q  <= err_idx_d;
    end
  end

`ifndef SYNTHESIS
`include "vta_assert.svh"
  `VTA_ASSERT_ARMED
  // ---------------------------------------------------------------- assertions (simulation)
  // credits: fetch only requests what its beat buffer can hold, so it never stalls R
  a_beats_accepted: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF)
      r_valid_i |-> r_ready_o)
    else $error("fetch: a read beat found the beat buffer full");
  // the registered request address and router flags are those the instruction indices give
  a_req_regs: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF)
      act_q |-> req_addr_q == base_q + (Aw'(count_q - req_rem_q) << LogInsn) &&
                last_q == (idx_q + IdxW'(1) == count_q) && more_q == (idx_q < count_q))
    else $error("fetch: request or router registers out of step with the indices");
  a_one_route: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF)
      $onehot0({ld_valid_o, cp_valid_o, st_valid_o}))
    else $error("fetch: one instruction routed to two queues");
`endif

  assign done_o    = act_q && !more_q;
  assign err_o     = err_q;
  assign err_idx_o = err_idx_q;

endmodule : vta_fetch
