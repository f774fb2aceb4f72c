"""Gate-level simulation (vtabench.rtl.gls, vtabench.verify.gls, `make gls`): synth_ecp5 netlists
against the RTL and fsim.

In `make test`: one small module (vta_sram with two read ports, mapped to DP16KD block RAMs) and
its netlist side by side under random stimulus. Slow: the same with block RAM collisions
poisoned (the check sees a netlist that differs), and the whole core's netlist on one program.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vtabench.rtl.gls import module_pair, synthesize, with_parameters
from vtabench.verify.gls import check, programs_for
from vtabench.spec.config import load_config

#: Two read ports of 72-bit words: each a PDPW16KD pair (x36), with read-during-write collisions.
SRAM = {"Width": 72, "Depth": 512, "NumRd": 2}


def test_parameters_declared_and_checked() -> None:
    rtl = Path(__file__).parents[1].joinpath("hdl", "vta_core.sv").read_text()
    out = with_parameters("module vta_core(a);\n  input a;\nendmodule\n", rtl)
    assert "module vta_core #(parameter int unsigned AxiAddrWidth = 64" in out
    assert "AxiIdWidth != 4" in out and out.rstrip().endswith("endmodule")
    with pytest.raises(RuntimeError, match="no single"):
        with_parameters("module other(a);\nendmodule\n", rtl)


def test_sram_netlist_matches_rtl() -> None:
    ok, out = module_pair("vta_sram", SRAM, cycles=5000)
    assert ok, out[-3000:]
    assert "PASS 5000 cycles compared" in out


@pytest.mark.slow
def test_poisoned_collisions_show() -> None:
    """With the block RAM model's cross-port collisions poisoned, the netlist differs: the pair
    bench sees a netlist-level difference (and Yosys' mapping relies on the old-data read)."""
    ok, out = module_pair("vta_sram", SRAM, cycles=5000, defines=("VTA_GLS_COLLISION_POISON",))
    assert not ok
    assert "MISMATCH" in out


@pytest.mark.slow
def test_core_netlist_runs_a_program() -> None:
    cfg = load_config("edge8")
    netlist = synthesize(cfg.name, quiet=True)
    progs = programs_for(cfg, 0, seed=1)[:1]
    assert check(cfg, netlist, progs, seed=1) == []
