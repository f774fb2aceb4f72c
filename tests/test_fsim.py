"""fsim against an independent, straightforward formulation of docs/isa.md section 4.

The reference below runs a program in stream order, one loop iteration (and, for the ALU, one
lane) at a time, with Python integers; it shares nothing with fsim but the Insn dataclass and the
micro-op bit layout the spec fixes. Well-synchronised programs give the same result in stream
order as under any schedule the tokens allow, so fsim (which runs the stages interleaved) must
match it byte for byte. Known-value tests pin the decisions of the spec (shift amounts, reset,
narrowing, sign extension) independently of both.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import re

import numpy as np
import pytest

from vtabench.spec.config import load_config
from vtabench.fsim import Fsim, kernels, run_raw
from vtabench.spec.isa.insn import Insn, encode_insn, encode_program
from vtabench.spec.isa.layout import AluOp, MemType, Opcode
from vtabench.verify.builder import ProgramBuilder, Tokens
from vtabench.verify.directed import directed_programs
from vtabench.verify.random_program import random_program
from vtabench.spec.tokens import Stage, schedule
from vtabench.spec.program import Program

CONFIGS = ("default", "cloud32", "cloud64")
I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1


# ---------------------------------------------------------------------------------------------
# The independent reference
# ---------------------------------------------------------------------------------------------

def wrap32(v: int) -> int:
    return (v + (1 << 31)) % (1 << 32) - (1 << 31)


def low8(v: int) -> int:
    b = v & 0xFF
    return b - 256 if b >= 128 else b


def ref_shr(a: int, s: int) -> int:
    if s >= 0:
        return a >> min(s, 31)  # Python's >> on ints is arithmetic
    if s > -32:
        return wrap32(a << -s)
    return 0


REF_OPS = {
    AluOp.MIN: min,
    AluOp.MAX: max,
    AluOp.ADD: lambda a, b: wrap32(a + b),
    AluOp.MUL: lambda a, b: wrap32(a * b),
    AluOp.SHR: ref_shr,
}


def reference_run(cfg, insns: list[Insn], dram: np.ndarray) -> np.ndarray:
    """Run ``insns`` in stream order; returns the final DRAM image."""
    mem = bytearray(dram.tobytes())
    b, bi, bo = cfg.batch, cfg.block, cfg.block
    uop = [None] * cfg.uop_depth
    inp = [None] * cfg.inp_depth
    wgt = [None] * cfg.wgt_depth
    acc: list[list[int] | None] = [None] * cfg.acc_depth  # flat lanes b * bo
    out: list[list[int] | None] = [None] * cfg.acc_depth
    elem = {MemType.UOP: 4, MemType.WGT: bo * bi, MemType.INP: b * bi, MemType.ACC: 4 * b * bo,
            MemType.OUT: b * bo, MemType.ACC_8BIT: b * bo}
    log_acc = cfg.acc_depth.bit_length() - 1
    src_bits = max(cfg.inp_depth.bit_length(), cfg.acc_depth.bit_length()) - 1

    def fields(u: int) -> tuple[int, int, int]:
        return (u & (cfg.acc_depth - 1), (u >> log_acc) & ((1 << src_bits) - 1),
                (u >> (log_acc + src_bits)) & (cfg.wgt_depth - 1))

    def decode(kind: MemType, raw: bytes):
        if kind == MemType.UOP:
            return int.from_bytes(raw, "little")
        if kind == MemType.ACC:
            return [int.from_bytes(raw[4 * k:4 * k + 4], "little", signed=True)
                    for k in range(b * bo)]
        signed = [v - 256 if v >= 128 else v for v in raw]
        if kind == MemType.WGT:
            return np.array(signed, np.int64).reshape(bo, bi)
        if kind == MemType.INP:
            return np.array(signed, np.int64).reshape(b, bi)
        return signed  # ACC_8BIT: sign-extended lanes

    def iterations(i: Insn):
        for i0 in range(i.iter_out):
            for i1 in range(i.iter_in):
                for u in range(i.uop_bgn, i.uop_end):
                    d, s, w = fields(uop[u])
                    yield (d + i0 * i.dst_factor_out + i1 * i.dst_factor_in,
                           s + i0 * i.src_factor_out + i1 * i.src_factor_in,
                           w + i0 * i.wgt_factor_out + i1 * i.wgt_factor_in)

    for i in insns:
        if i.opcode == Opcode.LOAD:
            if i.x_size == 0 or i.y_size == 0:
                continue
            kind = MemType(i.memory_type)
            buf = {MemType.UOP: uop, MemType.WGT: wgt, MemType.INP: inp}.get(kind, acc)
            eb = elem[kind]
            row = i.x_pad_0 + i.x_size + i.x_pad_1
            zero = {MemType.UOP: 0, MemType.WGT: np.zeros((bo, bi), np.int64),
                    MemType.INP: np.zeros((b, bi), np.int64)}.get(kind, [0] * (b * bo))
            for y in range(i.y_pad_0 + i.y_size + i.y_pad_1):
                for x in range(row):
                    value = zero
                    if i.y_pad_0 <= y < i.y_pad_0 + i.y_size and i.x_pad_0 <= x < i.x_pad_0 + i.x_size:
                        e = i.dram_base + (y - i.y_pad_0) * i.x_stride + (x - i.x_pad_0)
                        value = decode(kind, bytes(mem[e * eb:(e + 1) * eb]))
                    buf[i.sram_base + y * row + x] = value
        elif i.opcode == Opcode.STORE:
            eb = elem[MemType.OUT]
            for y in range(i.y_size):
                for x in range(i.x_size):
                    e = i.dram_base + y * i.x_stride + x
                    mem[e * eb:(e + 1) * eb] = bytes(v & 0xFF for v in out[i.sram_base + y * i.x_size + x])
        elif i.opcode == Opcode.GEMM:
            for a, s, w in iterations(i):
                if i.reset_reg:
                    acc[a] = [0] * (b * bo)
                else:
                    prod = (inp[s] @ wgt[w].T).reshape(-1)  # (b, bo) int64, exact
                    acc[a] = [wrap32(x + int(p)) for x, p in zip(acc[a], prod, strict=True)]
                out[a] = [low8(v) for v in acc[a]]
        elif i.opcode == Opcode.ALU:
            op = REF_OPS[AluOp(i.alu_opcode)]
            for a, s, _ in iterations(i):
                rhs = [i.imm] * (b * bo) if i.use_imm else list(acc[s])
                acc[a] = [op(x, y) for x, y in zip(acc[a], rhs, strict=True)]
                out[a] = [low8(v) for v in acc[a]]
    return np.frombuffer(bytes(mem), np.uint8)


def run_fsim(cfg, prog: Program) -> tuple[np.ndarray, Fsim]:
    dram = prog.dram.copy()
    sim = Fsim(cfg)
    sim.run(prog.insns, dram)
    return dram, sim


def assert_same_dram(got: np.ndarray, want: np.ndarray, name: str) -> None:
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, (f"{name}: {bad.size} DRAM bytes differ, first at byte {bad[0]}: "
                           f"fsim {got[bad[0]]} reference {want[bad[0]]}")


# ---------------------------------------------------------------------------------------------
# Directed and random programs against the reference
# ---------------------------------------------------------------------------------------------

DIRECTED = [(c, p.name) for c in CONFIGS for p in directed_programs(load_config(c))]


@pytest.mark.parametrize("cfg_name,prog_name", DIRECTED, ids=[f"{c}-{n}" for c, n in DIRECTED])
def test_directed_program_matches_reference(cfg_name: str, prog_name: str) -> None:
    cfg = load_config(cfg_name)
    prog = next(p for p in directed_programs(cfg) if p.name == prog_name)
    got, _ = run_fsim(cfg, prog)
    want = reference_run(cfg, prog.insns, prog.dram)
    assert not np.array_equal(want, prog.dram), "the program must store something"
    assert_same_dram(got, want, prog.name)


def test_directed_programs_cover_every_kind_and_are_small() -> None:
    for name in CONFIGS:
        cfg = load_config(name)
        progs = directed_programs(cfg)
        seen = set()
        for prog in progs:
            stats = run_raw(cfg, prog.insns, prog.dram.copy())
            assert stats["macs"] < 100_000, prog.name
            assert prog.dram.size < 96 * 1024, prog.name
            for insn in prog.insns:
                seen.add(insn.describe())
        want = {"LOAD UOP", "LOAD WGT", "LOAD INP", "LOAD ACC", "LOAD ACC_8BIT", "STORE OUT",
                "GEMM", "FINISH"} | {f"ALU {op.name}" for op in AluOp}
        assert want <= seen, want - seen
        # deterministic: the same programs every time
        again = directed_programs(cfg)
        assert all(np.array_equal(p.dram, q.dram) and p.insns == q.insns
                   for p, q in zip(progs, again, strict=True))


@pytest.mark.parametrize("cfg_name", CONFIGS)
def test_random_programs_match_reference(cfg_name: str) -> None:
    cfg = load_config(cfg_name)
    for seed in range(12):
        prog = random_program(cfg, np.random.default_rng(seed))
        got, _ = run_fsim(cfg, prog)
        assert_same_dram(got, reference_run(cfg, prog.insns, prog.dram), f"{prog.name} seed {seed}")


def _strip_tokens(insns: list[Insn]) -> list[Insn]:
    return [dataclasses.replace(i, pop_prev_dep=0, pop_next_dep=0, push_prev_dep=0,
                                push_next_dep=0) for i in insns]


def test_token_program_result_depends_on_tokens() -> None:
    cfg = load_config("default")
    prog = next(p for p in directed_programs(cfg) if p.name == "tokens")
    want = reference_run(cfg, prog.insns, prog.dram)
    got, _ = run_fsim(cfg, prog)
    assert_same_dram(got, want, "tokens")
    # Without tokens the stages run ahead of each other and the result changes.
    loose = Program("tokens_stripped", _strip_tokens(prog.insns), prog.dram)
    got_loose, _ = run_fsim(cfg, loose)
    assert not np.array_equal(got_loose, want)


# ---------------------------------------------------------------------------------------------
# Known values (the spec's decisions, independent of both models)
# ---------------------------------------------------------------------------------------------

def _acc_program(cfg, values: list[int], body) -> Fsim:
    """Load acc tiles whose every lane is values[k], run body(builder), return the simulator."""
    p = ProgramBuilder(cfg)
    tiles = np.array(values, np.int64).astype(np.int32)[:, None, None] * np.ones(
        (1, cfg.batch, cfg.block), np.int32)
    p.load(MemType.ACC, 0, p.data(MemType.ACC, tiles), 1, len(values))
    body(p, len(values))
    p.finish()
    _, sim = run_fsim(cfg, p.build("known"))
    return sim


SHR_CASES = [  # (A, shift amount, expected)
    (-1, 40, -1), (-5, 1, -3), (7, 32, 0), (-7, 32767, -1), (I32_MIN, 31, -1), (I32_MAX, 30, 1),
    (0x12345678, 4, 0x01234567), (0x12345678, -4, 0x23456780), (0x12345678, -8, 0x34567800),
    (1, -31, I32_MIN), (3, -31, I32_MIN), (0x40000000, -1, I32_MIN), (-1, -31, I32_MIN),
    (5, -32, 0), (-5, -32768, 0), (123, 0, 123), (-1, -1, -2),
]


@pytest.mark.parametrize("use_imm", [True, False])
def test_shr_saturating_amounts(use_imm: bool) -> None:
    cfg = load_config("default")
    n = len(SHR_CASES)
    extra = [(1, I32_MIN, 0), (-1, I32_MAX, -1), (-9, -(1 << 20), 0)] if not use_imm else []
    cases = SHR_CASES + extra
    values = [a for a, _, _ in cases] + [s for _, s, _ in cases]
    n = len(cases)

    def body(p: ProgramBuilder, _: int) -> None:
        for k, (_, s, _) in enumerate(cases):
            span = p.load_uops(k, dst=[k], src=[n + k])
            p.alu(AluOp.SHR, span, imm=s if use_imm else None)

    sim = _acc_program(cfg, values, body)
    for k, (a, s, want) in enumerate(cases):
        assert sim.acc[k, 0, 0] == want, f"SHR {a} by {s}: got {sim.acc[k, 0, 0]}, want {want}"
        assert sim.out[k, 0, 0] == low8(want)


def test_alu_wraps_and_compares_signed() -> None:
    cfg = load_config("default")
    cases = [(AluOp.ADD, I32_MAX, 1, I32_MIN), (AluOp.ADD, I32_MIN, -1, I32_MAX),
             (AluOp.MUL, I32_MIN, -1, I32_MIN), (AluOp.MUL, 0x10000, 0x10000, 0),
             (AluOp.MUL, 0x10001, 0x10001, 0x20001), (AluOp.MUL, -3, 7, -21),
             (AluOp.MIN, -1, 1, -1), (AluOp.MAX, -1, 1, 1), (AluOp.MIN, I32_MIN, I32_MAX, I32_MIN),
             (AluOp.MAX, I32_MIN, I32_MAX, I32_MAX)]
    n = len(cases)
    values = [a for _, a, _, _ in cases] + [b for _, _, b, _ in cases]

    def body(p: ProgramBuilder, _: int) -> None:
        for k, (op, _, _, _) in enumerate(cases):
            p.alu(op, p.load_uops(k, dst=[k], src=[n + k]))

    sim = _acc_program(cfg, values, body)
    for k, (op, a, b, want) in enumerate(cases):
        assert sim.acc[k, 0, 0] == want, f"{op.name}({a}, {b})"


def test_imm_is_sign_extended_and_narrowing_truncates() -> None:
    cfg = load_config("default")
    values = [0, 0x1FF, 0x17F, 300, -129, 0]

    def body(p: ProgramBuilder, n: int) -> None:
        p.alu(AluOp.ADD, p.load_uops(0, dst=[0]), imm=-32768)
        p.alu(AluOp.ADD, p.load_uops(1, dst=[1]), (n - 2, 1), dst=(1, 0), imm=0)
        p.alu(AluOp.MAX, p.load_uops(2, dst=[n - 1]), imm=-5)

    sim = _acc_program(cfg, values, body)
    assert sim.acc[0, 0, 0] == -32768
    assert list(sim.out[1:5, 0, 0]) == [-1, 127, 44, 127]  # low 8 bits, never saturated
    assert sim.acc[5, 0, 0] == 0


def test_acc8bit_sign_extends_and_loads_do_not_touch_out() -> None:
    cfg = load_config("default")
    p = ProgramBuilder(cfg)
    raw = np.array([0x80, 0xFF, 0x7F, 0x01], np.uint8).view(np.int8)
    tiles = raw[:, None, None] * np.ones((1, 1, cfg.block), np.int8)
    p.load(MemType.ACC_8BIT, 0, p.data(MemType.ACC_8BIT, tiles), 1, 4)
    p.finish()
    _, sim = run_fsim(cfg, p.build("acc8"))
    assert list(sim.acc[:4, 0, 0]) == [-128, -1, 127, 1]
    assert not sim.out.any()


def test_gemm_known_values_and_reset_clears_out() -> None:
    cfg = load_config("default")
    bl = cfg.block
    p = ProgramBuilder(cfg)
    x = np.full((1, 1, bl), -128, np.int8)
    w = np.full((1, bl, bl), -128, np.int8)
    p.load(MemType.INP, 0, p.data(MemType.INP, x), 1, 1)
    p.load(MemType.WGT, 0, p.data(MemType.WGT, w), 1, 1, tok=Tokens(push_next=True))
    k = p.load_uops(0, dst=[0, 1], src=[0, 0], wgt=[0, 0], tok=Tokens(pop_prev=True))
    p.gemm(k, reset=True)
    p.gemm(k, (3, 1))  # acc[0], acc[1] += 3 * bl * 2^14
    p.gemm(p.load_uops(2, dst=[1]), reset=True)
    p.finish()
    _, sim = run_fsim(cfg, p.build("gemm_known"))
    want = wrap32(3 * bl * (1 << 14))
    assert (sim.acc[0] == want).all() and (sim.out[0] == low8(want)).all()
    assert not sim.acc[1].any() and not sim.out[1].any()


def test_gemm_general_paths_match_reference() -> None:
    """Kernels whose dsts collide across loop iterations, with more distinct micro-op patterns
    than fsim groups into matmuls (its per-weight-tile path), and with moving weights."""
    cfg = load_config("default")
    rng = np.random.default_rng(7)
    p = ProgramBuilder(cfg)
    p.load(MemType.INP, 0, p.data(MemType.INP, rng.integers(-128, 128, (64, 1, cfg.block))), 1, 64)
    p.load(MemType.WGT, 0, p.data(MemType.WGT, rng.integers(-128, 128, (16, cfg.block, cfg.block))),
           1, 16, tok=Tokens(push_next=True))
    zero = p.load_uops(0, dst=np.arange(100), tok=Tokens(pop_prev=True))
    p.gemm(zero, reset=True)
    many = p.load_uops(100, dst=rng.integers(0, 90, 200), src=rng.integers(0, 60, 200),
                       wgt=rng.integers(0, 12, 200))
    p.gemm(many, (2, 2), dst=(3, 1), src=(1, 2), wgt=(1, 1))
    p.gemm(many, (2, 3), dst=(0, 1), src=(2, 0), wgt=(0, 0))
    few = p.load_uops(300, dst=[0, 0, 1], src=[0, 1, 2], wgt=[0, 1, 2])
    p.gemm(few, (3, 4), dst=(0, 2), src=(3, 1), wgt=(2, 0))
    out = p.alloc(MemType.OUT, 100)
    p.store(0, out, 1, 100)
    p.finish()
    prog = p.build("gemm_general")
    got, _ = run_fsim(cfg, prog)
    assert_same_dram(got, reference_run(cfg, prog.insns, prog.dram), prog.name)


def test_stats_count_instructions_bytes_and_macs() -> None:
    cfg = load_config("default")
    prog = next(p for p in directed_programs(cfg) if p.name == "load_store_2d")
    stats = run_raw(cfg, prog.insns, prog.dram.copy())
    kinds = {}
    for insn in prog.insns:
        kinds[Opcode(insn.opcode).name] = kinds.get(Opcode(insn.opcode).name, 0) + 1
    for kind, count in kinds.items():
        assert stats[f"insns_{kind}"] == count
    assert stats["bytes_loaded_INP"] == 3 * 4 * cfg.inp_elem_bytes
    assert stats["bytes_loaded_WGT"] == cfg.wgt_elem_bytes
    assert stats["bytes_stored_OUT"] == (3 * 4 + 2) * cfg.out_elem_bytes
    assert stats["gemm_uops"] == 24 and stats["alu_uops"] == 0
    assert stats["macs"] == 12 * cfg.block * cfg.block


def test_run_rejects_invalid_program_and_leaves_dram() -> None:
    cfg = load_config("default")
    prog = next(p for p in directed_programs(cfg) if p.name == "tokens")
    bad = prog.insns[:-1]  # no FINISH
    dram = prog.dram.copy()
    with pytest.raises(ValueError, match="FINISH"):
        Fsim(cfg).run(bad, dram)
    assert np.array_equal(dram, prog.dram)


def test_programs_give_one_result_under_every_interleaving() -> None:
    """The shared programs are race-free: what the RTL or OpenCL entries see does not depend
    on how their stages interleave (checked for every priority order of the three stages)."""
    cfg = load_config("default")
    progs = directed_programs(cfg) + [random_program(cfg, np.random.default_rng(s))
                                      for s in range(6)]
    for prog in progs:
        want = reference_run(cfg, prog.insns, prog.dram)
        for stage_order in itertools.permutations(Stage):
            result = schedule(prog.insns, stage_order=stage_order)
            assert result.ok
            got = reference_run(cfg, [prog.insns[i] for i in result.order], prog.dram)
            assert_same_dram(got, want, f"{prog.name} with stage order {stage_order}")


# ---------------------------------------------------------------------------------------------
# GEMM plans (kernel level): conv-shaped loops against a per-iteration numpy sum
# ---------------------------------------------------------------------------------------------

def _micro_loop(uops: list[tuple[int, int, int]], iters: tuple[int, int],
                factors: tuple[tuple[int, int], ...]) -> kernels.MicroLoop:
    fields = tuple(np.array(f, np.int64) for f in zip(*uops, strict=True))
    return kernels.MicroLoop.build(fields, iters, factors)  # type: ignore[arg-type]


def _rows_share_weights(taps: int) -> tuple[kernels.MicroLoop, bool]:
    """4 output rows x ``taps`` taps; i0 moves the weights (output channel block), i1 the pixel."""
    uops = [(j, j + t, t) for j in range(4) for t in range(taps)]
    return _micro_loop(uops, (3, 5), ((20, 4), (0, 1), (taps, 0))), True


def _blocks_share_src() -> tuple[kernels.MicroLoop, bool]:
    """3 output channel blocks x 4 taps; src moves with both loops, weights with i0; dsts leave
    gaps (not one contiguous range)."""
    uops = [(j, t, j * 4 + t) for j in range(3) for t in range(4)]
    return _micro_loop(uops, (2, 7), ((40, 4), (7, 1), (12, 0))), True


def _weights_move_with_pixels(iters: int) -> tuple[kernels.MicroLoop, bool]:
    """Weight and src offsets both move with both loops: too many combinations for a plan."""
    uops = [(0, t, t) for t in range(3)]
    return _micro_loop(uops, (iters, iters), ((4, 1), (5, 1), (0, 1))), False


def _random_short_loop() -> tuple[kernels.MicroLoop, bool]:
    """A random program's GEMM: a few micro-ops, dsts repeating within and across iterations."""
    rng = np.random.default_rng(5)
    uops = [tuple(int(v) for v in rng.integers(0, 8, 3)) for _ in range(5)]
    return _micro_loop(uops, (3, 2), ((1, 0), (2, 1), (0, 2))), False


