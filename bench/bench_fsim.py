"""fsim throughput: ResNet-18's first 3x3 conv layer, and the golden side of random programs.

``conv`` (the default): the layer (56x56, 64 -> 64 channels, 116 M MACs) as a VTA program (input
rows tiled into the inp buffer, zero padding done by the loads, one micro-op kernel over (cout
block, ky, kx, cin block) with the two loop levels over the tile's output rows and columns, then
a SHR / MAX / MIN requantisation and a STORE), run on fsim, the stored int8 result checked
against a numpy convolution; prints GMAC/s.

``random``: what one worker of ``bench_opencl.py random`` spends per program, in parts:
generating it (``random_program``; of that, ``randomize_ignored``: the ignored fields, the
encoding and the reserved bits), fsim's validation and schedule (``validated_order``) and its
execution, and packing it for the main process. CPU time of this process (what a worker costs
a core; wall time on a busy machine says more about the machine).

    .venv/bin/python bench/bench_fsim.py [conv] [--config NAME] [--repeat N]
    .venv/bin/python bench/bench_fsim.py random [--config NAME] [--count N] [--seed S]

OpenBLAS runs single-threaded here unless OPENBLAS_NUM_THREADS says otherwise: fsim's matmuls are
small (a few hundred rows), and on a busy two-core machine OpenBLAS's spinning worker threads cost
far more than they give.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads OpenBLAS

import argparse
import dataclasses
import pickle
import time

import numpy as np

from vtabench.spec.config import Config, load_config
from vtabench.fsim import Fsim
from vtabench.spec.isa.layout import AluOp, MemType
from vtabench.spec.program import Program
from vtabench.spec.validate import validated_order
from vtabench.verify.builder import ProgramBuilder, Tokens
from vtabench.verify.random_program import random_program, randomize_ignored

H = W = 56
CIN = COUT = 64
K = 3
SHIFT = 9


def conv_program(cfg: Config, x: np.ndarray, w: np.ndarray) -> tuple[Program, int, int]:
    """The layer as a program; returns it, the output's dram_base and the rows per tile."""
    bl = cfg.block
    if cfg.batch != 1 or CIN % bl or COUT % bl:
        raise SystemExit(f"{cfg.name}: the benchmark needs BATCH 1 and BLOCK dividing {CIN}")
    cib, cob = CIN // bl, COUT // bl
    wp = W + 2
    rows = max(t for t in range(1, H + 1) if H % t == 0 and (t + 2) * wp * cib <= cfg.inp_depth
               and t * W * cob <= cfg.acc_depth and t * W * cob < 1 << 14)
    p = ProgramBuilder(cfg)
    # DRAM layouts: activations (y, x, channel block) tiles; weights (cout blk, ky, kx, cin blk).
    inp = p.data(MemType.INP, x.reshape(H * W * cib, 1, bl))
    wt = w.reshape(cob, bl, cib, bl, K, K).transpose(0, 4, 5, 2, 1, 3)  # cb ky kx ib oc ic
    wgt = p.data(MemType.WGT, wt.reshape(-1, bl, bl))
    out = p.alloc(MemType.OUT, H * W * cob)
    co, ky, kx, ci = np.meshgrid(np.arange(cob), np.arange(K), np.arange(K), np.arange(cib),
                                 indexing="ij")
    kernel = p.load_uops(0, dst=co.ravel(), src=((ky * wp + kx) * cib + ci).ravel(),
                         wgt=(((co * K + ky) * K + kx) * cib + ci).ravel())
    zero = p.load_uops(kernel[1], dst=np.arange(cob))
    elem = p.load_uops(zero[1], dst=[0])
    p.load(MemType.WGT, 0, wgt, 1, cob * K * K * cib)
    tiles = H // rows
    for t in range(tiles):
        first, last = t == 0, t == tiles - 1
        y0 = t * rows - (0 if first else 1)
        ysz = rows + 2 - int(first) - int(last)
        p.load(MemType.INP, 0, inp + y0 * W * cib, ysz, W * cib,
               pads=(int(first), int(last), cib, cib), tok=Tokens(pop_next=not first, push_next=True))
        loops = (rows, W)
        p.gemm(zero, loops, dst=(W * cob, cob), reset=True,
               tok=Tokens(pop_prev=True, pop_next=not first))
        p.gemm(kernel, loops, dst=(W * cob, cob), src=(wp * cib, cib), tok=Tokens(push_prev=not last))
        n = rows * W * cob
        p.alu(AluOp.SHR, elem, (n, 1), dst=(1, 0), imm=SHIFT)
        p.alu(AluOp.MAX, elem, (n, 1), dst=(1, 0), imm=-128)
        p.alu(AluOp.MIN, elem, (n, 1), dst=(1, 0), imm=127, tok=Tokens(push_next=True))
        p.store(0, out + t * n, 1, n, tok=Tokens(pop_prev=True, push_prev=not last))
    p.finish()
    return p.build("resnet18_conv1_3x3"), out, rows


