"""Every validation rule of docs/isa.md section 5: the error names index, field and limit."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from vtabench.spec.config import load_config
from vtabench.spec.isa.insn import Insn, encode_program
from vtabench.spec.isa.layout import AluOp, MemType, Opcode
from vtabench.verify.builder import ProgramBuilder, Tokens
from vtabench.verify.directed import directed_programs
from vtabench.verify.random_program import random_program
from vtabench.spec.validate import ValidationError, validate_binary, validate_program, validated_order

CFG = load_config("default")


def base() -> ProgramBuilder:
    """A valid prefix: inp, wgt and acc loaded, a micro-op table at slots 0..2.

    Instruction indices: 0 LOAD INP, 1 LOAD WGT (push l2g), 2 LOAD UOP (pop l2g), 3 LOAD ACC.
    """
    p = ProgramBuilder(CFG)
    p.load(MemType.INP, 0, p.data(MemType.INP, np.ones((8, 1, 16))), 1, 8)
    p.load(MemType.WGT, 0, p.data(MemType.WGT, np.ones((4, 16, 16))), 1, 4,
           tok=Tokens(push_next=True))
    p.load_uops(0, dst=[0, 1, 2], src=[0, 1, 2], wgt=[0, 1, 2], tok=Tokens(pop_prev=True))
    p.load(MemType.ACC, 0, p.data(MemType.ACC, np.zeros((8, 1, 16))), 1, 8)
    return p


def check(insns: list[Insn], dram: np.ndarray, index: int | None, field: str | None,
          *phrases: str) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        validate_program(CFG, insns, dram)
    err = info.value
    assert (err.index, err.field) == (index, field), str(err)
    msg = str(err)
    if index is not None:
        assert msg.startswith(f"instruction {index} "), msg
    for phrase in phrases:
        assert phrase in msg, f"{phrase!r} not in {msg!r}"
    return err


def finish_with(p: ProgramBuilder, insn: Insn) -> tuple[list[Insn], np.ndarray, int]:
    """Append ``insn`` and FINISH; returns the program and the index of ``insn``."""
    index = p.emit(insn)
    p.finish()
    prog = p.build("case")
    return prog.insns, prog.dram, index


def test_the_base_program_is_valid() -> None:
    p = base()
    p.gemm((0, 3), (2, 2), dst=(1, 2), src=(1, 2), wgt=(0, 1))
    p.finish()
    prog = p.build("ok")
    validate_program(CFG, prog.insns, prog.dram)
    validate_program(CFG, prog.insns, prog.dram.tobytes())


@pytest.mark.parametrize("name", ["default", "cloud32", "cloud64"])
def test_shared_programs_are_valid(name: str) -> None:
    cfg = load_config(name)
    for prog in directed_programs(cfg):
        validate_program(cfg, prog.insns, prog.dram)
    for seed in range(20):
        prog = random_program(cfg, np.random.default_rng(seed))
        validate_program(cfg, prog.insns, prog.dram)


# --- rule 1: encoding ----------------------------------------------------------------------------

@pytest.mark.parametrize("field,value,phrase", [
    ("opcode", 5, "opcode=5 is not one of LOAD=0"),
    ("memory_type", 7, "memory_type=7 is not one of UOP=0"),
    ("sram_base", 1 << 16, "sram_base=65536 outside [0, 65535] (16 bits)"),
    ("dram_base", -1, "dram_base=-1 outside [0, 4294967295] (32 bits)"),
    ("x_pad_0", 16, "x_pad_0=16 outside [0, 15] (4 bits)"),
    ("pop_next_dep", 2, "pop_next_dep=2 outside [0, 1] (1 bits)"),
])
def test_load_field_encoding(field: str, value: int, phrase: str) -> None:
    p = base()
    insns, dram, i = finish_with(p, Insn(Opcode.LOAD, memory_type=MemType.INP, y_size=1,
                                         x_size=1, x_stride=1))
    insns[i] = dataclasses.replace(insns[i], **{field: value})
    check(insns, dram, i, field, phrase)


@pytest.mark.parametrize("field,value,phrase", [
    ("alu_opcode", 6, "alu_opcode=6 is not one of MIN=0"),
    ("imm", 40000, "imm=40000 outside [-32768, 32767] (16 bits)"),
    ("uop_bgn", 1 << 13, "uop_bgn=8192 outside [0, 8191] (13 bits)"),
    ("iter_out", 1 << 14, "iter_out=16384 outside [0, 16383] (14 bits)"),
    ("src_factor_in", 1 << 11, "src_factor_in=2048 outside [0, 2047] (11 bits)"),
])
def test_alu_field_encoding(field: str, value: int, phrase: str) -> None:
    insns, dram, i = finish_with(base(), Insn(Opcode.ALU, alu_opcode=AluOp.ADD, uop_end=1,
                                              iter_out=1, iter_in=1))
    insns[i] = dataclasses.replace(insns[i], **{field: value})
    check(insns, dram, i, field, phrase)


def test_gemm_wgt_factor_width_is_per_configuration() -> None:
    insns, dram, i = finish_with(base(), Insn(Opcode.GEMM, uop_end=1, iter_out=1, iter_in=1,
                                              wgt_factor_out=1 << 10))
    check(insns, dram, i, "wgt_factor_out", "outside [0, 1023] (10 bits)")


def test_undecodable_binary_names_index_and_field() -> None:
    p = base()
    p.finish()
    prog = p.build("bin")
    data = bytearray(encode_program(CFG, prog.insns))
    validate_binary(CFG, bytes(data), prog.dram)
    data[2 * 16] = (data[2 * 16] & ~0b111) | 6  # instruction 2: opcode 6
    with pytest.raises(ValidationError) as info:
        validate_binary(CFG, bytes(data), prog.dram)
    assert (info.value.index, info.value.field) == (2, "opcode")
    assert "opcode 6 is not one of" in str(info.value)
    data[2 * 16] &= ~0b111  # back to LOAD; instruction 0 (LOAD INP) gets memory_type 6
    data[0] &= 0x7F
    data[1] |= 0b11
    with pytest.raises(ValidationError) as info:
        validate_binary(CFG, bytes(data), prog.dram)
    assert (info.value.index, info.value.field) == (0, "memory_type")
    assert "memory_type=6 is not one of" in str(info.value)
    with pytest.raises(ValidationError, match="not a whole number of 16-byte instructions"):
        validate_binary(CFG, bytes(data[:-3]), prog.dram)


# --- rule 2: routing and FINISH -----------------------------------------------------------------

def test_load_of_out_and_store_of_non_out() -> None:
    insns, dram, i = finish_with(base(), Insn(Opcode.LOAD, memory_type=MemType.OUT, y_size=1,
                                              x_size=1, x_stride=1))
    check(insns, dram, i, "memory_type", "LOAD cannot target OUT")
    insns, dram, i = finish_with(base(), Insn(Opcode.STORE, memory_type=MemType.ACC, y_size=1,
                                              x_size=1, x_stride=1))
    check(insns, dram, i, "memory_type", "STORE must use memory_type=OUT, found ACC")


@pytest.mark.parametrize("insn,flag,stage", [
    (Insn(Opcode.LOAD, memory_type=MemType.INP, pop_prev_dep=1), "pop_prev_dep", "load"),
    (Insn(Opcode.LOAD, memory_type=MemType.WGT, push_prev_dep=1), "push_prev_dep", "load"),
    (Insn(Opcode.STORE, memory_type=MemType.OUT, pop_next_dep=1), "pop_next_dep", "store"),
    (Insn(Opcode.STORE, memory_type=MemType.OUT, push_next_dep=1), "push_next_dep", "store"),
])
def test_token_flags_the_stage_table_forbids(insn: Insn, flag: str, stage: str) -> None:
    insns, dram, i = finish_with(base(), insn)
    check(insns, dram, i, flag, f"{flag} must be 0 for an instruction of the {stage} stage")


def test_finish_rules() -> None:
    p = base()
    p.finish()
    prog = p.build("f")
    check(prog.insns[:-1], prog.dram, 3, "opcode", "must end with FINISH")
    twice = prog.insns + [Insn(Opcode.FINISH)]
    check(twice, prog.dram, 4, "opcode", "FINISH must be the last instruction",
          "1 instruction(s) follow it")
    flagged = prog.insns[:-1] + [Insn(Opcode.FINISH, push_next_dep=1)]
    check(flagged, prog.dram, 4, "push_next_dep", "FINISH must have every field but the opcode 0")
    fielded = prog.insns[:-1] + [Insn(Opcode.FINISH, uop_end=3)]
    check(fielded, prog.dram, 4, "uop_end", "found uop_end=3")
    with pytest.raises(ValidationError, match="empty program") as info:
        validate_program(CFG, [], prog.dram)
    assert info.value.index is None


def test_alu_reset() -> None:
    insns, dram, i = finish_with(base(), Insn(Opcode.ALU, reset_reg=1, uop_end=1, iter_out=1,
                                              iter_in=1))
    check(insns, dram, i, "reset_reg", "ALU must have reset_reg=0")


# --- rule 3: padding -----------------------------------------------------------------------------

@pytest.mark.parametrize("insn,pad,why", [
    (Insn(Opcode.LOAD, memory_type=MemType.UOP, y_size=1, x_size=1, x_stride=1, y_pad_0=1),
     "y_pad_0", "a UOP load"),
    (Insn(Opcode.LOAD, memory_type=MemType.WGT, y_size=1, x_size=1, x_stride=1, x_pad_1=2),
     "x_pad_1", "a WGT load"),
    (Insn(Opcode.STORE, memory_type=MemType.OUT, y_size=1, x_size=1, x_stride=1, y_pad_1=1),
     "y_pad_1", "a STORE"),
    (Insn(Opcode.LOAD, memory_type=MemType.INP, y_size=1, x_size=0, x_pad_0=1),
     "x_pad_0", "a no-op (x_size or y_size 0)"),
])
def test_forbidden_padding(insn: Insn, pad: str, why: str) -> None:
    insns, dram, i = finish_with(base(), insn)
    check(insns, dram, i, pad, f"but {why} must have all pads 0")


# --- rule 4: SRAM ranges -------------------------------------------------------------------------

def test_load_past_the_buffer_counts_its_padding() -> None:
    # 2 rows of 1 + 2 + 1 elements after 1 padded row: 12 elements from 2037 end at 2048.
    ok = Insn(Opcode.LOAD, memory_type=MemType.INP, sram_base=2036, y_size=2, x_size=2,
              x_stride=2, y_pad_0=1, x_pad_0=1, x_pad_1=1)
    insns, dram, i = finish_with(base(), ok)
    validate_program(CFG, insns, dram)
    insns[i] = dataclasses.replace(ok, sram_base=2037)
    check(insns, dram, i, "sram_base", "inp elements 2037..2048", "the buffer has 2048",
          "sram_base + 12 <= 2048")


def test_acc8bit_load_is_checked_against_acc() -> None:
    insns, dram, i = finish_with(base(), Insn(Opcode.LOAD, memory_type=MemType.ACC_8BIT,
                                              sram_base=2047, y_size=1, x_size=2, x_stride=2))
    check(insns, dram, i, "sram_base", "acc elements 2047..2048")


def test_store_past_the_out_buffer() -> None:
    insns, dram, i = finish_with(base(), Insn(Opcode.STORE, memory_type=MemType.OUT,
                                              sram_base=2040, y_size=3, x_size=3, x_stride=3))
    check(insns, dram, i, "sram_base", "reads out elements 2040..2048")


def test_uop_range_rules() -> None:
    gemm = Insn(Opcode.GEMM, uop_bgn=0, uop_end=3, iter_out=1, iter_in=1)
    insns, dram, i = finish_with(base(), dataclasses.replace(gemm, uop_end=8193))
    check(insns, dram, i, "uop_end", "uop_end=8193 exceeds the micro-op buffer depth 8192")
    insns, dram, i = finish_with(base(), dataclasses.replace(gemm, uop_bgn=4, uop_end=3))
    check(insns, dram, i, "uop_bgn", "uop_bgn=4 > uop_end=3")
    insns, dram, i = finish_with(base(), dataclasses.replace(gemm, uop_bgn=1, uop_end=5))
    check(insns, dram, i, "uop_bgn", "micro-op slot 3 (of 1..4) is read before any LOAD UOP")
    # Empty loops read nothing.
    insns, dram, i = finish_with(base(), dataclasses.replace(gemm, uop_end=9, iter_in=0))
    validate_program(CFG, insns, dram)


def test_uop_written_later_in_the_stream_does_not_count() -> None:
    p = base()
    p.gemm((3, 4))
    p.load_uops(3, dst=[0])
    p.finish()
    prog = p.build("late")
    check(prog.insns, prog.dram, 4, "uop_bgn", "micro-op slot 3")


@pytest.mark.parametrize("field,kw,phrase", [
    ("dst_idx", {"dst_factor_out": 1000, "dst_factor_in": 46},
     ("micro-op slot 2 (dst_idx=2) reaches acc index 2048 at i0=2, i1=1 (dst_factor_out=1000, "
      "dst_factor_in=46); the acc buffer has 2048 elements")),
    ("src_idx", {"src_factor_out": 1000, "src_factor_in": 46},
     "micro-op slot 2 (src_idx=2) reaches inp index 2048"),
    ("wgt_idx", {"wgt_factor_in": 1022}, "micro-op slot 2 (wgt_idx=2) reaches wgt index 1024"),
])
def test_micro_op_indices_reaching_outside_their_buffer(field: str, kw: dict, phrase: str) -> None:
    gemm = Insn(Opcode.GEMM, uop_bgn=0, uop_end=3, iter_out=3, iter_in=2, **kw)
    insns, dram, i = finish_with(base(), gemm)
    check(insns, dram, i, field, phrase)
    # One less and every index fits.
    key = next(iter(kw))
    validate_program(CFG, insns[:i] + [dataclasses.replace(gemm, **{key: kw[key] - 1})]
                     + insns[i + 1:], dram)


def test_reset_gemm_and_imm_alu_do_not_check_unread_indices() -> None:
    p = base()
    p.gemm((0, 3), (1, 2), src=(0, 2047), wgt=(0, 1023), reset=True)
    p.alu(AluOp.ADD, (0, 3), (1, 2), src=(0, 2047), imm=3)
    p.finish()
    prog = p.build("unread")
    validate_program(CFG, prog.insns, prog.dram)
    # The same loops reading their operands are out of range.
    check(prog.insns[:4] + [dataclasses.replace(prog.insns[4], reset_reg=0), prog.insns[-1]],
          prog.dram, 4, "src_idx", "reaches inp index 2048")
    check(prog.insns[:4] + [dataclasses.replace(prog.insns[5], use_imm=0), prog.insns[-1]],
          prog.dram, 4, "src_idx", "reaches acc index 2048")


# --- rule 5: DRAM ranges -------------------------------------------------------------------------

def test_dram_ranges() -> None:
    p = base()
    p.finish()
    prog = p.build("d")
    size = prog.dram.size
    inp_elems = size // 16
    load = Insn(Opcode.LOAD, memory_type=MemType.INP, dram_base=inp_elems - 4, y_size=2,
                x_size=2, x_stride=2)
    insns = prog.insns[:-1] + [load, prog.insns[-1]]
    validate_program(CFG, insns, prog.dram)
    insns[-2] = dataclasses.replace(load, x_stride=3)
    check(insns, prog.dram, 4, "dram_base", f"the DRAM image has {size} bytes",
          f"reads DRAM bytes up to {size + 15}")
    store = Insn(Opcode.STORE, memory_type=MemType.OUT, dram_base=inp_elems, y_size=1,
                 x_size=1, x_stride=1)
    check(prog.insns[:-1] + [store, prog.insns[-1]], prog.dram, 4, "dram_base",
          "writes DRAM bytes up to")


def test_load_uop_must_not_read_what_a_store_writes() -> None:
    p = base()
    table, count = p.uop_table([0, 1])
    p.alloc(MemType.OUT, 2)  # room for the store below
    p.store_synced(0, table // 4, 1, 1)  # a 16-byte out element over the table's 8 bytes
    p.load(MemType.UOP, 8, table, 1, count)
    p.finish()
    prog = p.build("selfmod")
    check(prog.insns, prog.dram, 7, "dram_base", "LOAD UOP reads DRAM that a STORE")


# --- rule 6: tokens ------------------------------------------------------------------------------

def test_token_deadlock() -> None:
    p = base()
    p.gemm((0, 3), tok=Tokens(pop_prev=True))  # no second l2g token
    p.finish()
    prog = p.build("dead")
    check(prog.insns, prog.dram, 4, "pop_prev_dep", "deadlock",
          "instruction 4 waits forever for a token in token queue l2g")


def test_token_left_over() -> None:
    p = base()
    p.gemm((0, 3), tok=Tokens(push_next=True))  # g2s never popped
    p.finish()
    prog = p.build("left")
    check(prog.insns, prog.dram, 4, "push_next_dep", "pushes a token into g2s that no instruction "
          "pops")


def test_validation_of_a_large_program() -> None:
    """60k instructions with full token traffic validate in one pass (a quadratic step would
    show as minutes here; speed itself is for benchmarks, not tests)."""
    p = ProgramBuilder(CFG)
    inp = p.data(MemType.INP, np.ones((4, 1, 16)))
    p.load_uops(0, dst=[0], src=[0], wgt=[0])
    chunks = 20_000
    for k in range(chunks):
        last = k >= chunks - 2
        p.load(MemType.INP, 0, inp, 1, 4, tok=Tokens(pop_next=k >= 2, push_next=True))
        p.gemm((0, 1), (4, 1), dst=(1, 0), src=(1, 0), tok=Tokens(
            pop_prev=True, pop_next=k >= 2, push_prev=not last, push_next=True))
        p.store(0, 0, 1, 4, tok=Tokens(pop_prev=True, push_prev=not last))
    p.finish()
    prog = p.build("big")
    order = validated_order(CFG, prog.insns, prog.dram)
    assert sorted(order) == list(range(len(prog.insns))) == list(range(3 * chunks + 2))


def test_the_dram_image_is_required_not_its_size() -> None:
    p = base()
    p.finish()
    prog = p.build("size")
    with pytest.raises(TypeError, match="needs the DRAM image"):
        validate_program(CFG, prog.insns, prog.dram.size)  # type: ignore[arg-type]