@pytest.mark.parametrize("batch", [1, 2])
@pytest.mark.parametrize("case", ["rows_share_weights", "rows_share_weights_f64",
                                  "blocks_share_src", "weights_move_with_pixels",
                                  "weights_move_with_pixels_long", "random_short_loop"])
def test_gemm_plan_matches_per_iteration_sum(case: str, batch: int) -> None:
    """Every path of kernels.gemm: a plan, the general path's patterns (long loops) and the
    direct path (loops of at most SMALL_LOOP iterations)."""
    loop, planned = {"rows_share_weights": lambda: _rows_share_weights(6),
                     "rows_share_weights_f64": lambda: _rows_share_weights(70),  # 70 x 16 terms
                     "blocks_share_src": _blocks_share_src,
                     "weights_move_with_pixels": lambda: _weights_move_with_pixels(4),
                     "weights_move_with_pixels_long": lambda: _weights_move_with_pixels(12),
                     "random_short_loop": _random_short_loop}[case]()
    assert (loop.size <= kernels.SMALL_LOOP) == (case in ("blocks_share_src",
                                                          "weights_move_with_pixels",
                                                          "random_short_loop"))
    block, depth = 16, 256
    rng = np.random.default_rng(11)
    inp = rng.integers(-128, 128, (depth, batch, block), dtype=np.int8)
    wgt = rng.integers(-128, 128, (depth, block, block), dtype=np.int8)
    acc0 = rng.integers(I32_MIN, I32_MAX, (depth, batch, block), dtype=np.int32, endpoint=True)
    want = acc0.astype(np.int64)
    for a, s, w in zip(*(loop.expand(k) for k in range(3)), strict=True):
        want[a] += inp[s].astype(np.int64) @ wgt[w].astype(np.int64).T
    want = ((want + (1 << 31)) % (1 << 32) - (1 << 31)).astype(np.int32)
    plan = kernels.gemm_plan(loop, depth, batch, block)
    assert (plan is not None) == planned
    for use_plan in ([plan, None] if planned else [None]):
        acc, out = acc0.copy(), np.zeros((depth, batch, block), np.int8)
        kernels.gemm(acc, out, inp, wgt, loop, use_plan)
        touched = np.unique(loop.expand(0))
        np.testing.assert_array_equal(acc, np.where(np.isin(np.arange(depth), touched)[:, None, None],
                                                    want, acc0))
        np.testing.assert_array_equal(out[touched], want[touched].astype(np.int8))


