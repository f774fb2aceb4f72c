"""Test programs shared by every target's tests, and a builder to write programs tersely.

:class:`ProgramBuilder` appends instructions and lays data (tiles, micro-op tables) out in a DRAM
image. :func:`directed_programs` returns small deterministic programs that together exercise every
instruction kind's semantics; :func:`random_program` generates valid random programs whose tokens
let the three stages overlap. Every program here works for every configuration: sizes derive from
the configuration's batch, block and buffer depths.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from vtabench.spec.config import Config
from vtabench.spec.isa.insn import Insn, encode_uops
from vtabench.spec.isa.layout import AluOp, MemType, Opcode, mem_depth, mem_elem_bytes

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1


@dataclass
class TestProgram:
    """A program and the DRAM image (from byte 0) it runs against."""

    __test__ = False  # not a pytest class

    name: str
    insns: list[Insn]
    dram: np.ndarray  # uint8


@dataclass(frozen=True)
class Tokens:
    """Token flags of one instruction (docs/isa.md section 3)."""

    pop_prev: bool = False
    pop_next: bool = False
    push_prev: bool = False
    push_next: bool = False

    def fields(self) -> dict[str, int]:
        return {"pop_prev_dep": int(self.pop_prev), "pop_next_dep": int(self.pop_next),
                "push_prev_dep": int(self.push_prev), "push_next_dep": int(self.push_next)}


NO_TOKENS = Tokens()


class ProgramBuilder:
    """Appends instructions and lays out DRAM data.

    DRAM addresses are element indices of the memory type (``dram_base``), allocated upward
    from byte 0 and aligned to the element size. Data arrays are tile-shaped: inp / out / ACC_8BIT
    (n, batch, block) int8, wgt (n, block_out, block_in) int8, acc (n, batch, block) int32.
    """

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.insns: list[Insn] = []
        self._dram = bytearray()

    # --- DRAM layout ----------------------------------------------------------------------------
    def alloc(self, mem: MemType, count: int, fill: int = 0) -> int:
        """Reserve ``count`` elements of ``mem`` (bytes set to ``fill``); returns dram_base."""
        eb = mem_elem_bytes(self.cfg, mem)
        start = -(-len(self._dram) // eb) * eb
        self._dram.extend(b"\0" * (start - len(self._dram)))
        self._dram.extend(bytes([fill]) * (count * eb))
        return start // eb

    def data(self, mem: MemType, array: np.ndarray) -> int:
        """Place tiles in DRAM; returns their dram_base."""
        dtype = {MemType.ACC: "<i4", MemType.UOP: "<u4"}.get(mem, np.int8)
        raw = np.ascontiguousarray(array, dtype=dtype).view(np.uint8).reshape(-1)
        eb = mem_elem_bytes(self.cfg, mem)
        if raw.size % eb:
            raise ValueError(f"{raw.size} bytes is not a whole number of {mem.name} elements "
                             f"of {eb} bytes")
        base = self.alloc(mem, raw.size // eb)
        self._dram[base * eb:base * eb + raw.size] = raw.tobytes()
        return base

    def uop_table(self, dst: object, src: object = 0, wgt: object = 0) -> tuple[int, int]:
        """Place micro-ops in DRAM; returns (dram_base, count)."""
        uops = np.atleast_1d(encode_uops(self.cfg, np.asarray(dst), np.asarray(src),
                                         np.asarray(wgt)))
        return self.data(MemType.UOP, uops), uops.size

    # --- instructions ---------------------------------------------------------------------------
    def emit(self, insn: Insn) -> int:
        self.insns.append(insn)
        return len(self.insns) - 1

    def load(self, mem: MemType, sram: int, dram: int, y: int, x: int, stride: int | None = None,
             pads: tuple[int, int, int, int] = (0, 0, 0, 0), tok: Tokens = NO_TOKENS) -> int:
        """LOAD; ``pads`` = (y_pad_0, y_pad_1, x_pad_0, x_pad_1); stride defaults to x."""
        y0, y1, x0, x1 = pads
        return self.emit(Insn(Opcode.LOAD, memory_type=mem, sram_base=sram, dram_base=dram,
                              y_size=y, x_size=x, x_stride=x if stride is None else stride,
                              y_pad_0=y0, y_pad_1=y1, x_pad_0=x0, x_pad_1=x1, **tok.fields()))

    def store(self, sram: int, dram: int, y: int, x: int, stride: int | None = None,
              tok: Tokens = NO_TOKENS) -> int:
        return self.emit(Insn(Opcode.STORE, memory_type=MemType.OUT, sram_base=sram,
                              dram_base=dram, y_size=y, x_size=x,
                              x_stride=x if stride is None else stride, **tok.fields()))

    def store_synced(self, sram: int, dram: int, y: int, x: int,
                     stride: int | None = None) -> int:
        """A STORE fenced with tokens: it runs after every compute instruction before it, and
        compute continues only once it is done (compute no-op pushing g2s, STORE popping it and
        pushing s2g, compute no-op popping that). Returns the STORE's index."""
        self.noop(MemType.ACC, Tokens(push_next=True))
        index = self.store(sram, dram, y, x, stride, tok=Tokens(pop_prev=True, push_prev=True))
        self.noop(MemType.ACC, Tokens(pop_next=True))
        return index

    def noop(self, stage_mem: MemType, tok: Tokens) -> int:
        """A LOAD (of ``stage_mem``) or STORE (OUT) with x_size 0 that only carries tokens."""
        op = Opcode.STORE if stage_mem == MemType.OUT else Opcode.LOAD
        return self.emit(Insn(op, memory_type=stage_mem, **tok.fields()))

    def load_uops(self, sram: int, dst: object, src: object = 0, wgt: object = 0,
                  tok: Tokens = NO_TOKENS) -> tuple[int, int]:
        """Put a micro-op table in DRAM and LOAD it at ``sram``; returns (uop_bgn, uop_end)."""
        base, count = self.uop_table(dst, src, wgt)
        self.load(MemType.UOP, sram, base, 1, count, tok=tok)
        return sram, sram + count

    def gemm(self, uops: tuple[int, int], iters: tuple[int, int] = (1, 1),
             dst: tuple[int, int] = (0, 0), src: tuple[int, int] = (0, 0),
             wgt: tuple[int, int] = (0, 0), reset: bool = False, tok: Tokens = NO_TOKENS) -> int:
        """GEMM over micro-ops [uop_bgn, uop_end); ``iters`` = (iter_out, iter_in), factor pairs
        are (out, in)."""
        return self.emit(Insn(Opcode.GEMM, reset_reg=int(reset), uop_bgn=uops[0],
                              uop_end=uops[1], iter_out=iters[0], iter_in=iters[1],
                              dst_factor_out=dst[0], dst_factor_in=dst[1],
                              src_factor_out=src[0], src_factor_in=src[1],
                              wgt_factor_out=wgt[0], wgt_factor_in=wgt[1], **tok.fields()))

    def alu(self, op: AluOp, uops: tuple[int, int], iters: tuple[int, int] = (1, 1),
            dst: tuple[int, int] = (0, 0), src: tuple[int, int] = (0, 0), imm: int | None = None,
            tok: Tokens = NO_TOKENS) -> int:
        """ALU; with ``imm`` given the operand is the immediate, else acc[src]."""
        return self.emit(Insn(Opcode.ALU, alu_opcode=op, uop_bgn=uops[0], uop_end=uops[1],
                              iter_out=iters[0], iter_in=iters[1], dst_factor_out=dst[0],
                              dst_factor_in=dst[1], src_factor_out=src[0], src_factor_in=src[1],
                              use_imm=int(imm is not None), imm=imm or 0, **tok.fields()))

    def finish(self) -> int:
        return self.emit(Insn(Opcode.FINISH))

    def build(self, name: str) -> TestProgram:
        return TestProgram(name, list(self.insns), np.frombuffer(bytes(self._dram), np.uint8).copy())

    # --- idioms ---------------------------------------------------------------------------------
    def store_acc32(self, acc: int, count: int, scratch: int, uop_slot: int) -> int:
        """Store the full int32 values of acc[acc .. acc+count) (which stay unchanged).

        The out buffer only ever holds low bytes, so this copies the values to acc[scratch..]
        (zeroed by a reset GEMM, so nothing undefined is read) and stores byte k of every value
        after an arithmetic shift by 8k: four OUT regions of
        ``count`` elements, byte k at region k. Returns the dram_base of region 0.
        Uses micro-op slots ``uop_slot .. uop_slot + 1``.
        """
        dram = self.alloc(MemType.OUT, 4 * count, fill=0xA5)
        zero = self.load_uops(uop_slot, dst=scratch)
        copy = self.load_uops(uop_slot + 1, dst=scratch, src=acc)
        for k in range(4):
            self.gemm(zero, (count, 1), dst=(1, 0), reset=True)
            self.alu(AluOp.ADD, copy, (count, 1), dst=(1, 0), src=(1, 0))
            self.alu(AluOp.SHR, zero, (count, 1), dst=(1, 0), imm=8 * k)
            self.store_synced(scratch, dram + k * count, 1, count)
        return dram


