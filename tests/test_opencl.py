"""OpenCL conformance on PoCL: the same programs as fsim, bit-exact, for both kernel variants
(group: vta_group.cl, one work-group per program; item: vta.cl, one work-item) and the
configurations default, cloud32 and cloud64.

Every directed program, the smoke set's GEMM-heavy programs, the shared random programs
(vtabench.verify.random_program) and a batch of racy random programs (random token flags that leave
races, so only a machine with fsim's exact stage / token schedule matches) run on each kernel and
must leave the DRAM image byte-identical to fsim's. The larger configurations run fewer random
programs (the suite's time on two cores). The group variant's batch entry point runs many programs
in one launch; mutants of its parallel paths must fail (the programs exercise them). Each kernel is
built once per configuration per test session (per worker under xdist). Error tests: a missing
platform, a kernel that does not build, a run past its timeout, a prebuilt binary for another
configuration, and the kernel's own guards (deadlock, DRAM range) each give a clear error.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from vtabench.spec.config import Config, load_config
from vtabench.spec.isa.insn import Insn
from vtabench.spec.isa.layout import AluOp, MemType, Opcode
from vtabench.verify.builder import ProgramBuilder
from vtabench.verify.directed import directed_programs
from vtabench.verify.random_program import random_program
from vtabench.spec.contracts.errors import ErrorCode, describe
from vtabench.spec.contracts.stages import QUEUE_ENDS, TokenQueue
from vtabench.spec.tokens import Stage, schedule, stage_of
from vtabench.verify.smoke import (conv1d_padded, gemm_tiled, smoke_programs,
                            token_order)
from vtabench.spec.validate import ValidationError, validate_program
from vtabench.spec.program import Program


import pyopencl as cl  # noqa: E402

from vtabench.drivers import RunTimeoutError  # noqa: E402
from vtabench.drivers.api import run_program, run_programs  # noqa: E402
from vtabench.drivers.opencl.device import OpenCLDevice  # noqa: E402
from vtabench.drivers.opencl.errors import (KernelBuildError, KernelRunError,  # noqa: E402
                                            OpenCLError)
from vtabench.drivers.opencl.kernel import (ENV_VARIANT, GROUP_KERNEL_PATH,  # noqa: E402
                                            GROUP_SIZE_CPU, choose_variant, group_build_options,
                                            group_local_bytes)
from vtabench.drivers.opencl.platforms import select_device  # noqa: E402
from vtabench.fsim import Fsim  # noqa: E402

pytestmark = pytest.mark.opencl

CONFIGS = ("default", "cloud32", "cloud64")
VARIANTS = ("group", "item")
PLATFORM = os.environ.get("VTA_TEST_OPENCL_PLATFORM", "Portable")
#: Random programs per configuration and variant.
N_RACY = {"default": 40, "cloud32": 12, "cloud64": 6}
N_SHARED_RANDOM = {"default": 32, "cloud32": 12, "cloud64": 6}
MEM_BYTES = 4 << 20



_DEVICES: dict[tuple[str, str], OpenCLDevice] = {}


def device(cfg_name: str, variant: str = "group") -> OpenCLDevice:
    """One device (one kernel build) per configuration and variant per session."""
    if (cfg_name, variant) not in _DEVICES:
        _DEVICES[cfg_name, variant] = OpenCLDevice(load_config(cfg_name), MEM_BYTES,
                                                      platform=PLATFORM, variant=variant)
    return _DEVICES[cfg_name, variant]


def expected(cfg: Config, prog: Program) -> np.ndarray:
    ref = prog.dram.copy()
    Fsim(cfg).run(prog.insns, ref)
    return ref


def assert_same(prog: Program, cfg: Config, ref: np.ndarray, got: np.ndarray) -> None:
    if not np.array_equal(ref, got):
        diff = np.flatnonzero(ref != got)
        pytest.fail(f"{prog.name} ({cfg.name}): {diff.size} bytes differ from fsim, first at "
                    f"{int(diff[0]):#x}: fsim {int(ref[diff[0]])}, opencl {int(got[diff[0]])}")


def check(cfg: Config, prog: Program, variant: str = "group",
          dev: OpenCLDevice | None = None) -> None:
    got = prog.dram.copy()
    run_program(dev or device(cfg.name, variant), prog.insns, got, timeout_s=60)
    assert_same(prog, cfg, expected(cfg, prog), got)


# ---------------------------------------------------------------------------------------------
# Racy random programs: random instructions over small buffer ranges with random token pairs.
# ---------------------------------------------------------------------------------------------

def _racy_program(cfg: Config, rng: np.random.Generator, name: str) -> Program:
    for _ in range(200):
        prog = _racy_candidate(cfg, rng, name)
        try:
            validate_program(cfg, prog.insns, prog.dram)
            return prog
        except ValidationError:
            continue
    raise RuntimeError("no valid racy program in 200 tries")


def _racy_candidate(cfg: Config, rng: np.random.Generator, name: str) -> Program:
    b = ProgramBuilder(cfg)
    r = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    inp = b.data(MemType.INP, rng.integers(-128, 128, (32, cfg.batch, cfg.block_in)))
    wgt = b.data(MemType.WGT, rng.integers(-128, 128, (8, cfg.block_out, cfg.block_in)))
    acc = b.data(MemType.ACC, rng.integers(-2**31, 2**31, (16, cfg.batch, cfg.block_out)))
    acc8 = b.data(MemType.ACC_8BIT, rng.integers(-128, 128, (16, cfg.batch, cfg.block_out)))
    tables = [b.uop_table(rng.integers(0, 8, 8), rng.integers(0, 8, 8), rng.integers(0, 4, 8))
              for _ in range(3)]
    out = b.alloc(MemType.OUT, 48, fill=0xEE)
    b.load(MemType.UOP, 0, tables[0][0], 1, 8)
    for _ in range(r(8, 28)):
        kind = r(0, 9)
        if kind == 0:
            b.load(MemType.INP, r(0, 6), inp + r(0, 20), r(1, 2), r(1, 3), stride=r(3, 5),
                   pads=(r(0, 1), 0, r(0, 1), r(0, 1)) if rng.random() < 0.3 else (0, 0, 0, 0))
        elif kind == 1:
            b.load(MemType.WGT, r(0, 3), wgt + r(0, 4), 1, r(1, 3))
        elif kind == 2:
            b.load(MemType.UOP, 0, tables[r(0, 2)][0], 1, 8)
        elif kind == 3:
            mem = MemType.ACC if rng.random() < 0.5 else MemType.ACC_8BIT
            b.load(mem, r(0, 8), (acc if mem == MemType.ACC else acc8) + r(0, 10), 1, r(1, 4),
                   pads=(0, r(0, 1), r(0, 1), 0) if rng.random() < 0.3 else (0, 0, 0, 0))
        elif kind in (4, 5, 6):
            bgn = r(0, 7)
            b.gemm((bgn, r(bgn, 8)), (r(1, 3), r(1, 2)), dst=(r(0, 3), r(0, 2)),
                   src=(r(0, 3), r(0, 2)), wgt=(r(0, 1), r(0, 1)), reset=rng.random() < 0.15)
        elif kind == 7:
            bgn = r(0, 7)
            op = AluOp(r(0, 4))
            imm = {AluOp.SHR: r(-40, 40), AluOp.MUL: r(-300, 300)}.get(op, r(-2**15, 2**15 - 1))
            b.alu(op, (bgn, r(bgn, 8)), (r(1, 3), r(1, 2)), dst=(r(0, 3), r(0, 2)),
                  src=(r(0, 3), r(0, 2)), imm=imm if rng.random() < 0.5 else None)
        else:
            b.store(r(0, 12), out + r(0, 30), r(1, 2), r(1, 4), stride=r(4, 8))
    insns = b.insns
    # Random token pairs: a producer and a consumer of the right stages, anywhere in the stream.
    by_stage = {s: [i for i, x in enumerate(insns) if stage_of(x) == s] for s in Stage}
    for _ in range(r(2, 10)):
        ps, pf, cs, cf = QUEUE_ENDS[TokenQueue(r(0, len(TokenQueue) - 1))]
        prod = [i for i in by_stage[ps] if not getattr(insns[i], pf)]
        cons = [i for i in by_stage[cs] if not getattr(insns[i], cf)]
        if prod and cons:
            setattr(insns[int(rng.choice(prod))], pf, 1)
            setattr(insns[int(rng.choice(cons))], cf, 1)
    b.finish()
    return b.build(name)


def _racy(cfg_name: str, seed: int) -> Program:
    cfg = load_config(cfg_name)
    return _racy_program(cfg, np.random.default_rng(1000 + seed), f"racy_{seed}")


# ---------------------------------------------------------------------------------------------
# Conformance
# ---------------------------------------------------------------------------------------------

def _directed_names() -> list[str]:
    return [p.name for p in directed_programs(load_config("default"))]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("cfg_name", CONFIGS)
@pytest.mark.parametrize("name", _directed_names())
def test_directed(cfg_name: str, variant: str, name: str) -> None:
    cfg = load_config(cfg_name)
    (prog,) = [p for p in directed_programs(cfg) if p.name == name]
    check(cfg, prog, variant)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("cfg_name", CONFIGS)
def test_smoke_gemm_programs(cfg_name: str, variant: str) -> None:
    cfg = load_config(cfg_name)
    for prog in (token_order(cfg), conv1d_padded(cfg), gemm_tiled(cfg, 64, 16, 16)):
        check(cfg, prog, variant)


def _seeds(counts: dict[str, int]) -> list[tuple[str, int]]:
    return [(c, s) for c in CONFIGS for s in range(counts[c])]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize(("cfg_name", "seed"), _seeds(N_RACY))
def test_racy_random(cfg_name: str, seed: int, variant: str) -> None:
    check(load_config(cfg_name), _racy(cfg_name, seed), variant)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize(("cfg_name", "seed"), _seeds(N_SHARED_RANDOM))
def test_shared_random(cfg_name: str, seed: int, variant: str) -> None:
    cfg = load_config(cfg_name)
    check(cfg, random_program(cfg, np.random.default_rng(seed)), variant)


@pytest.mark.parametrize("cfg_name", CONFIGS)
def test_batch_runs_one_program_per_work_group(cfg_name: str) -> None:
    """run_programs on the group variant: the directed, smoke and random programs in one launch
    (more programs than work-groups: a work-group runs several in turn), each image fsim's."""
    cfg = load_config(cfg_name)
    dev = device(cfg_name, "group")
    progs = (directed_programs(cfg) + [token_order(cfg), conv1d_padded(cfg)]
             + [random_program(cfg, np.random.default_rng(100 + s)) for s in range(8)])
    assert len(progs) > dev.batch_groups
    images = [p.dram.copy() for p in progs]
    results = dev.run_programs([replace(p, dram=img) for p, img in zip(progs, images)],
                               timeout_s=120)
    for p, img, r in zip(progs, images, results):
        assert not isinstance(r, Exception), f"{p.name}: {r}"
        assert r.stats["batch_programs"] == len(progs) and r.stats["executed"] == len(p.insns)
        assert_same(p, cfg, expected(cfg, p), img)


