"""Instructions and micro-ops: the in-memory form, and encoding to / decoding from 128-bit words.

An :class:`Insn` carries the union of every kind's fields (unused ones stay 0); which fields belong
to a kind comes from its layout. Binary instruction files are little-endian 16-byte records, word 0
first (:func:`encode_program` / :func:`decode_program`).
"""

from __future__ import annotations

import operator
from dataclasses import asdict, dataclass, fields
from functools import lru_cache
from itertools import chain
from typing import TYPE_CHECKING

import numpy as np

from vtabench.spec.isa.layout import (ENUM_FIELDS, SIGNED_FIELDS, AluOp, Field, MemType, Opcode,
                                 insn_layout, uop_layout)

if TYPE_CHECKING:
    from vtabench.spec.config import Config

INSN_BYTES = 16


class EncodeError(ValueError):
    """A field value does not fit its instruction field; the message names index, field, limit.
    ``index`` and ``field`` say the same for programs (None where unknown)."""

    def __init__(self, message: str, index: int | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.index = index
        self.field = field


@dataclass
class Insn:
    opcode: Opcode
    pop_prev_dep: int = 0
    pop_next_dep: int = 0
    push_prev_dep: int = 0
    push_next_dep: int = 0
    # LOAD / STORE
    memory_type: MemType = MemType.UOP
    sram_base: int = 0
    dram_base: int = 0
    y_size: int = 0
    x_size: int = 0
    x_stride: int = 0
    y_pad_0: int = 0
    y_pad_1: int = 0
    x_pad_0: int = 0
    x_pad_1: int = 0
    # GEMM / ALU
    reset_reg: int = 0
    uop_bgn: int = 0
    uop_end: int = 0
    iter_out: int = 0
    iter_in: int = 0
    dst_factor_out: int = 0
    dst_factor_in: int = 0
    src_factor_out: int = 0
    src_factor_in: int = 0
    wgt_factor_out: int = 0
    wgt_factor_in: int = 0
    # ALU
    alu_opcode: AluOp = AluOp.MIN
    use_imm: int = 0
    imm: int = 0

    def kind_fields(self, cfg: Config) -> dict[str, int]:
        """The fields of this instruction's kind, in layout order."""
        return {name: getattr(self, name) for name in insn_layout(cfg, self.opcode).names}

    def describe(self) -> str:
        if self.opcode in (Opcode.LOAD, Opcode.STORE):
            return f"{self.opcode.name} {MemType(self.memory_type).name}"
        if self.opcode == Opcode.ALU:
            return f"ALU {AluOp(self.alu_opcode).name}"
        return self.opcode.name


INSN_FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Insn))


def make_insn(values: dict[str, int]) -> Insn:
    """Build an Insn from field values, converting enum fields."""
    kw = dict(values)
    for name, enum in ENUM_FIELDS.items():
        if name in kw:
            kw[name] = enum(kw[name])
    return Insn(**kw)


def encode_insn(cfg: Config, insn: Insn, index: int | None = None) -> int:
    """Encode to a 128-bit integer (bit 0 = bit 0 of word 0)."""
    where = f"instruction {index}: " if index is not None else ""
    layout = insn_layout(cfg, Opcode(insn.opcode))
    value = 0
    for name, lsb, mask, lo, hi in layout.codec:
        v = int(getattr(insn, name))
        if not lo <= v <= hi:
            raise EncodeError(f"{where}{layout.opcode.name} field {name}={v} outside "
                              f"[{lo}, {hi}] ({mask.bit_length()} bits)")
        value |= (v & mask) << lsb
    return value


def decode_insn(cfg: Config, value: int, index: int | None = None) -> Insn:
    """Decode a 128-bit integer. Unknown opcodes raise EncodeError naming the index."""
    raw_op = value & 0b111
    try:
        op = Opcode(raw_op)
    except ValueError:
        where = f"instruction {index}: " if index is not None else ""
        raise EncodeError(f"{where}opcode {raw_op} is not one of "
                          f"{', '.join(f'{o.name}={o.value}' for o in Opcode)}",
                          index, "opcode") from None
    vals: dict[str, int] = {}
    for f in insn_layout(cfg, op).fields:
        v = (value >> f.lsb) & f.max
        if f.name in SIGNED_FIELDS and v >> (f.width - 1):
            v -= 1 << f.width
        vals[f.name] = v
    for name, enum in ENUM_FIELDS.items():
        if name in vals:
            try:
                vals[name] = enum(vals[name])
            except ValueError:
                where = f"instruction {index}: " if index is not None else ""
                raise EncodeError(f"{where}{name}={vals[name]} is not one of "
                                  f"{', '.join(f'{e.name}={e.value}' for e in enum)}",
                                  index, name) from None
    return Insn(**vals)


