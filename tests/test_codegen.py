"""The committed generated SV package and OpenCL header match their configuration."""

import pytest

from vtabench.hwgen.constants import constants, generated_files
from vtabench.spec.config import builtin_config_names, load_config


@pytest.mark.parametrize("config", builtin_config_names())
def test_generated_files_are_current(config):
    for path, text in generated_files(load_config(config)).items():
        assert path.exists(), f"{path} missing: run `vtabench gen`"
        assert path.read_text() == text, f"{path} is stale: run `vtabench gen`"


def test_constants_carry_layout_and_sizes():
    cfg = load_config("default")
    consts = {name: value for name, value, _ in constants(cfg)}
    assert consts["GEMM_WGT_FACTOR_IN_LSB"] == 118 and consts["GEMM_WGT_FACTOR_IN_WIDTH"] == 10
    assert consts["ALU_IMM_LSB"] == 112 and consts["MEM_DRAM_BASE_LSB"] == 26
    assert consts["UOP_WGT_IDX_LSB"] == 22 and consts["ACC_DEPTH"] == 2048
    assert consts["OPCODE_ALU"] == 4 and consts["MEM_ID_ACC_8BIT"] == 5
    assert len(consts) == len(constants(cfg)), "duplicate constant names"
