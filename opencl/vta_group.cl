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
 *     its run's products, split across work-items when the units are few: integer sums wrap the
 *     same in any order, so a destination receives exactly its sequential result); an ALU runs
 *     its iterations in parallel when their destinations are distinct and none reads another's
 *     destination. Destinations that repeat are split by destination instead (each work-item
 *     applies, in order, the iterations that write its destination lane) when no iteration reads
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
 *   vta_grid: vta_core's arguments plus the grid's words and the parts: one program on many
 *     work-groups (one per compute unit), each running the same machine and its parts of every
 *     instruction's element loops, waiting for the others only where an instruction touches
 *     what they may still be writing or reading (see "The grid" below).
 *
 * Build options: -DVTA_GROUP_SIZE=N (power of two), -DVTA_GEMM_TILE=T (1..8: GEMM iterations of
 * the inner loop one work-item computes when they share weights), -DVTA_LOCAL_UOP, -DVTA_DP4A
 * (NVIDIA: inline PTX, for int8 dot products with the dp4a instruction and the grid's device-wide
 * fence). Breakdown builds (docs/opencl-gpu.md; their results are not fsim's): -DVTA_SKIP_EXEC
 * runs the machine and the plans but executes nothing, -DVTA_SKIP_PLAN also skips the plans,
 * -DVTA_MACHINE_ONLY runs the machine alone on work-item 0.
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

/* A fence over the whole device, for the grid's waits: NVIDIA's OpenCL compiles mem_fence to a
 * work-group fence (membar.cta), so with inline PTX (VTA_DP4A: NVIDIA) membar.gl. */
#ifdef VTA_DP4A
#define GRID_FENCE() asm volatile("membar.gl;")
#else
#define GRID_FENCE() mem_fence(CLK_GLOBAL_MEM_FENCE)
#endif

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
  int red[N_ITEMS];                /* gemm_split: partial sums of each destination lane */
  uint part[SCAN_GROUPS];          /* runs of each group of SCAN_WIDTH work-items */
  vta_compute_t compute;           /* the GEMM / ALU being executed (decoded by work-item 0) */
  vta_load_t load;                 /* the LOAD being executed (decoded by work-item 0) */
  vta_mem_t store;                 /* the STORE being executed (decoded by work-item 0) */
  uint max_dst, max_src, max_wgt;  /* largest micro-op indices of its range */
  uint min_dst, min_src, min_wgt;  /* smallest (the grid's hazard check: grid_hazard) */
  uint n_runs, conflict, alias;
  uint has, index, active; /* the next instruction; active: a GEMM / ALU with iterations */
  uint op, moves;          /* its opcode; moves: a LOAD / STORE that moves data */
  uint go;                 /* the grid's wait before it did not give up (grid_hazard) */
  int stage;
} vta_work_t;

/* The grid: the parts one instruction's element loops are split into (a part: N_ITEMS
 * work-items' share), the parts this work-group runs (first, count), and the work-groups that
 * synchronize through *sync (grid_wait). One work-group on its own: parts = count = 1. */
