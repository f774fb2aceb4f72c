"""The RTL fast path (tb/csrc/core_main.cpp, no cocotb) against the cocotb core bench, cycle for
cycle: the directed set (ideal memory and a slow, back-pressuring one), 200 random programs with
random DRAM knobs (latency, gaps, stalls, out-of-order reads, injected write errors, fault
windows), programs with an error code, a deadlock that hits the cycle limit in the middle of the
batch, and odd placements (half the random programs moved anywhere in the 64-bit bus space with
large DRAM sizes, as the regression's cases are: vtabench.verify.random_case.move_anywhere; a
program whose window ends at 2^64; one with the largest DRAM size; a LOAD at element 2^32 - 1:
a DRAM range error), on the fast path's checking build and on its speed build (no assertions).
Every field of every result (cycles, counters, DRAM statistics, error code and index, state,
cycles waited, stray writes) and every DRAM image byte must agree.

Seeds: VTABENCH_SEED fixes the programs and knobs (printed); otherwise the run's seed.
VTABENCH_FASTPATH_RANDOM sets how many random programs run (default 200).
"""

from __future__ import annotations

import os
import random
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from vtabench.rtl.simjob import GUARD_BYTES, bus_window, run_batch
from vtabench.spec.config import load_config
from vtabench.spec.contracts.errors import ErrorCode
from vtabench.spec.isa import encode_program
from vtabench.spec.isa.insn import Insn
from vtabench.spec.isa.layout import MemType, Opcode
from vtabench.spec.program import BUS_END, INSN_ALIGN, Placement, Program
from vtabench.verify.directed import directed_programs
from vtabench.verify.random_case import move_anywhere
from vtabench.verify.random_program import random_program

pytestmark = pytest.mark.rtl

N_RANDOM = int(os.environ.get("VTABENCH_FASTPATH_RANDOM", "200"))
STRESS = {"stall": 80, "rd_latency": 60, "wr_latency": 30, "rd_gap": 1}
#: Result fields that measure the host, not the simulation.
HOST_FIELDS = {"wall_s", "cycles_per_s", "cpu_s", "cycles_per_cpu_s", "process_wall_s"}


def _illegal_opcode(cfg: Any) -> bytes:
    """[LOAD UOP, FINISH] with the LOAD's opcode bits patched to 5 (validation bypassed)."""
    code = bytearray(encode_program(cfg, [
        Insn(Opcode.LOAD, memory_type=MemType.UOP, y_size=1, x_size=1, x_stride=1),
        Insn(Opcode.FINISH)]))
    code[0] = (code[0] & ~0x7) | 5
    return bytes(code)


def _deadlock(cfg: Any) -> bytes:
    """[GEMM popping an l2g token nothing pushes, FINISH]: runs into its cycle limit."""
    return encode_program(cfg, [Insn(Opcode.GEMM, pop_prev_dep=1, uop_bgn=0, uop_end=1,
                                     iter_out=1, iter_in=1), Insn(Opcode.FINISH)])


def _random_knobs(rng: random.Random, n_bytes: int) -> dict[str, int]:
    knobs = {"stall": rng.choice([0, 0, 30, 120, 250]),
             "rd_latency": rng.choice([1, 2, 20, 100]),
             "wr_latency": rng.choice([1, 10, 40]),
             "rd_gap": rng.choice([0, 0, 0, 2]),
             "rd_reorder": rng.choice([0, 0, 1])}
    if rng.random() < 0.1:
        knobs["wr_err_burst"] = rng.randint(1, 3)
    if rng.random() < 0.1:
        lo = rng.randrange(0, max(64, n_bytes), 64)
        knobs.update(fault_lo=lo, fault_hi=lo + 64 * rng.randint(1, 8))
    return knobs


