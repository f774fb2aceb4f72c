"""The random generator's don't-care fields (issue #31 item 3): random values, still valid."""

from __future__ import annotations

import numpy as np
import pytest

from vtabench.spec.config import load_config
from vtabench.spec.isa.insn import decode_program, encode_program
from vtabench.spec.isa.layout import Opcode
from vtabench.spec.validate import validate_program
from vtabench.verify.random_program import random_program


@pytest.mark.parametrize("name", ["default", "cloud32"])
def test_ignored_fields_take_values_out_of_range(name: str) -> None:
    """Over 30 seeds: immediate ALUs and reset GEMMs reach source indices outside their buffers,
    reserved bits are set, and every program still validates and decodes to its insns."""
    cfg = load_config(name)
    alu_out = gemm_out = reserved = 0
    for seed in range(30):
        prog = random_program(cfg, np.random.default_rng(seed))
        assert prog.code is not None and decode_program(cfg, prog.code) == prog.insns
        validate_program(cfg, prog.insns, prog.dram)
        reserved += prog.code != encode_program(cfg, prog.insns)
        for insn in prog.insns:
            reach = ((insn.iter_out - 1) * insn.src_factor_out
                     + (insn.iter_in - 1) * insn.src_factor_in)
            if insn.opcode == Opcode.ALU and insn.use_imm and reach >= cfg.acc_depth:
                alu_out += 1
            if insn.opcode == Opcode.GEMM and insn.reset_reg and reach >= cfg.inp_depth:
                gemm_out += 1
    assert alu_out > 10 and gemm_out > 0 and reserved == 30


def test_a_seed_gives_one_stream() -> None:
    """The ignored fields are a function of the seed too (a failure replays from it)."""
    cfg = load_config("default")
    a, b = np.random.default_rng(5), np.random.default_rng(5)
    pa, pb = random_program(cfg, a), random_program(cfg, b)
    assert pa.code == pb.code and a.random() == b.random()