def reference(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """int8 (y, x, cout) result: conv with zero padding 1, int32 wrap, >> SHIFT, clip."""
    xp = np.zeros((H + 2, W + 2, CIN), np.int64)
    xp[1:-1, 1:-1] = x
    acc = np.zeros((H, W, COUT), np.int64)
    for ky in range(K):
        for kx in range(K):
            acc += xp[ky:ky + H, kx:kx + W] @ w[:, :, ky, kx].T.astype(np.int64)
    acc = acc.astype(np.int32)
    return np.clip(acc >> SHIFT, -128, 127).astype(np.int8)


def random_parts(cfg: Config, count: int, seed: int) -> dict[str, float]:
    """CPU milliseconds per program of each part of a random program's golden run (see the
    module docstring), over programs [seed, k] for k < count as bench_opencl.py makes them."""
    parts = dict.fromkeys(("generate", "randomize_ignored", "validate", "execute", "pack"), 0.0)
    clock = time.process_time
    for k in range(count):
        t0 = clock()
        prog = random_program(cfg, np.random.default_rng([seed, k]))
        t1 = clock()
        insns = [dataclasses.replace(i) for i in prog.insns]
        t2 = clock()
        randomize_ignored(cfg, insns, np.random.default_rng(k))
        t3 = clock()
        validated_order(cfg, prog.insns, prog.dram)
        t4 = clock()
        ref = prog.dram.copy()
        Fsim(cfg).run(prog.insns, ref)
        t5 = clock()
        pickle.dumps((prog.name, prog.code, prog.dram, ref))
        t6 = clock()
        for part, dt in (("generate", t1 - t0), ("randomize_ignored", t3 - t2),
                         ("validate", t4 - t3), ("execute", t5 - t4 - (t4 - t3)),
                         ("pack", t6 - t5)):
            parts[part] += 1e3 * dt / count
    return parts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", nargs="?", choices=("conv", "random"), default="conv")
    ap.add_argument("--config", default="default")
    ap.add_argument("--repeat", type=int, default=5, help="conv: runs; the best is reported")
    ap.add_argument("--count", type=int, default=300, help="random: programs")
    ap.add_argument("--seed", type=int, default=0, help="random: the run's seed")
    args = ap.parse_args()
    cfg = load_config(args.config)
    if args.what == "random":
        parts = random_parts(cfg, args.count, args.seed)
        total = parts["generate"] + parts["validate"] + parts["execute"] + parts["pack"]
        print(f"config {cfg.name}: {args.count} random programs (seed {args.seed}), CPU ms per "
              f"program: generate {parts['generate']:.3f} (randomize_ignored "
              f"{parts['randomize_ignored']:.3f}), fsim validate {parts['validate']:.3f}, fsim "
              f"execute {parts['execute']:.3f}, pack {parts['pack']:.3f}; total {total:.3f} = "
              f"{60e3 / total:,.0f} programs per minute per core")
        return
    rng = np.random.default_rng(0)
    x = rng.integers(-128, 128, (H, W, CIN), dtype=np.int8)
    w = rng.integers(-128, 128, (COUT, CIN, K, K), dtype=np.int8)
    prog, out, rows = conv_program(cfg, x, w)
    expect = reference(x, w)
    best = float("inf")
    for _ in range(args.repeat):
        dram = prog.dram.copy()
        t0 = time.perf_counter()
        stats = Fsim(cfg).run(prog.insns, dram)
        best = min(best, time.perf_counter() - t0)
        eb = cfg.out_elem_bytes
        got = dram[out * eb:out * eb + H * W * COUT].view(np.int8).reshape(H, W, COUT)
        if not np.array_equal(got, expect):
            bad = np.argwhere(got != expect)
            raise SystemExit(f"MISMATCH at {len(bad)} positions, first (y, x, c) = {bad[0]}")
    macs = stats.macs
    print(f"config {cfg.name}: {len(prog.insns)} instructions, {rows} output rows per tile, "
          f"{macs / 1e6:.1f} M MACs, DRAM image {prog.dram.size / 2**20:.1f} MiB")
    print(f"result matches the numpy convolution; best of {args.repeat} runs: {best * 1e3:.1f} ms "
          f"(validation + execution) = {macs / best / 1e9:.2f} GMAC/s")


if __name__ == "__main__":
    main()
