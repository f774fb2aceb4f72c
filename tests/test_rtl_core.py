"""The RTL core (Verilator) against fsim: every DRAM byte, for default and cloud32.

One simulator process per configuration runs the whole batch (directed programs twice: ideal
memory and a slow, back-pressuring one; seeded random programs with random memory knobs; the
throughput programs; an illegal opcode with validation bypassed; an AXI read fault), resetting
between programs; the tests below look up their program's result. Under pytest-xdist the batches
are shared between workers (conftest.py's shared_work: each computed once per run, by whichever
worker claims it first), so the two configurations build and run in parallel.

Seeds: VTABENCH_SEED fixes the random programs and the memory back-pressure (printed by every test
that uses it); otherwise it is derived from the run id (conftest.py's run_seed).
VTABENCH_RTL_RANDOM sets how many random programs run per configuration (default 32).
The batches run on the bench `run_batch` picks (the C++ fast path unless VTABENCH_RTL_BENCH=cocotb)
and time that bench's build only: a cocotb build of cloud32 that nothing here runs would cost
`make test` a whole Verilator build.
"""

from __future__ import annotations

import contextlib
import functools
import os
import random
import time
from pathlib import Path
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
import pytest

from vtabench.verify.directed import directed_programs
from vtabench.verify.random_program import random_program
from vtabench.spec.config import load_config
from vtabench.fsim import Fsim
from vtabench.spec.isa import encode_program
from vtabench.spec.isa.insn import Insn
from vtabench.spec.isa.layout import MemType, Opcode
from vtabench.verify import perf
from vtabench.spec.contracts.errors import ErrorCode
from vtabench.rtl import verilator
from vtabench.rtl.verilator import build
from vtabench.rtl.simjob import bench_choice, run_batch
from vtabench.spec.program import Program

if TYPE_CHECKING:
    from conftest import SharedWork

pytestmark = pytest.mark.rtl

CONFIGS = ("default", "cloud32")
N_RANDOM = int(os.environ.get("VTABENCH_RTL_RANDOM", "32"))
STRESS = {"stall": 80, "rd_latency": 60, "wr_latency": 30, "rd_gap": 1}

#: ERR_* name (as the RTL spells it) -> code, from the contract spec/contracts/errors.json
ERR = {f"ERR_{code.name}": code for code in ErrorCode}
ERR_OPCODE = ErrorCode.OPCODE
ERR_AXI_RD = ErrorCode.AXI_RD
ILLEGAL_MAX_CYCLES = 2000
DEADLOCK_MAX_CYCLES = 20000
GEMM_SIZES = (8, 24)
ALU_SIZES = (2, 6)
LOAD_SIZES = (256, 1024)
#: Steady-state targets (issue 3): GEMM one micro-op per cycle, ALU one every two, one beat/cycle.
GEMM_MIN_FRACTION = 0.9
ALU_MIN_UOPS_PER_CYCLE = 0.5
LOAD_MIN_BEATS_PER_CYCLE = 0.9


# ------------------------------------------------------------------------------------------------
# The batch of one configuration
# ------------------------------------------------------------------------------------------------

def illegal_opcode_program(cfg: Any) -> bytes:
    """[LOAD UOP with opcode bits patched to 5, FINISH] as raw bytes (validation bypassed)."""
    code = bytearray(encode_program(cfg, [
        Insn(Opcode.LOAD, memory_type=MemType.UOP, y_size=1, x_size=1, x_stride=1),
        Insn(Opcode.FINISH)]))
    code[0] = (code[0] & ~0x7) | 5
    return bytes(code)


def _patch(code: bytes, index: int, lsb: int, width: int, value: int) -> bytes:
    """Overwrite bits [lsb, lsb+width) of instruction ``index`` (what an encoder refuses)."""
    word = int.from_bytes(code[16 * index:16 * index + 16], "little")
    word = (word & ~(((1 << width) - 1) << lsb)) | (value << lsb)
    return code[:16 * index] + word.to_bytes(16, "little") + code[16 * index + 16:]