# ---------------------------------------------------------------------------------------------
# Fast paths against the code they stand for
# ---------------------------------------------------------------------------------------------

#: sha256 (first 32 hex digits) of the encoded streams and images of random_program(cfg,
#: default_rng([s, 3])) for s < 8, as the generator gave them at 3de3082 (before its encoding was
#: vectorised): a seed gives the regression the program it gave before.
RANDOM_PROGRAM_DIGESTS = {"cloud32": "f1add34ad3e3a99e6fc8318881b0dfc2",
                          "cloud64": "8029c7b88703f0ae03f8c79d5bfa0201",
                          "default": "56f7c3d7bddb52dad9b1198ff4e7de64",
                          "edge8": "e4bc80eb523f6589f0ff8b466adcb8d3"}


@pytest.mark.parametrize("cfg_name", sorted(RANDOM_PROGRAM_DIGESTS))
def test_a_seed_gives_the_program_it_gave_before(cfg_name: str) -> None:
    cfg = load_config(cfg_name)
    h = hashlib.sha256()
    for s in range(8):
        prog = random_program(cfg, np.random.default_rng([s, 3]))
        h.update(prog.code)
        h.update(prog.dram.tobytes())
    assert h.hexdigest()[:32] == RANDOM_PROGRAM_DIGESTS[cfg_name]


