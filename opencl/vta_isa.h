/*
 * What both OpenCL kernels of the VTA core share: vta.cl (one work-item, upstream's FPGA ABI) and
 * vta_group.cl (one work-group per program, for GPUs and CPUs).
 *
 *   - the scratch layout (control block, then the uop, inp, wgt, acc and out buffers);
 *   - instruction and micro-op fields, and the decoding and checks of LOAD, STORE, GEMM and ALU;
 *   - the stage / token machine of docs/isa.md section 3 with the policy of vtabench.spec.tokens
 *     (fetch as far as the command queues allow, then load, compute, store each start
 *     instructions until blocked; repeat), as an iterator: machine_next() starts the next
 *     instruction, the kernel executes it, machine_retire() counts it and owes its pushes;
 *   - the work budget (CTRL_BUDGET): what an instruction costs, taken before it executes;
 *   - the ALU arithmetic.
 *
 * Needs vta_config.h and vta_contracts.h (the driver prepends all three headers; vendor flows
 * pass -I opencl/gen/NAME -I opencl/gen -I opencl).
 */
#ifndef VTA_ISA_H_
#define VTA_ISA_H_

#ifndef VTA_CONFIG_H_
#include "vta_config.h"
#endif
#ifndef VTA_CONTRACTS_H_
#include "vta_contracts.h"
#endif

/* ------------------------------------------------------------------------------------------ */
/* Scratch layout (the driver mirrors it): the control block (CTRL_* words, vta_contracts.h), */
/* then the five buffers.                                                                     */
/* ------------------------------------------------------------------------------------------ */
#define UOP_BUF_BYTES ((ulong)VTA_UOP_DEPTH * VTA_UOP_ELEM_BYTES)
#define INP_BUF_BYTES ((ulong)VTA_INP_DEPTH * VTA_INP_ELEM_BYTES)
#define WGT_BUF_BYTES ((ulong)VTA_WGT_DEPTH * VTA_WGT_ELEM_BYTES)
#define ACC_BUF_BYTES ((ulong)VTA_ACC_DEPTH * VTA_ACC_ELEM_BYTES)
#define OUT_BUF_BYTES ((ulong)VTA_OUT_DEPTH * VTA_OUT_ELEM_BYTES)
/* Offsets in scratch: control block, then uop, inp, wgt, acc, out (each a multiple of 4 bytes). */
#define OFF_UOP ((ulong)VTA_CTRL_BYTES)
#define OFF_INP (OFF_UOP + UOP_BUF_BYTES)
#define OFF_WGT (OFF_INP + INP_BUF_BYTES)
#define OFF_ACC (OFF_WGT + WGT_BUF_BYTES)
#define OFF_OUT (OFF_ACC + ACC_BUF_BYTES)
#define SCRATCH_BYTES (OFF_OUT + OUT_BUF_BYTES)
#define ACC_LANES (VTA_BATCH * VTA_BLOCK_OUT) /* int32 lanes of an acc element (int8 of out) */

/* ------------------------------------------------------------------------------------------ */
/* Instruction and micro-op fields (positions from the generated header; no field straddles    */
/* bit 64).                                                                                    */
/* ------------------------------------------------------------------------------------------ */
#define MASK(width) ((1ul << (width)) - 1ul)
#define FIELD(w0, w1, lsb, width)                                                               \
  ((uint)((((lsb) >= 64u) ? ((w1) >> (((lsb) - 64u) & 63u)) : ((w0) >> ((lsb) & 63u))) &      \
          MASK(width)))