def bad_programs(cfg: Any) -> dict[str, tuple[bytes, str, Any, int]]:
    """Programs the validator rejects, fed straight to the core: name -> (code, expected ERR_*
    name, index of the offending instruction, DRAM image bytes)."""
    from vtabench.spec.isa.layout import AluOp

    fin = Insn(Opcode.FINISH)
    n = 4096
    inp_elems = n // cfg.inp_elem_bytes
    out_elems = n // cfg.out_elem_bytes

    def enc(*insns: Insn) -> bytes:
        return encode_program(cfg, list(insns) + [fin])

    load1 = Insn(Opcode.LOAD, memory_type=MemType.INP, y_size=1, x_size=1, x_stride=1)
    alu = Insn(Opcode.ALU, alu_opcode=AluOp.ADD, uop_bgn=0, uop_end=1, iter_out=1, iter_in=1,
               use_imm=1, imm=1)
    return {
        "bad_opcode_7": (_patch(enc(load1), 0, 0, 3, 7), "ERR_OPCODE", 0, n),
        "bad_memory_type": (_patch(enc(load1), 0, 7, 3, 6), "ERR_MEM_TYPE", 0, n),
        "bad_alu_opcode": (_patch(enc(Insn(Opcode.LOAD, memory_type=MemType.UOP, y_size=1,
                                               x_size=1, x_stride=1), alu), 1, 108, 3, 6),
                           "ERR_ALU_OP", 1, n),
        "load_past_dram": (enc(Insn(Opcode.LOAD, memory_type=MemType.INP, dram_base=inp_elems - 1,
                                    y_size=1, x_size=2, x_stride=2)), "ERR_DRAM_RANGE", 0, n),
        "store_past_dram": (enc(Insn(Opcode.STORE, memory_type=MemType.OUT,
                                     dram_base=out_elems - 1, y_size=2, x_size=1, x_stride=1)),
                            "ERR_DRAM_RANGE", 0, n),
        "load_past_inp_buffer": (enc(Insn(Opcode.LOAD, memory_type=MemType.INP,
                                          sram_base=cfg.inp_depth - 1, y_size=1, x_size=2,
                                          x_stride=2)), "ERR_SRAM_LOAD", 0, n),
        # FINISH not last: reported at the first FINISH (not last) or the second (twice)
        "finish_not_last": (encode_program(cfg, [fin, load1, fin]), "ERR_FINISH", (0, 2), n),
    }


def deadlock_program(cfg: Any) -> bytes:
    """[GEMM popping an l2g token that nothing pushes, FINISH]: waits forever (validation
    bypassed); the bench must report a timeout with the status and go on with the next program."""
    return encode_program(cfg, [Insn(Opcode.GEMM, pop_prev_dep=1, uop_bgn=0, uop_end=1,
                                     iter_out=1, iter_in=1), Insn(Opcode.FINISH)])


def _compare(name: str, got: np.ndarray, want: np.ndarray) -> dict[str, Any]:
    diff = np.flatnonzero(got != want)
    info: dict[str, Any] = {"match": diff.size == 0, "n_diff": int(diff.size)}
    if diff.size:
        i = int(diff[0])
        info["first_diff"] = (f"{name}: {diff.size} bytes differ; first at byte {i}: rtl "
                              f"{got[i:i + 16].tolist()} fsim {want[i:i + 16].tolist()}")
    return info


