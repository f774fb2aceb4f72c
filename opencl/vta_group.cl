/*
 * vtabench VTA core as an OpenCL C 1.2 work-group kernel, for GPUs and CPUs.
 *
 * The same core as vta.cl (docs/isa.md; vta_isa.h holds what both kernels share), executed by one
 * work-group of VTA_GROUP_SIZE work-items instead of one work-item:
 *
 *   - the stage / token machine runs on work-item 0, which hands each instruction it starts
 *     (decoded, for GEMM and ALU) to the whole group through local memory; control flow is
 *     uniform across the group, and every barrier is at the top level of the instruction loop,
 *     passed by every work-item for every instruction (PoCL 3.0 miscompiles barriers inside
 *     conditionally called functions); what a phase does depends on the instruction;
 *   - the element loops of LOAD, STORE, GEMM and ALU are split across the work-items;
 *   - GEMM and ALU iterations run in parallel only where that cannot change the result, decided
 *     per instruction: a GEMM splits into (iteration, run) units, a run being consecutive
 *     micro-ops with one destination, when no two units share a destination (each unit then adds
 *     its run in micro-op order, so a destination receives exactly its sequential updates); an
 *     ALU runs its iterations in parallel when their destinations are distinct and none reads
 *     another's destination. Otherwise the instruction runs in sequential order, split only
 *     across the lanes of an accumulator (lane k of a destination only ever depends on lane k).
 *     An index outside its buffer also takes the sequential path, which reports it exactly as
 *     vta.cl does;
 *   - buffers: the micro-op buffer in local memory when the build defines VTA_LOCAL_UOP (the
 *     driver does when the device has room), the others in the global scratch buffer; every
 *     buffer is zeroed by the kernel at the start of each program (reset state).
 *
 * Entry points (both with reqd_work_group_size(VTA_GROUP_SIZE)):
 *   vta_core: the ABI of vta.cl's scratch build (nine arguments), one program per launch;
 *     global size = local size = VTA_GROUP_SIZE.
 *   vta_batch(n_programs, progs, mem, ctrl, scratch): one independent program per work-group.
 *     progs: 4 words per program (insn_count, insns_offset in 16-byte units from the program's
 *     base, base byte offset in mem, low and high word): the program sees mem + base as its
 *     device memory (base-0 addresses). ctrl: one control block (VTA_CTRL_BYTES) per program,
 *     CTRL_DRAM_LO/HI written by the host. scratch: one slot of VTA_SLOT_BYTES per work-group;
 *     work-group g runs programs g, g + groups, g + 2 groups, ...
 *
 * Build options: -DVTA_GROUP_SIZE=N (power of two), -DVTA_GEMM_TILE=T (1..8: GEMM iterations of
 * the inner loop one work-item computes when they share weights), -DVTA_LOCAL_UOP, -DVTA_DP4A
 * (NVIDIA: int8 dot products with the dp4a instruction, inline PTX).
 */

#ifndef VTA_ISA_H_
#include "vta_isa.h"
#endif

#ifndef VTA_GROUP_SIZE
#define VTA_GROUP_SIZE 256
#endif
#ifndef VTA_GEMM_TILE
#define VTA_GEMM_TILE 4
#endif
#if VTA_GEMM_TILE < 1 || VTA_GEMM_TILE > 8
#error VTA_GEMM_TILE must be 1 to 8
#endif
#define N_ITEMS VTA_GROUP_SIZE
#define VTA_SLOT_BYTES ((SCRATCH_BYTES + 255ul) / 256ul * 256ul)
#define CTRL_WORDS (VTA_CTRL_BYTES / 4u)
#define GROUP_FENCE (CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)

#ifdef VTA_LOCAL_UOP
#define UOP_SPACE __local
#else
#define UOP_SPACE __global
#endif

#if VTA_UOP_DEPTH < 65536
typedef ushort uop_ix_t;
#else
typedef uint uop_ix_t;
#endif

/* LOAD / STORE move units of unit_t: 16 bytes where every element size and buffer offset
 * allows, else 4 or 2 bytes (elements are at least 2 bytes). */
#define ELEMS_DIVIDE(n)                                                                        \
  (VTA_INP_ELEM_BYTES % (n) == 0 && VTA_WGT_ELEM_BYTES % (n) == 0 &&                          \
   VTA_ACC_ELEM_BYTES % (n) == 0 && VTA_OUT_ELEM_BYTES % (n) == 0 &&                          \
   (VTA_UOP_DEPTH * VTA_UOP_ELEM_BYTES) % (n) == 0 &&                                         \
   (VTA_INP_DEPTH * VTA_INP_ELEM_BYTES) % (n) == 0 &&                                         \
   (VTA_WGT_DEPTH * VTA_WGT_ELEM_BYTES) % (n) == 0 &&                                         \
   (VTA_ACC_DEPTH * VTA_ACC_ELEM_BYTES) % (n) == 0)
