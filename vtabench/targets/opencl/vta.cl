/*
 * vtabench VTA core as one OpenCL C 1.2 single-work-item kernel.
 *
 * Implements the whole ISA of docs/isa.md (the normative spec; the golden model is vtabench.fsim):
 * LOAD (UOP, WGT, INP, ACC, ACC_8BIT, with zero padding), STORE (OUT), GEMM (with reset), ALU (MIN,
 * MAX, ADD, SHR with the saturating shift rule, MUL), FINISH, and the three in-order stages with
 * their four dependency-token queues. Instructions do NOT simply run in stream order: a compute
 * instruction that pops a token pushed by a later LOAD runs after that LOAD. The kernel runs the
 * spec's stage / token machine with the same fixed policy as vtabench.schedule (eager round-robin:
 * fetch as far as the command queues allow, then load, compute, store each run until blocked;
 * repeat), so every program - also one whose tokens leave a race - gives fsim's result bit for bit.
 *
 * Configuration: the VTA_* macros of the generated header (vtabench.codegen.c_header; committed
 * copies in opencl/gen/NAME/vta_config.h). Error codes, the control block and the stage / queue
 * ids: the generated opencl/gen/vta_contracts.h (docs/contracts.md). The driver prepends both
 * headers; vendor flows pass -I opencl/gen/NAME -I opencl/gen.
 *
 * ABI (docs/opencl.md): upstream's Intel OpenCL kernel signature
 *   vta_core(uint insn_count, uint insns_offset, insns, uops, biases, inputs, weights, outputs)
 * with every pointer at the start of one device buffer (the device memory image); dram_base
 * fields are element indices relative to the pointer of their memory type (uops: UOP, weights:
 * WGT, inputs: INP, biases: ACC and ACC_8BIT, outputs: OUT STORE), instructions start at
 * insns + 16 * insns_offset bytes. Where the on-chip buffers live:
 *   - default (GPUs, CPUs): a ninth argument `scratch`, a __global region (the driver puts it in
 *     the same buffer, after the device memory) holding a control block and the five buffers;
 *   - -DVTA_ONCHIP (FPGA flows): exactly upstream's eight arguments; the buffers are __local
 *     arrays of the kernel, which aoc / v++ map to on-chip RAM. No control block in this mode.
 */

#ifndef VTA_CONFIG_H_
#include "vta_config.h"
#endif
#ifndef VTA_CONTRACTS_H_
#include "vta_contracts.h"
#endif

/* ------------------------------------------------------------------------------------------ */
/* Vendor attributes, only behind #ifdef, with a portable fallback.                             */
/* ------------------------------------------------------------------------------------------ */
#if defined(VTA_INTEL_FPGA)
/* Intel FPGA SDK: a single work-item kernel (task), no NDRange hardware generated. */
#define VTA_KERNEL_ATTR __attribute__((max_global_work_dim(0)))
#elif defined(VTA_XILINX)
#define VTA_KERNEL_ATTR __attribute__((reqd_work_group_size(1, 1, 1)))
#else
#define VTA_KERNEL_ATTR
#endif

#if defined(VTA_XILINX)
#define VTA_PIPELINE __attribute__((xcl_pipeline_loop(1)))
#else
#define VTA_PIPELINE
#endif

#ifdef VTA_ONCHIP
#define SRAM __local
#else
#define SRAM __global
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

/* ------------------------------------------------------------------------------------------ */
/* Instruction fields (positions from the generated header; no field straddles bit 64).         */
/* ------------------------------------------------------------------------------------------ */
#define MASK(width) ((1ul << (width)) - 1ul)
#define FIELD(w0, w1, lsb, width)                                                               \
  ((uint)((((lsb) >= 64u) ? ((w1) >> (((lsb) - 64u) & 63u)) : ((w0) >> ((lsb) & 63u))) &      \
          MASK(width)))
#define F(w0, w1, NAME) FIELD(w0, w1, VTA_##NAME##_LSB, VTA_##NAME##_WIDTH)

typedef struct {
  uint error;
  uint error_index;
  uint error_arg;
} vta_err_t;