def run_config_batch(cfg_name: str, seed: int) -> dict[str, dict[str, Any]]:
    cfg = load_config(cfg_name)
    t0 = time.monotonic()
    b = build(cfg, fast=bench_choice() == "fast")
    build_s = time.monotonic() - t0
    rng = np.random.default_rng(seed)
    knob_rng = random.Random(seed)
    entries: list[tuple[Program, np.ndarray | None, dict[str, Any]]] = []

    def add(name: str, prog: Program, knobs: dict[str, int] | None = None,
            **meta: Any) -> None:
        want = prog.dram.copy()
        Fsim(cfg).run(prog.insns, want)
        entries.append((Program(name, prog.insns, prog.dram.copy(), knobs=knobs or {}),
                        want, meta))

    for prog in directed_programs(cfg):
        add(prog.name, prog)
        add(prog.name + "@stress", prog, STRESS)
    for i in range(N_RANDOM):
        prog = random_program(cfg, rng)
        knobs = {"stall": knob_rng.choice([0, 0, 30, 120]),
                 "rd_latency": knob_rng.choice([1, 20, 100]),
                 "rd_gap": knob_rng.choice([0, 0, 0, 2])}
        add(f"random{i}", prog, knobs, knobs_used=knobs)
    for n in GEMM_SIZES:
        prog, macs = perf.gemm_program(cfg, n)
        add(prog.name, prog, macs=macs)
    for n in ALU_SIZES:
        prog, uops = perf.alu_program(cfg, n)
        add(prog.name, prog, uops=uops)
    for n in LOAD_SIZES:
        prog, beats = perf.load_program(cfg, n)
        add(prog.name, prog, beats=beats)
        add(prog.name + "@lat200", prog, {"rd_latency": 200}, beats=beats)
    # Errors: an illegal opcode straight to the core, and SLVERR on the first read of data.
    entries.append((Program("illegal_opcode", [], np.zeros(4096, np.uint8),
                            illegal_opcode_program(cfg), max_cycles=ILLEGAL_MAX_CYCLES), None, {}))
    for name, (code, _, _, nbytes) in bad_programs(cfg).items():
        entries.append((Program(name, [], np.zeros(nbytes, np.uint8), code,
                                max_cycles=ILLEGAL_MAX_CYCLES), None, {}))
    entries.append((Program("deadlock", [], np.zeros(4096, np.uint8), deadlock_program(cfg),
                            max_cycles=DEADLOCK_MAX_CYCLES), None, {}))
    first = directed_programs(cfg)[0]
    entries.append((Program("axi_read_fault", first.insns, first.dram.copy(),
                            knobs={"fault_lo": 0, "fault_hi": 64}), None, {}))

    progs = [e[0] for e in entries]
    t1 = time.monotonic()
    stats = run_batch(cfg, progs, seed=seed, validate=False, quiet=True)
    run_s = time.monotonic() - t1
    out: dict[str, dict[str, Any]] = {}
    for (prog, want, meta), st in zip(entries, stats, strict=True):
        rec = {"stats": st, **meta}
        if want is not None:
            rec.update(_compare(prog.name, prog.dram, want))
        out[prog.name] = rec
    out["_meta"] = {"build_s": round(build_s, 1), "built": b.built, "run_s": round(run_s, 1),
                    "n_programs": len(progs), "seed": seed}
    return out


def run_cloud64_gemm(seed: int) -> dict[str, Any]:
    cfg = load_config("cloud64")
    t0 = time.monotonic()
    b = build(cfg, fast=bench_choice() == "fast")
    build_s = time.monotonic() - t0
    prog, macs = perf.gemm_program(cfg, 4, max_iter_out=4)
    want = prog.dram.copy()
    Fsim(cfg).run(prog.insns, want)
    rp = Program(prog.name, prog.insns, prog.dram.copy())
    st = run_batch(cfg, [rp], seed=seed, quiet=True)[0]
    return {"stats": st, "macs": macs, "build_s": round(build_s, 1), "built": b.built,
            **_compare(prog.name, rp.dram, want)}


@contextlib.contextmanager
def waves_format_forced(fmt: str | None) -> Iterator[None]:
    """The waves format the build decides on (verilator.waves_format: FST when the lz4 headers
    are installed) set to ``fmt`` for the duration (None: left as the machine decides)."""
    saved = verilator._WAVES_FORMAT
    if fmt is not None:
        verilator._WAVES_FORMAT = fmt
    try:
        yield
    finally:
        verilator._WAVES_FORMAT = saved