#if ELEMS_DIVIDE(16)
typedef uint4 unit_t;
#elif ELEMS_DIVIDE(4)
typedef uint unit_t;
#else
typedef ushort unit_t;
#endif

/* Local work area of the group. */
#define SCAN_GROUPS (N_ITEMS < 16 ? N_ITEMS : 16) /* two-level prefix sum of the run counts */
#define SCAN_WIDTH (N_ITEMS / SCAN_GROUPS)
typedef struct {
  uint tag[VTA_ACC_DEPTH];         /* conflict check: owner + 1 of each accumulator index */
  uop_ix_t run[VTA_ACC_DEPTH + 1]; /* GEMM: first micro-op of each run, then the range end */
  uint count[N_ITEMS];             /* runs each work-item found in its chunk of micro-ops */
  uint part[SCAN_GROUPS];          /* runs of each group of SCAN_WIDTH work-items */
  vta_compute_t compute;           /* the GEMM / ALU being executed (decoded by work-item 0) */
  uint max_dst, max_src, max_wgt;  /* largest micro-op indices of its range */
  uint n_runs, conflict;
  uint has, index, active; /* the next instruction; active: a GEMM / ALU with iterations */
  int stage;
} vta_work_t;

/* ------------------------------------------------------------------------------------------ */
/* int8 dot product of two rows of BLOCK_IN lanes, plus c.                                     */
/* ------------------------------------------------------------------------------------------ */
#ifdef VTA_DP4A
static int dot4(uint a, uint b, int c) {
  int d;
  asm("dp4a.s32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}
#endif

static int dot_row(__global const char *a, __global const char *b, int c) {
#if defined(VTA_DP4A) && VTA_BLOCK_IN % 16 == 0 && ELEMS_DIVIDE(16)
#pragma unroll
  for (uint j = 0; j < VTA_BLOCK_IN / 16; ++j) {
    uint4 x = ((__global const uint4 *)a)[j], y = ((__global const uint4 *)b)[j];
    c = dot4(x.x, y.x, c);
    c = dot4(x.y, y.y, c);
    c = dot4(x.z, y.z, c);
    c = dot4(x.w, y.w, c);
  }
#elif defined(VTA_DP4A) && VTA_BLOCK_IN % 4 == 0
#pragma unroll
  for (uint j = 0; j < VTA_BLOCK_IN / 4; ++j)
    c = dot4(((__global const uint *)a)[j], ((__global const uint *)b)[j], c);
#else /* plain products: CPU compilers vectorise this loop (PoCL's vector built-ins are slower) */
#pragma unroll
  for (uint j = 0; j < VTA_BLOCK_IN; ++j) c += (int)a[j] * (int)b[j];
#endif
  return c;
}

/* ------------------------------------------------------------------------------------------ */
/* Reset state: every buffer zero.                                                              */
/* ------------------------------------------------------------------------------------------ */
static void group_reset(__global uchar *slot, UOP_SPACE uint *uop_mem) {
  __global uint *z = (__global uint *)(slot + OFF_UOP);
  for (uint t = get_local_id(0); t < (uint)((SCRATCH_BYTES - OFF_UOP) / 4); t += N_ITEMS)
    z[t] = 0u;
#ifdef VTA_LOCAL_UOP
  for (uint t = get_local_id(0); t < VTA_UOP_DEPTH; t += N_ITEMS) uop_mem[t] = 0u;
#endif
}

/* ------------------------------------------------------------------------------------------ */
/* LOAD: unit t of the SRAM rows (per units an element) comes from DRAM unit *src of the rows   */
/* or, in the padding, is zero (returns 0).                                                     */
/* ------------------------------------------------------------------------------------------ */
static int load_source(const vta_load_t *l, uint t, uint per, ulong *src) {
  uint row_units = l->row * per;
  uint y = t / row_units, xu = t - y * row_units;
  uint x0 = l->x_pad_0 * per;
  if (y < l->y_pad_0 || y >= l->y_pad_0 + l->m.y_size || xu < x0 ||
      xu >= x0 + l->m.x_size * per)
    return 0;
  *src = (ulong)(y - l->y_pad_0) * l->m.x_stride * per + (xu - x0);
  return 1;
}

static void group_load(uint index, ulong w0, ulong w1, ulong dram_bytes, __global uchar *uops,
                       __global uchar *biases, __global uchar *inputs, __global uchar *weights,
                       UOP_SPACE uint *uop_mem, __global uchar *inp_buf,
                       __global uchar *wgt_buf, __global uchar *acc_buf, vta_err_t *e) {
  vta_load_t l;
  if (!decode_load(index, w0, w1, dram_bytes, &l, e)) return;
  uint lid = get_local_id(0);
  uint units = l.rows * l.row;
  ulong src;
  if (l.m.mt == VTA_MEM_ID_UOP) {
    __global const uint *s = (__global const uint *)uops + l.m.dram_base;
    UOP_SPACE uint *d = uop_mem + l.m.sram_base;
    for (uint t = lid; t < units; t += N_ITEMS) d[t] = load_source(&l, t, 1u, &src) ? s[src] : 0u;
  } else if (l.acc8) { /* int8 tiles sign-extended into int32 accumulators */
    __global const char *s = (__global const char *)biases + (ulong)l.m.dram_base * ACC_LANES;
    __global int *d = (__global int *)acc_buf + (ulong)l.m.sram_base * ACC_LANES;
    for (uint t = lid; t < units * ACC_LANES; t += N_ITEMS)
      d[t] = load_source(&l, t, ACC_LANES, &src) ? (int)s[src] : 0;
  } else {
    __global uchar *dram = l.m.mt == VTA_MEM_ID_WGT ? weights
                           : l.m.mt == VTA_MEM_ID_INP ? inputs : biases;
    __global uchar *sram = l.m.mt == VTA_MEM_ID_WGT ? wgt_buf
                           : l.m.mt == VTA_MEM_ID_INP ? inp_buf : acc_buf;
    uint per = l.sram_elem / (uint)sizeof(unit_t);
    __global const unit_t *s = (__global const unit_t *)(dram + (ulong)l.m.dram_base * l.dram_elem);
    __global unit_t *d = (__global unit_t *)(sram + (ulong)l.m.sram_base * l.sram_elem);
    for (uint t = lid; t < units * per; t += N_ITEMS)
      d[t] = load_source(&l, t, per, &src) ? s[src] : (unit_t)0;
  }
}

/* ------------------------------------------------------------------------------------------ */
/* STORE: out buffer -> DRAM. Where rows overlap in DRAM (x_stride < x_size) a unit is written   */
/* only by the last row that covers it, as if the rows went in order.                           */
/* ------------------------------------------------------------------------------------------ */
static void group_store(uint index, ulong w0, ulong w1, ulong dram_bytes, __global uchar *outputs,
                        __global uchar *out_buf, vta_err_t *e) {
  vta_mem_t m;
  if (!decode_store(index, w0, w1, dram_bytes, &m, e)) return;
  uint per = VTA_OUT_ELEM_BYTES / (uint)sizeof(unit_t);
  uint row_units = m.x_size * per, stride = m.x_stride * per;
  __global unit_t *d = (__global unit_t *)(outputs + (ulong)m.dram_base * VTA_OUT_ELEM_BYTES);
  __global const unit_t *s =
      (__global const unit_t *)(out_buf + (ulong)m.sram_base * VTA_OUT_ELEM_BYTES);
  for (uint t = get_local_id(0); t < m.y_size * row_units; t += N_ITEMS) {
    uint y = t / row_units;
    ulong at = (ulong)y * stride + (t - y * row_units);
    ulong last = stride == 0u ? m.y_size - 1u : min((ulong)m.y_size - 1ul, at / stride);
    if (y == last || stride >= row_units) d[at] = s[t];
  }
}

/* ------------------------------------------------------------------------------------------ */
/* GEMM and ALU: the plan (phases between the barriers of the instruction loop), then the      */
/* execution.                                                                                   */
/* ------------------------------------------------------------------------------------------ */

/* Phase 1: the largest dst / src / wgt indices of the micro-ops, and the run starts (a run:
 * consecutive micro-ops with one destination) each work-item finds in its chunk. */
static uint uop_chunk(__local const vta_compute_t *c, uint *lo, uint *hi) {
  uint n = c->uop_end - c->uop_bgn, chunk = (n + N_ITEMS - 1u) / N_ITEMS, lid = get_local_id(0);
  *lo = c->uop_bgn + min(lid * chunk, n);
  *hi = c->uop_bgn + min(lid * chunk + chunk, n);
  return n;
}

static int run_starts_at(__local const vta_compute_t *c, UOP_SPACE const uint *uops, uint u) {
  return u == c->uop_bgn || UOP_FIELD(uops[u], DST_IDX) != UOP_FIELD(uops[u - 1u], DST_IDX);
}

static void plan_scan(__local const vta_compute_t *c, UOP_SPACE const uint *uops,
                      __local vta_work_t *wk) {
  uint lo, hi, md = 0u, ms = 0u, mw = 0u, found = 0u;
  uop_chunk(c, &lo, &hi);
  for (uint u = lo; u < hi; ++u) {
    uint uop = uops[u];
    md = max(md, (uint)UOP_FIELD(uop, DST_IDX));
    ms = max(ms, (uint)UOP_FIELD(uop, SRC_IDX));
    mw = max(mw, (uint)UOP_FIELD(uop, WGT_IDX));
    found += run_starts_at(c, uops, u) ? 1u : 0u;
  }
  atomic_max(&wk->max_dst, md);
  atomic_max(&wk->max_src, ms);
  atomic_max(&wk->max_wgt, mw);
  wk->count[get_local_id(0)] = found;
  for (uint t = get_local_id(0); t < VTA_ACC_DEPTH; t += N_ITEMS) wk->tag[t] = 0u;
}

/* Phase 2: runs found by each group of SCAN_WIDTH work-items. */
static void plan_sum(__local vta_work_t *wk) {
  uint g = get_local_id(0);
  if (g < SCAN_GROUPS) {
    uint sum = 0u;
    for (uint j = 0; j < SCAN_WIDTH; ++j) sum += wk->count[g * SCAN_WIDTH + j];
    wk->part[g] = sum;
  }
}

/* The largest index iteration (iter_out - 1, iter_in - 1) reaches from a micro-op index. */
static ulong last_index(__local const vta_compute_t *c, uint base, uint f_out, uint f_in) {
  return (ulong)base + (ulong)(c->iter_out - 1u) * f_out + (ulong)(c->iter_in - 1u) * f_in;
}

/* After phase 1: every index of the instruction inside its buffer (else the sequential path
 * reports the first one outside). */
static int in_range(__local const vta_compute_t *c, __local vta_work_t *wk) {
  if (last_index(c, wk->max_dst, c->dst_fo, c->dst_fi) >= VTA_ACC_DEPTH) return 0;
  if (c->is_gemm && !c->reset)
    return last_index(c, wk->max_src, c->src_fo, c->src_fi) < VTA_INP_DEPTH &&
           last_index(c, wk->max_wgt, c->wgt_fo, c->wgt_fi) < VTA_WGT_DEPTH;
  if (!c->is_gemm && !c->use_imm)
    return last_index(c, wk->max_src, c->src_fo, c->src_fi) < VTA_ACC_DEPTH;
  return 1;
}

/* After phase 2: the number of runs (all work-items compute it). */
static uint total_runs(__local vta_work_t *wk) {
  uint total = 0u;
  for (uint g = 0; g < SCAN_GROUPS; ++g) total += wk->part[g];
  return total;
}

/* Phase 3 (GEMM): each work-item writes its run starts at its prefix sum. */
static void plan_runs(__local const vta_compute_t *c, UOP_SPACE const uint *uops,
                      __local vta_work_t *wk) {
  uint lid = get_local_id(0), g = lid / SCAN_WIDTH, pos = 0u, lo, hi;
  for (uint j = 0; j < g; ++j) pos += wk->part[j];
  for (uint j = g * SCAN_WIDTH; j < lid; ++j) pos += wk->count[j];
  uop_chunk(c, &lo, &hi);
  for (uint u = lo; u < hi; ++u)
    if (run_starts_at(c, uops, u)) wk->run[pos++] = (uop_ix_t)u;
  if (lid == 0u) {
    wk->n_runs = total_runs(wk);
    wk->run[wk->n_runs] = (uop_ix_t)c->uop_end;
  }
}

/* Phase 3 (ALU) / 4 (GEMM): tag each destination with its owner (ALU: the iteration; GEMM: the
 * (iteration, run) unit); a destination tagged twice is a conflict. */
static void plan_tag_alu(__local const vta_compute_t *c, UOP_SPACE const uint *uops,
                         __local vta_work_t *wk) {
  uint n = c->uop_end - c->uop_bgn, total = c->iter_out * c->iter_in * n;
  for (uint j = get_local_id(0); j < total; j += N_ITEMS) {
    uint p = j / n, u = j - p * n, i0 = p / c->iter_in, i1 = p - i0 * c->iter_in;
    uint a = UOP_FIELD(uops[c->uop_bgn + u], DST_IDX) + i0 * c->dst_fo + i1 * c->dst_fi;
    if (atomic_cmpxchg(&wk->tag[a], 0u, j + 1u) != 0u) wk->conflict = 1u;
  }
}

static void plan_tag_gemm(__local const vta_compute_t *c, UOP_SPACE const uint *uops,
                          __local vta_work_t *wk) {
  uint runs = wk->n_runs, total = c->iter_out * c->iter_in * runs;
  for (uint x = get_local_id(0); x < total; x += N_ITEMS) {
    uint p = x / runs, r = x - p * runs, i0 = p / c->iter_in, i1 = p - i0 * c->iter_in;
    uint a = UOP_FIELD(uops[wk->run[r]], DST_IDX) + i0 * c->dst_fo + i1 * c->dst_fi;
    if (atomic_cmpxchg(&wk->tag[a], 0u, x + 1u) != 0u) wk->conflict = 1u;
  }
}

/* Phase 4 (ALU with a tensor operand): no iteration reads another iteration's destination. */
static void plan_check_alu_sources(__local const vta_compute_t *c, UOP_SPACE const uint *uops,
                                   __local vta_work_t *wk) {
  uint n = c->uop_end - c->uop_bgn, total = c->iter_out * c->iter_in * n;
  for (uint j = get_local_id(0); j < total; j += N_ITEMS) {
    uint p = j / n, u = j - p * n, i0 = p / c->iter_in, i1 = p - i0 * c->iter_in;
    uint s = UOP_FIELD(uops[c->uop_bgn + u], SRC_IDX) + i0 * c->src_fo + i1 * c->src_fi;
    uint t = wk->tag[s];
    if (t != 0u && t != j + 1u) wk->conflict = 1u;
  }
}

/* GEMM, disjoint runs: a work-item computes lane k of one run for up to VTA_GEMM_TILE
 * consecutive inner iterations, which share each weight row when the weights do not move with the
 * inner loop, and adds each sum to its destination once. */
static void gemm_parallel(__local const vta_compute_t *c, UOP_SPACE const uint *uops,
                          __global const char *inp, __global const char *wgt, __global int *acc,
                          __global char *out, __local vta_work_t *wk) {
  uint tile = c->wgt_fi == 0u ? VTA_GEMM_TILE : 1u;
  uint tiles = (c->iter_in + tile - 1u) / tile, runs = wk->n_runs;
  uint units = c->iter_out * tiles * runs * ACC_LANES;
  uint step = c->src_fi * VTA_INP_ELEM_BYTES; /* from one inner iteration's inputs to the next */
  for (uint x = get_local_id(0); x < units; x += N_ITEMS) {
    uint k = x % ACC_LANES, q = x / ACC_LANES;
    uint r = q % runs, q2 = q / runs, i0 = q2 / tiles, i1 = (q2 - i0 * tiles) * tile;
    uint cnt = min(tile, c->iter_in - i1);
    uint s_off = i0 * c->src_fo + i1 * c->src_fi, w_off = i0 * c->wgt_fo + i1 * c->wgt_fi;
    __global const char *inp_k = inp + (k / VTA_BLOCK_OUT) * VTA_BLOCK_IN;
    __global const char *wgt_k = wgt + (k % VTA_BLOCK_OUT) * VTA_BLOCK_IN;
    /* Loops over a constant bound, unrolled: the sums stay in registers. */
    int sum[VTA_GEMM_TILE];
#pragma unroll
    for (uint t = 0; t < VTA_GEMM_TILE; ++t) sum[t] = 0;
    for (uint u = wk->run[r]; u < wk->run[r + 1u]; ++u) {
      uint uop = uops[u];
      __global const char *wr =
          wgt_k + (ulong)(UOP_FIELD(uop, WGT_IDX) + w_off) * VTA_WGT_ELEM_BYTES;
      __global const char *ir =
          inp_k + (ulong)(UOP_FIELD(uop, SRC_IDX) + s_off) * VTA_INP_ELEM_BYTES;
#pragma unroll
      for (uint t = 0; t < VTA_GEMM_TILE; ++t)
        if (t < cnt) sum[t] = dot_row(ir + t * step, wr, sum[t]);
    }
    uint a = UOP_FIELD(uops[wk->run[r]], DST_IDX) + i0 * c->dst_fo + i1 * c->dst_fi;
#pragma unroll
    for (uint t = 0; t < VTA_GEMM_TILE; ++t) {
      if (t < cnt) {
        ulong ix = (ulong)(a + t * c->dst_fi) * ACC_LANES + k;
        int v = (int)((uint)acc[ix] + (uint)sum[t]);
        acc[ix] = v;
        out[ix] = (char)v;
      }
    }
  }
}

/* Elementwise work moves VEC_LANES lanes of an accumulator at a time (int4 where the element and
 * buffer layout allow). */
#if ACC_LANES % 4 == 0 && ELEMS_DIVIDE(16)
#define VEC_LANES 4
typedef int4 lanes_t;
static lanes_t lanes_load(__global const int *p) { return *(__global const int4 *)p; }
static lanes_t lanes_apply(uint op, lanes_t a, lanes_t b) {
  return (int4)(alu_apply(op, a.x, b.x), alu_apply(op, a.y, b.y), alu_apply(op, a.z, b.z),
                alu_apply(op, a.w, b.w));
}
static void lanes_store(__global int *acc, __global char *out, ulong ix, lanes_t v) {
  *(__global int4 *)(acc + ix) = v;
  *(__global uchar4 *)(out + ix) = convert_uchar4(as_uint4(v) & (uint4)(0xFFu)); /* low bytes */
}
#else
#define VEC_LANES 1
typedef int lanes_t;
static lanes_t lanes_load(__global const int *p) { return *p; }
static lanes_t lanes_apply(uint op, lanes_t a, lanes_t b) { return alu_apply(op, a, b); }
static void lanes_store(__global int *acc, __global char *out, ulong ix, lanes_t v) {
  acc[ix] = v;
  out[ix] = (char)v;
}
#endif
#define VECS (ACC_LANES / VEC_LANES)                /* vectors of an accumulator element */
#define VEC_ITEMS (VECS < N_ITEMS ? VECS : N_ITEMS) /* work-items sharing an element */

/* GEMM reset (zeros, so repeated destinations do not matter) and ALU with disjoint iterations:
 * iteration j = (i0, i1, u) in order, vector of lanes v; a work-item steps j by
 * N_ITEMS / VEC_ITEMS, carrying through the loop counters instead of dividing. */
static void elementwise_parallel(__local const vta_compute_t *c, UOP_SPACE const uint *uops,
                                 __global int *acc, __global char *out) {
  uint lid = get_local_id(0), n = c->uop_end - c->uop_bgn, step = N_ITEMS / VEC_ITEMS;
  uint j = lid / VEC_ITEMS, v0 = lid % VEC_ITEMS;
  uint u = j % n, p = j / n, i1 = p % c->iter_in, i0 = p / c->iter_in;
  uint su = step % n, sp = step / n, si1 = sp % c->iter_in, si0 = sp / c->iter_in;
  int reset = c->is_gemm;
  while (i0 < c->iter_out) {
    uint uop = uops[c->uop_bgn + u];
    ulong a = (ulong)(UOP_FIELD(uop, DST_IDX) + i0 * c->dst_fo + i1 * c->dst_fi) * ACC_LANES;
    ulong s = (ulong)(UOP_FIELD(uop, SRC_IDX) + i0 * c->src_fo + i1 * c->src_fi) * ACC_LANES;
    for (uint v = v0; v < VECS; v += VEC_ITEMS) {
      ulong ix = a + v * VEC_LANES;
      /* a reset GEMM reads no source (its src index is not checked: it may lie outside acc) */
      lanes_t b = reset || c->use_imm ? (lanes_t)(c->imm)
                                      : lanes_load(acc + s + v * VEC_LANES);
      lanes_t r = reset ? (lanes_t)(0) : lanes_apply(c->alu_op, lanes_load(acc + ix), b);
      lanes_store(acc, out, ix, r);
    }
    u += su;
    i1 += si1;
    i0 += si0;
    if (u >= n) {
      u -= n;
      ++i1;
    }
    if (i1 >= c->iter_in) {
      i1 -= c->iter_in;
      ++i0;
    }
  }
}

/* Sequential order, split across the lanes of the accumulator: the iterations in order for each
 * lane k; an index outside its buffer stops the instruction there (as in vta.cl). Returns 0 on
 * such an error (set in e, which work-item 0 always sees: its lane is 0). */
static int compute_sequential(uint index, __local const vta_compute_t *c,
                              UOP_SPACE const uint *uops, __global const char *inp,
                              __global const char *wgt, __global int *acc, __global char *out,
                              vta_err_t *e) {
  for (uint k = get_local_id(0); k < ACC_LANES; k += N_ITEMS) {
    uint b = k / VTA_BLOCK_OUT, oc = k % VTA_BLOCK_OUT;
    for (uint i0 = 0; i0 < c->iter_out; ++i0) {
      for (uint i1 = 0; i1 < c->iter_in; ++i1) {
        for (uint u = c->uop_bgn; u < c->uop_end; ++u) {
          uint uop = uops[u];
          uint a = UOP_FIELD(uop, DST_IDX) + i0 * c->dst_fo + i1 * c->dst_fi;
          uint s = UOP_FIELD(uop, SRC_IDX) + i0 * c->src_fo + i1 * c->src_fi;
          uint w = UOP_FIELD(uop, WGT_IDX) + i0 * c->wgt_fo + i1 * c->wgt_fi;
          if (a >= VTA_ACC_DEPTH) {
            set_error(e, c->sram_err, index, a);
            return 0;
          }
          ulong ix = (ulong)a * ACC_LANES + k;
          int v;
          if (c->is_gemm && c->reset) {
            v = 0;
          } else if (c->is_gemm) {
            if (s >= VTA_INP_DEPTH || w >= VTA_WGT_DEPTH) {
              set_error(e, c->sram_err, index, s >= VTA_INP_DEPTH ? s : w);
              return 0;
            }
            int sum = dot_row(inp + (ulong)s * VTA_INP_ELEM_BYTES + b * VTA_BLOCK_IN,
                              wgt + (ulong)w * VTA_WGT_ELEM_BYTES + oc * VTA_BLOCK_IN, 0);
            v = (int)((uint)acc[ix] + (uint)sum);
          } else {
            if (!c->use_imm && s >= VTA_ACC_DEPTH) {
              set_error(e, c->sram_err, index, s);
              return 0;
            }
            v = alu_apply(c->alu_op, acc[ix],
                          c->use_imm ? c->imm : acc[(ulong)s * ACC_LANES + k]);
          }
          acc[ix] = v;
          out[ix] = (char)v;
        }
      }
    }
  }
  return 1;
}

/* ------------------------------------------------------------------------------------------ */
/* One program on the work-group.                                                              */
/* ------------------------------------------------------------------------------------------ */

/* Work-item 0: start the next instruction and publish it (decoded, when a GEMM or ALU). */
static void publish_next(vta_machine_t *m, __global const ulong *stream, uint insn_count,
                         vta_budget_t *b, vta_err_t *e, __local vta_work_t *wk) {
  uint i = 0u;
  int s = 0;
  wk->has = e->error == VTA_ERR_NONE && machine_next(m, stream, insn_count, &i, &s);
  wk->index = i;
  wk->stage = s;
  wk->active = 0u;
  if (!wk->has) return;
  ulong w0 = stream[2ul * i], w1 = stream[2ul * i + 1ul];
  if (!budget_take(b, w0, w1, i, e)) {
    wk->has = 0u;
    return;
  }
  uint op = F(w0, w1, MEM_OPCODE);
  if (op != VTA_OPCODE_GEMM && op != VTA_OPCODE_ALU) return;
  vta_compute_t c;
  if (!decode_compute(i, w0, w1, &c, e)) return; /* work-item 0's error stops the machine */
  wk->compute = c;
  wk->active = (ulong)c.iter_out * c.iter_in * (c.uop_end - c.uop_bgn) != 0ul;
  wk->max_dst = wk->max_src = wk->max_wgt = 0u;
  wk->conflict = 0u;
}

static void group_run(uint insn_count, __global const ulong *stream, __global uchar *uops,
                      __global uchar *biases, __global uchar *inputs, __global uchar *weights,
                      __global uchar *outputs, ulong dram_bytes, UOP_SPACE uint *uop_mem,
                      __global uchar *slot, __global uint *ctrl, __local vta_work_t *wk) {
  uint lid = get_local_id(0);
  __global uchar *inp_buf = slot + OFF_INP, *wgt_buf = slot + OFF_WGT;
  __global uchar *acc_buf = slot + OFF_ACC, *out_buf = slot + OFF_OUT;
  __global const char *inp = (__global const char *)inp_buf;
  __global const char *wgt = (__global const char *)wgt_buf;
  __global int *acc = (__global int *)acc_buf;
  __global char *out = (__global char *)out_buf;
  __local const vta_compute_t *c = &wk->compute;
  group_reset(slot, uop_mem);

  vta_machine_t m; /* work-item 0's */
  vta_budget_t b;
  vta_err_t e;
  e.error = VTA_ERR_NONE;
  e.error_index = e.error_arg = 0u;
  ulong gemm_iters = 0ul, alu_iters = 0ul;
  int finished = 0;
  if (lid == 0u) {
    machine_init(&m, stream, insn_count);
    budget_init(&b, ctrl);
  }
  barrier(GROUP_FENCE);
  for (;;) {
    if (lid == 0u) publish_next(&m, stream, insn_count, &b, &e, wk);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!wk->has) break;
    uint i = wk->index, active = wk->active;
    ulong w0 = stream[2ul * i], w1 = stream[2ul * i + 1ul];
    uint op = F(w0, w1, MEM_OPCODE);
    if (op == VTA_OPCODE_LOAD) {
      group_load(i, w0, w1, dram_bytes, uops, biases, inputs, weights, uop_mem, inp_buf, wgt_buf,
                 acc_buf, &e);
    } else if (op == VTA_OPCODE_STORE) {
      group_store(i, w0, w1, dram_bytes, outputs, out_buf, &e);
    } else if (op == VTA_OPCODE_FINISH) {
      finished = 1;
    } else if (op != VTA_OPCODE_GEMM && op != VTA_OPCODE_ALU) {
      set_error(&e, VTA_ERR_OPCODE, i, op);
    }
    /* GEMM / ALU: plan in phases, then execute. */
    if (active) plan_scan(c, uop_mem, wk);
    barrier(CLK_LOCAL_MEM_FENCE);
    int ok = active && in_range(c, wk);
    int mac = ok && c->is_gemm && !c->reset, alu = ok && !c->is_gemm;
    ulong n = active ? (ulong)c->iter_out * c->iter_in * (c->uop_end - c->uop_bgn) : 0ul;
    alu = alu && n <= VTA_ACC_DEPTH; /* more iterations than destinations: not distinct */
    if (mac) plan_sum(wk);
    barrier(CLK_LOCAL_MEM_FENCE);
    mac = mac && (ulong)c->iter_out * c->iter_in * total_runs(wk) <= VTA_ACC_DEPTH;
    if (mac) plan_runs(c, uop_mem, wk);
    if (alu) plan_tag_alu(c, uop_mem, wk);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (mac) plan_tag_gemm(c, uop_mem, wk);
    if (alu && !c->use_imm) plan_check_alu_sources(c, uop_mem, wk);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (active) {
      int reset = ok && c->is_gemm && c->reset;
      int disjoint = (mac || alu) && !wk->conflict;
      if (mac && disjoint) {
        gemm_parallel(c, uop_mem, inp, wgt, acc, out, wk);
      } else if (reset || (alu && disjoint)) {
        elementwise_parallel(c, uop_mem, acc, out);
      } else if (!compute_sequential(i, c, uop_mem, inp, wgt, acc, out, &e)) {
        n = 0ul;
      }
      if (c->is_gemm) gemm_iters += n;
      else alu_iters += n;
    }
    if (lid == 0u) machine_retire(&m, wk->stage, i, w0);
    barrier(GROUP_FENCE);
  }
  if (lid == 0u) {
    machine_check_end(&m, stream, insn_count, finished, &e);
    ctrl_identify(ctrl);
    ctrl_report(ctrl, &m, &e, gemm_iters, alu_iters, b.used);
  }
}

/* ------------------------------------------------------------------------------------------ */
/* Entry points                                                                                 */
/* ------------------------------------------------------------------------------------------ */
__kernel __attribute__((reqd_work_group_size(VTA_GROUP_SIZE, 1, 1))) void vta_core(
    uint insn_count, uint insns_offset, __global ulong *insns, __global uint *uops,
    __global int *biases, __global char *inputs, __global char *weights, __global char *outputs,
    __global uint *scratch) {
  __local vta_work_t wk;
#ifdef VTA_LOCAL_UOP
  __local uint uop_mem[VTA_UOP_DEPTH];
#else
  __global uint *uop_mem = (__global uint *)((__global uchar *)scratch + OFF_UOP);
#endif
  if (insn_count == 0u) { /* probe: report the build's configuration and nothing else */
    if (get_local_id(0) == 0u) {
      ctrl_identify(scratch);
      mem_fence(CLK_GLOBAL_MEM_FENCE);
      scratch[CTRL_STATUS] = VTA_STATUS_DONE;
    }
    return;
  }
  ulong dram_bytes = (ulong)scratch[CTRL_DRAM_LO] | ((ulong)scratch[CTRL_DRAM_HI] << 32);
  group_run(insn_count, insns + 2ul * insns_offset, (__global uchar *)uops,
            (__global uchar *)biases, (__global uchar *)inputs, (__global uchar *)weights,
            (__global uchar *)outputs, dram_bytes, uop_mem, (__global uchar *)scratch, scratch,
            &wk);
}

__kernel __attribute__((reqd_work_group_size(VTA_GROUP_SIZE, 1, 1))) void vta_batch(
    uint n_programs, __global const uint *progs, __global uchar *mem, __global uint *ctrl,
    __global uint *scratch) {
  __local vta_work_t wk;
  __global uchar *slot = (__global uchar *)scratch + (ulong)get_group_id(0) * VTA_SLOT_BYTES;
#ifdef VTA_LOCAL_UOP
  __local uint uop_mem[VTA_UOP_DEPTH];
#else
  __global uint *uop_mem = (__global uint *)(slot + OFF_UOP);
#endif
  for (uint j = get_group_id(0); j < n_programs; j += get_num_groups(0)) {
    __global const uint *d = progs + 4ul * j;
    __global uchar *base = mem + ((ulong)d[2] | ((ulong)d[3] << 32));
    __global uint *c = ctrl + (ulong)CTRL_WORDS * j;
    ulong dram_bytes = (ulong)c[CTRL_DRAM_LO] | ((ulong)c[CTRL_DRAM_HI] << 32);
    group_run(d[0], (__global const ulong *)base + 2ul * d[1], base, base, base, base, base,
              dram_bytes, uop_mem, slot, c, &wk);
    barrier(GROUP_FENCE);
  }
}
