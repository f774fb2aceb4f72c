"""The module unit benches in the test suite. Each bench lives in one file, tb/unit/test_<module>.py
(its cocotb tests and its pytest runner ``test_<module>``, parametrized over the configurations
and the module's parameters; the shared runner is vtabench.tb.unit.runner); this file only
gathers the runners so that `make test` (which collects tests/) runs them, where they are
reported as ``tests/test_rtl_units.py::test_<module>[...]``. One bench alone:
`make unit MODULE=vta_fifo [WAVES=1]`, or `pytest tb/unit/test_fifo.py`.

:func:`run_unit` runs a bench's other cocotb modules (broken stimulus, AXI mutants) for
tests/test_rtl_assertions.py.
"""

from __future__ import annotations

from pathlib import Path

from vtabench.rtl.verilator import HDL_DIR
from vtabench.tb.unit.runner import run_bench
from vtabench.tb.unit.test_alu import test_alu  # noqa: F401
from vtabench.tb.unit.test_buf import test_buf  # noqa: F401
from vtabench.tb.unit.test_buf_out import test_buf_out  # noqa: F401
from vtabench.tb.unit.test_compute import test_compute  # noqa: F401
from vtabench.tb.unit.test_core import test_core  # noqa: F401
from vtabench.tb.unit.test_dma_rd import test_dma_rd  # noqa: F401
from vtabench.tb.unit.test_fetch import test_fetch  # noqa: F401
from vtabench.tb.unit.test_fifo import test_fifo  # noqa: F401
from vtabench.tb.unit.test_gemm_dp import test_gemm_dp  # noqa: F401
from vtabench.tb.unit.test_load import test_load  # noqa: F401
from vtabench.tb.unit.test_mem_engine import SOURCES as MEM_ENGINE_SOURCES
from vtabench.tb.unit.test_mem_engine import TOP as MEM_ENGINE_TOP
from vtabench.tb.unit.test_mem_engine import test_mem_engine  # noqa: F401
from vtabench.tb.unit.test_shell import test_shell  # noqa: F401
from vtabench.tb.unit.test_span_mask import test_span_mask  # noqa: F401
from vtabench.tb.unit.test_sram import test_sram  # noqa: F401
from vtabench.tb.unit.test_stage_ctrl import test_stage_ctrl  # noqa: F401
from vtabench.tb.unit.test_store import test_store  # noqa: F401
from vtabench.tb.unit.test_token_queue import SOURCES as TOKEN_QUEUE_SOURCES
from vtabench.tb.unit.test_token_queue import TOP as TOKEN_QUEUE_TOP
from vtabench.tb.unit.test_token_queue import test_token_queue  # noqa: F401

#: module -> (top, sources, parameters) of the builds run_unit runs other bench modules on
_BUILDS = {"token_queue": (TOKEN_QUEUE_TOP, TOKEN_QUEUE_SOURCES, {"Depth": 16}),
           "mem_engine": (MEM_ENGINE_TOP, MEM_ENGINE_SOURCES, {"AxiDataWidth": 512})}


def run_unit(name: str, seed: int, *, bench: str, hdl: Path = HDL_DIR, testcase: str | None = None,
             expect_fail: bool = False) -> str:
    """Run tb/unit/test_<bench>.py on the default build of module ``name`` (from ``hdl``: a
    mutated copy builds in a folder of its own); returns the simulator's log."""
    top, sources, params = _BUILDS[name]
    return run_bench(name, top, sources, params=params, seed=seed, hdl=hdl, testcase=testcase,
                     expect_fail=expect_fail, bench_module=bench).log
