"""ISA encoding: upstream bit positions, round trips of every field, micro-ops, assembly."""

import numpy as np
import pytest

from vtabench.spec.config import builtin_config_names, load_config
from vtabench.spec.isa import (AluOp, EncodeError, Insn, MemType, Opcode, decode_insn, decode_program,
                          decode_uops, encode_insn, encode_program, encode_uops, insn_layout,
                          uop_layout)
from vtabench.spec.isa.asm import AsmError, assemble, disassemble
from vtabench.spec.isa.layout import ENUM_FIELDS

CONFIGS = builtin_config_names()

# Upstream VTA 0.0.2 (hw_spec.h, default configuration): field -> (msb, lsb). Written out from the
# reference table, not computed, so a change to the packing rule shows here.
COMMON = {"opcode": (2, 0), "pop_prev_dep": (3, 3), "pop_next_dep": (4, 4),
          "push_prev_dep": (5, 5), "push_next_dep": (6, 6)}
UPSTREAM = {
    Opcode.LOAD: {**COMMON, "memory_type": (9, 7), "sram_base": (25, 10), "dram_base": (57, 26),
                  "y_size": (79, 64), "x_size": (95, 80), "x_stride": (111, 96),
                  "y_pad_0": (115, 112), "y_pad_1": (119, 116), "x_pad_0": (123, 120),
                  "x_pad_1": (127, 124)},
    Opcode.GEMM: {**COMMON, "reset_reg": (7, 7), "uop_bgn": (20, 8), "uop_end": (34, 21),
                  "iter_out": (48, 35), "iter_in": (62, 49), "dst_factor_out": (74, 64),
                  "dst_factor_in": (85, 75), "src_factor_out": (96, 86),
                  "src_factor_in": (107, 97), "wgt_factor_out": (117, 108),
                  "wgt_factor_in": (127, 118)},
    Opcode.ALU: {**COMMON, "reset_reg": (7, 7), "uop_bgn": (20, 8), "uop_end": (34, 21),
                 "iter_out": (48, 35), "iter_in": (62, 49), "dst_factor_out": (74, 64),
                 "dst_factor_in": (85, 75), "src_factor_out": (96, 86),
                 "src_factor_in": (107, 97), "alu_opcode": (110, 108), "use_imm": (111, 111),
                 "imm": (127, 112)},
    Opcode.FINISH: COMMON,
}
UPSTREAM[Opcode.STORE] = UPSTREAM[Opcode.LOAD]


@pytest.mark.parametrize("op", list(Opcode))
def test_default_positions_match_upstream(op):
    cfg = load_config("default")
    got = {f.name: (f.msb, f.lsb) for f in insn_layout(cfg, op).fields}
    assert got == UPSTREAM[op]


def test_default_uop_positions_match_upstream():
    lay = uop_layout(load_config("default"))
    assert [(f.msb, f.lsb) for f in (lay.dst, lay.src, lay.wgt)] == [(10, 0), (21, 11), (31, 22)]


def test_upstream_word_decodes_to_fields():
    # A LOAD INP built by hand from upstream's positions.
    word0 = 0 | (1 << 4) | (1 << 6) | (2 << 7) | (5 << 10) | (1000 << 26)
    word1 = 3 | (7 << 16) | (9 << 32) | (1 << 48) | (2 << 52) | (3 << 56) | (4 << 60)
    insn = decode_insn(load_config("default"), word0 | (word1 << 64))
    assert (insn.opcode, insn.memory_type, insn.pop_next_dep, insn.push_next_dep) == (
        Opcode.LOAD, MemType.INP, 1, 1)
    assert (insn.sram_base, insn.dram_base, insn.y_size, insn.x_size, insn.x_stride) == (
        5, 1000, 3, 7, 9)
    assert (insn.y_pad_0, insn.y_pad_1, insn.x_pad_0, insn.x_pad_1) == (1, 2, 3, 4)


def _extreme_values(cfg, op, pick):
    vals = {}
    for f in insn_layout(cfg, op).fields:
        if f.name == "opcode":
            vals[f.name] = op
        elif f.name in ENUM_FIELDS:
            members = list(ENUM_FIELDS[f.name])
            vals[f.name] = members[0] if pick == "min" else members[-1]
        else:
            lo, hi = f.value_range
            vals[f.name] = lo if pick == "min" else hi
    return vals


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("op", list(Opcode))
@pytest.mark.parametrize("pick", ["min", "max"])
def test_round_trip_every_field_at_extremes(config, op, pick):
    cfg = load_config(config)
    vals = _extreme_values(cfg, op, pick)
    insn = Insn(**vals)
    word = encode_insn(cfg, insn)
    assert word < (1 << 128)
    back = decode_insn(cfg, word)
    assert back.kind_fields(cfg) == insn.kind_fields(cfg)
    # Each field alone at its maximum decodes to exactly that field (no overlap between fields).
    for f in insn_layout(cfg, op).fields:
        if f.name == "opcode":
            continue
        top = max(ENUM_FIELDS[f.name]) if f.name in ENUM_FIELDS else f.max
        single = decode_insn(cfg, int(op) | (int(top) << f.lsb))
        others = {k: v for k, v in single.kind_fields(cfg).items() if k not in ("opcode", f.name)}
        assert not any(others.values()), (f.name, others)