#define F(w0, w1, NAME) FIELD(w0, w1, VTA_##NAME##_LSB, VTA_##NAME##_WIDTH)
#define UOP_FIELD(uop, NAME)                                                                    \
  (((uop) >> VTA_UOP_##NAME##_LSB) & (uint)MASK(VTA_UOP_##NAME##_WIDTH))

typedef struct {
  uint error;
  uint error_index;
  uint error_arg;
} vta_err_t;

static void set_error(vta_err_t *e, uint code, uint index, uint arg) {
  if (e->error == VTA_ERR_NONE) {
    e->error = code;
    e->error_index = index;
    e->error_arg = arg;
  }
}

/* e->error of a run whose budget ran out: outside the 8-bit error codes, so that it stops the
 * machine as an error does; ctrl_report writes it as status TIMEOUT with ERROR 0. */
#define VTA_STOP_BUDGET 0x100u

static int stage_of(ulong w0) {
  uint op = F(w0, 0ul, MEM_OPCODE);
  if (op == VTA_OPCODE_STORE) return STAGE_STORE;
  if (op == VTA_OPCODE_LOAD) {
    uint mt = F(w0, 0ul, MEM_MEMORY_TYPE);
    if (mt == VTA_MEM_ID_INP || mt == VTA_MEM_ID_WGT) return STAGE_LOAD;
  }
  return STAGE_COMPUTE;
}

/* Stream index of the first instruction at or after i of stage s (insn_count: there is none). */
static uint next_of_stage(__global const ulong *stream, uint insn_count, uint i, int s) {
  while (i < insn_count && stage_of(stream[2ul * i]) != s) ++i;
  return i;
}

/* Bit q set: the instruction pops / pushes token queue q (the table of docs/isa.md section 3;
 * flags the table marks "must be 0" are ignored, validation rejects them). */
static uint pop_mask(int stage, ulong w0) {
  uint prev = F(w0, 0ul, MEM_POP_PREV_DEP), next = F(w0, 0ul, MEM_POP_NEXT_DEP);
  if (stage == STAGE_LOAD) return next ? (1u << Q_G2L) : 0u;
  if (stage == STAGE_COMPUTE) return (prev ? (1u << Q_L2G) : 0u) | (next ? (1u << Q_S2G) : 0u);
  return prev ? (1u << Q_G2S) : 0u;
}

static uint push_mask(int stage, ulong w0) {
  uint prev = F(w0, 0ul, MEM_PUSH_PREV_DEP), next = F(w0, 0ul, MEM_PUSH_NEXT_DEP);
  if (stage == STAGE_LOAD) return next ? (1u << Q_L2G) : 0u;
  if (stage == STAGE_COMPUTE) return (prev ? (1u << Q_G2L) : 0u) | (next ? (1u << Q_G2S) : 0u);
  return prev ? (1u << Q_S2G) : 0u;
}

/* ------------------------------------------------------------------------------------------ */
/* The stage / token machine. Every instruction executes at the moment the machine starts it, */
/* so a kernel that executes in machine order gives fsim's result bit for bit on every        */
/* program, racy ones included.                                                               */
/* ------------------------------------------------------------------------------------------ */
typedef struct {
  uint tokens[4];
  uint fetched[3]; /* instructions fetch routed to each stage */
  uint started[3]; /* instructions each stage has started */
  uint next_i[3];  /* stream index of each stage's next instruction to start */
  uint owed[3];    /* pushes a stage still owes (bit q: token queue q) */
  uint owner[3];   /* the instruction that owes them */
  uint n_stage[3]; /* instructions each stage executed */
  uint fetch, executed, passes;
  int stage;    /* the stage to try next in this pass; 3: the pass is over */
  int progress; /* something moved in this pass */
} vta_machine_t;

static void machine_init(vta_machine_t *m, __global const ulong *stream, uint insn_count) {
  for (int q = 0; q < 4; ++q) m->tokens[q] = 0u;
  for (int s = 0; s < 3; ++s) {
    m->fetched[s] = m->started[s] = m->owed[s] = m->owner[s] = m->n_stage[s] = 0u;
    m->next_i[s] = next_of_stage(stream, insn_count, 0u, s);
  }
  m->fetch = m->executed = m->passes = 0u;
  m->stage = 3;
  m->progress = 1;
}

/* Start the next instruction: returns 1 with its stream index and stage (its tokens popped), or
 * 0 when no stage can move (the program ended or deadlocked: see machine_check_end). */
static int machine_next(vta_machine_t *m, __global const ulong *stream, uint insn_count,
                        uint *index, int *stage) {
  for (;;) {
    if (m->stage == 3) { /* a new pass: fetch as far as the command queues allow */
      if (!m->progress) return 0;
      m->progress = 0;
      ++m->passes;
      while (m->fetch < insn_count) {
        int st = stage_of(stream[2ul * m->fetch]);
        if (m->fetched[st] - m->started[st] >= VTA_CMD_QUEUE_DEPTH) break;
        ++m->fetched[st];
        ++m->fetch;
        m->progress = 1;
      }
      m->stage = 0;
    }
    int s = m->stage;
    if (m->owed[s]) {
      uint still = 0u;
      for (int q = 0; q < 4; ++q) {
        if (m->owed[s] & (1u << q)) {
          if (m->tokens[q] < VTA_TOKEN_QUEUE_DEPTH) ++m->tokens[q];
          else still |= 1u << q;
        }
      }
      if (still != m->owed[s]) m->progress = 1;
      m->owed[s] = still;
      if (still) {
        ++m->stage;
        continue;
      }
    }
    if (m->started[s] >= m->fetched[s]) {
      ++m->stage;
      continue;
    }
    uint i = m->next_i[s];
    uint need = pop_mask(s, stream[2ul * i]);
    int ready = 1;
    for (int q = 0; q < 4; ++q)
      if ((need & (1u << q)) && m->tokens[q] == 0u) ready = 0;
    if (!ready) {
      ++m->stage;
      continue;
    }
    for (int q = 0; q < 4; ++q)
      if (need & (1u << q)) --m->tokens[q];
    ++m->started[s];
    /* Advance to this stage's next instruction in the stream. */
    m->next_i[s] = next_of_stage(stream, insn_count, i + 1u, s);
    m->progress = 1;
    *index = i;
    *stage = s;
    return 1;
  }
}

/* The instruction machine_next started has executed: count it and owe its pushes. */
static void machine_retire(vta_machine_t *m, int s, uint i, ulong w0) {
  ++m->executed;
  ++m->n_stage[s];
  uint push = push_mask(s, w0);
  if (push) {
    m->owed[s] = push;
    m->owner[s] = i;
  }
}

/* After the machine stopped without an error: a deadlock names the earliest instruction that
 * waits forever, and on which queue; a stream that ran out without FINISH is an error too. */
static void machine_check_end(const vta_machine_t *m, __global const ulong *stream,
                              uint insn_count, int finished, vta_err_t *e) {
  if (e->error == VTA_ERR_NONE &&
      (m->executed < insn_count || m->owed[0] || m->owed[1] || m->owed[2])) {
    uint best = 0xFFFFFFFFu, arg = 0u;
    for (int s = 0; s < 3; ++s) {
      if (m->owed[s]) {
        if (m->owner[s] < best) {
          best = m->owner[s];
          arg = VTA_ERROR_ARG_PUSH + (uint)(31 - clz(m->owed[s] & (uint)(-(int)m->owed[s])));
        }
      } else if (m->started[s] < m->fetched[s] && m->next_i[s] < best) {
        uint need = pop_mask(s, stream[2ul * m->next_i[s]]);
        uint q = 0u;
        while (q < 4u && !((need & (1u << q)) && m->tokens[q] == 0u)) ++q;
        best = m->next_i[s];
        arg = q;
      }
    }
    set_error(e, VTA_ERR_DEADLOCK, best, arg);
  }
  if (e->error == VTA_ERR_NONE && !finished) set_error(e, VTA_ERR_FINISH, insn_count, 0u);
}

/* ------------------------------------------------------------------------------------------ */
/* Control block: the build's identity (written on every launch; the driver's probe checks it) */
/* and the end of a run (status written last).                                                 */
/* ------------------------------------------------------------------------------------------ */
static void ctrl_identify(__global uint *ctrl) {
  ctrl[CTRL_CONFIG_ID] = VTA_CONFIG_ID;
  ctrl[CTRL_SCRATCH_BYTES] = (uint)SCRATCH_BYTES;
  ctrl[CTRL_ABI_VERSION] = VTA_ABI_VERSION;
}

static void ctrl_report(__global uint *ctrl, const vta_machine_t *m, const vta_err_t *e,
                        ulong gemm_iters, ulong alu_iters, ulong work) {
  int timeout = e->error == VTA_STOP_BUDGET;
  ctrl[CTRL_ERROR] = timeout ? VTA_ERR_NONE : e->error;
  ctrl[CTRL_ERROR_INDEX] = e->error_index;
  ctrl[CTRL_ERROR_ARG] = e->error_arg;
  ctrl[CTRL_EXECUTED] = m->executed;
  ctrl[CTRL_N_LOAD] = m->n_stage[STAGE_LOAD];
  ctrl[CTRL_N_COMPUTE] = m->n_stage[STAGE_COMPUTE];
  ctrl[CTRL_N_STORE] = m->n_stage[STAGE_STORE];
  ctrl[CTRL_GEMM_ITERS_LO] = (uint)gemm_iters;
  ctrl[CTRL_GEMM_ITERS_HI] = (uint)(gemm_iters >> 32);
  ctrl[CTRL_ALU_ITERS_LO] = (uint)alu_iters;
  ctrl[CTRL_ALU_ITERS_HI] = (uint)(alu_iters >> 32);
  ctrl[CTRL_PASSES] = m->passes;
  ctrl[CTRL_WORK_LO] = (uint)work;
  ctrl[CTRL_WORK_HI] = (uint)(work >> 32);
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  ctrl[CTRL_STATUS] = timeout                      ? VTA_STATUS_TIMEOUT
                      : e->error == VTA_ERR_NONE ? VTA_STATUS_DONE
                                                 : VTA_STATUS_ERROR;
}

/* ------------------------------------------------------------------------------------------ */
/* The work budget: a kernel cannot be interrupted from the host, so it stops itself when the */
/* work the host allowed (CTRL_BUDGET, derived from the run's timeout) is spent.               */
/* ------------------------------------------------------------------------------------------ */
typedef struct {
  ulong left, used;
} vta_budget_t;

static void budget_init(vta_budget_t *b, __global const uint *ctrl) {
  b->left = (ulong)ctrl[CTRL_BUDGET_LO] | ((ulong)ctrl[CTRL_BUDGET_HI] << 32);
  b->used = 0ul;
}

/* The work units of an instruction (docs/contracts.md, ocl_control): 1, plus the 32-bit words
 * of a LOAD's / STORE's SRAM elements, plus a GEMM's / ALU's micro-op iterations times their
 * lanes times BLOCK_IN (a GEMM that is not a reset: its multiply-adds) or 4 (ALU, reset: each
 * lane reads and writes 32-bit words), at least VTA_ITER_WORK an iteration (in the order the
 * iterations of a loop that reuses its destination must keep, an iteration costs a memory
 * round trip whatever its lanes). Fields are read raw: an illegal one is the error of the
 * decode that follows; the product stays below 2^58 for every field value. */
static ulong insn_work(ulong w0, ulong w1) {
  uint op = F(w0, w1, MEM_OPCODE);
  if (op == VTA_OPCODE_LOAD || op == VTA_OPCODE_STORE) {
    uint mt = F(w0, w1, MEM_MEMORY_TYPE);
    uint elem = mt == VTA_MEM_ID_UOP   ? VTA_UOP_ELEM_BYTES
                : mt == VTA_MEM_ID_WGT ? VTA_WGT_ELEM_BYTES
                : mt == VTA_MEM_ID_INP ? VTA_INP_ELEM_BYTES
                : mt == VTA_MEM_ID_OUT ? VTA_OUT_ELEM_BYTES
                                       : VTA_ACC_ELEM_BYTES;
    ulong rows = (ulong)F(w0, w1, MEM_Y_PAD_0) + F(w0, w1, MEM_Y_SIZE) + F(w0, w1, MEM_Y_PAD_1);
    ulong row = (ulong)F(w0, w1, MEM_X_PAD_0) + F(w0, w1, MEM_X_SIZE) + F(w0, w1, MEM_X_PAD_1);
    return 1ul + rows * row * ((elem + 3u) / 4u);
  }
  if (op == VTA_OPCODE_GEMM || op == VTA_OPCODE_ALU) {
    uint bgn = F(w0, w1, GEMM_UOP_BGN), end = F(w0, w1, GEMM_UOP_END);
    int mac = op == VTA_OPCODE_GEMM && !F(w0, w1, GEMM_RESET_REG);
    ulong lanes = max((ulong)ACC_LANES * (mac ? VTA_BLOCK_IN : 4u), (ulong)VTA_ITER_WORK);
    ulong iters = (ulong)F(w0, w1, GEMM_ITER_OUT) * F(w0, w1, GEMM_ITER_IN) *
                  (end > bgn ? (ulong)(end - bgn) : 1ul);
    return 1ul + iters * lanes;
  }
  return 1ul;
}

/* Take the work of instruction index from the budget before it executes; when it is more than
 * what is left, the run stops there (status TIMEOUT) and this returns 0. */
static int budget_take(vta_budget_t *b, ulong w0, ulong w1, uint index, vta_err_t *e) {
  ulong work = insn_work(w0, w1);
  if (work > b->left) {
    set_error(e, VTA_STOP_BUDGET, index, 0u);
    return 0;
  }
  b->left -= work;
  b->used += work;
  return 1;
}

/* ------------------------------------------------------------------------------------------ */
/* LOAD / STORE: the MEM fields, each memory type's element sizes and depth, range checks.     */
/* ------------------------------------------------------------------------------------------ */
typedef struct {
  uint mt, sram_base, dram_base, y_size, x_size, x_stride;
} vta_mem_t;

static void decode_mem(ulong w0, ulong w1, vta_mem_t *m) {
  m->mt = F(w0, w1, MEM_MEMORY_TYPE);
  m->sram_base = F(w0, w1, MEM_SRAM_BASE);
  m->dram_base = F(w0, w1, MEM_DRAM_BASE);
  m->y_size = F(w0, w1, MEM_Y_SIZE);
  m->x_size = F(w0, w1, MEM_X_SIZE);
  m->x_stride = F(w0, w1, MEM_X_STRIDE);
}

/* SRAM elements sram_base .. sram_base + sram_count - 1 must lie in a buffer of depth elements
 * (else error sram_err); the last DRAM element touched, dram_base + (y_size - 1) * x_stride +
 * x_size - 1, must end within dram_bytes. Returns 1 when both hold, else sets the error and
 * returns 0. */
static int check_ranges(uint index, const vta_mem_t *m, ulong sram_count, uint depth,
                        uint sram_err, uint dram_elem, ulong dram_bytes, vta_err_t *e) {
  if ((ulong)m->sram_base + sram_count > (ulong)depth) {
    set_error(e, sram_err, index, m->sram_base);
    return 0;
  }
  ulong last = (ulong)m->dram_base + (ulong)(m->y_size - 1u) * m->x_stride + (m->x_size - 1u);
  if ((last + 1ul) * dram_elem > dram_bytes) {
    set_error(e, VTA_ERR_DRAM_RANGE, index, m->dram_base);
    return 0;
  }
  return 1;
}

/* A LOAD: the MEM fields, the padding, the memory type's element sizes and buffer depth. */
typedef struct {
  vta_mem_t m;
  uint y_pad_0, y_pad_1, x_pad_0, x_pad_1;
  uint row, rows;                  /* SRAM elements per row (padding included), rows */
  uint dram_elem, sram_elem, depth; /* bytes of a DRAM and an SRAM element; buffer depth */
  int acc8;                        /* ACC_8BIT: int8 in DRAM, sign-extended into int32 */
} vta_load_t;

/* Decode and check a LOAD. Returns 1 when it moves data, 0 when it is a no-op that only carries
 * tokens (x_size or y_size 0) or has an error (set in e). The memory type is checked first: an
 * illegal one is an error in a no-op too (docs/contracts.md, ERR_MEM_TYPE). */
static int decode_load(uint index, ulong w0, ulong w1, ulong dram_bytes, vta_load_t *l,
                       vta_err_t *e) {
  decode_mem(w0, w1, &l->m);
  l->y_pad_0 = F(w0, w1, MEM_Y_PAD_0);
  l->y_pad_1 = F(w0, w1, MEM_Y_PAD_1);
  l->x_pad_0 = F(w0, w1, MEM_X_PAD_0);
  l->x_pad_1 = F(w0, w1, MEM_X_PAD_1);
  uint mt = l->m.mt;
  l->acc8 = 0;
  if (mt == VTA_MEM_ID_UOP) {
    l->dram_elem = l->sram_elem = VTA_UOP_ELEM_BYTES;
    l->depth = VTA_UOP_DEPTH;
  } else if (mt == VTA_MEM_ID_WGT) {
    l->dram_elem = l->sram_elem = VTA_WGT_ELEM_BYTES;
    l->depth = VTA_WGT_DEPTH;
  } else if (mt == VTA_MEM_ID_INP) {
    l->dram_elem = l->sram_elem = VTA_INP_ELEM_BYTES;
    l->depth = VTA_INP_DEPTH;
  } else if (mt == VTA_MEM_ID_ACC) {
    l->dram_elem = l->sram_elem = VTA_ACC_ELEM_BYTES;
    l->depth = VTA_ACC_DEPTH;
  } else if (mt == VTA_MEM_ID_ACC_8BIT) {
    l->dram_elem = VTA_ACC8_ELEM_BYTES;
    l->sram_elem = VTA_ACC_ELEM_BYTES;
    l->depth = VTA_ACC_DEPTH;
    l->acc8 = 1;
  } else {
    set_error(e, VTA_ERR_MEM_TYPE, index, mt);
    return 0;
  }
  if (l->m.x_size == 0u || l->m.y_size == 0u) return 0;
  l->row = l->x_pad_0 + l->m.x_size + l->x_pad_1;
  l->rows = l->y_pad_0 + l->m.y_size + l->y_pad_1;
  uint sram_err = mt == VTA_MEM_ID_UOP ? VTA_ERR_SRAM_UOP : VTA_ERR_SRAM_LOAD;
  return check_ranges(index, &l->m, (ulong)l->rows * l->row, l->depth, sram_err, l->dram_elem,
                      dram_bytes, e);
}

/* Decode and check a STORE (out buffer -> DRAM, no padding). Returns 1 when it moves data; a
 * memory type other than OUT is an error in a no-op too. */
static int decode_store(uint index, ulong w0, ulong w1, ulong dram_bytes, vta_mem_t *m,
                        vta_err_t *e) {
  decode_mem(w0, w1, m);
  if (m->mt != VTA_MEM_ID_OUT) {
    set_error(e, VTA_ERR_MEM_TYPE, index, m->mt);
    return 0;
  }
  if (m->x_size == 0u || m->y_size == 0u) return 0;
  return check_ranges(index, m, (ulong)m->y_size * m->x_size, VTA_OUT_DEPTH, VTA_ERR_SRAM_STORE,
                      VTA_OUT_ELEM_BYTES, dram_bytes, e);
}

/* ------------------------------------------------------------------------------------------ */
/* GEMM and ALU: two loop levels over the micro-ops uop_bgn .. uop_end - 1.                     */
/* ------------------------------------------------------------------------------------------ */
typedef struct {
  int is_gemm;
  uint reset, uop_bgn, uop_end, iter_out, iter_in;
  uint dst_fo, dst_fi, src_fo, src_fi, wgt_fo, wgt_fi;
  uint alu_op, use_imm;
  int imm;
  uint sram_err; /* the error of an index outside its buffer */
} vta_compute_t;

/* Decode and check a GEMM or ALU. Returns 1 when it may run, 0 on an error (set in e). */
static int decode_compute(uint index, ulong w0, ulong w1, vta_compute_t *c, vta_err_t *e) {
  c->is_gemm = F(w0, w1, GEMM_OPCODE) == VTA_OPCODE_GEMM;
  c->sram_err = c->is_gemm ? VTA_ERR_SRAM_GEMM : VTA_ERR_SRAM_ALU;
  c->reset = F(w0, w1, GEMM_RESET_REG);
  c->uop_bgn = F(w0, w1, GEMM_UOP_BGN);
  c->uop_end = F(w0, w1, GEMM_UOP_END);
  c->iter_out = F(w0, w1, GEMM_ITER_OUT);
  c->iter_in = F(w0, w1, GEMM_ITER_IN);
  c->dst_fo = F(w0, w1, GEMM_DST_FACTOR_OUT);
  c->dst_fi = F(w0, w1, GEMM_DST_FACTOR_IN);
  c->wgt_fo = c->wgt_fi = c->alu_op = c->use_imm = 0u;
  c->imm = 0;
  if (c->is_gemm) {
    c->src_fo = F(w0, w1, GEMM_SRC_FACTOR_OUT);
    c->src_fi = F(w0, w1, GEMM_SRC_FACTOR_IN);
    c->wgt_fo = F(w0, w1, GEMM_WGT_FACTOR_OUT);
    c->wgt_fi = F(w0, w1, GEMM_WGT_FACTOR_IN);
  } else {
    c->src_fo = F(w0, w1, ALU_SRC_FACTOR_OUT);
    c->src_fi = F(w0, w1, ALU_SRC_FACTOR_IN);
    c->alu_op = F(w0, w1, ALU_ALU_OPCODE);
    c->use_imm = F(w0, w1, ALU_USE_IMM);
    uint raw = F(w0, w1, ALU_IMM);
    c->imm = (int)(raw << (32u - VTA_ALU_IMM_WIDTH)) >> (32u - VTA_ALU_IMM_WIDTH);
    if (c->alu_op > VTA_ALU_OPCODE_MUL) {
      set_error(e, VTA_ERR_ALU_OP, index, c->alu_op);
      return 0;
    }
  }
  if (c->uop_end > VTA_UOP_DEPTH || c->uop_bgn > c->uop_end) {
    set_error(e, VTA_ERR_SRAM_UOP, index, c->uop_end);
    return 0;
  }
  return 1;
}

/* ALU arithmetic: int32 semantics computed on uint (wrap-around without undefined behaviour). */
static int alu_shr(int a, int s) {
  /* Decision (shift amounts): saturate the full signed amount. */
  if (s >= 0) return a >> (s > 31 ? 31 : s);
  if (s > -32) return (int)((uint)a << (uint)(-s));
  return 0;
}

static int alu_apply(uint op, int a, int b) {
  if (op == VTA_ALU_OPCODE_MIN) return a < b ? a : b;
  if (op == VTA_ALU_OPCODE_MAX) return a > b ? a : b;
  if (op == VTA_ALU_OPCODE_ADD) return (int)((uint)a + (uint)b);
  if (op == VTA_ALU_OPCODE_MUL) return (int)((uint)a * (uint)b);
  return alu_shr(a, b); /* VTA_ALU_OPCODE_SHR (the opcode was checked before the loop) */
}

#endif /* VTA_ISA_H_ */