def _test_programs(cfg_name: str) -> list[Program]:
    cfg = load_config(cfg_name)
    return directed_programs(cfg) + [random_program(cfg, np.random.default_rng(s))
                                     for s in range(12)]


@pytest.mark.parametrize("cfg_name", CONFIGS)
def test_stream_encoder_matches_encode_insn(cfg_name: str) -> None:
    """encode_words packs a whole stream at once; encode_insn, one instruction at a time, is
    the definition."""
    cfg = load_config(cfg_name)
    for prog in _test_programs(cfg_name):
        want = b"".join(encode_insn(cfg, i, k).to_bytes(16, "little")
                        for k, i in enumerate(prog.insns))
        assert encode_program(cfg, prog.insns) == want, prog.name


@pytest.mark.parametrize("bad,message", [
    ({"x_size": 1 << 16}, "instruction 1: LOAD field x_size=65536 outside [0, 65535] (16 bits)"),
    ({"sram_base": -1}, "instruction 1: LOAD field sram_base=-1 outside [0, 65535] (16 bits)"),
    ({"opcode": 7}, "7 is not a valid Opcode"),
    ({"y_size": 2**70}, "instruction 1: LOAD field y_size=1180591620717411303424 outside"),
])
def test_stream_encoder_raises_what_encode_insn_raises(bad: dict[str, int], message: str) -> None:
    cfg = load_config("default")
    insns = [Insn(Opcode.LOAD, memory_type=MemType.INP, x_size=1, y_size=1),
             dataclasses.replace(Insn(Opcode.LOAD, memory_type=MemType.INP), **bad),
             Insn(Opcode.FINISH)]
    with pytest.raises(ValueError, match=re.escape(message)):
        encode_program(cfg, insns)
    # fields outside the kind's layout are not encoded (a LOAD has no imm)
    plain = [Insn(Opcode.LOAD, memory_type=MemType.INP, imm=1 << 40), Insn(Opcode.FINISH)]
    assert encode_program(cfg, plain) == b"".join(
        encode_insn(cfg, i).to_bytes(16, "little") for i in plain)