def run_waves(seed: int, path: Path, fmt: str | None = None) -> dict[str, Any]:
    """The first directed program with waves, in format ``fmt`` (None: the machine's)."""
    cfg = load_config("default")
    prog = directed_programs(cfg)[0]
    want = prog.dram.copy()
    Fsim(cfg).run(prog.insns, want)
    rp = Program(prog.name, prog.insns, prog.dram.copy())
    with waves_format_forced(fmt):
        st = run_batch(cfg, [rp], seed=seed, waves=path, quiet=True)[0]
        built_fmt = verilator.waves_format()
    written = Path(st.get("waves", path))
    return {"stats": st, "format": built_fmt, "waves": str(written),
            "head": written.read_bytes()[:4096] if written.is_file() else b"",
            **_compare(prog.name, rp.dram, want)}


def _items(seed: int, run_dir: Path) -> dict[str, Callable[[], Any]]:
    """The work this module shares between workers, by key (see _item_keys)."""
    items: dict[str, Callable[[], Any]] = {
        f"batch-{c}": functools.partial(run_config_batch, c, seed) for c in CONFIGS}
    items["cloud64-gemm"] = functools.partial(run_cloud64_gemm, seed)
    items["waves"] = functools.partial(run_waves, seed, run_dir / "waves" / "gemm_loops.fst")
    items["waves-vcd"] = functools.partial(run_waves, seed, run_dir / "waves-vcd" / "gemm_loops",
                                           "vcd")
    return items


def batch(work: SharedWork, cfg_name: str) -> dict[str, dict[str, Any]]:
    res = work.get(f"batch-{cfg_name}")
    meta = res["_meta"]
    print(f"rtl {cfg_name}: seed {meta['seed']}, build {meta['build_s']} s "
          f"({'built' if meta['built'] else 'reused'}), {meta['n_programs']} programs in "
          f"{meta['run_s']} s")
    return res


def _directed_names(cfg_name: str) -> list[str]:
    return [p.name for p in directed_programs(load_config(cfg_name))]


def _check_match(rec: dict[str, Any]) -> None:
    st = rec["stats"]
    assert st["state"] == "done", f"{st['name']}: {st['state']}, status {st}"
    assert st["error"] == 0, f"{st['name']}: error code {st['error']:#x} at insn {st['error_insn']}"
    assert rec["match"], rec.get("first_diff")
    assert st["stray_writes"] == 0, f"{st['name']}: {st['stray_writes']} bytes outside the image"
    assert st["dram_proto_err"] == 0, f"{st['name']}: AXI protocol errors"


# ------------------------------------------------------------------------------------------------
# Tests
# ------------------------------------------------------------------------------------------------

def _item_keys(test: pytest.Item) -> set[str]:
    name = test.name
    if "cloud64" in name:
        return {"cloud64-gemm"}
    if "waves" in name:
        return {"waves-vcd" if "vcd" in name else "waves"}
    params = getattr(getattr(test, "callspec", None), "params", {})
    return {f"batch-{params['cfg_name']}"} if "cfg_name" in params else set()


@pytest.fixture(scope="module")
def rtl_work(request: pytest.FixtureRequest, shared_work: SharedWork,
             run_seed: int) -> SharedWork:
    """The run's shared work with this module's items: only those the selected tests need."""
    needed = set().union(*(_item_keys(t) for t in request.session.items
                           if t.module is request.module))
    shared_work.define({k: fn for k, fn in _items(run_seed, shared_work.run_dir).items()
                        if k in needed})
    return shared_work


@pytest.mark.parametrize("cfg_name", CONFIGS)
@pytest.mark.parametrize("memory", ["ideal", "stress"])
@pytest.mark.parametrize("index", range(len(_directed_names("default"))))
def test_directed(rtl_work: SharedWork, cfg_name: str, memory: str, index: int) -> None:
    name = _directed_names(cfg_name)[index] + ("@stress" if memory == "stress" else "")
    _check_match(batch(rtl_work, cfg_name)[name])