#: Parts the grid tests split each instruction into on one work-group (the grid's split without
#: its concurrency: PoCL does not promise that work-groups run at once).
GRID_PARTS = 3
_GRIDS: dict[str, OpenCLDevice] = {}


def grid_device(cfg_name: str) -> OpenCLDevice:
    if cfg_name not in _GRIDS:
        _GRIDS[cfg_name] = OpenCLDevice(load_config(cfg_name), MEM_BYTES, platform=PLATFORM,
                                        variant="group", grid=1, grid_parts=GRID_PARTS)
    return _GRIDS[cfg_name]


@pytest.mark.parametrize("cfg_name", CONFIGS)
def test_grid_split_matches_fsim(cfg_name: str) -> None:
    """vta_grid: every instruction's element loops split into parts (directed, smoke, racy and
    random programs), each image fsim's; the run reports how often the grid waited."""
    cfg = load_config(cfg_name)
    dev = grid_device(cfg_name)
    assert dev.info()["kernel"].startswith(f"grid (1 x {dev.group_size} work-items, 3 parts)")
    progs = (directed_programs(cfg) + [token_order(cfg), conv1d_padded(cfg), _small_gemm(cfg)]
             + [_racy(cfg_name, s) for s in range(N_RACY[cfg_name] // 2)]
             + [random_program(cfg, np.random.default_rng(s)) for s in range(8)])
    for prog in progs:
        got = prog.dram.copy()
        r = run_program(dev, prog.insns, got, timeout_s=60)
        assert r.stats["grid_waits"] >= 1  # the one after the reset, at least
        assert_same(prog, cfg, expected(cfg, prog), got)


def test_grid_waits_where_an_instruction_needs_another_ones_data() -> None:
    """The grid's hazard ranges: small_gemm waits after the reset, before its GEMM (it reads
    the loaded inp and wgt) and before its STORE (it reads the GEMM's out), nowhere else; loads
    into disjoint rows of one buffer need no wait between them, a load over rows another load
    wrote does."""
    cfg = load_config("default")
    dev = grid_device("default")
    prog = _small_gemm(cfg)
    assert run_program(dev, prog.insns, prog.dram.copy(), timeout_s=60).stats["grid_waits"] == 3
    for rows, waits in (((0, 2), 1), ((0, 1), 2)):
        b = ProgramBuilder(cfg)
        inp = b.data(MemType.INP, np.ones((4, cfg.batch, cfg.block_in), np.int8))
        for row in rows:
            b.load(MemType.INP, row, inp, 1, 2)  # inp rows row, row + 1
        b.finish()
        p = b.build("loads")
        assert run_program(dev, p.insns, p.dram.copy(), timeout_s=60).stats["grid_waits"] == waits


def test_grid_reports_errors_and_timeouts() -> None:
    """On the grid an error stops the run where the group variant stops it (a deadlock; an index
    past its buffer on the sequential path), and the work budget still applies."""
    cfg = load_config("default")
    dev = grid_device("default")
    stuck = [Insn(Opcode.GEMM, pop_prev_dep=1, uop_bgn=0, uop_end=0), Insn(Opcode.FINISH)]
    with pytest.raises(KernelRunError) as err:
        run_program(dev, stuck, np.zeros(4096, np.uint8), timeout_s=10)
    assert err.value.code == ErrorCode.DEADLOCK
    b = ProgramBuilder(cfg)
    uops = b.load_uops(0, [cfg.acc_depth - 1, cfg.acc_depth - 1])
    b.gemm(uops, (2, 1), dst=(1, 0))  # destinations repeat and the second is past acc
    b.finish()
    prog = b.build("gemm_past_acc")
    for d in (dev, device("default", "group")):
        with pytest.raises(KernelRunError) as err:
            run_program(d, prog.insns, prog.dram.copy(), timeout_s=10)
        assert (err.value.code, err.value.index) == (ErrorCode.SRAM_GEMM, 1)
    with pytest.raises(RunTimeoutError):
        run_program(dev, gemm_tiled(cfg, 64, 16, 16).insns, gemm_tiled(cfg, 64, 16, 16).dram,
                    timeout_s=1e-7)


def test_grid_options_are_checked() -> None:
    cfg = load_config("default")
    cus = device("default", "group").device.max_compute_units
    with pytest.raises(OpenCLError, match=f"grid must be 1 to {cus}"):
        OpenCLDevice(cfg, 1 << 16, platform=PLATFORM, variant="group", grid=cus + 1)
    with pytest.raises(OpenCLError, match="grid_parts must be a multiple of grid"):
        OpenCLDevice(cfg, 1 << 16, platform=PLATFORM, variant="group", grid=1, grid_parts=-1)
    with pytest.raises(OpenCLError, match="need the group variant"):
        OpenCLDevice(cfg, 1 << 16, platform=PLATFORM, variant="item", grid_parts=2)
    assert device("default", "group").grid_kernel is None  # a CPU: one work-group by default


def test_batch_reports_each_programs_error() -> None:
    """A program that stops on an error in a batch gets its own KernelRunError; the others run."""
    cfg = load_config("default")
    good = gemm_tiled(cfg, 16, 4, 4)
    stuck = [Insn(Opcode.GEMM, pop_prev_dep=1, uop_bgn=0, uop_end=0), Insn(Opcode.FINISH)]
    images = [good.dram.copy(), np.zeros(4096, np.uint8), good.dram.copy()]
    results = device("default", "group").run_programs(
        [replace(good, dram=images[0]), Program("stuck", stuck, images[1]),
         replace(good, dram=images[2])])
    assert isinstance(results[1], KernelRunError) and results[1].code == ErrorCode.DEADLOCK
    for k in (0, 2):
        assert not isinstance(results[k], Exception)
        assert_same(good, cfg, expected(cfg, good), images[k])


def test_item_variant_runs_a_batch_one_program_after_another() -> None:
    cfg = load_config("default")
    progs = [gemm_tiled(cfg, 16, 4, 4), token_order(cfg)]
    images = [p.dram.copy() for p in progs]
    results = device("default", "item").run_programs([replace(p, dram=i)
                                                      for p, i in zip(progs, images)])
    assert all("batch_programs" not in r.stats for r in results)  # type: ignore[union-attr]
    for p, img in zip(progs, images):
        assert_same(p, cfg, expected(cfg, p), img)


def test_variant_by_device_type_and_override(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """PoCL is a CPU: the group variant by default; variant= and VTA_OPENCL_VARIANT override;
    -DVTA_ONCHIP is an item build; anything else is a one-line error."""
    cfg = load_config("default")
    dev = device("default", "group")
    assert dev.variant == "group" and dev.group_size == GROUP_SIZE_CPU
    assert choose_variant(dev.device, None, []) == "group"
    assert choose_variant(dev.device, None, ["-DVTA_ONCHIP"]) == "item"
    monkeypatch.setenv(ENV_VARIANT, "item")
    assert choose_variant(dev.device, None, []) == "item"
    with pytest.raises(OpenCLError, match="unknown kernel variant 'warp'"):
        choose_variant(dev.device, "warp", [])
    with pytest.raises(OpenCLError, match="-DVTA_ONCHIP builds the item variant"):
        OpenCLDevice(cfg, 1 << 16, platform=PLATFORM, variant="group",
                        build_options=["-DVTA_ONCHIP"])
    assert device("default", "item").variant == "item"
    assert device("default", "item").group_size == 1


#: Mutants of the group variant's parallel paths (old text, new text, a program that runs the
#: path): each must make its program differ from fsim, so the conformance programs above really
#: exercise the paths (and not only the sequential fallback). gemm_split runs on a grid only
#: (GRID_PARTS parts).
PATH_MUTANTS = {
    "gemm_parallel": ("int v = (int)((uint)acc[ix] + (uint)sum[t]);",
                      "int v = (int)((uint)acc[ix] + (uint)sum[t] + 1u);",
                      lambda cfg: gemm_tiled(cfg, 16, 4, 4)),
    "elementwise": ("lanes_t r = reset ? (lanes_t)(0)", "lanes_t r = reset ? (lanes_t)(1)",
                    lambda cfg: gemm_tiled(cfg, 16, 4, 4)),
    "gemm_split": ("int v = (int)((uint)acc[ix] + (uint)wk->red[slot]);",
                   "int v = (int)((uint)acc[ix] + (uint)wk->red[slot] + 1u);",
                   lambda cfg: _small_gemm(cfg)),
    "by_destination": ("v = (int)((uint)v + (uint)sum); /* a GEMM's products; 0 for an ALU */",
                       "v = (int)((uint)v - (uint)sum);",
                       lambda cfg: _directed(cfg, "gemm_dst_repeat")),
    "sequential": ("c->use_imm ? c->imm : acc[(ulong)s * ACC_LANES + k]);",
                   "c->use_imm ? c->imm : acc[(ulong)s * ACC_LANES + k] + 1);",
                   lambda cfg: _directed(cfg, "alu_hazards")),
}


def _directed(cfg: Config, name: str) -> Program:
    return next(p for p in directed_programs(cfg) if p.name == name)


def _small_gemm(cfg: Config) -> Program:
    """Two destinations, each the sum of a run of four micro-ops (a GEMM small enough for
    gemm_split on a work-group of GROUP_SIZE_CPU), then stored. The destination's outer factor
    means nothing to this one-iteration GEMM, but keeps the plan free of a conflict on PoCL 3.0,
    which runs plan_tag_gemm's loop body once for every work-item, past the loop's end: the
    stray iterations tag destinations 2, 3, ... instead of 0 and 1 again."""
    rng = np.random.default_rng(7)
    b = ProgramBuilder(cfg)
    inp = b.data(MemType.INP, rng.integers(-128, 128, (8, cfg.batch, cfg.block_in)))
    wgt = b.data(MemType.WGT, rng.integers(-128, 128, (4, cfg.block_out, cfg.block_in)))
    out = b.alloc(MemType.OUT, 2, fill=0xEE)
    b.load(MemType.INP, 0, inp, 1, 8)
    b.load(MemType.WGT, 0, wgt, 1, 4)
    uops = b.load_uops(0, [0] * 4 + [1] * 4, list(range(8)), [0, 1, 2, 3] * 2)
    b.gemm(uops, dst=(2, 0))
    b.store_synced(0, out, 1, 2)
    b.finish()
    return b.build("small_gemm")


@pytest.mark.parametrize("path", list(PATH_MUTANTS))
def test_group_paths_are_exercised(path: str) -> None:
    old, new, make = PATH_MUTANTS[path]
    text = GROUP_KERNEL_PATH.read_text()
    assert text.count(old) == 1
    cfg = load_config("default")
    prog = make(cfg)
    parts = GRID_PARTS if path == "gemm_split" else None
    with OpenCLDevice(cfg, 1 << 20, platform=PLATFORM, variant="group", grid_parts=parts,
                      source=text.replace(old, new)) as mutant:
        got = prog.dram.copy()
        run_program(mutant, prog.insns, got, timeout_s=60)
    assert not np.array_equal(got, expected(cfg, prog)), f"{path}: the mutant passed {prog.name}"


def test_group_with_the_micro_op_buffer_in_global_memory() -> None:
    """Where local memory is too small for it (a 48 KiB GPU at 1024 work-items), the micro-op
    buffer stays in scratch: the same programs, built that way on PoCL."""
    cfg = load_config("default")
    dev = device("default", "group")
    assert "-DVTA_LOCAL_UOP" in dev.build_options  # PoCL has room for it
    text = "#undef VTA_LOCAL_UOP\n" + GROUP_KERNEL_PATH.read_text()
    with OpenCLDevice(cfg, MEM_BYTES, platform=PLATFORM, variant="group",
                         source=text) as dev2:
        for prog in [gemm_tiled(cfg, 16, 4, 4), token_order(cfg)] + [
                random_program(cfg, np.random.default_rng(s)) for s in range(4)]:
            check(cfg, prog, dev=dev2)


def test_group_local_memory_policy() -> None:
    """The micro-op buffer goes to local memory only where it fits beside the work area."""
    cfg = load_config("default")
    uop = cfg.uop_depth * cfg.uop_elem_bytes

    # What group_build_options reads of a device: a GPU with 48 KiB of local memory.
    gpu = SimpleNamespace(type=cl.device_type.GPU, max_work_group_size=1024,
                          local_mem_size=48 << 10, name="gpu",
                          platform=SimpleNamespace(name="Other"))
    assert group_local_bytes(cfg, 256) + uop <= gpu.local_mem_size
    assert group_build_options(gpu, cfg, 256) == ["-DVTA_GROUP_SIZE=256", "-DVTA_LOCAL_UOP"]
    assert group_build_options(gpu, cfg, None) == ["-DVTA_GROUP_SIZE=1024"]
    gpu.local_mem_size = group_local_bytes(cfg, 1024) - 1
    with pytest.raises(OpenCLError, match="needs .* bytes of local memory"):
        group_build_options(gpu, cfg, None)
    with pytest.raises(OpenCLError, match="power of two"):
        group_build_options(gpu, cfg, 96)


TINY = {"NAME": "tiny", "LOG_INP_WIDTH": 3, "LOG_WGT_WIDTH": 3, "LOG_ACC_WIDTH": 5,
        "LOG_BATCH": 0, "LOG_BLOCK": 1, "LOG_UOP_BUFF_SIZE": 10, "LOG_INP_BUFF_SIZE": 8,
        "LOG_WGT_BUFF_SIZE": 8, "LOG_ACC_BUFF_SIZE": 9}


@pytest.mark.parametrize("variant", VARIANTS)
def test_two_byte_elements(tmp_path: Path, variant: str) -> None:
    """BLOCK 2: elements of 2 bytes (the kernels' narrowest copy and dot-product paths)."""
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY))
    cfg = load_config(path)
    with OpenCLDevice(cfg, 1 << 20, platform=PLATFORM, variant=variant) as dev:
        for seed in range(6):
            check(cfg, random_program(cfg, np.random.default_rng(seed)), dev=dev)


def test_token_order_is_not_stream_order() -> None:
    """The program the kernel must not run in stream order really needs the token machine."""
    cfg = load_config("default")
    prog = token_order(cfg)
    order = schedule(prog.insns).order
    assert order != sorted(order)
    gemm = next(i for i, x in enumerate(prog.insns) if x.opcode == Opcode.GEMM and x.pop_prev_dep)
    load = next(i for i, x in enumerate(prog.insns)
                if x.opcode == Opcode.LOAD and x.memory_type == MemType.INP)
    assert gemm < load and order.index(load) < order.index(gemm)
    check(cfg, prog)


def test_racy_programs_depend_on_schedule(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Many racy programs give a different result when run in plain stream order, so matching
    fsim on them tests the stage / token schedule, not just the arithmetic."""
    import vtabench.fsim.core as core

    cfg = load_config("default")
    orig = core.validated_order
    differs = 0
    for seed in range(N_RACY["default"]):
        prog = _racy("default", seed)
        ref = prog.dram.copy()
        Fsim(cfg).run(prog.insns, ref)
        with monkeypatch.context() as m:
            m.setattr(core, "validated_order",
                      lambda c, i, d, *rest: (orig(c, i, d, *rest), list(range(len(i))))[1])
            in_stream_order = prog.dram.copy()
            Fsim(cfg).run(prog.insns, in_stream_order)
        differs += not np.array_equal(ref, in_stream_order)
    n = N_RACY["default"]
    assert differs >= n // 4, f"only {differs} of {n} racy programs depend on order"


def test_smoke_cli_on_pocl(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from vtabench.cli import main

    report = tmp_path / "smoke.md"
    assert main(["smoke", "--target", "opencl", "--platform", PLATFORM, "--report",
                 str(report)]) == 0
    text = report.read_text()
    assert "**PASS**" in text and f"{len(smoke_programs(load_config('default')))}/" in text


def test_target_batch_function() -> None:
    """The driver table's batch function of the opencl target (api.run_programs): every image
    updated in place and equal to fsim's, a program that stops with an error named alone."""
    cfg = load_config("default")
    good = [gemm_tiled(cfg, 16, 4, 4), token_order(cfg)]
    refs = [expected(cfg, p) for p in good]
    stuck = Program("stuck", [Insn(Opcode.GEMM, pop_prev_dep=1, uop_bgn=0, uop_end=1,
                                   iter_out=1, iter_in=1), Insn(Opcode.FINISH)],
                    np.zeros(4096, np.uint8))
    progs = [replace(p, dram=p.dram.copy()) for p in good] + [stuck]
    problems = run_programs("opencl", cfg, progs, timeout_s=60.0, platform=PLATFORM)
    assert problems[:2] == [None, None]
    assert problems[2] is not None and describe(ErrorCode.DEADLOCK) in problems[2]
    for p, ref in zip(progs, refs):
        assert_same(p, cfg, ref, p.dram)


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------

def test_missing_platform_lists_available() -> None:
    with pytest.raises(OpenCLError) as info:
        OpenCLDevice(load_config("default"), 1 << 16, platform="NoSuchVendor")
    msg = str(info.value)
    assert "no OpenCL device matches platform 'NoSuchVendor'" in msg
    assert "available:" in msg and "Portable Computing Language" in msg


def test_missing_platform_from_environment(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("VTA_OPENCL_PLATFORM", "NoSuchVendor")
    monkeypatch.setenv("VTA_OPENCL_DEVICE", "NoSuchCard")
    with pytest.raises(OpenCLError, match="platform 'NoSuchVendor' and device 'NoSuchCard'"):
        select_device()


def test_kernel_build_failure_has_log() -> None:
    head = "static int dot_row(__global const char *a, __global const char *b, int c) {"
    assert head in GROUP_KERNEL_PATH.read_text()
    broken = GROUP_KERNEL_PATH.read_text().replace(head, head + " undeclared_x++;")
    with pytest.raises(KernelBuildError) as info:
        OpenCLDevice(load_config("default"), 1 << 16, platform=PLATFORM, source=broken)
    err = info.value
    assert "build failed" in str(err) and "CL_BUILD_PROGRAM_FAILURE" in str(err)
    assert "undeclared_x" in err.log and "undeclared_x" in str(err)


def test_opencl_errors_carry_status_name() -> None:
    with pytest.raises(OpenCLError) as info:
        OpenCLDevice(load_config("default"), 1 << 60, platform=PLATFORM)
    assert info.value.status == "CL_INVALID_BUFFER_SIZE"
    assert "failed: CL_INVALID_BUFFER_SIZE (in create_buffer)" in str(info.value)


def test_run_timeout() -> None:
    cfg = load_config("default")
    b = ProgramBuilder(cfg)
    b.load(MemType.UOP, 0, b.uop_table([0])[0], 1, 1)
    # 8M GEMM iterations reducing into one accumulator: seconds on PoCL.
    b.gemm((0, 1), (4000, 2000))
    b.finish()
    prog = b.build("long_gemm")
    validate_program(cfg, prog.insns, prog.dram)
    dev = OpenCLDevice(cfg, 1 << 16, platform=PLATFORM)
    try:
        with pytest.raises(RunTimeoutError) as info:
            run_program(dev, prog.insns, prog.dram.copy(), timeout_s=0.05)
        # 2e9 work units against a budget of 5e6: the kernel stops itself before the GEMM
        assert "before instruction 1: the work budget of its 0.05 s timeout" in str(info.value)
        assert info.value.timeout_s == 0.05 and info.value.status["insn_index"] == 1
    finally:
        dev.close()  # waits for the kernel


def test_binary_roundtrip_and_config_mismatch() -> None:
    d = device("default")
    binary = d.binary()
    cfg = load_config("default")
    with OpenCLDevice(cfg, 1 << 20, platform=PLATFORM, binary=binary) as dev2:
        assert (dev2.variant, dev2.group_size) == ("group", d.group_size)  # read from the binary
        prog = gemm_tiled(cfg, 16, 4, 4)
        ref = prog.dram.copy()
        Fsim(cfg).run(prog.insns, ref)
        got = prog.dram.copy()
        run_program(dev2, prog.insns, got)
        assert np.array_equal(got, ref)
    with pytest.raises(OpenCLError, match="does not match configuration cloud32"):
        OpenCLDevice(load_config("cloud32"), 1 << 20, platform=PLATFORM, binary=binary)


def test_onchip_build_upstream_abi() -> None:
    """-DVTA_ONCHIP: upstream's eight-argument ABI with the buffers as __local arrays (what the
    FPGA flows build). PoCL 3.0's optimizer crashes on this variant (a PoCL bug: the same source
    runs unoptimized, and the scratch variant runs optimized), hence -cl-opt-disable here."""
    cfg = load_config("default")
    with OpenCLDevice(cfg, 1 << 20, platform=PLATFORM,
                         build_options=["-DVTA_ONCHIP", "-cl-opt-disable"]) as dev:
        assert dev.num_args == 8 and dev.onchip
        for prog in [token_order(cfg), gemm_tiled(cfg, 16, 4, 4)] + directed_programs(cfg)[:3]:
            ref = prog.dram.copy()
            Fsim(cfg).run(prog.insns, ref)
            got = prog.dram.copy()
            run_program(dev, prog.insns, got, timeout_s=60)
            assert np.array_equal(got, ref), prog.name


def _raw_run(cfg: Config, insns: list[Insn], variant: str,  # type: ignore[no-untyped-def]
             dram_size: int = 4096):
    dev = device(cfg.name, variant)
    from vtabench.spec.isa.insn import encode_program

    code = encode_program(cfg, insns)
    dev.allocator.reset()
    dev.alloc(dram_size, align=4096)
    iaddr = dev.alloc(len(code), align=16)
    dev.write(iaddr, code)
    return dev.run(iaddr, len(insns), timeout_s=30)


@pytest.mark.parametrize("variant", VARIANTS)
def test_kernel_reports_deadlock(variant: str) -> None:
    cfg = load_config("default")
    insns = [Insn(Opcode.GEMM, pop_prev_dep=1, uop_bgn=0, uop_end=0), Insn(Opcode.FINISH)]
    with pytest.raises(KernelRunError, match="deadlock.*instruction 0 waits forever for a "
                                                "token in token queue l2g") as info:
        _raw_run(cfg, insns, variant)
    assert (info.value.code, info.value.index) == (ErrorCode.DEADLOCK, 0)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize(("opcode", "memory_type"), [(Opcode.LOAD, MemType.OUT),
                                                     (Opcode.STORE, MemType.ACC)])
def test_illegal_memory_type_of_a_no_op(variant: str, opcode: Opcode,
                                        memory_type: MemType) -> None:
    """A LOAD / STORE that moves nothing (x_size 0) still has its memory type checked."""
    cfg = load_config("default")
    insns = [Insn(opcode, memory_type=memory_type), Insn(Opcode.FINISH)]
    with pytest.raises(KernelRunError) as info:
        _raw_run(cfg, insns, variant)
    assert (info.value.code, info.value.index, info.value.arg) == (ErrorCode.MEM_TYPE, 0,
                                                                   memory_type)


@pytest.mark.parametrize("variant", VARIANTS)
def test_kernel_guards_dram_range(variant: str) -> None:
    cfg = load_config("default")
    insns = [Insn(Opcode.LOAD, memory_type=MemType.ACC, dram_base=(MEM_BYTES // 64), y_size=1,
                  x_size=1, x_stride=1), Insn(Opcode.FINISH)]
    with pytest.raises(KernelRunError, match=re.escape(f"{describe(ErrorCode.DRAM_RANGE)}: "
                                                          "instruction 0")) as info:
        _raw_run(cfg, insns, variant)
    assert info.value.code == ErrorCode.DRAM_RANGE