@pytest.mark.parametrize("use_imm", [False, True])
@pytest.mark.parametrize("iters", [(3, 3), (9, 40)])  # the direct path, and a plan's length
def test_alu_paths_match_per_iteration_loop(use_imm: bool, iters: tuple[int, int]) -> None:
    """kernels.alu with and without a plan (short loops run their levels directly) against the
    iterations one at a time, on loops whose dsts repeat and whose srcs read earlier dsts."""
    rng = np.random.default_rng(3)
    depth, lanes = 64, 16
    for op in AluOp:
        uops = [tuple(int(v) for v in rng.integers(0, 12, 3)) for _ in range(5)]
        loop = _micro_loop(uops, iters, ((1, 0), (0, 1), (0, 0)))
        assert (loop.size <= kernels.SMALL_LOOP) == (iters == (3, 3))
        acc0 = rng.integers(-1000, 1000, (depth, 1, lanes), dtype=np.int32)
        imm = int(rng.integers(-40, 41)) if op == AluOp.SHR else int(rng.integers(-99, 100))
        want = acc0.copy()
        for a, s in zip(loop.expand(0), loop.expand(1), strict=True):
            b = np.full(lanes, imm, np.int32) if use_imm else want[s, 0]
            want[a, 0] = np.array([REF_OPS[op](int(x), int(y)) for x, y in zip(want[a, 0], b)],
                                  np.int32)
        for plan in (None, kernels.alu_plan(loop, use_imm, depth)):
            acc, out = acc0.copy(), np.zeros((depth, 1, lanes), np.int8)
            kernels.alu(acc, out, op, loop, use_imm, imm, plan)
            np.testing.assert_array_equal(acc, want, err_msg=f"{op.name} plan={plan is not None}")
            touched = np.unique(loop.expand(0))
            np.testing.assert_array_equal(out[touched], want[touched].astype(np.int8))
