"""Self-test of the bench's DPI DRAM model (tb/core/axi_dram.sv + tb/csrc/dram.cpp).

A stand-in core (tb/core/selftest/vta_core.sv, a memcpy engine with the core's ports) copies the
"instruction" area to byte 0 through AR/R/AW/W/B bursts; the result comes back through the shared
memory-mapped image. Checked: data under every memory knob (latency, bandwidth gaps, random
back-pressure), cycle counts that follow the knobs, SLVERR on the fault window, an injected write
response error (wr_err_burst: data still written), protocol checks quiet, and many programs in
one simulator process. Independent of the real core.
"""

from __future__ import annotations

import numpy as np
import pytest

from vtabench.spec.config import load_config
from vtabench.spec.program import Program
from vtabench.rtl.simjob import run_batch

pytestmark = pytest.mark.rtl

KNOBS = [
    {},
    {"rd_latency": 1, "wr_latency": 0},
    {"rd_latency": 200},
    {"rd_gap": 3},
    {"stall": 128},
    {"stall": 250, "rd_latency": 50, "rd_gap": 1},
]


@pytest.fixture(scope="module")
def results() -> tuple[list[Program], list[dict]]:
    cfg = load_config("default")
    rng = np.random.default_rng(7)
    progs = []
    for i, knobs in enumerate(KNOBS):
        n = [1, 3, 64, 700][i % 4]
        code = rng.integers(0, 256, 16 * n * 4, dtype=np.uint8).tobytes()  # 4*n records
        progs.append(Program(f"copy{i}", [], np.zeros(16 * n * 4 + 100, np.uint8), code,
                             knobs=knobs))
    code = rng.integers(0, 256, 16 * 64, dtype=np.uint8).tobytes()
    progs.append(Program("fault", [], np.zeros(16 * 64, np.uint8), code,
                         knobs={"fault_lo": 128, "fault_hi": 192}))
    big = rng.integers(0, 256, 16 * 4096, dtype=np.uint8).tobytes()
    progs.append(Program("big_ideal", [], np.zeros(len(big), np.uint8), big))
    progs.append(Program("big_gap1", [], np.zeros(len(big), np.uint8), big, knobs={"rd_gap": 1}))
    progs.append(Program("wr_err", [], np.zeros(16 * 64, np.uint8), code,
                         knobs={"wr_err_burst": 2}))
    stats = run_batch(cfg, progs, seed=11, stub=True, validate=False, quiet=True)
    return progs, stats


def test_copies_match_under_every_knob(results) -> None:
    progs, stats = results
    for p, st in zip(progs, stats, strict=True):
        if p.name in ("fault", "wr_err"):
            continue
        code = np.frombuffer(p.code, np.uint8)
        assert st["state"] == "done" and st["error"] == 0, st
        assert np.array_equal(p.dram[:len(code)], code), p.name
        assert not p.dram[len(code):].any(), p.name
        assert st["dram_proto_err"] == 0 and st["dram_resp_err"] == 0
        assert st["stray_writes"] == 0


def test_knobs_change_timing(results) -> None:
    _, stats = results
    by = {s["name"]: s for s in stats}
    # 4096 records = 1024 beats each way; a gap of 1 idle cycle per read beat costs about one cycle per beat that is not the last of its burst (896).
    assert by["big_gap1"]["cycles"] - by["big_ideal"]["cycles"] >= 800
    assert by["big_ideal"]["dram_rd_beats"] == 1024 and by["big_ideal"]["dram_wr_beats"] == 1024


def test_fault_window_answers_slverr(results) -> None:
    progs, stats = results
    st = stats[len(KNOBS)]
    assert st["error"] == 1 and st["dram_resp_err"] >= 1
    p = progs[len(KNOBS)]
    code = np.frombuffer(p.code, np.uint8)
    assert not p.dram[128:192].any()  # the faulted read beat returned zeros
    assert np.array_equal(p.dram[:128], code[:128])


def test_injected_write_error_answers_one_burst(results) -> None:
    """wr_err_burst 2: the second write burst answers SLVERR, and its data is written anyway."""
    progs, stats = results
    p, st = progs[-1], stats[-1]
    assert p.name == "wr_err" and st["error"] == 1 and st["dram_resp_err"] == 1
    assert np.array_equal(p.dram, np.frombuffer(p.code, np.uint8))
    assert st["dram_open_at_done"] == 0 and st["dram_proto_err"] == 0