@pytest.mark.parametrize("cfg_name", CONFIGS)
def test_random_programs(rtl_work: SharedWork, cfg_name: str) -> None:
    res = batch(rtl_work, cfg_name)
    seed = res["_meta"]["seed"]
    bad = []
    for i in range(N_RANDOM):
        rec = res[f"random{i}"]
        try:
            _check_match(rec)
        except AssertionError as exc:
            bad.append(f"random{i} (knobs {rec.get('knobs_used')}): {exc}")
    assert not bad, f"seed {seed} (VTABENCH_SEED={seed} repeats): " + "; ".join(bad)


@pytest.mark.parametrize("cfg_name", CONFIGS)
def test_illegal_opcode_stops_core(rtl_work: SharedWork, cfg_name: str) -> None:
    st = batch(rtl_work, cfg_name)["illegal_opcode"]["stats"]
    assert st["state"] != "timeout", f"no done_o within {ILLEGAL_MAX_CYCLES} cycles: {st}"
    assert st["error"] == ERR_OPCODE, f"error_o {st['error']:#x}, want {ERR_OPCODE:#x}"
    assert st["error_insn"] == 0
    assert st["stray_writes"] == 0


BAD_NAMES = list(bad_programs(load_config("default")))


@pytest.mark.parametrize("cfg_name", CONFIGS)
@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_program_stops_core_with_error(rtl_work: SharedWork, cfg_name: str,
                                           name: str) -> None:
    """Validation bypassed: the core stops with the error code (spec/contracts/errors.json)
    within a bounded number of cycles, names the instruction, and writes nothing outside the
    image."""
    _, err_name, index, _ = bad_programs(load_config(cfg_name))[name]
    st = batch(rtl_work, cfg_name)[name]["stats"]
    assert st["state"] != "timeout", f"no done_o within {ILLEGAL_MAX_CYCLES} cycles: {st}"
    assert st["error"] == ERR[err_name], \
        f"error_o {st['error']:#x}, want {err_name} = {ERR[err_name]:#x}"
    assert st["error_insn"] in (index if isinstance(index, tuple) else (index,)), st
    assert st["stray_writes"] == 0


@pytest.mark.parametrize("cfg_name", CONFIGS)
def test_hang_is_reported_not_waited_for(rtl_work: SharedWork, cfg_name: str) -> None:
    """A deadlocked program ends the wait at its cycle bound with the core's status; the next
    program in the same simulator (after a reset) still runs (the fault test below)."""
    st = batch(rtl_work, cfg_name)["deadlock"]["stats"]
    assert st["state"] == "timeout" or st["error"] != 0, st
    if st["state"] == "timeout":
        assert st["sim_cycles"] >= DEADLOCK_MAX_CYCLES and st["busy"] == 1, st
    assert st["stray_writes"] == 0


@pytest.mark.parametrize("cfg_name", CONFIGS)
def test_axi_read_fault_reported(rtl_work: SharedWork, cfg_name: str) -> None:
    st = batch(rtl_work, cfg_name)["axi_read_fault"]["stats"]
    assert st["state"] != "timeout", f"no done_o after a read SLVERR: {st}"
    assert st["error"] == ERR_AXI_RD, f"error_o {st['error']:#x}, want {ERR_AXI_RD:#x}"
    assert st["stray_writes"] == 0


def _rate(res: dict, names: list[str], key: str) -> tuple[float, float]:
    """(steady-state units per cycle from the difference of two runs, whole-program rate)."""
    a, b = (res[n] for n in names)
    for rec in (a, b):
        _check_match(rec)
    dc = b["stats"]["cycles"] - a["stats"]["cycles"]
    assert dc > 0, f"{names[1]} took {dc} cycles more than {names[0]}: the counter is wrong"
    return (b[key] - a[key]) / dc, b[key] / b["stats"]["cycles"]


