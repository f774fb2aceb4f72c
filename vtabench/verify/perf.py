"""Throughput programs for the RTL core (tests/test_rtl_core.py, bench/bench_rtl.py).

Each kind comes in sizes that differ only in the length of the measured phase, so the difference
of two runs' cycle counts removes the fixed cost (loads, pipeline fill, store) and gives the
steady-state rate: MACs per cycle for GEMM, micro-ops per cycle for ALU, bus beats per cycle for
loads. Every program is valid for every built-in configuration and is checked against fsim like
any other.
"""

from __future__ import annotations

import numpy as np

from vtabench.spec.config import Config
from vtabench.spec.isa.layout import AluOp, MemType
from vtabench.spec.program import Program
from vtabench.verify.builder import ProgramBuilder, Tokens

N_UOP = 64  # micro-ops of the measured kernel
ITER_IN = 16  # inner loop: dst advances by N_UOP, so 1024 acc tiles are written per outer pass
WGT_STEP = 16  # wgt tiles per outer pass


def gemm_program(cfg: Config, iter_out: int, seed: int = 0, max_iter_out: int = 24,
                 repeat: int = 1) -> tuple[Program, int]:
    """GEMM-bound program: returns (program, MACs of its measured GEMM).

    A 64-micro-op kernel (dst u, src u, wgt u % 16) runs iter_out x 16 times: dst = u + 64*i1,
    wgt = u % 16 + 16*i0; consecutive micro-op iterations never write the same acc tile. The
    weights for max_iter_out passes are loaded whatever iter_out is, so programs of different
    iter_out differ only in the GEMM's length.
    """
    max_iter_out = max(max_iter_out, iter_out)
    if max_iter_out > cfg.wgt_depth // WGT_STEP:
        raise ValueError(f"iter_out must be 1..{cfg.wgt_depth // WGT_STEP}")
    rng = np.random.default_rng(seed)
    p = ProgramBuilder(cfg)
    n_wgt = WGT_STEP * max_iter_out
    inp = p.data(MemType.INP, rng.integers(-128, 128, (N_UOP, cfg.batch, cfg.block_in),
                                           dtype=np.int8))
    wgt = p.data(MemType.WGT, rng.integers(-128, 128, (n_wgt, cfg.block_out, cfg.block_in),
                                           dtype=np.int8))
    p.load(MemType.INP, 0, inp, 1, N_UOP)
    p.load(MemType.WGT, 0, wgt, 1, n_wgt, tok=Tokens(push_next=True))
    u = np.arange(N_UOP)
    zero = p.load_uops(0, dst=u)
    kernel = p.load_uops(N_UOP, dst=u, src=u, wgt=u % WGT_STEP, tok=Tokens(pop_prev=True))
    n_acc = N_UOP * ITER_IN
    p.gemm(zero, (1, ITER_IN), dst=(0, N_UOP), reset=True)
    for r in range(repeat):  # repeats accumulate onto the same acc tiles
        p.gemm(kernel, (iter_out, ITER_IN), dst=(0, N_UOP), wgt=(WGT_STEP, 0),
               tok=Tokens(push_next=r == repeat - 1))
    out = p.alloc(MemType.OUT, n_acc, fill=0x5A)
    p.store(0, out, 1, n_acc, tok=Tokens(pop_prev=True))
    p.finish()
    macs = repeat * iter_out * ITER_IN * N_UOP * cfg.macs_per_cycle
    name = f"perf_gemm_{iter_out}" + (f"x{repeat}" if repeat > 1 else "")
    return p.build(name), macs


def alu_program(cfg: Config, iter_out: int, seed: int = 0) -> tuple[Program, int]:
    """ALU-bound program (tensor ADD over 64 micro-ops x iter_out x 16): returns (program,
    micro-op iterations of the measured ALU instruction)."""
    rng = np.random.default_rng(seed)
    p = ProgramBuilder(cfg)
    n_acc = N_UOP * ITER_IN
    acc = p.data(MemType.ACC, rng.integers(-1000, 1000, (N_UOP, cfg.batch, cfg.block_out),
                                           dtype=np.int32))
    p.load(MemType.ACC, n_acc, acc, 1, N_UOP)
    u = np.arange(N_UOP)
    zero = p.load_uops(0, dst=u)
    kernel = p.load_uops(N_UOP, dst=u, src=n_acc + u)
    p.gemm(zero, (1, ITER_IN), dst=(0, N_UOP), reset=True)
    p.alu(AluOp.ADD, kernel, (iter_out, ITER_IN), dst=(0, N_UOP), tok=Tokens(push_next=True))
    out = p.alloc(MemType.OUT, n_acc, fill=0x5A)
    p.store(0, out, 1, n_acc, tok=Tokens(pop_prev=True))
    p.finish()
    return p.build(f"perf_alu_{iter_out}"), iter_out * ITER_IN * N_UOP


def load_program(cfg: Config, n_tiles: int, seed: int = 0) -> tuple[Program, int]:
    """Load-bound program: one LOAD WGT of n_tiles contiguous tiles; returns (program, bus beats
    of that load: AXI_DATA_BITS / 8 bytes each)."""
    n_tiles = min(n_tiles, cfg.wgt_depth)
    rng = np.random.default_rng(seed)
    p = ProgramBuilder(cfg)
    wgt = p.data(MemType.WGT, rng.integers(-128, 128, (n_tiles, cfg.block_out, cfg.block_in),
                                           dtype=np.int8))
    p.load(MemType.WGT, 0, wgt, 1, n_tiles)
    p.finish()
    return p.build(f"perf_load_{n_tiles}"), n_tiles * cfg.wgt_elem_bytes // cfg.bus_bytes
