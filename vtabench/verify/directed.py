"""Directed programs: small deterministic programs that together exercise every instruction
kind's semantics (GEMM loops and resets, every ALU op with immediate and tensor operands, hazards,
padded and strided loads and stores, tokens). Every program works for every configuration."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from vtabench.spec.config import Config
from vtabench.spec.isa.layout import AluOp, MemType
from vtabench.spec.program import Program
from vtabench.verify.builder import (
    INT32_MAX,
    INT32_MIN,
    ProgramBuilder,
    Tokens,
    extreme_acc,
    random_tiles,
)


def _identity_wgt(cfg: Config) -> np.ndarray:
    return np.eye(cfg.block_out, cfg.block_in, dtype=np.int8)[None]


def _gemm_loops(cfg: Config, rng: np.random.Generator) -> Program:
    """GEMM with both loop levels, factors on dst, src and wgt, and a strided 2-D WGT load."""
    p = ProgramBuilder(cfg)
    n_inp, n_wgt = 24, 8
    inp = p.data(MemType.INP, random_tiles(cfg, rng, MemType.INP, n_inp))
    wgt_dram = p.data(MemType.WGT, random_tiles(cfg, rng, MemType.WGT, 2 * n_wgt))
    p.load(MemType.INP, 0, inp, 1, n_inp)
    p.load(MemType.WGT, 0, wgt_dram, 2, n_wgt // 2, stride=n_wgt)  # DRAM tiles 0-3 and 8-11
    p.noop(MemType.INP, Tokens(push_next=True))
    zero = p.load_uops(0, dst=[0, 1, 2])
    kernel = p.load_uops(3, dst=[0, 1, 2], src=[0, 5, 1], wgt=[0, 1, 3], tok=Tokens(pop_prev=True))
    p.gemm(zero, (2, 2), dst=(6, 3), reset=True)
    # a = u.dst + 6*i0 + 2*i1 (overlapping dsts accumulate), s = u.src + 4*i0 + i1,
    # w = u.wgt + 4*i0: every index stays inside the 12 acc, 24 inp and 8 wgt tiles.
    p.gemm(kernel, (2, 2), dst=(6, 2), src=(4, 1), wgt=(4, 0))
    p.gemm(kernel, (1, 2), dst=(0, 1), src=(3, 7), wgt=(0, 1))
    n_acc = 12  # every dst the loops reach (the reset covers exactly these)
    out = p.alloc(MemType.OUT, n_acc, fill=0x5A)
    p.store_synced(0, out, 1, n_acc)
    p.store_acc32(0, n_acc, 64, 16)
    p.finish()
    return p.build("gemm_loops")


def _gemm_reset(cfg: Config, rng: np.random.Generator) -> Program:
    """Accumulation onto loaded acc values, then a reset of part of it (acc and out to 0)."""
    p = ProgramBuilder(cfg)
    acc = p.data(MemType.ACC, extreme_acc(cfg, rng, 6))
    inp = p.data(MemType.INP, random_tiles(cfg, rng, MemType.INP, 6))
    wgt = p.data(MemType.WGT, random_tiles(cfg, rng, MemType.WGT, 2))
    p.load(MemType.INP, 0, inp, 1, 6)
    p.load(MemType.WGT, 0, wgt, 1, 2, tok=Tokens(push_next=True))
    p.load(MemType.ACC, 0, acc, 1, 6, tok=Tokens(pop_prev=True))
    k = p.load_uops(0, dst=[0, 1, 2, 3, 4, 5], src=[5, 4, 3, 2, 1, 0], wgt=[0, 1, 0, 1, 0, 1])
    p.gemm(k, (1, 1))
    p.gemm(k, (1, 1))  # out = low byte of twice-accumulated values
    r = p.load_uops(6, dst=[1])
    p.gemm(r, (2, 1), dst=(3, 0), reset=True)  # resets 1 and 4 (acc and out)
    out = p.alloc(MemType.OUT, 6, fill=0x77)
    p.store_synced(0, out, 1, 6)
    p.store_acc32(0, 6, 32, 16)
    p.finish()
    return p.build("gemm_reset")


def _gemm_dst_repeat(cfg: Config, rng: np.random.Generator) -> Program:
    """A dst repeated in consecutive micro-ops (distance 1) and at distance 2, and an inner-loop
    reduction (dst_factor_in = 0)."""
    p = ProgramBuilder(cfg)
    inp = p.data(MemType.INP, random_tiles(cfg, rng, MemType.INP, 8))
    wgt = p.data(MemType.WGT, random_tiles(cfg, rng, MemType.WGT, 4))
    p.load(MemType.INP, 0, inp, 1, 8)
    p.load(MemType.WGT, 0, wgt, 1, 4, tok=Tokens(push_next=True))
    zero = p.load_uops(0, dst=[0, 1, 2, 3], tok=Tokens(pop_prev=True))
    p.gemm(zero, (1, 1), reset=True)
    k = p.load_uops(4, dst=[0, 0, 1, 2, 1, 2], src=[0, 1, 2, 3, 4, 5], wgt=[0, 1, 2, 3, 0, 1])
    p.gemm(k, (2, 1), src=(1, 0), wgt=(0, 0))
    red = p.load_uops(10, dst=[3], src=[0], wgt=[2])
    p.gemm(red, (1, 8), dst=(0, 0), src=(0, 1))  # acc[3] += sum of 8 products
    out = p.alloc(MemType.OUT, 4, fill=0x33)
    p.store_synced(0, out, 1, 4)
    p.store_acc32(0, 4, 16, 12)
    p.finish()
    return p.build("gemm_dst_repeat")


SHIFT_AMOUNTS = (0, 1, 7, 31, 32, 33, 40, 32767, -1, -8, -31, -32, -33, -40, -32768)
IMM_VALUES = (0, 1, -1, 7, -7, 255, -256, 32767, -32768)


def _alu_imm(cfg: Config, rng: np.random.Generator, op: AluOp) -> Program:
    """One ALU op with an immediate operand, one instruction per immediate, over int32 corner
    values; SHR takes every class of shift amount (negative, >= 32, <= -32)."""
    imms = SHIFT_AMOUNTS if op == AluOp.SHR else IMM_VALUES
    p = ProgramBuilder(cfg)
    n = 2
    region = len(imms) * n
    acc = p.data(MemType.ACC, np.concatenate([extreme_acc(cfg, rng, n)] * len(imms)))
    p.load(MemType.ACC, 0, acc, 1, region)
    p.load_uops(0, dst=[j * n for j in range(len(imms))])
    for j, imm in enumerate(imms):
        p.alu(op, (j, j + 1), (n, 1), dst=(1, 0), imm=imm)
    out = p.alloc(MemType.OUT, region, fill=0x11)
    p.store_synced(0, out, 1, region)
    p.store_acc32(0, region, region, len(imms))
    p.finish()
    return p.build(f"alu_{op.name.lower()}_imm")


def _alu_tensor(cfg: Config, rng: np.random.Generator, op: AluOp) -> Program:
    """One ALU op with acc operands, both loop levels, operands from corner values (and, for
    SHR, shift amounts of every class), and in-order iterations: a second pass where each
    iteration reads the dst its predecessor wrote (a running chain)."""
    p = ProgramBuilder(cfg)
    n = 4
    a_vals = extreme_acc(cfg, rng, n)
    if op == AluOp.SHR:
        amounts = np.array(SHIFT_AMOUNTS + (INT32_MIN, INT32_MAX), np.int32)
        b_vals = rng.choice(amounts, size=a_vals.shape).astype(np.int32)
    else:
        b_vals = np.roll(extreme_acc(cfg, rng, n), 3)
    acc = p.data(MemType.ACC, np.concatenate([a_vals, b_vals]))
    p.load(MemType.ACC, 0, acc, 1, 2 * n)
    k = p.load_uops(0, dst=[0], src=[n])
    p.alu(op, k, (2, 2), dst=(2, 1), src=(2, 1))  # acc[0..3] op= acc[4..7]
    chain = p.load_uops(1, dst=[1], src=[0])
    small = 2 if op in (AluOp.SHR, AluOp.MUL) else 3
    p.alu(op, chain, (1, small), dst=(0, 1), src=(0, 1))  # acc[i+1] op= acc[i], in order
    out = p.alloc(MemType.OUT, n, fill=0x22)
    p.store_synced(0, out, 1, n)  # out[n..] was never written
    p.store_acc32(0, 2 * n, 2 * n, 8)
    p.finish()
    return p.build(f"alu_{op.name.lower()}_tensor")


def _alu_hazards(cfg: Config, rng: np.random.Generator) -> Program:
    """ALU iterations that depend on each other: a dst repeated (ADD imm applied repeatedly), a
    reduction in the inner loop (MAX into one dst), and a write-after-read (each iteration reads
    a slot a later one overwrites)."""
    p = ProgramBuilder(cfg)
    vals = random_tiles(cfg, rng, MemType.ACC, 12, -1000, 1000)
    acc = p.data(MemType.ACC, vals)
    p.load(MemType.ACC, 0, acc, 1, 12)
    every = p.load_uops(12, dst=[0])
    p.alu(AluOp.ADD, every, (12, 1), dst=(1, 0), imm=0)  # defines out[0..11]
    rep = p.load_uops(0, dst=[0, 0, 1])
    p.alu(AluOp.ADD, rep, (3, 1), dst=(0, 0), imm=5)  # acc[0] += 30, acc[1] += 15
    red = p.load_uops(3, dst=[2], src=[3])
    p.alu(AluOp.MAX, red, (1, 5), dst=(0, 0), src=(0, 1))  # acc[2] = max(acc[2], acc[3..7])
    war = p.load_uops(4, dst=[8], src=[9])
    p.alu(AluOp.ADD, war, (1, 3), dst=(0, 1), src=(0, 1))  # acc[8+i] += acc[9+i], i = 0..2
    out = p.alloc(MemType.OUT, 12, fill=0x44)
    p.store_synced(0, out, 1, 12)
    p.store_acc32(0, 12, 12, 8)
    p.finish()
    return p.build("alu_hazards")


def _load_pad(cfg: Config, rng: np.random.Generator, mem: MemType) -> Program:
    """A padded 2-D load over a region first filled with nonzero data (so a pad that skips its
    element instead of writing zero shows), with a different amount on each side. INP is
    observed through an identity-weight GEMM; ACC and ACC_8BIT through all 32 bits."""
    p = ProgramBuilder(cfg)
    y, x, pads = 2, 2, (1, 1, 2, 1)  # y_pad_0, y_pad_1, x_pad_0, x_pad_1
    row = pads[2] + x + pads[3]
    total = (pads[0] + y + pads[1]) * row
    src_rows = 3  # x_stride > x: rows are not contiguous in DRAM
    stride = x + 2
    fill_mem = MemType.INP if mem == MemType.INP else MemType.ACC
    filler = p.data(fill_mem, random_tiles(cfg, rng, fill_mem, total, 1, 100))
    if mem == MemType.ACC:
        tiles = extreme_acc(cfg, rng, src_rows * stride)
    else:
        tiles = random_tiles(cfg, rng, MemType.INP if mem == MemType.INP else MemType.OUT,
                             src_rows * stride)
    data = p.data(mem, tiles)
    if mem == MemType.INP:
        p.load(MemType.INP, 0, filler, 1, total)
        p.load(MemType.INP, 0, data + 1, y, x, stride=stride, pads=pads)
        wgt = p.data(MemType.WGT, _identity_wgt(cfg))
        p.load(MemType.WGT, 0, wgt, 1, 1, tok=Tokens(push_next=True))
        k = p.load_uops(0, dst=[0], src=[0], wgt=[0], tok=Tokens(pop_prev=True))
        p.gemm(k, (total, 1), dst=(1, 0), reset=True)
        p.gemm(k, (total, 1), dst=(1, 0), src=(1, 0))
    else:
        p.load(MemType.ACC, 0, filler, 1, total)
        p.load(mem, 0, data + 1, y, x, stride=stride, pads=pads)
    p.store_acc32(0, total, total, 2)
    p.finish()
    return p.build(f"load_pad_{mem.name.lower()}")


def _load_store_2d(cfg: Config, rng: np.random.Generator) -> Program:
    """Strided 2-D INP load and strided 2-D STORE (DRAM gaps between rows stay untouched),
    narrowing of GEMM results, and a one-row STORE at an odd element offset."""
    p = ProgramBuilder(cfg)
    y, x, stride = 3, 4, 7
    inp = p.data(MemType.INP, random_tiles(cfg, rng, MemType.INP, y * stride))
    wgt = p.data(MemType.WGT, random_tiles(cfg, rng, MemType.WGT, 1))
    p.load(MemType.INP, 0, inp + 2, y, x, stride=stride)
    p.load(MemType.WGT, 0, wgt, 1, 1, tok=Tokens(push_next=True))
    k = p.load_uops(0, dst=[0], src=[0], wgt=[0], tok=Tokens(pop_prev=True))
    p.gemm(k, (y * x, 1), dst=(1, 0), reset=True)
    p.gemm(k, (y * x, 1), dst=(1, 0), src=(1, 0), tok=Tokens(push_next=True))
    out = p.alloc(MemType.OUT, y * 6 + 3, fill=0xC3)
    p.store(0, out + 1, y, x, stride=6, tok=Tokens(pop_prev=True))
    p.store(5, out + y * 6, 1, 2)
    p.finish()
    return p.build("load_store_2d")


def _tokens(cfg: Config, rng: np.random.Generator) -> Program:
    """Results that depend on the tokens being honoured.

    One inp slot is reloaded for every chunk: a load may only overwrite it after compute used
    the previous chunk (g2l). One out slot is rewritten for every chunk: compute may only
    overwrite it after the store drained it (s2g). A machine that ignores tokens lets loads run
    ahead (every GEMM sees the last chunk) or compute run ahead (every store sees the last result).
    """
    p = ProgramBuilder(cfg)
    chunks, n = 3, 2
    inp = p.data(MemType.INP, random_tiles(cfg, rng, MemType.INP, chunks * n))
    wgt = p.data(MemType.WGT, random_tiles(cfg, rng, MemType.WGT, 1))
    out = p.alloc(MemType.OUT, chunks * n, fill=0x99)
    k = p.load_uops(0, dst=[0], src=[0], wgt=[0])
    p.load(MemType.WGT, 0, wgt, 1, 1)
    for c in range(chunks):
        first, last = c == 0, c == chunks - 1
        p.load(MemType.INP, 0, inp + c * n, 1, n, tok=Tokens(pop_next=not first, push_next=True))
        p.gemm(k, (n, 1), dst=(1, 0), reset=True, tok=Tokens(pop_prev=True, pop_next=not first))
        p.gemm(k, (n, 1), dst=(1, 0), src=(1, 0), tok=Tokens(push_prev=not last, push_next=True))
        p.store(0, out + c * n, 1, n, tok=Tokens(pop_prev=True, push_prev=not last))
    p.finish()
    return p.build("tokens")


def directed_programs(cfg: Config) -> list[Program]:
    """Small deterministic programs covering every instruction kind's semantics."""
    makers: list[tuple[int, Callable[[np.random.Generator], Program]]] = [
        (1, lambda r: _gemm_loops(cfg, r)),
        (2, lambda r: _gemm_reset(cfg, r)),
        (3, lambda r: _gemm_dst_repeat(cfg, r)),
        (4, lambda r: _alu_hazards(cfg, r)),
        (5, lambda r: _load_store_2d(cfg, r)),
        (6, lambda r: _tokens(cfg, r)),
    ]
    for j, op in enumerate(AluOp):
        makers.append((10 + j, lambda r, op=op: _alu_imm(cfg, r, op)))
        makers.append((20 + j, lambda r, op=op: _alu_tensor(cfg, r, op)))
    for j, mem in enumerate((MemType.INP, MemType.ACC, MemType.ACC_8BIT)):
        makers.append((30 + j, lambda r, mem=mem: _load_pad(cfg, r, mem)))
    return [make(np.random.default_rng(seed)) for seed, make in makers]
