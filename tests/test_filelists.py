"""The RTL's file lists (vtabench.rtl.filelist): complete, in compile order, and read the same by
every flow. No builds: the builds that read them are the RTL tests."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vtabench.hwgen.contracts import SV_PACKAGES
from vtabench.hwgen.regmap import SV_MODULE as REGS_MODULE
from vtabench.hwgen.regmap import SV_PACKAGE as REGS_PACKAGE
from vtabench.rtl import filelist
from vtabench.rtl.lint import rtl_files
from vtabench.rtl.verilator import CORE_BENCH, core_sources
from vtabench.sources import HDL_DIR


def _modules(f: Path) -> set[str]:
    return set(re.findall(r"^\s*(vta_\w+)\s+(?:#\s*\(|\w+\s*\()", f.read_text(), re.M))


def test_every_module_is_in_one_ip_list() -> None:
    core, shell = filelist.core_files(), filelist.shell_files()
    assert shell[:len(core)] == core, "the shell's list starts with the core's"
    hand = {p for p in HDL_DIR.glob("*.sv")}
    assert hand | {*SV_PACKAGES, REGS_PACKAGE, REGS_MODULE} == set(shell)
    assert len(shell) == len(set(shell))
    assert core[-1].name == "vta_core.sv" and shell[-1].name == "vta_shell.sv"


@pytest.mark.parametrize("ip", [filelist.CORE, filelist.SHELL])
def test_lists_are_in_compile_order(ip: str) -> None:
    """Packages before the modules that import them, every module before its users."""
    files = filelist.read(HDL_DIR / ip)
    seen: set[str] = set()
    for f in files:
        text = f.read_text()
        for pkg in set(re.findall(r"\b(\w+_pkg)::", text)) - {"vta_pkg", f.stem}:
            assert pkg in seen, f"{f.name} imports {pkg} before it is listed"
        for mod in _modules(f):
            assert mod in seen, f"{f.name} instantiates {mod} before it is listed"
        seen.add(f.stem)


def test_bench_lists_and_their_readers() -> None:
    for bench in (filelist.CORE_BENCH, filelist.PLATFORM_BENCH, filelist.FPGA_HARNESS):
        files = filelist.read(bench)
        assert files and all(f.is_file() and f.suffix == ".sv" for f in files), bench
    assert [f.name for f in filelist.read(CORE_BENCH.file_list)] == ["axi_dram.sv",
                                                                      "vta_tb_top.sv"]
    assert core_sources() == filelist.core_files()
    assert [f.name for f in filelist.shell_own_files()] == ["vta_regs_pkg.sv", "vta_regs.sv",
                                                           "vta_shell.sv"]
    pkgs, mods = rtl_files()
    assert set(pkgs) | set(mods) | {REGS_MODULE} == set(filelist.shell_files())


def test_unit_files_follow_the_instances() -> None:
    names = [f.name for f in filelist.unit_files("vta_dma_rd")]
    assert names == ["vta_err_pkg.sv", "vta_fifo.sv", "vta_span_mask.sv", "vta_dma_rd.sv"]
    names = [f.name for f in filelist.unit_files("vta_store")]
    assert names == ["vta_err_pkg.sv", "vta_fifo.sv", "vta_span_mask.sv", "vta_stage_ctrl.sv",
                     "vta_store.sv"]
    assert [f.name for f in filelist.unit_files("vta_regs")] == ["vta_regs_pkg.sv",
                                                                "vta_regs.sv"]
    assert filelist.unit_files("vta_shell") == filelist.shell_files()
    with pytest.raises(filelist.FileListError, match="vta_nothing: not a module"):
        filelist.unit_files("vta_nothing")


def test_broken_lists_are_one_line_errors(tmp_path: Path) -> None:
    (tmp_path / "a.sv").write_text("module a; endmodule\n")
    good = tmp_path / "good.f"
    good.write_text("# comment\n\na.sv  # trailing\n-f inner.f\n")
    (tmp_path / "inner.f").write_text("a.sv\n")
    assert filelist.read(good) == [(tmp_path / "a.sv").resolve()]
    bad = tmp_path / "bad.f"
    bad.write_text("a.sv\nmissing.sv\n")
    with pytest.raises(filelist.FileListError, match=r"bad.f:2: missing.sv: no such file"):
        filelist.read(bad)
    loop = tmp_path / "loop.f"
    loop.write_text("-f loop.f\n")
    with pytest.raises(filelist.FileListError, match="includes itself"):
        filelist.read(loop)
    with pytest.raises(filelist.FileListError, match="no such file list"):
        filelist.read(tmp_path / "none.f")