def _batch(seed: int) -> list[Program]:
    cfg = load_config("default")
    rng = np.random.default_rng(seed)
    knob_rng = random.Random(seed)
    progs: list[Program] = []
    for p in directed_programs(cfg):
        progs.append(Program(p.name, p.insns, p.dram.copy()))
        progs.append(Program(p.name + "@stress", p.insns, p.dram.copy(), knobs=STRESS))
    first = directed_programs(cfg)[0]
    progs.append(Program("placed", first.insns, first.dram.copy(),
                         placement=Placement(dram_base=4096 + 64, insn_pad=48)))
    # the window's last byte is the bus's last (the stream's page and the guard below 2^64)
    code_bytes = 16 * len(first.insns)
    stream_page = BUS_END - GUARD_BYTES - -(-(code_bytes + 32) // INSN_ALIGN) * INSN_ALIGN
    at_top = Placement(dram_base=(stream_page - len(first.dram)) // cfg.bus_bytes * cfg.bus_bytes,
                       insn_pad=32)
    start, span = bus_window("at_top", at_top, len(first.dram), code_bytes, len(first.dram))
    assert start + span == BUS_END, hex(start + span)
    progs.append(Program("at_top", first.insns, first.dram.copy(), placement=at_top))
    progs.append(Program("largest_size", first.insns, first.dram.copy(),
                         placement=Placement(dram_base=64, dram_size=BUS_END - 64)))
    # a LOAD at the last element index its field holds: the range check's widest sums
    far = list(first.insns)
    k = next(i for i, insn in enumerate(far) if insn.opcode == Opcode.LOAD and insn.x_size)
    far[k] = replace(far[k], dram_base=(1 << 32) - 1)
    progs.append(Program("far_range", far, first.dram.copy()))
    progs.append(Program("illegal_opcode", [], np.zeros(4096, np.uint8), _illegal_opcode(cfg),
                         max_cycles=2000))
    # a deadlock mid-batch: the cycle limit, then the next program starts from its state
    progs.append(Program("deadlock", [], np.zeros(4096, np.uint8), _deadlock(cfg),
                         max_cycles=3001))
    progs.append(Program("after_deadlock", first.insns, first.dram.copy()))
    progs.append(Program("cut_short", first.insns, first.dram.copy(), max_cycles=137))
    for i in range(N_RANDOM):
        p = random_program(cfg, rng)
        progs.append(move_anywhere(cfg, Program(f"random{i}", p.insns, p.dram,
                                                knobs=_random_knobs(knob_rng, len(p.dram))),
                                   rng.spawn(1)[0]))
    return progs


def _run(seed: int, **bench: bool) -> tuple[list[dict[str, Any]], list[np.ndarray]]:
    progs = _batch(seed)
    stats = run_batch(load_config("default"), progs, seed=seed, validate=False, quiet=True,
                      **bench)
    return stats, [p.dram for p in progs]


@pytest.fixture(scope="module")
def cocotb_batch(run_seed: int) -> tuple[list[dict[str, Any]], list[np.ndarray]]:
    return _run(run_seed, fast=False)


#: the speed build is a core build of its own (about a minute of CPU): `make test` checks the
#: checking build, the slow run both
@pytest.mark.parametrize("bench", [pytest.param({"fast": True}, id="fast"),
                                   pytest.param({"speed": True}, id="speed",
                                                marks=pytest.mark.slow)])
def test_fast_path_agrees_with_cocotb_cycle_for_cycle(
        run_seed: int, cocotb_batch: tuple[list[dict[str, Any]], list[np.ndarray]],
        bench: dict[str, bool]) -> None:
    """The fast path's checking build, and its speed build (no assertions), against cocotb."""
    print(f"seed {run_seed}")
    slow, slow_images = cocotb_batch
    fast, fast_images = _run(run_seed, **bench)
    assert len(slow) == len(fast) == len(slow_images)
    states = {s["state"] for s in slow}
    # the batch reaches every ending: done, an error code, the cycle limit
    assert {"done", "error", "timeout"} <= states, states
    assert sum(1 for s in slow if s["state"] == "done" and s["name"].startswith("random")) \
        >= N_RANDOM // 2
    placed = {p.name: p.placement for p in _batch(run_seed)}
    high = [s for s in slow if placed[s["name"]].dram_base >= 1 << 63 and s["state"] == "done"]
    assert len(high) >= N_RANDOM // 8, f"{len(high)} programs ran clean above 2^63"
    assert by_name(slow, "at_top")["state"] == by_name(slow, "largest_size")["state"] == "done"
    assert by_name(slow, "far_range")["error"] == ErrorCode.DRAM_RANGE
    diffs = []
    for s, f, si, fi in zip(slow, fast, slow_images, fast_images, strict=True):
        keys = (set(s) | set(f)) - HOST_FIELDS
        bad = {k: (s.get(k), f.get(k)) for k in sorted(keys) if s.get(k) != f.get(k)}
        if not np.array_equal(si, fi):
            bad["dram"] = f"{int(np.count_nonzero(si != fi))} bytes differ"
        if bad:
            diffs.append(f"{s['name']}: {bad}")
    assert not diffs, f"{len(diffs)} of {len(slow)} programs differ (cocotb, fast):\n" + \
        "\n".join(diffs[:10])


def by_name(stats: list[dict[str, Any]], name: str) -> dict[str, Any]:
    """The result of program ``name``."""
    return next(s for s in stats if s["name"] == name)


def test_a_window_past_the_end_of_the_bus_is_refused() -> None:
    """The spec defines no range that wraps past 2^64: a placement whose window (image, stream
    and guard) or DRAM range would is refused, naming the program (run_batch asks bus_window
    for every program before a simulator starts); one byte less fits."""
    image, code = 4096, 64
    last = BUS_END - GUARD_BYTES - 2 * INSN_ALIGN  # the image's page: the stream's is next
    assert sum(bus_window("fits", Placement(dram_base=last), image, code, image)) == BUS_END
    with pytest.raises(ValueError, match="wraps: image at .* pass the end of the 64-bit bus"):
        bus_window("wraps", Placement(dram_base=last + 64), image, code, image)
    assert bus_window("fits", Placement(dram_base=64), image, code, BUS_END - 64)
    with pytest.raises(ValueError, match="wraps: DRAM size 0x.* passes the end"):
        bus_window("wraps", Placement(dram_base=64), image, code, BUS_END - 63)


def test_fast_path_refuses_what_it_cannot_run() -> None:
    cfg = load_config("default")
    p = directed_programs(cfg)[0]
    with pytest.raises(ValueError, match="fast path"):
        run_batch(cfg, [p], seed=1, quiet=True, fast=True, waves=True)