# ---------------------------------------------------------------------------------------------
# Directed programs
# ---------------------------------------------------------------------------------------------

def _tiles(cfg: Config, rng: np.random.Generator, mem: MemType, n: int,
           lo: int = -128, hi: int = 127) -> np.ndarray:
    b, bi, bo = cfg.batch, cfg.block_in, cfg.block_out
    shape = {MemType.WGT: (n, bo, bi), MemType.INP: (n, b, bi)}.get(mem, (n, b, bo))
    dtype = np.int32 if mem == MemType.ACC else np.int8
    return rng.integers(lo, hi, shape, endpoint=True).astype(dtype)


def _extreme_acc(cfg: Config, rng: np.random.Generator, n: int) -> np.ndarray:
    """acc tiles whose first lanes are the int32 corner values, the rest random int32."""
    vals = _tiles(cfg, rng, MemType.ACC, n, INT32_MIN, INT32_MAX).reshape(-1)
    corners = np.array([INT32_MIN, INT32_MAX, -1, 0, 1, INT32_MIN + 1, INT32_MAX - 1, 255, -256,
                        0x12345678, -0x12345678, 127, -128, 128, -129], np.int32)
    k = min(corners.size, vals.size)
    vals[:k] = corners[:k]
    return vals.reshape(n, cfg.batch, cfg.block_out)


