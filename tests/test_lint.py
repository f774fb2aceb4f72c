"""`make lint` inside `make test`: Verilator -Wall on every module, Yosys coarse synthesis."""

import re

import pytest

from vtabench.rtl.verilator import setup_verilator_env
from vtabench.rtl.lint import CONFIGS, rtl_files, verilator_lint, yosys_synth


@pytest.mark.parametrize("config", CONFIGS)
def test_verilator_lint_wall_clean(config):
    setup_verilator_env()
    assert rtl_files()[1], "no RTL modules found"
    assert verilator_lint(config) == []


@pytest.mark.slow
def test_yosys_coarse_synthesis_of_the_shell():
    """The shell contains the core and the register block: no latch, no multiple driver."""
    ok, log = yosys_synth("default", top="vta_shell")
    assert ok, log[-4000:]
    assert not re.search(r"\$(d)?latch", log), "latch inferred"
    assert "$macc" in log or "$mul" in log, "no multiplier cells: the GEMM datapath vanished"
