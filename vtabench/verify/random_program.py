"""Random programs: valid programs in double-buffered chunks whose tokens let the load, compute
and store stages overlap (the regression's and the cross-target tests' generator)."""

from __future__ import annotations

import numpy as np

from vtabench.spec.config import Config
from vtabench.spec.isa.layout import AluOp, MemType, mem_depth
from vtabench.verify.builder import (
    NO_TOKENS,
    ProgramBuilder,
    TestProgram,
    Tokens,
    extreme_acc,
    random_tiles,
)


def _random_2d(rng: np.random.Generator, limit: int,
               pads: bool) -> tuple[int, int, tuple[int, int, int, int]]:
    """(y_size, x_size, pads) of a load writing at most ``limit`` (>= 1) elements; now and then
    one side gets the largest pad (15)."""
    if pads and limit >= 16 and rng.random() < 0.08:
        big = [0, 0, 0, 0]
        big[int(rng.integers(0, 4))] = 15
        return 1, 1, tuple(big)  # type: ignore[return-value]
    while True:
        y, x = int(rng.integers(1, 4)), int(rng.integers(1, 9))
        p = tuple(int(v) for v in rng.integers(0, 3, 4)) if pads and rng.random() < 0.6 else (
            0, 0, 0, 0)
        if (p[0] + y + p[1]) * (p[2] + x + p[3]) <= limit:
            return y, x, p  # type: ignore[return-value]


def _random_loop(rng: np.random.Generator,
                 limits: list[int]) -> tuple[tuple[int, int], list[tuple[int, int]],
                                             list[np.ndarray]]:
    """Random loop counts, factors and micro-op indices keeping field k below ``limits[k]``."""
    iters = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    count = int(rng.integers(1, 6))
    factors, indices = [], []
    for limit in limits:
        fo, fi = (int(v) for v in rng.integers(0, 3, 2))
        if (iters[0] - 1) * fo + (iters[1] - 1) * fi >= limit:
            fo = fi = 0
        reach = (iters[0] - 1) * fo + (iters[1] - 1) * fi
        factors.append((fo, fi))
        indices.append(rng.integers(0, limit - reach, count))
    return iters, factors, indices