def encode_program(cfg: Config, insns: list[Insn]) -> bytes:
    """The little-endian binary stream of ``insns`` (:func:`encode_words` as bytes)."""
    return encode_words(cfg, insns).tobytes()


def encode_words(cfg: Config, insns: list[Insn]) -> np.ndarray:
    """``insns`` encoded as (n, 2) little-endian 64-bit words, word 0 first: what
    :func:`encode_insn` gives for each, computed for the whole stream at once.

    The fields of every instruction are read into one int64 table (converted as ``int()``
    converts them, as :func:`encode_insn` does) and packed by each row's kind with the positions
    of :func:`_program_codec`. A stream that does not encode (an unknown opcode, a field out of
    range, a value ``int()`` refuses) goes through :func:`encode_insn` one instruction at a time
    instead, which raises its error naming the instruction."""
    n = len(insns)
    if n == 0:
        return np.zeros((0, 2), "<u8")
    codec = _program_codec(cfg)
    try:
        vals = np.fromiter(chain.from_iterable(map(_insn_fields, insns)), np.int64,
                           n * len(INSN_FIELD_NAMES)).reshape(n, -1)
    except (TypeError, ValueError, OverflowError):
        vals = None
    if vals is not None:
        ops = vals[:, 0]
        if np.all((ops >= 0) & (ops < codec.kinds)):
            ops = codec.row[ops]
            lo, hi = codec.lo[ops], codec.hi[ops]
            if not np.any((vals < lo) | (vals > hi)):
                bits = (vals & codec.mask[ops]).astype(np.uint64) << codec.shift[ops]
                high = codec.high[ops]
                words = np.empty((n, 2), "<u8")
                words[:, 0] = np.bitwise_or.reduce(np.where(high, np.uint64(0), bits), axis=1)
                words[:, 1] = np.bitwise_or.reduce(np.where(high, bits, np.uint64(0)), axis=1)
                return words
    data = b"".join(encode_insn(cfg, insn, i).to_bytes(INSN_BYTES, "little")
                    for i, insn in enumerate(insns))
    return np.frombuffer(data, "<u8").reshape(n, 2).copy()


#: Every field of an Insn as a tuple, in INSN_FIELD_NAMES order.
_insn_fields = operator.attrgetter(*INSN_FIELD_NAMES)


@dataclass(frozen=True)
class _ProgramCodec:
    """The layouts of every kind as tables indexed by (kind row, INSN_FIELD_NAMES column).

    ``row[opcode]`` is the kind's row (opcodes that are no kind map to a row whose opcode range
    is empty, so they fail the range check); a field that is not the kind's has range
    [-2^63, 2^63 - 1] and mask 0 (never out of range, never encoded)."""

    kinds: int
    row: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    mask: np.ndarray
    shift: np.ndarray
    high: np.ndarray


@lru_cache(maxsize=None)
def _program_codec(cfg: Config) -> _ProgramCodec:
    kinds = 1 << insn_layout(cfg, Opcode.FINISH).field("opcode").width
    rows = len(Opcode) + 1  # the last row: opcodes that are no kind
    shape = (rows, len(INSN_FIELD_NAMES))
    lo = np.full(shape, np.iinfo(np.int64).min, np.int64)
    hi = np.full(shape, np.iinfo(np.int64).max, np.int64)
    mask = np.zeros(shape, np.int64)
    shift = np.zeros(shape, np.uint64)
    high = np.zeros(shape, bool)
    row = np.full(kinds, rows - 1, np.int64)
    lo[rows - 1, 0], hi[rows - 1, 0] = 1, 0  # no opcode value is in [1, 0]
    column = {name: k for k, name in enumerate(INSN_FIELD_NAMES)}
    for r, op in enumerate(Opcode):
        row[op] = r
        for name, lsb, fmask, flo, fhi in insn_layout(cfg, op).codec:
            k = column[name]
            lo[r, k], hi[r, k], mask[r, k] = flo, fhi, fmask
            shift[r, k], high[r, k] = lsb % 64, lsb >= 64
    return _ProgramCodec(kinds, row, lo, hi, mask, shift, high)


