"""fsim throughput on ResNet-18's first 3x3 conv layer (56x56, 64 -> 64 channels, 116 M MACs).

Builds the layer as a VTA program (input rows tiled into the inp buffer, zero padding done by the
loads, one micro-op kernel over (cout block, ky, kx, cin block) with the two loop levels over the
tile's output rows and columns, then a SHR / MAX / MIN requantisation and a STORE), runs it on
fsim, checks the stored int8 result against a numpy convolution, and prints GMAC/s.

    .venv/bin/python bench/bench_fsim.py [--config NAME] [--repeat N]

OpenBLAS runs single-threaded here unless OPENBLAS_NUM_THREADS says otherwise: fsim's matmuls are
small (a few hundred rows), and on a busy two-core machine OpenBLAS's spinning worker threads cost
far more than they give.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads OpenBLAS

import argparse
import time

import numpy as np

from vtabench.spec.config import Config, load_config
from vtabench.fsim import Fsim
from vtabench.spec.isa.layout import AluOp, MemType
from vtabench.spec.program import Program
from vtabench.verify.builder import ProgramBuilder, Tokens

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="default")
    ap.add_argument("--repeat", type=int, default=5, help="runs; the best is reported")
    args = ap.parse_args()
    cfg = load_config(args.config)
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