def _fill_buffers(p: ProgramBuilder, rng: np.random.Generator) -> None:
    """Edge case prologue: loads that fill whole buffers (the largest legal sizes), one of
    them 2-D. The chunks that follow overwrite whatever they later read."""
    cfg = p.cfg
    for mem in rng.permutation([MemType.UOP, MemType.INP, MemType.ACC, MemType.WGT])[:2]:
        mem = MemType(int(mem))
        depth = mem_depth(cfg, mem)
        rows = 2 if rng.random() < 0.5 else 1
        if mem == MemType.UOP:
            data = p.uop_table(np.zeros(depth, np.int64))[0]
        else:
            data = p.data(mem, random_tiles(cfg, rng, mem, depth))
        p.load(mem, 0, data, rows, depth // rows)


def random_program(cfg: Config, rng: np.random.Generator) -> TestProgram:
    """A valid random program in chunks whose tokens let load, compute and store overlap.

    Each chunk loads inp and wgt into one of two buffer halves (load stage), loads acc and runs
    random GEMMs and ALUs in one of two acc halves (compute), and stores that half (store).
    Tokens: compute pops the chunk's l2g; a load reusing a half pops the g2l that compute pushed
    two chunks earlier; compute reusing an acc half pops the s2g its last store pushed.
    """
    p = ProgramBuilder(cfg)
    chunks = int(rng.integers(2, 6))
    inp_half = min(cfg.inp_depth // 2, 32)
    wgt_half = min(cfg.wgt_depth // 2, 4)
    acc_half = min(cfg.acc_depth // 2, 32)
    uop_next = 0

    def uops(dst: np.ndarray, src: np.ndarray | int = 0, wgt: np.ndarray | int = 0,
             tok: Tokens = NO_TOKENS) -> tuple[int, int]:
        nonlocal uop_next
        if uop_next + np.size(dst) > cfg.uop_depth:
            uop_next = 0
        span = p.load_uops(uop_next, dst, src, wgt, tok=tok)
        uop_next = span[1]
        return span

    if rng.random() < 0.12:
        _fill_buffers(p, rng)
    for c in range(chunks):
        half, reuse_later = c % 2, c + 2 < chunks
        inp_base, wgt_base, acc_base = half * inp_half, half * wgt_half, half * acc_half
        # load stage
        y, x, pads = _random_2d(rng, inp_half, pads=True)
        stride = x + int(rng.integers(0, 3))
        data = p.data(MemType.INP, random_tiles(cfg, rng, MemType.INP, (y - 1) * stride + x))
        if c >= 2 and rng.random() < 0.2:  # the token wait as a separate load-stage no-op
            p.noop(MemType.INP, Tokens(pop_next=True))
            p.load(MemType.INP, inp_base, data, y, x, stride, pads)
        else:
            p.load(MemType.INP, inp_base, data, y, x, stride, pads, tok=Tokens(pop_next=c >= 2))
        inp_n = (pads[0] + y + pads[1]) * (pads[2] + x + pads[3])
        wgt = p.data(MemType.WGT, random_tiles(cfg, rng, MemType.WGT, wgt_half))
        p.load(MemType.WGT, wgt_base, wgt, 1, wgt_half, tok=Tokens(push_next=True))
        # compute stage: the acc half, defined everywhere it is read (acc and out)
        mem = MemType.ACC_8BIT if rng.random() < 0.3 else MemType.ACC
        y, x, pads = _random_2d(rng, acc_half, pads=True)
        if mem == MemType.ACC_8BIT:
            tiles = random_tiles(cfg, rng, MemType.OUT, y * x)
        elif rng.random() < 0.15:
            tiles = extreme_acc(cfg, rng, y * x)
        else:
            tiles = random_tiles(cfg, rng, MemType.ACC, y * x, -3000, 3000)
        p.load(mem, acc_base, p.data(mem, tiles), y, x, pads=pads,
               tok=Tokens(pop_prev=True, pop_next=c >= 2))
        acc_n = (pads[0] + y + pads[1]) * (pads[2] + x + pads[3])
        p.alu(AluOp.ADD, uops(np.array([acc_base])), (acc_n, 1), dst=(1, 0), imm=0)
        for _ in range(int(rng.integers(1, 5))):
            if rng.random() < 0.5:
                iters, f, (d, s, w) = _random_loop(rng, [acc_n, inp_n, wgt_half])
                p.gemm(uops(d + acc_base, s + inp_base, w + wgt_base), iters, f[0], f[1], f[2],
                       reset=bool(rng.random() < 0.15))
            else:
                iters, f, (d, s) = _random_loop(rng, [acc_n, acc_n])
                op = AluOp(int(rng.integers(0, len(AluOp))))
                imm = None
                if rng.random() < 0.5:
                    imm = int(rng.integers(-40, 41) if op == AluOp.SHR
                              else rng.integers(-(1 << 15), 1 << 15))
                    if rng.random() < 0.25:
                        imm = int(rng.choice([0, 1, -1, (1 << 15) - 1, -(1 << 15)]))
                p.alu(op, uops(d + acc_base, s + acc_base), iters, f[0], f[1], imm=imm)
        p.noop(MemType.ACC, Tokens(push_prev=reuse_later, push_next=True))
        # store stage
        rows = 2 if acc_n % 2 == 0 and rng.random() < 0.5 else 1
        gap = int(rng.integers(0, 3))
        out = p.alloc(MemType.OUT, rows * (acc_n // rows + gap), fill=0xEE)
        if rng.random() < 0.2:  # the token wait as a separate store-stage no-op
            p.noop(MemType.OUT, Tokens(pop_prev=True))
            p.store(acc_base, out, rows, acc_n // rows, acc_n // rows + gap,
                    tok=Tokens(push_prev=reuse_later))
        else:
            p.store(acc_base, out, rows, acc_n // rows, acc_n // rows + gap,
                    tok=Tokens(pop_prev=True, push_prev=reuse_later))
    p.finish()
    return p.build(f"random_{chunks}chunks")