@pytest.mark.parametrize("cfg_name", CONFIGS)
def test_gemm_throughput(rtl_work: SharedWork, cfg_name: str) -> None:
    cfg = load_config(cfg_name)
    res = batch(rtl_work, cfg_name)
    steady, overall = _rate(res, [f"perf_gemm_{n}" for n in GEMM_SIZES], "macs")
    peak = cfg.macs_per_cycle
    print(f"{cfg_name}: GEMM {steady:.1f} MACs/cycle steady = {steady / peak:.3f} of peak "
          f"{peak}; whole program {overall / peak:.3f} of peak")
    assert steady >= GEMM_MIN_FRACTION * peak


@pytest.mark.parametrize("cfg_name", CONFIGS)
@pytest.mark.parametrize("unit,sizes,key,minimum", [
    ("alu", ALU_SIZES, "uops", ALU_MIN_UOPS_PER_CYCLE),
    ("load", LOAD_SIZES, "beats", LOAD_MIN_BEATS_PER_CYCLE)])
def test_unit_rate(rtl_work: SharedWork, cfg_name: str, unit: str, sizes: tuple[int, int],
                   key: str, minimum: float) -> None:
    """ALU micro-ops per cycle and LOAD beats per cycle in steady state."""
    steady, _ = _rate(batch(rtl_work, cfg_name), [f"perf_{unit}_{n}" for n in sizes], key)
    print(f"{cfg_name}: {unit.upper()} {steady:.3f} {key}/cycle")
    assert steady >= minimum


@pytest.mark.parametrize("cfg_name", CONFIGS)
def test_load_beat_rate_hides_latency(rtl_work: SharedWork, cfg_name: str) -> None:
    """200-cycle read latency: several bursts in flight keep one beat per cycle."""
    res = batch(rtl_work, cfg_name)
    names = [f"perf_load_{n}@lat200" for n in LOAD_SIZES]
    steady, _ = _rate(res, names, "beats")
    outstanding = res[names[1]]["stats"]["dram_max_rd_outstanding"]
    print(f"{cfg_name}: LOAD at 200-cycle latency {steady:.3f} beats/cycle, "
          f"{outstanding} reads outstanding")
    assert outstanding >= 4
    assert steady >= LOAD_MIN_BEATS_PER_CYCLE


@pytest.mark.slow  # the cloud64 build alone takes minutes
def test_cloud64_builds_and_runs_gemm(rtl_work: SharedWork) -> None:
    rec = rtl_work.get("cloud64-gemm")
    st = rec["stats"]
    print(f"cloud64: build {rec['build_s']} s, {st['cycles']} cycles, "
          f"{rec['macs'] / st['cycles']:.0f} MACs/cycle")
    _check_match(rec)


def _check_waves(rec: dict[str, Any], fmt: str) -> None:
    """The run matched fsim and wrote waves in ``fmt``: the file's suffix and its first bytes
    (FST: a binary header block, type 0; VCD: text declarations)."""
    _check_match(rec)
    path, head = Path(rec["waves"]), rec["head"]
    assert rec["format"] == fmt
    assert path.suffix == f".{fmt}", f"waves at {path}, expected a .{fmt} file"
    assert head, f"no waves at {path}"
    if fmt == "fst":
        assert head[0] == 0 and b"$scope" not in head, f"{path} is not an FST: {head[:40]!r}"
    else:
        text = head.decode("ascii")
        assert text.lstrip().startswith("$") and "$scope" in text, f"{path} is not a VCD"


def test_waves_written(rtl_work: SharedWork) -> None:
    """Waves in the format the build reports for this machine (FST with the lz4 headers)."""
    _check_waves(rtl_work.get("waves"), verilator.waves_format())


def test_waves_written_as_vcd_without_lz4(rtl_work: SharedWork) -> None:
    """The VCD path, forced through the build's own decision, so that a machine with the lz4
    headers exercises it too."""
    _check_waves(rtl_work.get("waves-vcd"), "vcd")
