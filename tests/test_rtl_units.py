"""Module-level cocotb unit benches of the RTL core (tb/unit/), run through the cocotb Python
runner on Verilator. Each module is built once into build/units/<name>/ (the runner skips an
up-to-date build) and its bench run there; the seed is cocotb's random seed (printed; set
COCOTB_RANDOM_SEED to repeat a run). The packages come from hdl/gen/default (the committed copy
of the generated package)."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from vtabench.hwgen.contracts import SV_PACKAGES
from vtabench.rtl.verilator import HDL_DIR as HDL
from vtabench.rtl.verilator import setup_verilator_env
from vtabench.workdirs import build_root

pytestmark = pytest.mark.rtl

BUILD = build_root() / "units"


# bench name -> (top module, files in hdl/, parameters)
UNITS = {
    "token_queue": ("vta_token_queue", ["vta_token_queue.sv"], {"Depth": 16}),
    "gemm_dp": ("vta_gemm_dp", ["vta_gemm_dp.sv"], {"TagW": 16}),
    "alu": ("vta_alu", ["vta_alu.sv"], {}),
    "dma_rd": ("vta_dma_rd", ["vta_fifo.sv", "vta_span_mask.sv", "vta_dma_rd.sv"], {}),
    # the compute stage's instance: a 4-beat write window (ACC_8BIT at one beat per cycle)
    "dma_rd_wide": ("vta_dma_rd", ["vta_fifo.sv", "vta_span_mask.sv", "vta_dma_rd.sv"],
                    {"WinBytes": 256}),
    "mem_engine": ("vta_mem_engine", ["vta_fifo.sv", "vta_mem_engine.sv"], {}),
    # the DMA's bus-beat instance (directed and random); narrow ones checked exhaustively, one
    # with a lane count that is not a power of two
    "span_mask": ("vta_span_mask", ["vta_span_mask.sv"],
                  {"Lanes": 64, "OffWidth": 34, "LenWidth": 32}),
    "span_mask_8": ("vta_span_mask", ["vta_span_mask.sv"],
                    {"Lanes": 8, "OffWidth": 6, "LenWidth": 5}),
    "span_mask_6": ("vta_span_mask", ["vta_span_mask.sv"],
                    {"Lanes": 6, "OffWidth": 5, "LenWidth": 4}),
}


# bench module when it is not unit/test_<name>.py
BENCH = {"dma_rd_wide": "dma_rd", "span_mask_8": "span_mask", "span_mask_6": "span_mask"}


def _runner():
    """The cocotb Verilator runner without its global --public-flat-rw: the benches touch only
    top-level ports, and a public package would put vta_pkg's SIZE_WIDTH next to stdint.h's
    macro of that name in the generated C++."""
    from cocotb_tools.runner import Verilator

    class _PortsOnlyVerilator(Verilator):
        def _build_command(self):  # type: ignore[no-untyped-def]
            cmds = super()._build_command()
            cmds[0] = [a for a in cmds[0] if a != "--public-flat-rw"]
            return cmds

    return _PortsOnlyVerilator()


def run_unit(name: str, seed: int | None = None, *, hdl: Path = HDL, bench: str | None = None,
             testcase: str | None = None, expect_fail: bool = False) -> str:
    """Build unit ``name`` (from ``hdl``: a mutated copy builds in a folder of its own) with
    assertions on and run its bench (``bench``: another cocotb module of unit/; ``testcase``:
    one test of it). Returns the simulator's log. A failing test fails this call with the
    assertion messages of the log, unless ``expect_fail`` (then a passing run fails it)."""
    import json

    setup_verilator_env()
    top, files, params = UNITS[name]
    sources = [HDL / "gen" / "default" / "vta_pkg.sv", *SV_PACKAGES]
    sources += [hdl / f for f in files]
    bdir = BUILD / (name if hdl == HDL else f"{name}-{hdl.parent.name}")
    bdir.mkdir(parents=True, exist_ok=True)
    vlt = bdir / "public.vlt"  # only the top's signals are public (see _runner)
    text = f'`verilator_config\npublic_flat_rw -module "{top}" -var "*"\n'
    if not vlt.exists() or vlt.read_text() != text:
        vlt.write_text(text)
    sources.append(vlt)
    runner = _runner()
    runner.build(sources=[str(s) for s in sources], hdl_toplevel=top, parameters=params,
                 build_dir=str(bdir), build_args=["-Wno-fatal", "-O2", "--assert", f"+incdir+{hdl}"],
                 always=False)
    results = bdir / "results.xml"
    results.unlink(missing_ok=True)  # a crashed run must not pass on the last run's results
    log = bdir / "sim.log"
    env = {"UNIT_PARAMS": json.dumps(params)}
    if seed is not None:
        env["COCOTB_RANDOM_SEED"] = str(seed)
    module = bench or BENCH.get(name, name)
    try:
        runner.test(test_module=f"vtabench.tb.unit.test_{module}", hdl_toplevel=top,
                    hdl_toplevel_lang="verilog", build_dir=str(bdir), test_dir=str(bdir),
                    results_xml=str(results), extra_env=env, seed=seed, log_file=str(log),
                    testcase=testcase)
    except (RuntimeError, SystemExit):  # a failing test or an assertion that stopped the run
        pass
    text = log.read_text(errors="replace") if log.exists() else ""
    fired = [ln for ln in text.splitlines() if "Assertion failed" in ln or "%Error" in ln]
    cases = list(ET.parse(results).getroot().iter("testcase")) if results.exists() else []
    fails = [tc.get("name") for tc in cases
             if tc.find("failure") is not None or tc.find("error") is not None]
    if expect_fail:
        assert fails or not cases, f"{name}: {module} passed but was expected to fail"
        return text
    assert results.exists(), f"{name}: the bench wrote no {results} (seed {seed})"
    assert cases, f"{name}: no cocotb test ran (see {results})"
    assert not fails and not fired, (f"{name}: failing tests {fails} (see {results}; seed {seed})"
                                     + "".join(f"\n  {ln}" for ln in fired[:10]))
    return text


@pytest.mark.parametrize("name", sorted(UNITS))
def test_rtl_unit(name: str) -> None:
    import random

    env_seed = os.environ.get("COCOTB_RANDOM_SEED")
    seed = int(env_seed) if env_seed else random.SystemRandom().randrange(1, 2**31)
    print(f"unit bench {name}: COCOTB_RANDOM_SEED={seed}")
    run_unit(name, seed)
