"""Deliberately illegal instruction streams, and the error the targets must report for them.

A defect (:data:`DEFECTS`) breaks one rule of docs/isa.md section 5 in one instruction of a valid
program: an illegal opcode, memory type or ALU opcode, a token flag or pad the stage must not
have, a FINISH out of place, a LOAD / STORE past its SRAM buffer or beyond the DRAM image, a
micro-op range or loop index out of its buffer. The stream goes to the targets unvalidated; the
expected error code and instruction index come from the validator (:func:`expected_outcomes`
maps its verdict, rule by rule, to the code of spec/contracts/errors.json), so the generator never
states an expectation of its own. Two launch errors the validator cannot see (a misaligned
instruction or DRAM base) are the bench's (:mod:`vtabench.verify.random_case`).

Which targets check a rule follows the contract (docs/contracts.md): the RTL checks them all; the
OpenCL kernel leaves token flags, pads, ALU reset_reg and FINISH placement alone and reports a
missing final FINISH at index insn_count, so those streams do not run there. The RTL checks
opcode and memory type when fetch routes the instruction; the kernel routes first and checks
when the instruction runs, so a broken instruction that carries token flags can leave another
stage waiting forever first (the kernel then reports DEADLOCK): such streams do not run there
either.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from vtabench.spec.config import Config
from vtabench.spec.contracts.errors import ErrorCode
from vtabench.spec.isa.insn import (INSN_BYTES, Insn, decode_program, decode_uops,
                                    encode_program)
from vtabench.spec.isa.layout import MemType, Opcode, insn_layout, mem_depth, mem_elem_bytes
from vtabench.spec.tokens import POP_QUEUES, PUSH_QUEUES, stage_of
from vtabench.spec.validate import PAD_FIELDS, TOKEN_FLAGS, ValidationError, validate_binary
from vtabench.spec.program import Outcome

#: The targets of an expectation only the RTL checks (the others do not run the stream).
RTL_ONLY = {"opencl": None}
#: DRAM accesses this far from address 0 are beyond every target's memory (the OpenCL device
#: of a regression holds its largest image and stream); nearer ones only the RTL checks
#: against the image size.
FAR_BYTES = 1 << 28

#: A defect: (configuration, instructions, DRAM image, rng) -> the broken stream, or None when
#: the program has no instruction it applies to.
Defect = Callable[[Config, list[Insn], np.ndarray, np.random.Generator], bytes | None]


def _pick(rng: np.random.Generator, insns: list[Insn],
          keep: Callable[[Insn], bool]) -> int | None:
    choices = [i for i, insn in enumerate(insns) if keep(insn)]
    return int(rng.choice(choices)) if choices else None


def _real(insn: Insn) -> bool:
    return insn.x_size > 0 and insn.y_size > 0


def _set_bits(code: bytes, index: int, lsb: int, width: int, value: int) -> bytes:
    """``code`` with bits [lsb, lsb + width) of instruction ``index`` set to ``value``."""
    word = int.from_bytes(code[index * INSN_BYTES:(index + 1) * INSN_BYTES], "little")
    mask = ((1 << width) - 1) << lsb
    word = (word & ~mask) | ((value << lsb) & mask)
    out = bytearray(code)
    out[index * INSN_BYTES:(index + 1) * INSN_BYTES] = word.to_bytes(INSN_BYTES, "little")
    return bytes(out)


def _field_bits(cfg: Config, op: Opcode, name: str) -> tuple[int, int]:
    f = next(f for f in insn_layout(cfg, op).fields if f.name == name)
    return f.lsb, f.width


def _changed(cfg: Config, insns: list[Insn], k: int | None, **values: int) -> bytes | None:
    if k is None:
        return None
    out = list(insns)
    out[k] = replace(insns[k], **values)
    return encode_program(cfg, out)


def _opcode(cfg: Config, insns: list[Insn], dram: np.ndarray,
            rng: np.random.Generator) -> bytes | None:
    k = int(rng.integers(0, len(insns)))
    return _set_bits(encode_program(cfg, insns), k, 0, 3, int(rng.integers(5, 8)))


def _load_mem_type(cfg: Config, insns: list[Insn], dram: np.ndarray,
                   rng: np.random.Generator) -> bytes | None:
    k = _pick(rng, insns, lambda i: i.opcode == Opcode.LOAD)
    if k is None:
        return None
    lsb, width = _field_bits(cfg, Opcode.LOAD, "memory_type")
    return _set_bits(encode_program(cfg, insns), k, lsb, width, int(rng.choice([4, 6, 7])))


def _store_mem_type(cfg: Config, insns: list[Insn], dram: np.ndarray,
                    rng: np.random.Generator) -> bytes | None:
    k = _pick(rng, insns, lambda i: i.opcode == Opcode.STORE)
    other = MemType(int(rng.choice([m for m in MemType if m != MemType.OUT])))
    return _changed(cfg, insns, k, memory_type=other)


def _alu_opcode(cfg: Config, insns: list[Insn], dram: np.ndarray,
                rng: np.random.Generator) -> bytes | None:
    k = _pick(rng, insns, lambda i: i.opcode == Opcode.ALU)
    if k is None:
        return None
    lsb, width = _field_bits(cfg, Opcode.ALU, "alu_opcode")
    return _set_bits(encode_program(cfg, insns), k, lsb, width, int(rng.integers(5, 8)))


def _alu_reset(cfg: Config, insns: list[Insn], dram: np.ndarray,
               rng: np.random.Generator) -> bytes | None:
    return _changed(cfg, insns, _pick(rng, insns, lambda i: i.opcode == Opcode.ALU),
                    reset_reg=1)


def _forbidden_flags(insn: Insn) -> list[str]:
    stage = stage_of(insn)
    return [f for f in TOKEN_FLAGS if (stage, f) not in POP_QUEUES
            and (stage, f) not in PUSH_QUEUES]


def _token_flag(cfg: Config, insns: list[Insn], dram: np.ndarray,
                rng: np.random.Generator) -> bytes | None:
    k = _pick(rng, insns, lambda i: bool(_forbidden_flags(i)))
    if k is None:
        return None
    return _changed(cfg, insns, k, **{str(rng.choice(_forbidden_flags(insns[k]))): 1})


#: Instructions that must not have pads, in the classes the targets check apart.
PADLESS: tuple[Callable[[Insn], bool], ...] = (
    lambda i: i.opcode == Opcode.STORE,
    lambda i: i.opcode == Opcode.LOAD and not _real(i),
    lambda i: i.opcode == Opcode.LOAD and _real(i) and i.memory_type == MemType.UOP,
    lambda i: i.opcode == Opcode.LOAD and _real(i) and i.memory_type == MemType.WGT)


def _pad_forbidden(cfg: Config, insns: list[Insn], dram: np.ndarray,
                   rng: np.random.Generator) -> bytes | None:
    """A pad on a STORE, a no-op LOAD, a LOAD UOP or a LOAD WGT (one class picked first)."""
    k = _pick(rng, insns, PADLESS[int(rng.integers(0, len(PADLESS)))])
    return _changed(cfg, insns, k, **{str(rng.choice(PAD_FIELDS)): int(rng.integers(1, 16))})


def _finish_early(cfg: Config, insns: list[Insn], dram: np.ndarray,
                  rng: np.random.Generator) -> bytes | None:
    k = int(rng.integers(0, len(insns) - 1))
    return encode_program(cfg, [*insns[:k], Insn(Opcode.FINISH), *insns[k:]])


def _finish_flag(cfg: Config, insns: list[Insn], dram: np.ndarray,
                 rng: np.random.Generator) -> bytes | None:
    return _changed(cfg, insns, len(insns) - 1, **{str(rng.choice(TOKEN_FLAGS)): 1})


def _finish_missing(cfg: Config, insns: list[Insn], dram: np.ndarray,
                    rng: np.random.Generator) -> bytes | None:
    return encode_program(cfg, insns[:-1])


def _empty(cfg: Config, insns: list[Insn], dram: np.ndarray,
           rng: np.random.Generator) -> bytes | None:
    return b""


def _past_sram(cfg: Config, insns: list[Insn], rng: np.random.Generator,
               keep: Callable[[Insn], bool]) -> bytes | None:
    """A LOAD / STORE moved to end past its buffer: often by one element, else by up to its
    size."""
    k = _pick(rng, insns, lambda i: _real(i) and keep(i))
    if k is None:
        return None
    i = insns[k]
    if i.opcode == Opcode.LOAD:
        count = (i.y_pad_0 + i.y_size + i.y_pad_1) * (i.x_pad_0 + i.x_size + i.x_pad_1)
    else:
        count = i.y_size * i.x_size
    depth = mem_depth(cfg, MemType(i.memory_type))
    over = 1 if rng.random() < 0.5 else int(rng.integers(1, count + 1))
    return _changed(cfg, insns, k, sram_base=depth - count + over)


def _sram_load(cfg: Config, insns: list[Insn], dram: np.ndarray,
               rng: np.random.Generator) -> bytes | None:
    return _past_sram(cfg, insns, rng, lambda i: i.opcode == Opcode.LOAD
                      and i.memory_type != MemType.UOP)


def _sram_uop_load(cfg: Config, insns: list[Insn], dram: np.ndarray,
                   rng: np.random.Generator) -> bytes | None:
    return _past_sram(cfg, insns, rng, lambda i: i.opcode == Opcode.LOAD
                      and i.memory_type == MemType.UOP)


def _sram_store(cfg: Config, insns: list[Insn], dram: np.ndarray,
                rng: np.random.Generator) -> bytes | None:
    return _past_sram(cfg, insns, rng, lambda i: i.opcode == Opcode.STORE)


def _uop_range(cfg: Config, insns: list[Insn], dram: np.ndarray,
               rng: np.random.Generator) -> bytes | None:
    """uop_end past the micro-op buffer (often by one), or uop_bgn one past uop_end."""
    k = _pick(rng, insns, lambda i: i.opcode in (Opcode.GEMM, Opcode.ALU))
    if k is None:
        return None
    if rng.random() < 0.5:
        over = 1 if rng.random() < 0.5 else int(rng.integers(2, 64))
        return _changed(cfg, insns, k, uop_end=cfg.uop_depth + over)
    return _changed(cfg, insns, k, uop_bgn=insns[k].uop_end + 1)


def _uop_index(cfg: Config, insns: list[Insn], dram: np.ndarray, k: int, field: int) -> int:
    """The largest index ``field`` (0 dst, 1 src, 2 wgt) of the micro-ops GEMM / ALU ``k``
    runs, as the LOAD UOPs before it (the compute stage's, in stream order) left them."""
    uops = np.zeros(cfg.uop_depth, np.uint32)
    eb = cfg.uop_elem_bytes
    for insn in insns[:k]:
        if insn.opcode == Opcode.LOAD and insn.memory_type == MemType.UOP and _real(insn):
            for y in range(insn.y_size):
                start = (insn.dram_base + y * insn.x_stride) * eb
                row = dram[start:start + insn.x_size * eb].view("<u4")
                at = insn.sram_base + y * insn.x_size
                uops[at:at + row.size] = row
    return int(decode_uops(cfg, uops[insns[k].uop_bgn:insns[k].uop_end])[field].max())


def _loop_index(cfg: Config, insns: list[Insn], dram: np.ndarray, rng: np.random.Generator,
                op: Opcode) -> bytes | None:
    """A GEMM / ALU whose outer loop walks one index (dst, or src / wgt where it is read) out of
    its buffer: in its second iteration to exactly the first index past the buffer when the
    factor field can say so, else within a few iterations far past it."""
    k = _pick(rng, insns, lambda i: i.opcode == op and i.uop_end > i.uop_bgn
              and i.iter_out > 0 and i.iter_in > 0 and not (op == Opcode.GEMM and i.reset_reg))
    if k is None:
        return None
    reads_src = not (op == Opcode.ALU and insns[k].use_imm)
    name = str(rng.choice(["dst", "src", "wgt"] if op == Opcode.GEMM else
                          ["dst", "src"] if reads_src else ["dst"]))
    field, buffer = {"dst": (0, MemType.ACC),
                     "src": (1, MemType.INP if op == Opcode.GEMM else MemType.ACC),
                     "wgt": (2, MemType.WGT)}[name]
    _, width = _field_bits(cfg, op, f"{name}_factor_out")
    depth = mem_depth(cfg, buffer)
    exact = depth - _uop_index(cfg, insns, dram, k, field)
    if exact < 1 << width and rng.random() < 0.5:
        return _changed(cfg, insns, k, iter_out=2, **{f"{name}_factor_out": exact,
                                                       f"{name}_factor_in": 0})
    factor = (1 << width) - 1
    iters = -(-depth // factor) + int(rng.integers(1, 3))
    return _changed(cfg, insns, k, iter_out=iters, **{f"{name}_factor_out": factor})


def _gemm_index(cfg: Config, insns: list[Insn], dram: np.ndarray,
                rng: np.random.Generator) -> bytes | None:
    return _loop_index(cfg, insns, dram, rng, Opcode.GEMM)


def _alu_index(cfg: Config, insns: list[Insn], dram: np.ndarray,
               rng: np.random.Generator) -> bytes | None:
    return _loop_index(cfg, insns, dram, rng, Opcode.ALU)


def _dram_range(cfg: Config, insns: list[Insn], dram: np.ndarray,
                rng: np.random.Generator) -> bytes | None:
    """A LOAD / STORE reaching FAR_BYTES to 4 FAR_BYTES (within 32 bits of byte address: no
    wrap-around in a kernel that computes in 32 bits)."""
    k = _pick(rng, insns, lambda i: i.opcode in (Opcode.LOAD, Opcode.STORE) and _real(i))
    if k is None:
        return None
    eb = mem_elem_bytes(cfg, MemType(insns[k].memory_type))
    return _changed(cfg, insns, k, dram_base=int(rng.integers(FAR_BYTES, 4 * FAR_BYTES)) // eb)


def _dram_edge(cfg: Config, insns: list[Insn], dram: np.ndarray,
               rng: np.random.Generator) -> bytes | None:
    """A LOAD or a STORE (one picked first) whose last element is the first past the image."""
    op = Opcode.LOAD if rng.random() < 0.5 else Opcode.STORE
    k = _pick(rng, insns, lambda i: i.opcode == op and _real(i))
    if k is None:
        return None
    i = insns[k]
    eb = mem_elem_bytes(cfg, MemType(i.memory_type))
    edge = dram.size // eb + 1 - ((i.y_size - 1) * i.x_stride + i.x_size)
    return _changed(cfg, insns, k, dram_base=edge) if edge >= 0 else None

#: The defects, by name (the ``illegal.<name>`` kind of a RunSetup).
DEFECTS: dict[str, Defect] = {
    "opcode": _opcode,
    "load_mem_type": _load_mem_type,
    "store_mem_type": _store_mem_type,
    "alu_opcode": _alu_opcode,
    "alu_reset": _alu_reset,
    "token_flag": _token_flag,
    "pad_forbidden": _pad_forbidden,
    "finish_early": _finish_early,
    "finish_flag": _finish_flag,
    "finish_missing": _finish_missing,
    "empty": _empty,
    "sram_load": _sram_load,
    "sram_uop_load": _sram_uop_load,
    "sram_store": _sram_store,
    "uop_range": _uop_range,
    "gemm_index": _gemm_index,
    "alu_index": _alu_index,
    "dram_range": _dram_range,
    "dram_edge": _dram_edge,
}


def expected_outcomes(cfg: Config, code: bytes,
                      dram: np.ndarray) -> dict[str, Outcome | None] | None:
    """What each target must report for the stream ``code`` run against ``dram``, from the
    validator's verdict: {} for a valid stream; per target an Outcome (or None: the target does
    not check that rule) for an invalid one; None when the broken rule is one no target checks
    (an undefined micro-op slot, micro-ops computed by the program, a token deadlock)."""
    try:
        validate_binary(cfg, code, dram)
    except ValidationError as exc:
        return _outcomes(cfg, code, dram, exc)
    return {}


def _outcomes(cfg: Config, code: bytes, dram: np.ndarray,
              exc: ValidationError) -> dict[str, Outcome | None] | None:
    n = len(code) // INSN_BYTES
    if exc.index is None:  # an empty stream: the RTL refuses insn_count 0
        return {"rtl": Outcome(ErrorCode.FINISH, (0,)), **RTL_ONLY}
    k, name = exc.index, exc.field or ""
    at = Outcome(ErrorCode.NONE, (k,))
    try:
        insn: Insn | None = decode_program(cfg, code[k * INSN_BYTES:(k + 1) * INSN_BYTES])[0]
    except ValueError:
        insn = None  # an opcode, memory type or ALU opcode outside its enum
    routed_by_kernel = name in ("opcode", "memory_type") and not _has_tokens(cfg, code, k)
    if insn is None:
        codes = {"opcode": ErrorCode.OPCODE, "memory_type": ErrorCode.MEM_TYPE,
                 "alu_opcode": ErrorCode.ALU_OP}
        want = replace(at, error=codes[name])
        return {"rtl": want, "opencl": want if routed_by_kernel or name == "alu_opcode" else None}
    op = Opcode(insn.opcode)
    both = _both_targets(cfg, insn, op, name, dram)
    if both is not None:
        want = replace(at, error=both)
        kernel_sees = (routed_by_kernel if name == "memory_type" else
                       _dram_end(cfg, insn) > FAR_BYTES if name == "dram_base" else True)
        return {"rtl": want, "opencl": want if kernel_sees else None}
    if op == Opcode.FINISH or name == "opcode":
        if op != Opcode.FINISH and k == n - 1:  # the stream does not end with FINISH
            return {"rtl": replace(at, error=ErrorCode.FINISH),
                    "opencl": Outcome(ErrorCode.FINISH, (n,))}
        return {"rtl": replace(at, error=ErrorCode.FINISH), **RTL_ONLY}
    if name in PAD_FIELDS or name in _forbidden_flags(insn):
        return {"rtl": replace(at, error=ErrorCode.MEM_TYPE), **RTL_ONLY}
    if name == "reset_reg" and op == Opcode.ALU:
        return {"rtl": replace(at, error=ErrorCode.ALU_OP), **RTL_ONLY}
    return None


def _dram_end(cfg: Config, insn: Insn) -> int:
    """The byte after the last one a LOAD / STORE touches in DRAM."""
    eb = mem_elem_bytes(cfg, MemType(insn.memory_type))
    return (insn.dram_base + (insn.y_size - 1) * insn.x_stride + insn.x_size) * eb


def _has_tokens(cfg: Config, code: bytes, k: int) -> bool:
    """Whether instruction ``k`` of ``code`` has a token flag set (the flags sit at the same bits
    in every kind, so a word with an unknown opcode is read as a LOAD)."""
    word = int.from_bytes(code[k * INSN_BYTES:(k + 1) * INSN_BYTES], "little")
    return any(word >> f.lsb & 1 for f in insn_layout(cfg, Opcode.LOAD).fields
               if f.name in TOKEN_FLAGS)


def _both_targets(cfg: Config, insn: Insn, op: Opcode, name: str,
                  dram: np.ndarray) -> ErrorCode | None:
    """The code of a rule both targets check, or None."""
    if name == "memory_type":
        return ErrorCode.MEM_TYPE
    if name == "sram_base":
        if op == Opcode.STORE:
            return ErrorCode.SRAM_STORE
        return ErrorCode.SRAM_UOP if insn.memory_type == MemType.UOP else ErrorCode.SRAM_LOAD
    if name == "dram_base":  # past the image, not a LOAD UOP of stored micro-ops
        return ErrorCode.DRAM_RANGE if _dram_end(cfg, insn) > dram.size else None
    if name == "uop_end" or (name == "uop_bgn" and insn.uop_bgn > insn.uop_end):
        return ErrorCode.SRAM_UOP
    if name in ("dst_idx", "src_idx", "wgt_idx"):
        return ErrorCode.SRAM_ALU if op == Opcode.ALU else ErrorCode.SRAM_GEMM
    if name == "alu_opcode":
        return ErrorCode.ALU_OP
    return None