@pytest.mark.parametrize("config", CONFIGS)
def test_field_overflow_names_field_and_limit(config):
    cfg = load_config(config)
    with pytest.raises(EncodeError, match=r"instruction 3: LOAD field x_size=65536 outside \[0, 65535\]"):
        encode_insn(cfg, Insn(Opcode.LOAD, x_size=1 << 16), 3)
    with pytest.raises(EncodeError, match=r"ALU field imm=-32769 outside \[-32768, 32767\]"):
        encode_insn(cfg, Insn(Opcode.ALU, imm=-32769))
    depth_bits = cfg.log_uop_depth
    with pytest.raises(EncodeError, match=f"uop_bgn={1 << depth_bits}"):
        encode_insn(cfg, Insn(Opcode.GEMM, uop_bgn=1 << depth_bits))


def test_illegal_opcode_and_enum_decode():
    cfg = load_config("default")
    with pytest.raises(EncodeError, match="instruction 7: opcode 6 is not one of"):
        decode_insn(cfg, 6, 7)
    with pytest.raises(EncodeError, match="memory_type=7 is not one of"):
        decode_insn(cfg, int(Opcode.LOAD) | (7 << 7))
    with pytest.raises(EncodeError, match="alu_opcode=5 is not one of"):
        decode_insn(cfg, int(Opcode.ALU) | (5 << 108))


def test_program_bytes_little_endian_word0_first():
    cfg = load_config("default")
    data = encode_program(cfg, [Insn(Opcode.FINISH), Insn(Opcode.LOAD, x_size=1)])
    assert len(data) == 32
    assert data[:16] == bytes([3]) + bytes(15)
    assert int.from_bytes(data[16 + 8:16 + 16], "little") == 1 << 16  # x_size at word 1 bit 16
    assert decode_program(cfg, data)[1].x_size == 1
    with pytest.raises(EncodeError, match="not a whole number"):
        decode_program(cfg, data[:20])


@pytest.mark.parametrize("config", CONFIGS)
def test_uop_round_trip(config):
    cfg = load_config(config)
    lay = uop_layout(cfg)
    rng = np.random.default_rng(1)
    dst = rng.integers(0, lay.dst.max + 1, 1000)
    src = rng.integers(0, lay.src.max + 1, 1000)
    wgt = rng.integers(0, lay.wgt.max + 1, 1000)
    dst[0], src[0], wgt[0] = lay.dst.max, lay.src.max, lay.wgt.max
    back = decode_uops(cfg, encode_uops(cfg, dst, src, wgt))
    for a, b in zip(back, (dst, src, wgt), strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(EncodeError, match=f"micro-op 2: wgt_idx={lay.wgt.max + 1} outside"):
        encode_uops(cfg, [0, 0, 0], [0, 0, 0], [0, 0, lay.wgt.max + 1])


def test_assembly_round_trip():
    cfg = load_config("default")
    source = """
    # a comment line
    LOAD memory_type=INP sram_base=4 dram_base=0x10 y_size=2 x_size=3 x_stride=5 x_pad_1=1 push_next_dep=1
    GEMM reset_reg=1 uop_end=2 iter_out=3 iter_in=4 dst_factor_out=7 wgt_factor_in=1 pop_prev_dep=1
    ALU alu_opcode=shr use_imm=1 imm=-5 uop_end=1 iter_out=1 iter_in=1
    STORE memory_type=OUT y_size=1 x_size=1 x_stride=1
    FINISH
    """
    insns = assemble(cfg, source)
    assert [i.opcode for i in insns] == [Opcode.LOAD, Opcode.GEMM, Opcode.ALU, Opcode.STORE,
                                         Opcode.FINISH]
    assert insns[0].dram_base == 16 and insns[2].alu_opcode == AluOp.SHR and insns[2].imm == -5
    assert assemble(cfg, disassemble(cfg, insns)) == insns
    assert assemble(cfg, disassemble(cfg, insns, numbered=True)) == insns


@pytest.mark.parametrize("line, needle", [
    ("JUMP x=1", "t.s:1: unknown instruction 'JUMP'"),
    ("GEMM imm=3", "t.s:1: GEMM has no field 'imm'"),
    ("LOAD memory_type=FOO", "memory_type=FOO is not one of UOP, WGT"),
    ("LOAD x_size=abc", "x_size=abc is not a number"),
    ("LOAD x_size", "expected field=value"),
    ("LOAD x_pad_0=16", r"t.s:1: instruction 0: LOAD field x_pad_0=16 outside \[0, 15\]"),
])
def test_assembly_errors_name_line_and_field(line, needle):
    with pytest.raises(AsmError, match=needle):
        assemble(load_config("default"), line, "t.s")


@pytest.mark.parametrize("config", CONFIGS)
def test_decode_program_matches_decode_insn_per_record(config):
    """The stream decoder extracts every field at once; it must agree with the one-record
    decoder on every kind (random field values, negative immediates included) and raise the
    same error, naming the same index, on a bad record."""
    from vtabench.verify.random_program import random_program

    cfg = load_config(config)
    insns = [i for seed in range(4)
             for i in random_program(cfg, np.random.default_rng(seed)).insns]
    data = encode_program(cfg, insns)
    assert decode_program(cfg, data) == [
        decode_insn(cfg, int.from_bytes(data[k:k + 16], "little"), k // 16)
        for k in range(0, len(data), 16)]
    assert {Opcode(i.opcode) for i in insns} == set(Opcode)
    assert any(i.imm < 0 for i in insns)
    bad = data[:48] + (int(Opcode.ALU) | (6 << 108)).to_bytes(16, "little") + data[48:]
    with pytest.raises(EncodeError, match="instruction 3: alu_opcode=6 is not one of"):
        decode_program(cfg, bad)