typedef struct {
  uint first, count, parts, groups;
  __global volatile uint *sync;
} vta_grid_t;

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
/* Reset state: every buffer zero (the micro-op buffer: each work-group its own).              */
/* ------------------------------------------------------------------------------------------ */
static void group_reset(const vta_grid_t *g, __global uchar *slot, UOP_SPACE uint *uop_mem) {
  __global uint *z = (__global uint *)(slot + OFF_INP);
  for (uint p = g->first; p < g->first + g->count; ++p)
    for (uint t = p * N_ITEMS + get_local_id(0); t < (uint)((SCRATCH_BYTES - OFF_INP) / 4);
         t += g->parts * N_ITEMS)
      z[t] = 0u;
  for (uint t = get_local_id(0); t < VTA_UOP_DEPTH; t += N_ITEMS) uop_mem[t] = 0u;
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

/* The micro-op rows of a LOAD UOP: every work-group loads them whole into its own micro-op
 * buffer (it plans and runs GEMM / ALU from it). */
static void group_load_uops(__local const vta_load_t *lp, __global uchar *uops,
                            UOP_SPACE uint *uop_mem) {
  vta_load_t l = *lp;
  ulong src;
  __global const uint *s = (__global const uint *)uops + l.m.dram_base;
  UOP_SPACE uint *d = uop_mem + l.m.sram_base;
  for (uint t = get_local_id(0); t < l.rows * l.row; t += N_ITEMS)
    d[t] = load_source(&l, t, 1u, &src) ? s[src] : 0u;
}

/* Part `part` of the grid's `parts` of a LOAD of INP, WGT, ACC or ACC_8BIT. */
static void group_load(__local const vta_load_t *lp, uint part, uint parts,
                       __global uchar *biases, __global uchar *inputs, __global uchar *weights,
                       __global uchar *inp_buf, __global uchar *wgt_buf, __global uchar *acc_buf) {
  vta_load_t l = *lp;
  uint first = part * N_ITEMS + get_local_id(0), step = parts * N_ITEMS;
  uint units = l.rows * l.row;
  ulong src;
  if (l.acc8) { /* int8 tiles sign-extended into int32 accumulators */
    __global const char *s = (__global const char *)biases + (ulong)l.m.dram_base * ACC_LANES;
    __global int *d = (__global int *)acc_buf + (ulong)l.m.sram_base * ACC_LANES;
    for (uint t = first; t < units * ACC_LANES; t += step)
      d[t] = load_source(&l, t, ACC_LANES, &src) ? (int)s[src] : 0;
  } else {
    __global uchar *dram = l.m.mt == VTA_MEM_ID_WGT ? weights
                           : l.m.mt == VTA_MEM_ID_INP ? inputs : biases;
    __global uchar *sram = l.m.mt == VTA_MEM_ID_WGT ? wgt_buf
                           : l.m.mt == VTA_MEM_ID_INP ? inp_buf : acc_buf;
    uint per = l.sram_elem / (uint)sizeof(unit_t);
    __global const unit_t *s = (__global const unit_t *)(dram + (ulong)l.m.dram_base * l.dram_elem);
    __global unit_t *d = (__global unit_t *)(sram + (ulong)l.m.sram_base * l.sram_elem);
    for (uint t = first; t < units * per; t += step)
      d[t] = load_source(&l, t, per, &src) ? s[src] : (unit_t)0;
  }
}

/* ------------------------------------------------------------------------------------------ */
/* STORE: out buffer -> DRAM. Where rows overlap in DRAM (x_stride < x_size) a unit is written   */
/* only by the last row that covers it, as if the rows went in order.                           */
/* ------------------------------------------------------------------------------------------ */
static void group_store(__local const vta_mem_t *mp, uint part, uint parts,
                        __global uchar *outputs, __global uchar *out_buf) {
  vta_mem_t m = *mp;
  uint per = VTA_OUT_ELEM_BYTES / (uint)sizeof(unit_t);
  uint row_units = m.x_size * per, stride = m.x_stride * per;
  __global unit_t *d = (__global unit_t *)(outputs + (ulong)m.dram_base * VTA_OUT_ELEM_BYTES);
  __global const unit_t *s =
      (__global const unit_t *)(out_buf + (ulong)m.sram_base * VTA_OUT_ELEM_BYTES);
  for (uint t = part * N_ITEMS + get_local_id(0); t < m.y_size * row_units;
       t += parts * N_ITEMS) {
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
  uint nd = 0xFFFFFFFFu, ns = 0xFFFFFFFFu, nw = 0xFFFFFFFFu;
  uop_chunk(c, &lo, &hi);
  for (uint u = lo; u < hi; ++u) {
    uint uop = uops[u];
    md = max(md, (uint)UOP_FIELD(uop, DST_IDX));
    ms = max(ms, (uint)UOP_FIELD(uop, SRC_IDX));
    mw = max(mw, (uint)UOP_FIELD(uop, WGT_IDX));
    nd = min(nd, (uint)UOP_FIELD(uop, DST_IDX));
    ns = min(ns, (uint)UOP_FIELD(uop, SRC_IDX));
    nw = min(nw, (uint)UOP_FIELD(uop, WGT_IDX));
    found += run_starts_at(c, uops, u) ? 1u : 0u;
  }
  atomic_max(&wk->max_dst, md);
  atomic_max(&wk->max_src, ms);
  atomic_max(&wk->max_wgt, mw);
  atomic_min(&wk->min_dst, nd);
  atomic_min(&wk->min_src, ns);
  atomic_min(&wk->min_wgt, nw);
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

/* Phase 4 (ALU with a tensor operand): whether an iteration reads a destination other than its
 * own (alias). */
static void plan_check_alu_sources(__local const vta_compute_t *c, UOP_SPACE const uint *uops,
                                   __local vta_work_t *wk) {
  uint n = c->uop_end - c->uop_bgn, total = c->iter_out * c->iter_in * n;
  for (uint j = get_local_id(0); j < total; j += N_ITEMS) {
    uint p = j / n, u = j - p * n, i0 = p / c->iter_in, i1 = p - i0 * c->iter_in;
    uint uop = uops[c->uop_bgn + u];
    uint s = UOP_FIELD(uop, SRC_IDX) + i0 * c->src_fo + i1 * c->src_fi;
    uint a = UOP_FIELD(uop, DST_IDX) + i0 * c->dst_fo + i1 * c->dst_fi;
    if (wk->tag[s] != 0u && s != a) wk->alias = 1u;
  }
}

/* GEMM, disjoint runs (part `part` of `parts`): a work-item computes lane k of one run for up
 * to VTA_GEMM_TILE consecutive inner iterations, which share each weight row when the weights
 * do not move with the inner loop, and adds each sum to its destination once. */
static void gemm_parallel(__local const vta_compute_t *c, UOP_SPACE const uint *uops,
                          __global const char *inp, __global const char *wgt, __global int *acc,
                          __global char *out, __local vta_work_t *wk, uint part, uint parts) {
  uint tile = c->wgt_fi == 0u ? VTA_GEMM_TILE : 1u;
  uint tiles = (c->iter_in + tile - 1u) / tile, runs = wk->n_runs;
  uint units = c->iter_out * tiles * runs * ACC_LANES;
  uint step = c->src_fi * VTA_INP_ELEM_BYTES; /* from one inner iteration's inputs to the next */
  for (uint x = part * N_ITEMS + get_local_id(0); x < units; x += parts * N_ITEMS) {
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

/* GEMM, disjoint runs, few destination lanes (of all work-groups: total; this work-group's
 * block of them: gemm_split_width): `width` work-items share each lane of the block, each adding
 * every width-th micro-op of the run; their partial sums meet in local memory (wk->red) and the
 * lane's first work-item adds the total to its destination after the next barrier
 * (gemm_split_finish). Integer sums wrap the same in any order, so each destination still gets
 * its sequential result. Returns the acc index the work-item finishes, or -1. */
static long gemm_split(__local const vta_compute_t *c, UOP_SPACE const uint *uops,
                       __global const char *inp, __global const char *wgt,
                       __local vta_work_t *wk, uint group, uint block, uint width) {
  uint lid = get_local_id(0), slot = lid / width, chunk = lid - slot * width;
  uint runs = wk->n_runs, total = c->iter_out * c->iter_in * runs * ACC_LANES;
  uint d = group * block + slot;
  if (slot >= block || d >= total) return -1;
  uint k = d % ACC_LANES, q = d / ACC_LANES;
  uint r = q % runs, p = q / runs, i0 = p / c->iter_in, i1 = p - i0 * c->iter_in;
  uint s_off = i0 * c->src_fo + i1 * c->src_fi, w_off = i0 * c->wgt_fo + i1 * c->wgt_fi;
  __global const char *inp_k = inp + (k / VTA_BLOCK_OUT) * VTA_BLOCK_IN;
  __global const char *wgt_k = wgt + (k % VTA_BLOCK_OUT) * VTA_BLOCK_IN;
  int sum = 0;
  for (uint u = wk->run[r] + chunk; u < wk->run[r + 1u]; u += width) {
    uint uop = uops[u];
    sum = dot_row(inp_k + (ulong)(UOP_FIELD(uop, SRC_IDX) + s_off) * VTA_INP_ELEM_BYTES,
                  wgt_k + (ulong)(UOP_FIELD(uop, WGT_IDX) + w_off) * VTA_WGT_ELEM_BYTES, sum);
  }
  atomic_add(&wk->red[slot], sum);
  if (chunk != 0u) return -1;
  uint a = UOP_FIELD(uops[wk->run[r]], DST_IDX) + i0 * c->dst_fo + i1 * c->dst_fi;
  return (long)((ulong)a * ACC_LANES + k);
}

/* The work-items that share a destination lane in gemm_split (a power of two), or 1 when this
 * work-group's block of lanes (*block: total / groups, rounded up) leaves no room to share. */
static uint gemm_split_width(__local const vta_compute_t *c, __local const vta_work_t *wk,
                             uint groups, uint *block) {
  uint total = c->iter_out * c->iter_in * wk->n_runs * ACC_LANES;
  uint width = N_ITEMS;
  *block = (total + groups - 1u) / groups;
  while (width > 1u && width * *block > N_ITEMS) width >>= 1;
  return width;
}

/* After the barrier that follows gemm_split: the lane's total into its destination. */
static void gemm_split_finish(long ix, uint width, __global int *acc, __global char *out,
                              __local vta_work_t *wk) {
  if (ix < 0) return;
  uint slot = get_local_id(0) / width;
  int v = (int)((uint)acc[ix] + (uint)wk->red[slot]);
  wk->red[slot] = 0;
  acc[ix] = v;
  out[ix] = (char)v;
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
 * iteration j = (i0, i1, u) in order, vector of lanes v; a work-item of part `part` of `parts`
 * steps j by parts * N_ITEMS / VEC_ITEMS, carrying through the loop counters instead of
 * dividing. */
static void elementwise_parallel(__local const vta_compute_t *c, UOP_SPACE const uint *uops,
                                 __global int *acc, __global char *out, uint part, uint parts) {
  uint gid = part * N_ITEMS + get_local_id(0), n = c->uop_end - c->uop_bgn;
  uint step = parts * (N_ITEMS / VEC_ITEMS), j = gid / VEC_ITEMS, v0 = gid % VEC_ITEMS;
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

/* GEMM / ALU whose destinations repeat, none of whose iterations reads another iteration's
 * destination: work-item (destination a, lane k) goes through every iteration in order and
 * applies those that write a, a's lane held in a register (an ALU reading a itself reads that
 * register). Each destination gets exactly its sequential updates, in order, and nothing a unit
 * reads is written by another, so the units run in parallel. */
static void compute_by_destination(__local const vta_compute_t *c, UOP_SPACE const uint *uops,
                                   __global const char *inp, __global const char *wgt,
                                   __global int *acc, __global char *out,
                                   __local const vta_work_t *wk, uint part, uint parts) {
  uint lo = wk->min_dst;
  uint span = (uint)(last_index(c, wk->max_dst, c->dst_fo, c->dst_fi) + 1ul - lo);
  for (uint x = part * N_ITEMS + get_local_id(0); x < span * ACC_LANES; x += parts * N_ITEMS) {
    uint a = lo + x / ACC_LANES, k = x % ACC_LANES;
    if (wk->tag[a] == 0u) continue; /* no iteration writes a */
    ulong ix = (ulong)a * ACC_LANES + k;
    __global const char *inp_k = inp + (k / VTA_BLOCK_OUT) * VTA_BLOCK_IN;
    __global const char *wgt_k = wgt + (k % VTA_BLOCK_OUT) * VTA_BLOCK_IN;
    int v = acc[ix], sum = 0, hit = 0;
    for (uint i0 = 0; i0 < c->iter_out; ++i0) {
      for (uint i1 = 0; i1 < c->iter_in; ++i1) {
        for (uint u = c->uop_bgn; u < c->uop_end; ++u) {
          uint uop = uops[u];
          if (UOP_FIELD(uop, DST_IDX) + i0 * c->dst_fo + i1 * c->dst_fi != a) continue;
          uint s = UOP_FIELD(uop, SRC_IDX) + i0 * c->src_fo + i1 * c->src_fi;
          hit = 1;
          if (c->is_gemm) {
            uint w = UOP_FIELD(uop, WGT_IDX) + i0 * c->wgt_fo + i1 * c->wgt_fi;
            sum = dot_row(inp_k + (ulong)s * VTA_INP_ELEM_BYTES,
                          wgt_k + (ulong)w * VTA_WGT_ELEM_BYTES, sum);
          } else {
            v = alu_apply(c->alu_op, v,
                          c->use_imm ? c->imm : s == a ? v : acc[(ulong)s * ACC_LANES + k]);
          }
        }
      }
    }
    if (!hit) continue; /* a stray tag (PoCL 3.0 runs plan_tag_gemm's body past its end) */
    v = (int)((uint)v + (uint)sum); /* a GEMM's products; 0 for an ALU */
    acc[ix] = v;
    out[ix] = (char)v;
  }
}

/* compute_by_destination only where its (destination, lane) units take at most two rounds of
 * the work-items: each unit goes through all the iterations, so every round costs as much as
 * the first. Measured on one work-group of 1024 (H200, ResNet-18's 112 max-pool ALUs of 1008
 * iterations onto 112 destinations): default's 16 lanes (1.75 rounds) faster than in
 * sequential order, cloud32's 32 lanes (3.5 rounds) slower. */
static int by_destination_fits(__local const vta_compute_t *c, __local const vta_work_t *wk,
                               const vta_grid_t *g) {
  ulong span = last_index(c, wk->max_dst, c->dst_fo, c->dst_fi) + 1ul - wk->min_dst;
  return span * ACC_LANES <= 2ul * g->parts * N_ITEMS;
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
/* The grid: many work-groups run one program (vta_grid). Every work-group runs the same      */
/* machine on its work-item 0 (it depends on the instruction stream alone, so all of them     */
/* start the same instructions in the same order and stop at the same one) and executes its    */
/* parts of each instruction's element loops; the shared buffers live in one scratch. A        */
/* work-group waits for the others (grid_wait) only before an instruction that touches what    */
/* another work-group may still be writing or reading: grid_hazard tracks, per buffer, the     */
/* index ranges written and read since the last wait.                                          */
/* ------------------------------------------------------------------------------------------ */
#define SPAN_INP 0
#define SPAN_WGT 1
#define SPAN_ACC 2 /* acc and out: one index space */
#define SPAN_DRAM 3 /* bytes */
#define SPANS 4
typedef struct {
  ulong lo[SPANS], hi[SPANS]; /* [lo, hi) per buffer; empty when lo >= hi */
} vta_spans_t;
typedef struct {
  vta_spans_t wrote, read; /* since the last wait */
  uint waits;              /* grid_wait calls so far */
  int seq;                 /* the last instruction ran in sequential order on part 0 only */
} vta_hazard_t;

static void spans_clear(vta_spans_t *s) {
  for (int b = 0; b < SPANS; ++b) s->lo[b] = s->hi[b] = 0ul;
}

static void span_add(vta_spans_t *s, int b, ulong lo, ulong hi) {
  if (lo >= hi) return;
  if (s->lo[b] >= s->hi[b]) {
    s->lo[b] = lo;
    s->hi[b] = hi;
  } else {
    s->lo[b] = min(s->lo[b], lo);
    s->hi[b] = max(s->hi[b], hi);
  }
}

static int spans_meet(const vta_spans_t *a, const vta_spans_t *b) {
  for (int k = 0; k < SPANS; ++k)
    if (a->lo[k] < a->hi[k] && b->lo[k] < b->hi[k] && a->lo[k] < b->hi[k] &&
        b->lo[k] < a->hi[k])
      return 1;
  return 0;
}

/* The DRAM bytes of a LOAD / STORE's rows. */
static void span_dram(vta_spans_t *s, const vta_mem_t *m, uint elem) {
  ulong last = (ulong)m->dram_base + (ulong)(m->y_size - 1u) * m->x_stride + m->x_size;
  span_add(s, SPAN_DRAM, (ulong)m->dram_base * elem, last * elem);
}

/* Indices a GEMM / ALU reaches from micro-op indices lo .. hi over its iterations. */
static void span_uops(vta_spans_t *s, int b, __local const vta_compute_t *c, uint lo, uint hi,
                      uint f_out, uint f_in) {
  span_add(s, b, lo, last_index(c, hi, f_out, f_in) + 1ul);
}

/* What the published instruction reads and writes of the shared buffers (after the plan's
 * first phase: the micro-op index ranges). A LOAD UOP writes the work-group's own buffer. */
static void insn_spans(__local const vta_work_t *wk, vta_spans_t *rd, vta_spans_t *wr) {
  spans_clear(rd);
  spans_clear(wr);
  __local const vta_compute_t *c = &wk->compute;
  if (wk->op == VTA_OPCODE_LOAD && wk->moves) {
    vta_load_t l = wk->load;
    span_dram(rd, &l.m, l.dram_elem);
    int b = l.m.mt == VTA_MEM_ID_INP ? SPAN_INP : l.m.mt == VTA_MEM_ID_WGT ? SPAN_WGT : SPAN_ACC;
    if (l.m.mt != VTA_MEM_ID_UOP)
      span_add(wr, b, l.m.sram_base, (ulong)l.m.sram_base + (ulong)l.rows * l.row);
  } else if (wk->op == VTA_OPCODE_STORE && wk->moves) {
    vta_mem_t m = wk->store;
    span_add(rd, SPAN_ACC, m.sram_base, (ulong)m.sram_base + (ulong)m.y_size * m.x_size);
    span_dram(wr, &m, VTA_OUT_ELEM_BYTES);
  } else if (wk->active) {
    span_uops(wr, SPAN_ACC, c, wk->min_dst, wk->max_dst, c->dst_fo, c->dst_fi);
    if (c->is_gemm && !c->reset) {
      span_uops(rd, SPAN_ACC, c, wk->min_dst, wk->max_dst, c->dst_fo, c->dst_fi);
      span_uops(rd, SPAN_INP, c, wk->min_src, wk->max_src, c->src_fo, c->src_fi);
      span_uops(rd, SPAN_WGT, c, wk->min_wgt, wk->max_wgt, c->wgt_fo, c->wgt_fi);
    } else if (!c->is_gemm) {
      span_uops(rd, SPAN_ACC, c, wk->min_dst, wk->max_dst, c->dst_fo, c->dst_fi);
      if (!c->use_imm) span_uops(rd, SPAN_ACC, c, wk->min_src, wk->max_src, c->src_fo, c->src_fi);
    }
  }
}

/* Work-item 0: wait until every work-group of the grid has arrived here (the k-th wait of each
 * work-group meets the others' k-th: they all wait at the same instructions). The fences make
 * the writes of the work-group before it (after a barrier) visible to the others after theirs. */
#define GRID_SPIN_LIMIT (1u << 28)
static int grid_wait(const vta_grid_t *g, vta_hazard_t *h) {
  ++h->waits;
  spans_clear(&h->wrote);
  spans_clear(&h->read);
  if (g->parts == 1u) return 1; /* one work-group, one part: nothing to wait for */
  GRID_FENCE();
  atomic_inc(g->sync);
  uint target = h->waits * g->groups;
  /* A guard, not a schedule: the host launches no more work-groups than can be resident at
   * once, so the others come; if one never did, the run stops (TIMEOUT) instead of hanging. */
  for (uint spin = 0u; (int)(g->sync[0] - target) < 0; ++spin)
    if (spin == GRID_SPIN_LIMIT) return 0;
  GRID_FENCE();
  return 1;
}

/* Work-item 0, after an instruction that ran in sequential order on part 0 alone (its
 * work-group wrote every index it touched, and may have stopped on an error): the grid waits,
 * and every work-group takes part 0's error. */
#define SYNC_ERROR 1 /* sync words 1 .. 3: part 0's error, index, argument */
static void grid_error(const vta_grid_t *g, vta_hazard_t *h, vta_err_t *e) {
  h->seq = 0;
  if (g->groups == 1u) return;
  if (g->first == 0u) {
    g->sync[SYNC_ERROR] = e->error;
    g->sync[SYNC_ERROR + 1] = e->error_index;
    g->sync[SYNC_ERROR + 2] = e->error_arg;
  }
  if (!grid_wait(g, h)) {
    set_error(e, VTA_STOP_BUDGET, e->error_index, 0u);
    return;
  }
  if (g->first != 0u && g->sync[SYNC_ERROR] != VTA_ERR_NONE)
    set_error(e, g->sync[SYNC_ERROR], g->sync[SYNC_ERROR + 1], g->sync[SYNC_ERROR + 2]);
}

/* Work-item 0, before the published instruction executes: wait for the grid when it touches
 * what the work-groups wrote or read since the last wait. Returns 0 when the wait gave up
 * (grid_wait). */
static int grid_hazard(const vta_grid_t *g, vta_hazard_t *h, __local const vta_work_t *wk) {
  if (g->parts == 1u) return 1; /* one work-group, one part: its barriers order everything */
  vta_spans_t rd, wr;
  insn_spans(wk, &rd, &wr);
  int ok = 1;
  if (spans_meet(&rd, &h->wrote) || spans_meet(&wr, &h->wrote) || spans_meet(&wr, &h->read))
    ok = grid_wait(g, h);
  for (int b = 0; b < SPANS; ++b) {
    span_add(&h->wrote, b, wr.lo[b], wr.hi[b]);
    span_add(&h->read, b, rd.lo[b], rd.hi[b]);
  }
  return ok;
}

/* ------------------------------------------------------------------------------------------ */
/* One program on the work-group (or on the grid's work-groups).                               */
/* ------------------------------------------------------------------------------------------ */

/* Work-item 0: start the next instruction and publish it, decoded. */
static void publish_next(vta_machine_t *m, __global const ulong *stream, uint insn_count,
                         ulong dram_bytes, vta_budget_t *b, vta_err_t *e,
                         __local vta_work_t *wk) {
  uint i = 0u;
  int s = 0;
  wk->has = e->error == VTA_ERR_NONE && machine_next(m, stream, insn_count, &i, &s);
  wk->index = i;
  wk->stage = s;
  wk->active = wk->moves = 0u;
  if (!wk->has) return;
  ulong w0 = stream[2ul * i], w1 = stream[2ul * i + 1ul];
  if (!budget_take(b, w0, w1, i, e)) {
    wk->has = 0u;
    return;
  }
  uint op = F(w0, w1, MEM_OPCODE);
  wk->op = op;
  if (op == VTA_OPCODE_LOAD) {
    vta_load_t l;
    wk->moves = decode_load(i, w0, w1, dram_bytes, &l, e);
    wk->load = l;
  } else if (op == VTA_OPCODE_STORE) {
    vta_mem_t st;
    wk->moves = decode_store(i, w0, w1, dram_bytes, &st, e);
    wk->store = st;
  } else if (op == VTA_OPCODE_GEMM || op == VTA_OPCODE_ALU) {
    vta_compute_t c;
    if (!decode_compute(i, w0, w1, &c, e)) return; /* work-item 0's error stops the machine */
    wk->compute = c;
    wk->active = (ulong)c.iter_out * c.iter_in * (c.uop_end - c.uop_bgn) != 0ul;
    wk->max_dst = wk->max_src = wk->max_wgt = 0u;
    wk->min_dst = wk->min_src = wk->min_wgt = 0xFFFFFFFFu;
    wk->conflict = wk->alias = 0u;
  } else if (op != VTA_OPCODE_FINISH) {
    set_error(e, VTA_ERR_OPCODE, i, op);
  }
}

static void group_run(const vta_grid_t *g, uint insn_count, __global const ulong *stream,
                      __global uchar *uops, __global uchar *biases, __global uchar *inputs,
                      __global uchar *weights, __global uchar *outputs, ulong dram_bytes,
                      UOP_SPACE uint *uop_mem, __global uchar *slot, __global uint *ctrl,
                      __local vta_work_t *wk) {
  uint lid = get_local_id(0);
  __global uchar *inp_buf = slot + OFF_INP, *wgt_buf = slot + OFF_WGT;
  __global uchar *acc_buf = slot + OFF_ACC, *out_buf = slot + OFF_OUT;
  __global const char *inp = (__global const char *)inp_buf;
  __global const char *wgt = (__global const char *)wgt_buf;
  __global int *acc = (__global int *)acc_buf;
  __global char *out = (__global char *)out_buf;
  __local const vta_compute_t *c = &wk->compute;
  uint last = g->first + g->count;
  int has_part0 = g->first == 0u; /* the sequential path runs on part 0 alone */
  group_reset(g, slot, uop_mem);
  for (uint t = lid; t < N_ITEMS; t += N_ITEMS) wk->red[t] = 0;
  long split_ix = -1; /* gemm_split's destination this work-item finishes, and the width */
  uint split_width = 1u;

  vta_machine_t m; /* work-item 0's */
  vta_budget_t b;
  vta_err_t e;
  vta_hazard_t h;
  e.error = VTA_ERR_NONE;
  e.error_index = e.error_arg = 0u;
  ulong gemm_iters = 0ul, alu_iters = 0ul;
  int finished = 0;
  if (lid == 0u) {
    machine_init(&m, stream, insn_count);
    budget_init(&b, ctrl);
    h.waits = 0u;
    h.seq = 0;
  }
  barrier(GROUP_FENCE);
  if (lid == 0u && !grid_wait(g, &h)) set_error(&e, VTA_STOP_BUDGET, 0u, 0u); /* the reset */
#ifdef VTA_MACHINE_ONLY
  if (lid == 0u) {
    uint i;
    int st;
    while (machine_next(&m, stream, insn_count, &i, &st)) {
      if (F(stream[2ul * i], 0ul, MEM_OPCODE) == VTA_OPCODE_FINISH) finished = 1;
      machine_retire(&m, st, i, stream[2ul * i]);
    }
  }
  if (lid == 0u) wk->has = 0u;
  barrier(GROUP_FENCE);
#endif
  for (;;) {
    gemm_split_finish(split_ix, split_width, acc, out, wk);
    split_ix = -1;
    if (lid == 0u) {
      if (h.seq) grid_error(g, &h, &e); /* part 0's error, if any, reaches every work-group */
      publish_next(&m, stream, insn_count, dram_bytes, &b, &e, wk);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!wk->has) break;
    uint i = wk->index, active = wk->active, op = wk->op;
    if (op == VTA_OPCODE_FINISH) finished = 1;
    /* GEMM / ALU: plan in phases. */
#ifdef VTA_SKIP_PLAN
    active = 0u;
#endif
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
    /* The grid waits here when the instruction needs it (work-item 0; the others at the
     * barrier). A wait that gave up stops the run before this instruction. */
    if (lid == 0u) {
      wk->go = grid_hazard(g, &h, wk);
      if (!wk->go) set_error(&e, VTA_STOP_BUDGET, i, 0u);
    }
    barrier(GROUP_FENCE);
    int go = wk->go; /* else the machine stops at the next publish_next */
#ifdef VTA_SKIP_EXEC
    go = 0;
#endif
    if (go && op == VTA_OPCODE_LOAD && wk->moves) {
      if (wk->load.m.mt == VTA_MEM_ID_UOP) {
        group_load_uops(&wk->load, uops, uop_mem);
      } else {
        for (uint p = g->first; p < last; ++p)
          group_load(&wk->load, p, g->parts, biases, inputs, weights, inp_buf, wgt_buf, acc_buf);
      }
    } else if (go && op == VTA_OPCODE_STORE && wk->moves) {
      for (uint p = g->first; p < last; ++p) group_store(&wk->store, p, g->parts, outputs, out_buf);
    }
    if (go && active) {
      int reset = ok && c->is_gemm && c->reset;
      int disjoint = (mac || alu) && !wk->conflict && !wk->alias;
      int by_dst = (mac || alu) && wk->conflict && !wk->alias && by_destination_fits(c, wk, g);
      uint block = 0u;
      /* Split on a grid only: one work-group (a batch) is bound by its multiply-add rate, where
       * gemm_parallel's shared weight rows do better. */
      split_width = mac && disjoint && g->parts > 1u ? gemm_split_width(c, wk, g->groups, &block)
                                                     : 1u;
      if (split_width > 1u) {
        split_ix = gemm_split(c, uop_mem, inp, wgt, wk, g->first / g->count, block, split_width);
      } else if (mac && disjoint) {
        for (uint p = g->first; p < last; ++p)
          gemm_parallel(c, uop_mem, inp, wgt, acc, out, wk, p, g->parts);
      } else if (reset || (alu && disjoint)) {
        for (uint p = g->first; p < last; ++p)
          elementwise_parallel(c, uop_mem, acc, out, p, g->parts);
      } else if (by_dst) {
        for (uint p = g->first; p < last; ++p)
          compute_by_destination(c, uop_mem, inp, wgt, acc, out, wk, p, g->parts);
      } else {
        if (has_part0 && !compute_sequential(i, c, uop_mem, inp, wgt, acc, out, &e)) n = 0ul;
        if (lid == 0u) h.seq = 1;
      }
      if (c->is_gemm) gemm_iters += n;
      else alu_iters += n;
    }
    if (lid == 0u && wk->go) machine_retire(&m, wk->stage, i, stream[2ul * i]);
    barrier(GROUP_FENCE);
  }
  if (lid == 0u && g->first == 0u) {
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
  vta_grid_t g = {0u, 1u, 1u, 1u, (__global volatile uint *)scratch};
  group_run(&g, insn_count, insns + 2ul * insns_offset, (__global uchar *)uops,
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
  vta_grid_t g = {0u, 1u, 1u, 1u, (__global volatile uint *)scratch};
  for (uint j = get_group_id(0); j < n_programs; j += get_num_groups(0)) {
    __global const uint *d = progs + 4ul * j;
    __global uchar *base = mem + ((ulong)d[2] | ((ulong)d[3] << 32));
    __global uint *c = ctrl + (ulong)CTRL_WORDS * j;
    ulong dram_bytes = (ulong)c[CTRL_DRAM_LO] | ((ulong)c[CTRL_DRAM_HI] << 32);
    group_run(&g, d[0], (__global const ulong *)base + 2ul * d[1], base, base, base, base, base,
              dram_bytes, uop_mem, slot, c, &wk);
    barrier(GROUP_FENCE);
  }
}

/* One program on the whole grid: the nine arguments of vta_core, then the grid's words (zeroed
 * by the host before each launch: word 0 the arrival count of grid_wait, words 1 .. 3 part 0's
 * error; from byte VTA_CTRL_BYTES on, without VTA_LOCAL_UOP, each work-group's micro-op buffer)
 * and the parts each instruction is split into: a multiple of the work-groups, each running
 * parts / groups of them in turn (more parts than work-groups: the split without the
 * concurrency, for tests on a CPU). Every work-group of the launch must be resident at once
 * (the host launches at most one per compute unit). Work-group 0 writes the control block. */
__kernel __attribute__((reqd_work_group_size(VTA_GROUP_SIZE, 1, 1))) void vta_grid(
    uint insn_count, uint insns_offset, __global ulong *insns, __global uint *uops,
    __global int *biases, __global char *inputs, __global char *weights, __global char *outputs,
    __global uint *scratch, __global uint *grid, uint parts) {
  __local vta_work_t wk;
#ifdef VTA_LOCAL_UOP
  __local uint uop_mem[VTA_UOP_DEPTH];
#else
  __global uint *uop_mem =
      (__global uint *)((__global uchar *)grid + VTA_CTRL_BYTES + get_group_id(0) * UOP_BUF_BYTES);
#endif
  uint per = parts / get_num_groups(0);
  vta_grid_t g = {get_group_id(0) * per, per, parts, get_num_groups(0),
                  (__global volatile uint *)grid};
  ulong dram_bytes = (ulong)scratch[CTRL_DRAM_LO] | ((ulong)scratch[CTRL_DRAM_HI] << 32);
  group_run(&g, insn_count, insns + 2ul * insns_offset, (__global uchar *)uops,
            (__global uchar *)biases, (__global uchar *)inputs, (__global uchar *)weights,
            (__global uchar *)outputs, dram_bytes, uop_mem, (__global uchar *)scratch, scratch,
            &wk);
}