def _identity_wgt(cfg: Config) -> np.ndarray:
    return np.eye(cfg.block_out, cfg.block_in, dtype=np.int8)[None]


def _gemm_loops(cfg: Config, rng: np.random.Generator) -> TestProgram:
    """GEMM with both loop levels, factors on dst, src and wgt, and a strided 2-D WGT load."""
    p = ProgramBuilder(cfg)
    n_inp, n_wgt = 24, 8
    inp = p.data(MemType.INP, _tiles(cfg, rng, MemType.INP, n_inp))
    wgt_dram = p.data(MemType.WGT, _tiles(cfg, rng, MemType.WGT, 2 * n_wgt))
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


def _gemm_reset(cfg: Config, rng: np.random.Generator) -> TestProgram:
    """Accumulation onto loaded acc values, then a reset of part of it (acc and out to 0)."""
    p = ProgramBuilder(cfg)
    acc = p.data(MemType.ACC, _extreme_acc(cfg, rng, 6))
    inp = p.data(MemType.INP, _tiles(cfg, rng, MemType.INP, 6))
    wgt = p.data(MemType.WGT, _tiles(cfg, rng, MemType.WGT, 2))
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


def _gemm_dst_repeat(cfg: Config, rng: np.random.Generator) -> TestProgram:
    """A dst repeated in consecutive micro-ops (distance 1) and at distance 2, and an inner-loop
    reduction (dst_factor_in = 0)."""
    p = ProgramBuilder(cfg)
    inp = p.data(MemType.INP, _tiles(cfg, rng, MemType.INP, 8))
    wgt = p.data(MemType.WGT, _tiles(cfg, rng, MemType.WGT, 4))
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


def _alu_imm(cfg: Config, rng: np.random.Generator, op: AluOp) -> TestProgram:
    """One ALU op with an immediate operand, one instruction per immediate, over int32 corner
    values; SHR takes every class of shift amount (negative, >= 32, <= -32)."""
    imms = SHIFT_AMOUNTS if op == AluOp.SHR else IMM_VALUES
    p = ProgramBuilder(cfg)
    n = 2
    region = len(imms) * n
    acc = p.data(MemType.ACC, np.concatenate([_extreme_acc(cfg, rng, n)] * len(imms)))
    p.load(MemType.ACC, 0, acc, 1, region)
    p.load_uops(0, dst=[j * n for j in range(len(imms))])
    for j, imm in enumerate(imms):
        p.alu(op, (j, j + 1), (n, 1), dst=(1, 0), imm=imm)
    out = p.alloc(MemType.OUT, region, fill=0x11)
    p.store_synced(0, out, 1, region)
    p.store_acc32(0, region, region, len(imms))
    p.finish()
    return p.build(f"alu_{op.name.lower()}_imm")


