"""A builder to write VTA test programs tersely.

:class:`ProgramBuilder` appends instructions and lays data (tiles, micro-op tables) out in a DRAM
image; :meth:`ProgramBuilder.build` makes the :class:`~vtabench.spec.program.Program` of both.
The tile generators (:func:`random_tiles`, :func:`extreme_acc`) give data in the builder's tile
shapes. Sizes derive from the configuration, so programs written with the builder work for every configuration.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vtabench.spec.config import Config
from vtabench.spec.isa.insn import Insn, encode_uops
from vtabench.spec.isa.layout import AluOp, MemType, Opcode, mem_elem_bytes
from vtabench.spec.program import Program

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1


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

    def build(self, name: str) -> Program:
        dram = np.frombuffer(bytes(self._dram), np.uint8).copy()
        return Program(name, list(self.insns), dram)

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


# --- tile data -------------------------------------------------------------------------------

def random_tiles(cfg: Config, rng: np.random.Generator, mem: MemType, n: int,
                 lo: int = -128, hi: int = 127) -> np.ndarray:
    """``n`` random tiles of ``mem``'s shape (see :class:`ProgramBuilder`), values in [lo, hi]."""
    b, bi, bo = cfg.batch, cfg.block_in, cfg.block_out
    shape = {MemType.WGT: (n, bo, bi), MemType.INP: (n, b, bi)}.get(mem, (n, b, bo))
    dtype = np.int32 if mem == MemType.ACC else np.int8
    return rng.integers(lo, hi, shape, endpoint=True).astype(dtype)


def extreme_acc(cfg: Config, rng: np.random.Generator, n: int) -> np.ndarray:
    """acc tiles whose first lanes are the int32 corner values, the rest random int32."""
    vals = random_tiles(cfg, rng, MemType.ACC, n, INT32_MIN, INT32_MAX).reshape(-1)
    corners = np.array([INT32_MIN, INT32_MAX, -1, 0, 1, INT32_MIN + 1, INT32_MAX - 1, 255, -256,
                        0x12345678, -0x12345678, 127, -128, 128, -129], np.int32)
    k = min(corners.size, vals.size)
    vals[:k] = corners[:k]
    return vals.reshape(n, cfg.batch, cfg.block_out)
