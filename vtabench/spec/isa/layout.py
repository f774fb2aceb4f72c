"""Bit layout of instructions and micro-ops, derived from a configuration.

Fields are packed from bit 0 upward in declaration order; a field that would straddle bit 64
starts at bit 64 instead (upstream's C bit-fields in 64-bit units). For the default configuration
this reproduces upstream VTA 0.0.2's ``hw_spec.h`` positions exactly (tests/test_isa.py holds the
upstream table). This is the one place field positions are computed: the Python ISA library, the
SystemVerilog package and the OpenCL header are all generated from :func:`insn_layout`.

The fixed field widths live here too; :mod:`vtabench.spec.config` imports this module to check
that a configuration's instructions fit, and this module names its ``Config`` for types only.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vtabench.spec.config import Config

INSN_BITS = 128
WORD_BITS = 64

# Fixed instruction field widths (upstream hw_spec.h).
SRAM_ADDR_BITS = 16
DRAM_ADDR_BITS = 32
SIZE_BITS = 16
STRIDE_BITS = 16
PAD_BITS = 4
LOOP_ITER_BITS = 14
IMM_BITS = 16
UOP_BITS = 32


class Opcode(IntEnum):
    LOAD = 0
    STORE = 1
    GEMM = 2
    FINISH = 3
    ALU = 4


class MemType(IntEnum):
    UOP = 0
    WGT = 1
    INP = 2
    ACC = 3
    OUT = 4
    ACC_8BIT = 5


class AluOp(IntEnum):
    MIN = 0
    MAX = 1
    ADD = 2
    SHR = 3
    MUL = 4


OPCODE_BITS = 3
MEMTYPE_BITS = 3
ALU_OPCODE_BITS = 3

#: Fields whose values are enum members (shown by name in assembly and JSON).
ENUM_FIELDS: dict[str, type[IntEnum]] = {
    "opcode": Opcode,
    "memory_type": MemType,
    "alu_opcode": AluOp,
}
#: Fields holding two's-complement signed values.
SIGNED_FIELDS = frozenset({"imm"})


@dataclass(frozen=True)
class Field:
    name: str
    lsb: int
    width: int

    @property
    def msb(self) -> int:
        return self.lsb + self.width - 1

    @cached_property
    def max(self) -> int:
        """Largest encodable value (as stored; for signed fields the raw pattern)."""
        return (1 << self.width) - 1

    @cached_property
    def value_range(self) -> tuple[int, int]:
        """Inclusive range of the value the field holds (signed fields are two's complement)."""
        if self.name in SIGNED_FIELDS:
            return -(1 << (self.width - 1)), (1 << (self.width - 1)) - 1
        return 0, self.max


def _field_widths(cfg: Config, op: Opcode) -> list[tuple[str, int]]:
    common = [("opcode", OPCODE_BITS), ("pop_prev_dep", 1), ("pop_next_dep", 1),
              ("push_prev_dep", 1), ("push_next_dep", 1)]
    if op in (Opcode.LOAD, Opcode.STORE):
        return common + [
            ("memory_type", MEMTYPE_BITS), ("sram_base", SRAM_ADDR_BITS),
            ("dram_base", DRAM_ADDR_BITS), ("y_size", SIZE_BITS), ("x_size", SIZE_BITS),
            ("x_stride", STRIDE_BITS), ("y_pad_0", PAD_BITS), ("y_pad_1", PAD_BITS),
            ("x_pad_0", PAD_BITS), ("x_pad_1", PAD_BITS)]
    if op == Opcode.FINISH:
        return common
    loops = [("reset_reg", 1), ("uop_bgn", cfg.log_uop_depth), ("uop_end", cfg.log_uop_depth + 1),
             ("iter_out", LOOP_ITER_BITS), ("iter_in", LOOP_ITER_BITS),
             ("dst_factor_out", cfg.log_acc_depth), ("dst_factor_in", cfg.log_acc_depth)]
    if op == Opcode.GEMM:
        return common + loops + [
            ("src_factor_out", cfg.log_inp_depth), ("src_factor_in", cfg.log_inp_depth),
            ("wgt_factor_out", cfg.log_wgt_depth), ("wgt_factor_in", cfg.log_wgt_depth)]
    return common + loops + [
        ("src_factor_out", cfg.log_acc_depth), ("src_factor_in", cfg.log_acc_depth),
        ("alu_opcode", ALU_OPCODE_BITS), ("use_imm", 1), ("imm", IMM_BITS)]


def _pack(widths: list[tuple[str, int]], total: int, unit: int) -> tuple[tuple[Field, ...], int]:
    fields: list[Field] = []
    pos = 0
    for name, width in widths:
        if pos // unit != (pos + width - 1) // unit:
            pos = (pos // unit + 1) * unit
        fields.append(Field(name, pos, width))
        pos += width
    return tuple(fields), pos


@dataclass(frozen=True)
class InsnLayout:
    opcode: Opcode
    fields: tuple[Field, ...]
    used_bits: int

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"{self.opcode.name} has no field {name!r}")

    @cached_property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    @cached_property
    def codec(self) -> tuple[tuple[str, int, int, int, int], ...]:
        """(name, lsb, raw mask, lowest, highest value) per field: what encoding and decoding
        an instruction of this kind read, computed once."""
        return tuple((f.name, f.lsb, f.max, *f.value_range) for f in self.fields)

    @cached_property
    def unused_mask(self) -> int:
        """The bits of a 128-bit instruction of this kind that no field covers (reserved)."""
        used = 0
        for f in self.fields:
            used |= f.max << f.lsb
        return ((1 << INSN_BITS) - 1) & ~used

    @cached_property
    def unused_words(self) -> tuple[int, int]:
        """:attr:`unused_mask` as its two 64-bit words, word 0 first."""
        mask = self.unused_mask
        return mask & ((1 << WORD_BITS) - 1), mask >> WORD_BITS


@dataclass(frozen=True)
class UopLayout:
    dst: Field
    src: Field
    wgt: Field

    @property
    def fields(self) -> tuple[Field, Field, Field]:
        """(dst, src, wgt): the order of every micro-op field tuple in the project."""
        return self.dst, self.src, self.wgt


@lru_cache(maxsize=None)
def insn_layout(cfg: Config, op: Opcode) -> InsnLayout:
    fields, used = _pack(_field_widths(cfg, op), INSN_BITS, WORD_BITS)
    return InsnLayout(op, fields, used)


@lru_cache(maxsize=None)
def uop_layout(cfg: Config) -> UopLayout:
    dst = Field("dst_idx", 0, cfg.log_acc_depth)
    src = Field("src_idx", dst.lsb + dst.width, cfg.uop_src_bits)
    wgt = Field("wgt_idx", src.lsb + src.width, cfg.log_wgt_depth)
    return UopLayout(dst, src, wgt)


def layout_overflow(cfg: Config) -> str | None:
    """Why an instruction kind of ``cfg`` does not fit 128 bits under the packing rule, or None
    when every kind fits (the configuration's loader raises the reason as its error)."""
    for op in Opcode:
        fields, used = _pack(_field_widths(cfg, op), INSN_BITS, WORD_BITS)
        if used > INSN_BITS:
            last = fields[-1]
            depth_keys = ("LOG_UOP_BUFF_SIZE", "LOG_ACC_BUFF_SIZE", "LOG_INP_BUFF_SIZE",
                          "LOG_WGT_BUFF_SIZE")
            widths = ", ".join(f"{f.name}={f.width}" for f in fields if f.lsb >= WORD_BITS)
            return (f"{op.name} instruction needs {used} bits (word 1: {widths}) but an "
                    f"instruction has {INSN_BITS}; field {last.name} ends at bit {last.msb}. "
                    f"Reduce buffer depths ({', '.join(depth_keys)}).")
    return None


def mem_elem_bytes(cfg: Config, mem: MemType) -> int:
    """Bytes of one element of a memory type in DRAM (what dram_base and x_stride count)."""
    try:
        return getattr(cfg, _ELEM_BYTES[mem])  # type: ignore[no-any-return]
    except KeyError:
        raise ValueError(f"{mem!r} is not a valid MemType") from None


def mem_depth(cfg: Config, mem: MemType) -> int:
    """Elements in the on-chip buffer a memory type addresses (ACC_8BIT loads into acc)."""
    return _depths(cfg)[MemType(mem)]


#: The Config attribute holding a memory type's element bytes (looked up without hashing the
#: configuration: the builder and fsim ask for every instruction).
_ELEM_BYTES = {MemType.UOP: "uop_elem_bytes", MemType.WGT: "wgt_elem_bytes",
               MemType.INP: "inp_elem_bytes", MemType.ACC: "acc_elem_bytes",
               MemType.OUT: "out_elem_bytes", MemType.ACC_8BIT: "acc8_elem_bytes"}


@lru_cache(maxsize=None)
def _depths(cfg: Config) -> dict[MemType, int]:
    return {MemType.UOP: cfg.uop_depth, MemType.WGT: cfg.wgt_depth, MemType.INP: cfg.inp_depth,
            MemType.ACC: cfg.acc_depth, MemType.OUT: cfg.out_depth,
            MemType.ACC_8BIT: cfg.acc_depth}