def _alu_tensor(cfg: Config, rng: np.random.Generator, op: AluOp) -> TestProgram:
    """One ALU op with acc operands, both loop levels, operands from corner values (and, for
    SHR, shift amounts of every class), and in-order iterations: a second pass where each
    iteration reads the dst its predecessor wrote (a running chain)."""
    p = ProgramBuilder(cfg)
    n = 4
    a_vals = _extreme_acc(cfg, rng, n)
    if op == AluOp.SHR:
        amounts = np.array(SHIFT_AMOUNTS + (INT32_MIN, INT32_MAX), np.int32)
        b_vals = rng.choice(amounts, size=a_vals.shape).astype(np.int32)
    else:
        b_vals = np.roll(_extreme_acc(cfg, rng, n), 3)
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


def _alu_hazards(cfg: Config, rng: np.random.Generator) -> TestProgram:
    """ALU iterations that depend on each other: a dst repeated (ADD imm applied repeatedly), a
    reduction in the inner loop (MAX into one dst), and a write-after-read (each iteration reads
    a slot a later one overwrites)."""
    p = ProgramBuilder(cfg)
    vals = _tiles(cfg, rng, MemType.ACC, 12, -1000, 1000)
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


def _load_pad(cfg: Config, rng: np.random.Generator, mem: MemType) -> TestProgram:
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
    filler = p.data(fill_mem, _tiles(cfg, rng, fill_mem, total, 1, 100))
    if mem == MemType.ACC:
        tiles = _extreme_acc(cfg, rng, src_rows * stride)
    else:
        tiles = _tiles(cfg, rng, MemType.INP if mem == MemType.INP else MemType.OUT,
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


def _load_store_2d(cfg: Config, rng: np.random.Generator) -> TestProgram:
    """Strided 2-D INP load and strided 2-D STORE (DRAM gaps between rows stay untouched),
    narrowing of GEMM results, and a one-row STORE at an odd element offset."""
    p = ProgramBuilder(cfg)
    y, x, stride = 3, 4, 7
    inp = p.data(MemType.INP, _tiles(cfg, rng, MemType.INP, y * stride))
    wgt = p.data(MemType.WGT, _tiles(cfg, rng, MemType.WGT, 1))
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


def _tokens(cfg: Config, rng: np.random.Generator) -> TestProgram:
    """Results that depend on the tokens being honoured.

    One inp slot is reloaded for every chunk: a load may only overwrite it after compute used
    the previous chunk (g2l). One out slot is rewritten for every chunk: compute may only
    overwrite it after the store drained it (s2g). A machine that ignores tokens lets loads run
    ahead (every GEMM sees the last chunk) or compute run ahead (every store sees the last result).
    """
    p = ProgramBuilder(cfg)
    chunks, n = 3, 2
    inp = p.data(MemType.INP, _tiles(cfg, rng, MemType.INP, chunks * n))
    wgt = p.data(MemType.WGT, _tiles(cfg, rng, MemType.WGT, 1))
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


def directed_programs(cfg: Config) -> list[TestProgram]:
    """Small deterministic programs covering every instruction kind's semantics."""
    makers: list[tuple[int, Callable[[np.random.Generator], TestProgram]]] = [
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


# ---------------------------------------------------------------------------------------------
# Random programs
# ---------------------------------------------------------------------------------------------

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
            data = p.data(mem, _tiles(cfg, rng, mem, depth))
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
        data = p.data(MemType.INP, _tiles(cfg, rng, MemType.INP, (y - 1) * stride + x))
        if c >= 2 and rng.random() < 0.2:  # the token wait as a separate load-stage no-op
            p.noop(MemType.INP, Tokens(pop_next=True))
            p.load(MemType.INP, inp_base, data, y, x, stride, pads)
        else:
            p.load(MemType.INP, inp_base, data, y, x, stride, pads, tok=Tokens(pop_next=c >= 2))
        inp_n = (pads[0] + y + pads[1]) * (pads[2] + x + pads[3])
        wgt = p.data(MemType.WGT, _tiles(cfg, rng, MemType.WGT, wgt_half))
        p.load(MemType.WGT, wgt_base, wgt, 1, wgt_half, tok=Tokens(push_next=True))
        # compute stage: the acc half, defined everywhere it is read (acc and out)
        mem = MemType.ACC_8BIT if rng.random() < 0.3 else MemType.ACC
        y, x, pads = _random_2d(rng, acc_half, pads=True)
        if mem == MemType.ACC_8BIT:
            tiles = _tiles(cfg, rng, MemType.OUT, y * x)
        elif rng.random() < 0.15:
            tiles = _extreme_acc(cfg, rng, y * x)
        else:
            tiles = _tiles(cfg, rng, MemType.ACC, y * x, -3000, 3000)
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