def decode_program(cfg: Config, data: bytes) -> list[Insn]:
    """Decode a binary instruction stream; the same as :func:`decode_insn` per record (errors
    included), with every field extracted for the whole stream at once."""
    if len(data) % INSN_BYTES:
        raise EncodeError(f"instruction stream of {len(data)} bytes is not a whole number of "
                          f"{INSN_BYTES}-byte instructions")
    n = len(data) // INSN_BYTES
    if n == 0:
        return []
    words = np.frombuffer(data, "<u8").reshape(n, 2)
    ops = (words[:, 0] & np.uint64(0b111)).astype(np.int64)
    cols = {name: np.zeros(n, np.int64) for name in INSN_FIELD_NAMES}
    known = np.zeros(n, bool)
    for op in Opcode:
        sel = np.flatnonzero(ops == op)
        if sel.size == 0:
            continue
        known[sel] = True
        for f in insn_layout(cfg, op).fields:
            v = _field_bits(words[sel], f)
            if f.name in SIGNED_FIELDS:
                v = np.where(v >> (f.width - 1) != 0, v - (1 << f.width), v)
            cols[f.name][sel] = v
    bad = ~known
    for name, enum in ENUM_FIELDS.items():
        bad |= ~np.isin(cols[name], [e.value for e in enum])
    if bad.any():
        i = int(np.flatnonzero(bad)[0])  # decode_insn raises the error naming it
        decode_insn(cfg, int.from_bytes(data[i * INSN_BYTES:(i + 1) * INSN_BYTES], "little"), i)
    lists = []
    for name in INSN_FIELD_NAMES:
        col = cols[name].tolist()
        if name in ENUM_FIELDS:
            members = {e.value: e for e in ENUM_FIELDS[name]}
            col = [members[v] for v in col]
        lists.append(col)
    return [Insn(*row) for row in zip(*lists)]


def _field_bits(words: np.ndarray, f: Field) -> np.ndarray:
    """Field ``f`` of (n, 2) little-endian 64-bit instruction words, as int64 (no field
    straddles bit 64: see :mod:`vtabench.spec.isa.layout`)."""
    word, lsb = divmod(f.lsb, 64)
    return ((words[:, word] >> np.uint64(lsb)) & np.uint64(f.max)).astype(np.int64)


def insn_to_dict(cfg: Config, insn: Insn) -> dict[str, int | str]:
    """The kind's fields with enums as upper-case names (the JSON / assembly form)."""
    out: dict[str, int | str] = {}
    for name, v in insn.kind_fields(cfg).items():
        out[name] = ENUM_FIELDS[name](v).name if name in ENUM_FIELDS else int(v)
    return out


def insn_asdict(insn: Insn) -> dict[str, int]:
    return {k: int(v) for k, v in asdict(insn).items()}


# ---------------------------------------------------------------------------------------------
# Micro-ops (vectorised: kernels hold thousands)
# ---------------------------------------------------------------------------------------------

def encode_uops(cfg: Config, dst: np.ndarray, src: np.ndarray, wgt: np.ndarray) -> np.ndarray:
    """Pack index arrays into uint32 micro-ops; raises EncodeError on an index that overflows."""
    out = np.uint64(0)
    for (f, lsb, top), a in zip(_uop_codec(cfg), (dst, src, wgt)):
        a = np.asarray(a, np.int64)
        u = a.astype(np.uint64)  # a negative index wraps past every field's maximum
        over = u > top
        if over.any():
            i = int(np.flatnonzero(over)[0])
            raise EncodeError(f"micro-op {i}: {f.name}={int(a.reshape(-1)[i])} outside "
                              f"[0, {f.max}] ({f.width} bits)")
        out = out | (u << lsb)
    return np.asarray(out).astype(np.uint32)


@lru_cache(maxsize=None)
def _uop_codec(cfg: Config) -> tuple[tuple[Field, np.uint64, np.uint64], ...]:
    """(field, lsb, largest value) of the dst, src and wgt fields, as numpy scalars."""
    return tuple((f, np.uint64(f.lsb), np.uint64(f.max)) for f in uop_layout(cfg).fields)


def decode_uops(cfg: Config, uops: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split uint32 micro-ops into (dst, src, wgt) int64 index arrays."""
    shifts, masks = _uop_fields(cfg)
    u = np.asarray(uops, np.uint32).astype(np.int64)
    axes = (3,) + (1,) * u.ndim
    dst, src, wgt = (u[None] >> shifts.reshape(axes)) & masks.reshape(axes)
    return dst, src, wgt


@lru_cache(maxsize=None)
def _uop_fields(cfg: Config) -> tuple[np.ndarray, np.ndarray]:
    """(lsb, mask) of the dst, src and wgt fields."""
    fields = uop_layout(cfg).fields
    return (np.array([f.lsb for f in fields], np.int64),
            np.array([f.max for f in fields], np.int64))
