/*
 * vtabench VTA core as one OpenCL C 1.2 single-work-item kernel.
 *
 * Implements the whole ISA of docs/isa.md (the normative spec; the golden model is vtabench.fsim):
 * LOAD (UOP, WGT, INP, ACC, ACC_8BIT, with zero padding), STORE (OUT), GEMM (with reset), ALU (MIN,
 * MAX, ADD, SHR with the saturating shift rule, MUL), FINISH, and the three in-order stages with
 * their four dependency-token queues. Instructions do NOT simply run in stream order: a compute
 * instruction that pops a token pushed by a later LOAD runs after that LOAD. The kernel runs the
 * spec's stage / token machine with the same fixed policy as vtabench.spec.tokens (eager
 * round-robin: fetch as far as the command queues allow, then load, compute, store each run until
 * blocked; repeat), so every program - also one whose tokens leave a race - gives fsim's result
 * bit for bit.
 *
 * This is the kernel for FPGA flows (upstream's ABI); GPUs and CPUs run vta_group.cl, one
 * work-group per program. What both share (scratch layout, decoding, the stage / token machine,
 * the ALU arithmetic) is in vta_isa.h.
 *
 * Configuration: the VTA_* macros of the generated header (vtabench.hwgen.constants.c_header; committed
 * copies in opencl/gen/NAME/vta_config.h). Error codes, the control block and the stage / queue
 * ids: the generated opencl/gen/vta_contracts.h (docs/contracts.md). The driver prepends both
 * headers and vta_isa.h; vendor flows pass -I opencl/gen/NAME -I opencl/gen (vta_isa.h is found
 * beside this file).
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
 *     arrays of the kernel, which aoc / v++ map to on-chip RAM. No control block in this mode,
 *     hence no work budget: the host's timeout cannot stop a runaway program there.
 */

#ifndef VTA_ISA_H_
#include "vta_isa.h"
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
/* LOAD: 2-D copy with zero padding into the buffer of the memory type.                         */
/* ------------------------------------------------------------------------------------------ */
static void do_load(uint index, ulong w0, ulong w1, ulong dram_bytes, __global uchar *uops,
                    __global uchar *biases, __global uchar *inputs, __global uchar *weights,
                    SRAM uchar *uop_buf, SRAM uchar *inp_buf, SRAM uchar *wgt_buf,
                    SRAM uchar *acc_buf, vta_err_t *e) {
  vta_load_t l;
  if (!decode_load(index, w0, w1, dram_bytes, &l, e)) return;
  uint mt = l.m.mt, sram_base = l.m.sram_base, dram_base = l.m.dram_base;
  uint y_size = l.m.y_size, x_size = l.m.x_size, x_stride = l.m.x_stride;
  uint y_pad_0 = l.y_pad_0, x_pad_0 = l.x_pad_0, x_pad_1 = l.x_pad_1;
  uint row = l.row, rows = l.rows, dram_elem = l.dram_elem, sram_elem = l.sram_elem;
  int acc8 = l.acc8;
  __global uchar *dram = mt == VTA_MEM_ID_UOP   ? uops
                         : mt == VTA_MEM_ID_WGT ? weights
                         : mt == VTA_MEM_ID_INP ? inputs
                                                : biases;
  SRAM uchar *sram = mt == VTA_MEM_ID_UOP   ? uop_buf
                     : mt == VTA_MEM_ID_WGT ? wgt_buf
                     : mt == VTA_MEM_ID_INP ? inp_buf
                                            : acc_buf;
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
  if (!decode_store(index, w0, w1, dram_bytes, &m, e)) return;
  for (uint y = 0; y < m.y_size; ++y) {
    copy_out(outputs + ((ulong)m.dram_base + (ulong)y * m.x_stride) * VTA_OUT_ELEM_BYTES,
             out_buf + (ulong)(m.sram_base + y * m.x_size) * VTA_OUT_ELEM_BYTES,
             m.x_size * VTA_OUT_ELEM_BYTES);
  }
}

/* ------------------------------------------------------------------------------------------ */
/* GEMM and ALU: two loop levels over the micro-ops uop_bgn .. uop_end - 1.                       */
/* ------------------------------------------------------------------------------------------ */
static void do_compute(uint index, ulong w0, ulong w1, SRAM uchar *uop_buf, SRAM uchar *inp_buf,
                       SRAM uchar *wgt_buf, SRAM uchar *acc_buf, SRAM uchar *out_buf,
                       ulong *iters, vta_err_t *e) {
  vta_compute_t c;
  if (!decode_compute(index, w0, w1, &c, e)) return;
  int is_gemm = c.is_gemm;
  uint sram_err = c.sram_err, reset = c.reset, uop_bgn = c.uop_bgn, uop_end = c.uop_end;
  uint iter_out = c.iter_out, iter_in = c.iter_in, dst_fo = c.dst_fo, dst_fi = c.dst_fi;
  uint src_fo = c.src_fo, src_fi = c.src_fi, wgt_fo = c.wgt_fo, wgt_fi = c.wgt_fi;
  uint alu_op = c.alu_op, use_imm = c.use_imm;
  int imm = c.imm;
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
        uint a = UOP_FIELD(uop, DST_IDX) + i0 * dst_fo + i1 * dst_fi;
        uint s = UOP_FIELD(uop, SRC_IDX) + i0 * src_fo + i1 * src_fi;
        uint w = UOP_FIELD(uop, WGT_IDX) + i0 * wgt_fo + i1 * wgt_fi;
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
/* The kernel: the stage / token machine of vta_isa.h, one instruction at a time.           */
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
  vta_budget_t b;
  b.left = 0xFFFFFFFFFFFFFFFFul; /* no budget: nowhere to read it from */
  b.used = 0ul;
#else
  /* The driver zeroes the five buffers before each run (reset state). */
  __global uchar *sbytes = (__global uchar *)scratch;
  SRAM uchar *uop_buf = sbytes + OFF_UOP;
  SRAM uchar *inp_buf = sbytes + OFF_INP;
  SRAM uchar *wgt_buf = sbytes + OFF_WGT;
  SRAM uchar *acc_buf = sbytes + OFF_ACC;
  SRAM uchar *out_buf = sbytes + OFF_OUT;
  ulong dram_bytes = (ulong)scratch[CTRL_DRAM_LO] | ((ulong)scratch[CTRL_DRAM_HI] << 32);
  vta_budget_t b;
  budget_init(&b, scratch);
  ctrl_identify(scratch);
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
  ulong gemm_iters = 0ul, alu_iters = 0ul;
  int finished = 0;
  vta_machine_t m;
  machine_init(&m, stream, insn_count);
  uint i;
  int s;
  while (e.error == VTA_ERR_NONE && machine_next(&m, stream, insn_count, &i, &s)) {
    ulong w0 = stream[2ul * i], w1 = stream[2ul * i + 1ul];
    if (!budget_take(&b, w0, w1, i, &e)) break;
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
    machine_retire(&m, s, i, w0);
  }
  machine_check_end(&m, stream, insn_count, finished, &e);
#ifndef VTA_ONCHIP
  ctrl_report(scratch, &m, &e, gemm_iters, alu_iters, b.used);
#endif
}