static int stage_of(ulong w0) {
  uint op = F(w0, 0ul, MEM_OPCODE);
  if (op == VTA_OPCODE_STORE) return STAGE_STORE;
  if (op == VTA_OPCODE_LOAD) {
    uint mt = F(w0, 0ul, MEM_MEMORY_TYPE);
    if (mt == VTA_MEM_ID_INP || mt == VTA_MEM_ID_WGT) return STAGE_LOAD;
  }
  return STAGE_COMPUTE;
}

/* Stream index of the first instruction at or after i that belongs to stage s (insn_count: none). */
static uint next_of_stage(__global ulong *stream, uint insn_count, uint i, int s) {
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

static void set_error(vta_err_t *e, uint code, uint index, uint arg) {
  if (e->error == VTA_ERR_NONE) {
    e->error = code;
    e->error_index = index;
    e->error_arg = arg;
  }
}

/* ------------------------------------------------------------------------------------------ */
/* Byte copies between DRAM (__global) and SRAM. Element sizes are multiples of 2 bytes; when */
/* both are multiples of 4 the copy moves 32-bit words. Two functions, because an OpenCL      */
/* pointer's address space is part of its type (SRAM is __local under VTA_ONCHIP).            */
/* ------------------------------------------------------------------------------------------ */
static void copy_in(SRAM uchar *dst, __global uchar *src, uint nbytes) {
  if ((nbytes & 3u) == 0u) {
    SRAM uint *d = (SRAM uint *)dst;
    __global uint *s = (__global uint *)src;
    for (uint k = 0; k < (nbytes >> 2); ++k) d[k] = s[k];
  } else {
    for (uint k = 0; k < nbytes; ++k) dst[k] = src[k];
  }
}

static void copy_out(__global uchar *dst, SRAM uchar *src, uint nbytes) {
  if ((nbytes & 3u) == 0u) {
    __global uint *d = (__global uint *)dst;
    SRAM uint *s = (SRAM uint *)src;
    for (uint k = 0; k < (nbytes >> 2); ++k) d[k] = s[k];
  } else {
    for (uint k = 0; k < nbytes; ++k) dst[k] = src[k];
  }
}

static void zero_sram(SRAM uchar *dst, uint nbytes) {
  if ((nbytes & 3u) == 0u) {
    SRAM uint *d = (SRAM uint *)dst;
    for (uint k = 0; k < (nbytes >> 2); ++k) d[k] = 0u;
  } else {
    for (uint k = 0; k < nbytes; ++k) dst[k] = 0;
  }
}

/* ------------------------------------------------------------------------------------------ */
/* LOAD / STORE common part: the MEM fields both use, and the SRAM / DRAM range checks.          */
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

/* ------------------------------------------------------------------------------------------ */
/* LOAD: 2-D copy with zero padding into the buffer of the memory type.                         */
/* ------------------------------------------------------------------------------------------ */
static void do_load(uint index, ulong w0, ulong w1, ulong dram_bytes, __global uchar *uops,
                    __global uchar *biases, __global uchar *inputs, __global uchar *weights,
                    SRAM uchar *uop_buf, SRAM uchar *inp_buf, SRAM uchar *wgt_buf,
                    SRAM uchar *acc_buf, vta_err_t *e) {
  vta_mem_t m;
  decode_mem(w0, w1, &m);
  uint mt = m.mt, sram_base = m.sram_base, dram_base = m.dram_base;
  uint y_size = m.y_size, x_size = m.x_size, x_stride = m.x_stride;
  uint y_pad_0 = F(w0, w1, MEM_Y_PAD_0), y_pad_1 = F(w0, w1, MEM_Y_PAD_1);
  uint x_pad_0 = F(w0, w1, MEM_X_PAD_0), x_pad_1 = F(w0, w1, MEM_X_PAD_1);
  if (x_size == 0u || y_size == 0u) return; /* a no-op that only carries tokens */

  __global uchar *dram;
  SRAM uchar *sram;
  uint dram_elem, sram_elem, depth;
  int acc8 = 0;
  if (mt == VTA_MEM_ID_UOP) {
    dram = uops; sram = uop_buf; dram_elem = sram_elem = VTA_UOP_ELEM_BYTES; depth = VTA_UOP_DEPTH;
  } else if (mt == VTA_MEM_ID_WGT) {
    dram = weights; sram = wgt_buf; dram_elem = sram_elem = VTA_WGT_ELEM_BYTES;
    depth = VTA_WGT_DEPTH;
  } else if (mt == VTA_MEM_ID_INP) {
    dram = inputs; sram = inp_buf; dram_elem = sram_elem = VTA_INP_ELEM_BYTES;
    depth = VTA_INP_DEPTH;
  } else if (mt == VTA_MEM_ID_ACC) {
    dram = biases; sram = acc_buf; dram_elem = sram_elem = VTA_ACC_ELEM_BYTES;
    depth = VTA_ACC_DEPTH;
  } else if (mt == VTA_MEM_ID_ACC_8BIT) {
    dram = biases; sram = acc_buf; dram_elem = VTA_ACC8_ELEM_BYTES; sram_elem = VTA_ACC_ELEM_BYTES;
    depth = VTA_ACC_DEPTH; acc8 = 1;
  } else {
    set_error(e, VTA_ERR_MEM_TYPE, index, mt);
    return;
  }
  uint row = x_pad_0 + x_size + x_pad_1;
  uint rows = y_pad_0 + y_size + y_pad_1;
  uint sram_err = mt == VTA_MEM_ID_UOP ? VTA_ERR_SRAM_UOP : VTA_ERR_SRAM_LOAD;
  if (!check_ranges(index, &m, (ulong)rows * row, depth, sram_err, dram_elem, dram_bytes, e))
    return;
  for (uint y = 0; y < rows; ++y) {
    SRAM uchar *srow = sram + (ulong)(sram_base + y * row) * sram_elem;
    int in_y = (y >= y_pad_0) && (y < y_pad_0 + y_size);
    if (!in_y) {
      zero_sram(srow, row * sram_elem);
      continue;
    }
    zero_sram(srow, x_pad_0 * sram_elem);
    __global uchar *drow = dram + ((ulong)dram_base + (ulong)(y - y_pad_0) * x_stride) * dram_elem;
    SRAM uchar *sdata = srow + (ulong)x_pad_0 * sram_elem;
    if (acc8) {
      /* Sign-extend int8 tiles into int32 accumulators. */
      SRAM int *d = (SRAM int *)sdata;
      __global char *s = (__global char *)drow;
      uint n = x_size * (VTA_BATCH * VTA_BLOCK_OUT);
      for (uint k = 0; k < n; ++k) d[k] = (int)s[k];
    } else {
      copy_in(sdata, drow, x_size * dram_elem);
    }
    zero_sram(srow + (ulong)(x_pad_0 + x_size) * sram_elem, x_pad_1 * sram_elem);
  }
}

/* ------------------------------------------------------------------------------------------ */
/* STORE: out buffer -> DRAM, 2-D, no padding; later rows are written last.                      */
/* ------------------------------------------------------------------------------------------ */
static void do_store(uint index, ulong w0, ulong w1, ulong dram_bytes, __global uchar *outputs,
                     SRAM uchar *out_buf, vta_err_t *e) {
  vta_mem_t m;
  decode_mem(w0, w1, &m);
  if (m.x_size == 0u || m.y_size == 0u) return;
  if (m.mt != VTA_MEM_ID_OUT) {
    set_error(e, VTA_ERR_MEM_TYPE, index, m.mt);
    return;
  }
  if (!check_ranges(index, &m, (ulong)m.y_size * m.x_size, VTA_OUT_DEPTH, VTA_ERR_SRAM_STORE,
                    VTA_OUT_ELEM_BYTES, dram_bytes, e))
    return;
  for (uint y = 0; y < m.y_size; ++y) {
    copy_out(outputs + ((ulong)m.dram_base + (ulong)y * m.x_stride) * VTA_OUT_ELEM_BYTES,
             out_buf + (ulong)(m.sram_base + y * m.x_size) * VTA_OUT_ELEM_BYTES,
             m.x_size * VTA_OUT_ELEM_BYTES);
  }
}

/* ------------------------------------------------------------------------------------------ */
/* ALU helpers: int32 semantics computed on uint (wrap-around without undefined behaviour).      */
/* ------------------------------------------------------------------------------------------ */
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

/* ------------------------------------------------------------------------------------------ */
/* GEMM and ALU: two loop levels over the micro-ops uop_bgn .. uop_end - 1.                       */
/* ------------------------------------------------------------------------------------------ */
static void do_compute(uint index, ulong w0, ulong w1, SRAM uchar *uop_buf, SRAM uchar *inp_buf,
                       SRAM uchar *wgt_buf, SRAM uchar *acc_buf, SRAM uchar *out_buf,
                       ulong *iters, vta_err_t *e) {
  uint op = F(w0, w1, GEMM_OPCODE);
  int is_gemm = (op == VTA_OPCODE_GEMM);
  uint sram_err = is_gemm ? VTA_ERR_SRAM_GEMM : VTA_ERR_SRAM_ALU;
  uint reset = F(w0, w1, GEMM_RESET_REG);
  uint uop_bgn = F(w0, w1, GEMM_UOP_BGN), uop_end = F(w0, w1, GEMM_UOP_END);
  uint iter_out = F(w0, w1, GEMM_ITER_OUT), iter_in = F(w0, w1, GEMM_ITER_IN);
  uint dst_fo = F(w0, w1, GEMM_DST_FACTOR_OUT), dst_fi = F(w0, w1, GEMM_DST_FACTOR_IN);
  uint src_fo, src_fi, wgt_fo = 0u, wgt_fi = 0u, alu_op = 0u, use_imm = 0u;
  int imm = 0;
  if (is_gemm) {
    src_fo = F(w0, w1, GEMM_SRC_FACTOR_OUT);
    src_fi = F(w0, w1, GEMM_SRC_FACTOR_IN);
    wgt_fo = F(w0, w1, GEMM_WGT_FACTOR_OUT);
    wgt_fi = F(w0, w1, GEMM_WGT_FACTOR_IN);
  } else {
    src_fo = F(w0, w1, ALU_SRC_FACTOR_OUT);
    src_fi = F(w0, w1, ALU_SRC_FACTOR_IN);
    alu_op = F(w0, w1, ALU_ALU_OPCODE);
    use_imm = F(w0, w1, ALU_USE_IMM);
    uint raw = F(w0, w1, ALU_IMM);
    imm = (int)(raw << (32u - VTA_ALU_IMM_WIDTH)) >> (32u - VTA_ALU_IMM_WIDTH);
    if (alu_op > VTA_ALU_OPCODE_MUL) {
      set_error(e, VTA_ERR_ALU_OP, index, alu_op);
      return;
    }
  }
  if (uop_end > VTA_UOP_DEPTH || uop_bgn > uop_end) {
    set_error(e, VTA_ERR_SRAM_UOP, index, uop_end);
    return;
  }
  SRAM uint *uops = (SRAM uint *)uop_buf;
  SRAM int *acc = (SRAM int *)acc_buf;
  SRAM char *out = (SRAM char *)out_buf;
  SRAM char *inp = (SRAM char *)inp_buf;
  SRAM char *wgt = (SRAM char *)wgt_buf;
  ulong count = 0;
  for (uint i0 = 0; i0 < iter_out; ++i0) {
    for (uint i1 = 0; i1 < iter_in; ++i1) {
      VTA_PIPELINE
      for (uint u = uop_bgn; u < uop_end; ++u) {
        uint uop = uops[u];
        uint a = ((uop >> VTA_UOP_DST_IDX_LSB) & (uint)MASK(VTA_UOP_DST_IDX_WIDTH)) +
                 i0 * dst_fo + i1 * dst_fi;
        uint s = ((uop >> VTA_UOP_SRC_IDX_LSB) & (uint)MASK(VTA_UOP_SRC_IDX_WIDTH)) +
                 i0 * src_fo + i1 * src_fi;
        uint w = ((uop >> VTA_UOP_WGT_IDX_LSB) & (uint)MASK(VTA_UOP_WGT_IDX_WIDTH)) +
                 i0 * wgt_fo + i1 * wgt_fi;
        if (a >= VTA_ACC_DEPTH) {
          set_error(e, sram_err, index, a);
          return;
        }
        SRAM int *acc_a = acc + (ulong)a * (VTA_BATCH * VTA_BLOCK_OUT);
        SRAM char *out_a = out + (ulong)a * (VTA_BATCH * VTA_BLOCK_OUT);
        if (is_gemm && reset) {
          for (uint k = 0; k < VTA_BATCH * VTA_BLOCK_OUT; ++k) {
            acc_a[k] = 0;
            out_a[k] = 0;
          }
        } else if (is_gemm) {
          if (s >= VTA_INP_DEPTH || w >= VTA_WGT_DEPTH) {
            set_error(e, sram_err, index, s >= VTA_INP_DEPTH ? s : w);
            return;
          }
          SRAM char *inp_s = inp + (ulong)s * (VTA_BATCH * VTA_BLOCK_IN);
          SRAM char *wgt_w = wgt + (ulong)w * (VTA_BLOCK_OUT * VTA_BLOCK_IN);
          for (uint b = 0; b < VTA_BATCH; ++b) {
            for (uint oc = 0; oc < VTA_BLOCK_OUT; ++oc) {
              int sum = 0; /* at most BLOCK_IN * 2^14 in magnitude: no overflow */
#pragma unroll
              for (uint ic = 0; ic < VTA_BLOCK_IN; ++ic)
                sum += (int)inp_s[b * VTA_BLOCK_IN + ic] * (int)wgt_w[oc * VTA_BLOCK_IN + ic];
              uint k = b * VTA_BLOCK_OUT + oc;
              int v = (int)((uint)acc_a[k] + (uint)sum);
              acc_a[k] = v;
              out_a[k] = (char)v;
            }
          }
        } else {
          if (!use_imm && s >= VTA_ACC_DEPTH) {
            set_error(e, sram_err, index, s);
            return;
          }
          SRAM int *acc_s = acc + (ulong)s * (VTA_BATCH * VTA_BLOCK_OUT);
          for (uint k = 0; k < VTA_BATCH * VTA_BLOCK_OUT; ++k) {
            int b = use_imm ? imm : acc_s[k];
            int v = alu_apply(alu_op, acc_a[k], b);
            acc_a[k] = v;
            out_a[k] = (char)v;
          }
        }
        ++count;
      }
    }
  }
  *iters += count;
}

/* ------------------------------------------------------------------------------------------ */
/* The kernel: the stage / token machine of docs/isa.md section 3 (policy of vtabench.schedule). */
/* ------------------------------------------------------------------------------------------ */
__kernel VTA_KERNEL_ATTR void vta_core(uint insn_count, uint insns_offset,
                                       __global ulong *insns, __global uint *uops,
                                       __global int *biases, __global char *inputs,
                                       __global char *weights, __global char *outputs
#ifndef VTA_ONCHIP
                                       , __global uint *scratch
#endif
) {
#ifdef VTA_ONCHIP
  __local uint uop_mem[UOP_BUF_BYTES / 4];
  __local uint inp_mem[INP_BUF_BYTES / 4];
  __local uint wgt_mem[WGT_BUF_BYTES / 4];
  __local uint acc_mem[ACC_BUF_BYTES / 4];
  __local uint out_mem[(OUT_BUF_BYTES + 3) / 4];
  SRAM uchar *uop_buf = (SRAM uchar *)uop_mem;
  SRAM uchar *inp_buf = (SRAM uchar *)inp_mem;
  SRAM uchar *wgt_buf = (SRAM uchar *)wgt_mem;
  SRAM uchar *acc_buf = (SRAM uchar *)acc_mem;
  SRAM uchar *out_buf = (SRAM uchar *)out_mem;
  /* Reset state: every buffer starts at zero (fsim's reset state). */
  zero_sram(uop_buf, (uint)UOP_BUF_BYTES);
  zero_sram(inp_buf, (uint)INP_BUF_BYTES);
  zero_sram(wgt_buf, (uint)WGT_BUF_BYTES);
  zero_sram(acc_buf, (uint)ACC_BUF_BYTES);
  zero_sram(out_buf, (uint)((OUT_BUF_BYTES + 3) / 4 * 4));
  ulong dram_bytes = 0xFFFFFFFFFFFFFFFFul; /* no bound known: the host validated the program */
#else
  /* The driver zeroes the five buffers before each run (reset state). */
  __global uchar *sbytes = (__global uchar *)scratch;
  SRAM uchar *uop_buf = sbytes + OFF_UOP;
  SRAM uchar *inp_buf = sbytes + OFF_INP;
  SRAM uchar *wgt_buf = sbytes + OFF_WGT;
  SRAM uchar *acc_buf = sbytes + OFF_ACC;
  SRAM uchar *out_buf = sbytes + OFF_OUT;
  ulong dram_bytes = (ulong)scratch[CTRL_DRAM_LO] | ((ulong)scratch[CTRL_DRAM_HI] << 32);
  scratch[CTRL_CONFIG_ID] = VTA_CONFIG_ID;
  scratch[CTRL_SCRATCH_BYTES] = (uint)SCRATCH_BYTES;
  scratch[CTRL_ABI_VERSION] = VTA_ABI_VERSION;
  if (insn_count == 0u) { /* probe: report the build's configuration and nothing else */
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    scratch[CTRL_STATUS] = VTA_STATUS_DONE;
    return;
  }
#endif
  __global ulong *stream = insns + 2ul * insns_offset;
  __global uchar *uops_b = (__global uchar *)uops;
  __global uchar *biases_b = (__global uchar *)biases;
  __global uchar *inputs_b = (__global uchar *)inputs;
  __global uchar *weights_b = (__global uchar *)weights;
  __global uchar *outputs_b = (__global uchar *)outputs;

  vta_err_t e;
  e.error = VTA_ERR_NONE;
  e.error_index = 0u;
  e.error_arg = 0u;

  uint tokens[4] = {0u, 0u, 0u, 0u};
  uint fetched[3] = {0u, 0u, 0u}; /* instructions fetch routed to each stage */
  uint started[3] = {0u, 0u, 0u}; /* instructions each stage has started */
  uint next_i[3];                 /* stream index of each stage's next instruction to start */
  uint owed[3] = {0u, 0u, 0u};    /* pushes a stage still owes (bit q: token queue q) */
  uint owner[3] = {0u, 0u, 0u};   /* the instruction that owes them */
  uint n_stage[3] = {0u, 0u, 0u};
  ulong gemm_iters = 0ul, alu_iters = 0ul;
  uint fetch = 0u, executed = 0u, passes = 0u;
  int finished = 0;

  for (int s = 0; s < 3; ++s) next_i[s] = next_of_stage(stream, insn_count, 0u, s);

  while (e.error == VTA_ERR_NONE) {
    int progress = 0;
    ++passes;
    /* Fetch as far as the command queues allow. */
    while (fetch < insn_count) {
      int st = stage_of(stream[2ul * fetch]);
      if (fetched[st] - started[st] >= VTA_CMD_QUEUE_DEPTH) break;
      ++fetched[st];
      ++fetch;
      progress = 1;
    }
    /* Load, compute, store: each runs until it blocks. */
    for (int s = 0; s < 3 && e.error == VTA_ERR_NONE; ++s) {
      while (e.error == VTA_ERR_NONE) {
        if (owed[s]) {
          uint still = 0u;
          for (int q = 0; q < 4; ++q) {
            if (owed[s] & (1u << q)) {
              if (tokens[q] < VTA_TOKEN_QUEUE_DEPTH) ++tokens[q];
              else still |= 1u << q;
            }
          }
          if (still != owed[s]) progress = 1;
          owed[s] = still;
          if (still) break;
        }
        if (started[s] >= fetched[s]) break;
        uint i = next_i[s];
        ulong w0 = stream[2ul * i], w1 = stream[2ul * i + 1ul];
        uint need = pop_mask(s, w0);
        int ready = 1;
        for (int q = 0; q < 4; ++q)
          if ((need & (1u << q)) && tokens[q] == 0u) ready = 0;
        if (!ready) break;
        for (int q = 0; q < 4; ++q)
          if (need & (1u << q)) --tokens[q];
        ++started[s];
        /* Advance to this stage's next instruction in the stream. */
        next_i[s] = next_of_stage(stream, insn_count, i + 1u, s);
        progress = 1;
        /* Execute. */
        uint op = F(w0, w1, MEM_OPCODE);
        if (op == VTA_OPCODE_LOAD) {
          do_load(i, w0, w1, dram_bytes, uops_b, biases_b, inputs_b, weights_b, uop_buf, inp_buf,
                  wgt_buf, acc_buf, &e);
        } else if (op == VTA_OPCODE_STORE) {
          do_store(i, w0, w1, dram_bytes, outputs_b, out_buf, &e);
        } else if (op == VTA_OPCODE_GEMM) {
          do_compute(i, w0, w1, uop_buf, inp_buf, wgt_buf, acc_buf, out_buf, &gemm_iters, &e);
        } else if (op == VTA_OPCODE_ALU) {
          do_compute(i, w0, w1, uop_buf, inp_buf, wgt_buf, acc_buf, out_buf, &alu_iters, &e);
        } else if (op == VTA_OPCODE_FINISH) {
          finished = 1;
        } else {
          set_error(&e, VTA_ERR_OPCODE, i, op);
        }
        ++executed;
        ++n_stage[s];
        uint push = push_mask(s, w0);
        if (push) {
          owed[s] = push;
          owner[s] = i;
        }
      }
    }
    if (!progress) break;
  }

  if (e.error == VTA_ERR_NONE && (executed < insn_count || owed[0] || owed[1] || owed[2])) {
    /* Deadlock: name the earliest instruction that waits forever, and on which queue. */
    uint best = 0xFFFFFFFFu, arg = 0u;
    for (int s = 0; s < 3; ++s) {
      if (owed[s]) {
        if (owner[s] < best) {
          best = owner[s];
          arg = VTA_ERROR_ARG_PUSH + (uint)(31 - clz(owed[s] & (uint)(-(int)owed[s])));
        }
      } else if (started[s] < fetched[s] && next_i[s] < best) {
        uint need = pop_mask(s, stream[2ul * next_i[s]]);
        uint q = 0u;
        while (q < 4u && !((need & (1u << q)) && tokens[q] == 0u)) ++q;
        best = next_i[s];
        arg = q;
      }
    }
    set_error(&e, VTA_ERR_DEADLOCK, best, arg);
  }
  if (e.error == VTA_ERR_NONE && !finished) set_error(&e, VTA_ERR_FINISH, insn_count, 0u);

#ifndef VTA_ONCHIP
  scratch[CTRL_ERROR] = e.error;
  scratch[CTRL_ERROR_INDEX] = e.error_index;
  scratch[CTRL_ERROR_ARG] = e.error_arg;
  scratch[CTRL_EXECUTED] = executed;
  scratch[CTRL_N_LOAD] = n_stage[STAGE_LOAD];
  scratch[CTRL_N_COMPUTE] = n_stage[STAGE_COMPUTE];
  scratch[CTRL_N_STORE] = n_stage[STAGE_STORE];
  scratch[CTRL_GEMM_ITERS_LO] = (uint)gemm_iters;
  scratch[CTRL_GEMM_ITERS_HI] = (uint)(gemm_iters >> 32);
  scratch[CTRL_ALU_ITERS_LO] = (uint)alu_iters;
  scratch[CTRL_ALU_ITERS_HI] = (uint)(alu_iters >> 32);
  scratch[CTRL_PASSES] = passes;
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  scratch[CTRL_STATUS] = e.error == VTA_ERR_NONE ? VTA_STATUS_DONE : VTA_STATUS_ERROR;
#endif
}
