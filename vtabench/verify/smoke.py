"""On-board smoke test: a fixed set of programs on a chosen device, each checked against fsim.

``vtabench smoke --target opencl --platform NAME`` (and ``make smoke``) runs every directed
program of :mod:`vtabench.verify.directed` plus a few GEMM-heavy ones defined here (a tiled matrix
multiply with double-buffered weights and requantization, a padded 1-D convolution, and a program
whose result depends on the dependency tokens reordering the stream) on the device through the
driver API, compares the DRAM image after each run with fsim's bit for bit, prints the device
name, pass/fail and run times per program, and writes a markdown report.

Runs with numpy + pyopencl alone (no TVM, no other dependency), from a checkout with
``PYTHONPATH=.`` as well as installed.
"""

from __future__ import annotations

import platform as _platform
import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from vtabench.spec.config import Config
from vtabench.spec.isa.layout import AluOp, MemType
from vtabench.spec.program import Program
from vtabench.verify.builder import ProgramBuilder, Tokens
from vtabench.verify.directed import directed_programs



# ---------------------------------------------------------------------------------------------
# GEMM-heavy programs
# ---------------------------------------------------------------------------------------------

def _rand(cfg: Config, rng: np.random.Generator, mem: MemType, n: int) -> np.ndarray:
    b, bi, bo = cfg.batch, cfg.block_in, cfg.block_out
    shape = (n, bo, bi) if mem == MemType.WGT else (n, b, bi if mem == MemType.INP else bo)
    return rng.integers(-128, 128, shape).astype(np.int8)


def gemm_tiled(cfg: Config, mt: int, kt: int, nt: int, seed: int = 7) -> Program:
    """C = A x B^T over mt x kt input tiles and nt x kt weight tiles, then requantized
    (SHR 8, clip to int8) and stored.

    A is loaded once; the weights of each output block column are loaded into one half of a
    double buffer while compute uses the other half (g2l / l2g tokens); the store waits for the
    last compute (g2s). Every buffer index stays inside the smallest built-in configuration.
    """
    rng = np.random.default_rng(seed)
    p = ProgramBuilder(cfg)
    a = p.data(MemType.INP, _rand(cfg, rng, MemType.INP, mt * kt))
    w = p.data(MemType.WGT, _rand(cfg, rng, MemType.WGT, nt * kt))
    out = p.alloc(MemType.OUT, mt * nt, fill=0x5A)
    # Micro-ops: slot n*kt + k accumulates A[m][k] . B[n][k] into acc[m*nt + n] (m = iter_out).
    half = [n % 2 for n in range(nt)]
    dst = np.repeat(np.arange(nt), kt)
    src = np.tile(np.arange(kt), nt)
    wgt = np.repeat(np.array(half), kt) * kt + src
    ubase, ucount = p.uop_table(dst, src, wgt)
    zero_base, _ = p.uop_table(np.arange(nt))
    p.load(MemType.UOP, 0, ubase, 1, ucount)
    p.load(MemType.UOP, ucount, zero_base, 1, nt)
    p.load(MemType.INP, 0, a, 1, mt * kt)
    for n in range(nt):
        h = half[n]
        p.load(MemType.WGT, h * kt, w + n * kt, 1, kt,
               tok=Tokens(pop_next=n >= 2, push_next=True))
        if n == 0:
            # reset acc[m*nt + n] for all m, n: uops dst 0..nt-1, iter_out over m
            p.gemm((ucount, ucount + nt), (mt, 1), dst=(nt, 0), reset=True)
        p.gemm((n * kt, (n + 1) * kt), (mt, 1), dst=(nt, 0), src=(kt, 0),
               tok=Tokens(pop_prev=True, push_prev=n + 2 < nt))
    # Requantize every acc: x >> 8 (arithmetic), clip to [-128, 127]; uops dst 0..nt-1.
    zero = (ucount, ucount + nt)
    p.alu(AluOp.SHR, zero, (mt, 1), dst=(nt, 0), imm=8)
    p.alu(AluOp.MAX, zero, (mt, 1), dst=(nt, 0), imm=-128)
    p.alu(AluOp.MIN, zero, (mt, 1), dst=(nt, 0), imm=127, tok=Tokens(push_next=True))
    p.store(0, out, 1, mt * nt, tok=Tokens(pop_prev=True))
    p.finish()
    return p.build(f"gemm_tiled_{mt}x{kt}x{nt}")


def conv1d_padded(cfg: Config, x: int = 32, ci: int = 4, co: int = 4,
                  seed: int = 11) -> Program:
    """A 3-tap 1-D convolution over x positions, ci input and co output channel blocks: the
    input row is loaded with one position of zero padding on each side (x_pad), biases come in
    as ACC_8BIT, the kernel uses both loop levels (iter_out over positions, iter_in over output
    blocks), then bias add, SHR and clipping."""
    rng = np.random.default_rng(seed)
    p = ProgramBuilder(cfg)
    inp = p.data(MemType.INP, _rand(cfg, rng, MemType.INP, x * ci))
    wgt = p.data(MemType.WGT, _rand(cfg, rng, MemType.WGT, co * 3 * ci))
    bias = p.data(MemType.ACC_8BIT, _rand(cfg, rng, MemType.ACC, co))
    out = p.alloc(MemType.OUT, x * co, fill=0x3C)
    n_acc = x * co
    # uops (k, c): dst 0, src k*ci + c, wgt k*ci + c; dst = x*co + o, src = x*ci, wgt = o*3*ci.
    k_idx = np.repeat(np.arange(3), ci)
    c_idx = np.tile(np.arange(ci), 3)
    kern = p.load_uops(0, dst=np.zeros(3 * ci, int), src=k_idx * ci + c_idx,
                       wgt=k_idx * ci + c_idx)
    zero = p.load_uops(3 * ci, dst=[0])
    badd = p.load_uops(3 * ci + 1, dst=[0], src=[n_acc])
    p.load(MemType.INP, 0, inp, 1, x * ci, pads=(0, 0, ci, ci))
    p.load(MemType.WGT, 0, wgt, 1, co * 3 * ci, tok=Tokens(push_next=True))
    p.load(MemType.ACC_8BIT, n_acc, bias, 1, co, tok=Tokens(pop_prev=True))
    p.gemm(zero, (x, co), dst=(co, 1), reset=True)
    p.gemm(kern, (x, co), dst=(co, 1), src=(ci, 0), wgt=(0, 3 * ci))
    p.alu(AluOp.ADD, badd, (x, co), dst=(co, 1), src=(0, 1))
    p.alu(AluOp.SHR, zero, (x, co), dst=(co, 1), imm=6)
    p.alu(AluOp.MAX, zero, (x, co), dst=(co, 1), imm=-100)
    p.alu(AluOp.MIN, zero, (x, co), dst=(co, 1), imm=100, tok=Tokens(push_next=True))
    p.store(0, out, 1, n_acc, tok=Tokens(pop_prev=True))
    p.finish()
    return p.build(f"conv1d_padded_{x}x{ci}x{co}")


def token_order(cfg: Config, seed: int = 5) -> Program:
    """A GEMM placed in the stream *before* the LOAD INP it pops a token from: executing in
    stream order would multiply zeros; the stage/token machine runs the LOAD first."""
    rng = np.random.default_rng(seed)
    p = ProgramBuilder(cfg)
    inp = p.data(MemType.INP, _rand(cfg, rng, MemType.INP, 4))
    wgt = p.data(MemType.WGT, _rand(cfg, rng, MemType.WGT, 1))
    out = p.alloc(MemType.OUT, 4, fill=0x11)
    k = p.load_uops(0, dst=[0], src=[0], wgt=[0])
    z = p.load_uops(1, dst=[0])
    p.gemm(z, (4, 1), dst=(1, 0), reset=True)
    p.gemm(k, (4, 1), dst=(1, 0), src=(1, 0), tok=Tokens(pop_prev=True, push_next=True))
    p.load(MemType.WGT, 0, wgt, 1, 1)
    p.load(MemType.INP, 0, inp, 1, 4, tok=Tokens(push_next=True))
    p.store(0, out, 1, 4, tok=Tokens(pop_prev=True))
    p.finish()
    return p.build("token_order")


def smoke_programs(cfg: Config) -> list[Program]:
    """The fixed smoke set: directed programs, then the GEMM-heavy ones."""
    return directed_programs(cfg) + [
        token_order(cfg),
        conv1d_padded(cfg),
        gemm_tiled(cfg, 16, 4, 4),
        gemm_tiled(cfg, 64, 16, 16),
        gemm_tiled(cfg, 128, 16, 16),
    ]


# ---------------------------------------------------------------------------------------------
# Running and reporting
# ---------------------------------------------------------------------------------------------

@dataclass
class SmokeProgramRun:
    """One program of the smoke set on the device: bit-exact against fsim or not, and the
    times of both."""

    name: str
    insns: int
    dram_bytes: int
    gemm_uops: int
    passed: bool
    device_s: float  # host wall time of the run (launch to completion)
    kernel_s: float | None  # OpenCL profiling time of the kernel, when available
    fsim_s: float
    mismatch: str = ""
    error: str = ""


@dataclass
class BatchResult:
    """The whole set again, in one :meth:`run_programs` call (one launch on the OpenCL group
    kernel, one program per work-group)."""

    programs: int
    passed: int
    wall_s: float  # host wall time of the call (transfers included)
    kernel_s: float | None  # OpenCL profiling time of the launch(es), when available
    failures: list[str] = field(default_factory=list)


@dataclass
class SmokeReport:
    target: str
    config: str
    device: str
    device_info: dict[str, str]
    host: str
    command: str
    results: list[SmokeProgramRun] = field(default_factory=list)
    setup_s: float = 0.0
    batch: BatchResult | None = None

    @property
    def passed(self) -> bool:
        batch_ok = self.batch is None or self.batch.passed == self.batch.programs
        return bool(self.results) and all(r.passed for r in self.results) and batch_ok

    def markdown(self) -> str:
        n_pass = sum(r.passed for r in self.results)
        lines = [
            f"# Smoke test: {self.target} on {self.device}",
            "",
            f"Result: **{'PASS' if self.passed else 'FAIL'}** ({n_pass}/{len(self.results)} "
            f"programs bit-exact against fsim), configuration `{self.config}`.",
            "",
            "Command:",
            "",
            "```",
            self.command,
            "```",
            "",
            "| | |",
            "|---|---|",
            f"| device | {self.device} |",
        ]
        lines += [f"| {k} | {v} |" for k, v in self.device_info.items()]
        lines += [f"| host | {self.host} |",
                  f"| open + kernel build | {self.setup_s:.3f} s |", ""]
        lines += ["| program | insns | GEMM uops | DRAM bytes | result | device run (ms) | "
                  "kernel (ms) | fsim (ms) |", "|---|---:|---:|---:|---|---:|---:|---:|"]
        for r in self.results:
            kern = f"{r.kernel_s * 1e3:.3f}" if r.kernel_s is not None else "-"
            res = "pass" if r.passed else f"**FAIL** {r.error or r.mismatch}"
            lines.append(f"| {r.name} | {r.insns} | {r.gemm_uops} | {r.dram_bytes} | {res} | "
                         f"{r.device_s * 1e3:.3f} | {kern} | {r.fsim_s * 1e3:.3f} |")
        lines += ["", "device run = host wall time from launch to completion (polling); kernel = "
                  "OpenCL profiling (start to end of the kernel); each program's whole DRAM image "
                  "is compared byte for byte with fsim's.", ""]
        if self.batch is not None:
            b = self.batch
            kern = f"kernel {b.kernel_s * 1e3:.3f} ms, " if b.kernel_s is not None else ""
            lines += [f"Batch: the {b.programs} programs again in one call of run_programs "
                      f"({kern}{b.wall_s * 1e3:.3f} ms with transfers): {b.passed}/{b.programs} "
                      f"bit-exact against fsim."]
            lines += [f"- **FAIL** {f}" for f in b.failures]
            lines.append("")
        return "\n".join(lines)


def _describe_mismatch(ref: np.ndarray, got: np.ndarray) -> str:
    diff = np.flatnonzero(ref != got)
    return (f"{diff.size} bytes differ, first at {int(diff[0]):#x} "
            f"(fsim {int(ref[diff[0]])}, device {int(got[diff[0]])})")


def run_smoke(cfg: Config, target: str = "opencl", *, command: str = "",
              programs: list[Program] | None = None, timeout_s: float = 120.0,
              log: Any = print, **opts: Any) -> SmokeReport:
    """Run the smoke set on one device; returns the report (log gets one line per program)."""
    from vtabench.drivers.api import mem_bytes_for, open_device, run_program
    from vtabench.fsim import Fsim

    programs = programs if programs is not None else smoke_programs(cfg)
    mem = max(mem_bytes_for(p.dram.size, 16 * len(p.insns)) for p in programs)
    t0 = time.perf_counter()
    dev = open_device(target, cfg, mem_bytes=mem, **opts)
    setup = time.perf_counter() - t0
    info = dev.info() if hasattr(dev, "info") else {}
    host = f"{_platform.node()} ({_platform.machine()}, Python {_platform.python_version()})"
    report = SmokeReport(target, cfg.name, dev.name, info, host, command, setup_s=setup)
    log(f"device: {dev.name}")
    for k, v in info.items():
        log(f"  {k}: {v}")
    log(f"configuration {cfg.name}; {len(programs)} programs; open + build {setup:.3f} s")
    refs = []
    try:
        for p in programs:
            ref = p.dram.copy()
            f0 = time.perf_counter()
            stats = Fsim(cfg).run(p.insns, ref)
            fsim_s = time.perf_counter() - f0
            refs.append(ref)
            gemm_uops = int(getattr(stats, "gemm_uops", 0))
            got = p.dram.copy()
            code = p.encoded(cfg)
            res = SmokeProgramRun(p.name, len(p.insns), p.dram.size, gemm_uops, False, 0.0,
                                  None, fsim_s)
            try:
                run = run_program(dev, code, got, timeout_s)
                res.device_s = run.wall_s
                k = run.stats.get("kernel_s")
                res.kernel_s = float(k) if k is not None else None
                res.passed = bool(np.array_equal(ref, got))
                if not res.passed:
                    res.mismatch = _describe_mismatch(ref, got)
            except Exception as exc:  # noqa: BLE001 - reported per program, the run goes on
                res.error = f"{type(exc).__name__}: {exc}".replace("\n", " ")[:300]
            report.results.append(res)
            kern = f", kernel {res.kernel_s * 1e3:.3f} ms" if res.kernel_s is not None else ""
            log(f"  {'PASS' if res.passed else 'FAIL'} {p.name:28s} {len(p.insns):4d} insns "
                f"{gemm_uops:7d} GEMM uops  run {res.device_s * 1e3:9.3f} ms{kern}  fsim "
                f"{fsim_s * 1e3:8.3f} ms {res.error or res.mismatch}")
        if hasattr(dev, "run_programs"):
            report.batch = _run_batch(dev, programs, refs, timeout_s)
            b = report.batch
            log(f"  {'PASS' if b.passed == b.programs else 'FAIL'} batch: {b.programs} programs "
                f"in one run_programs call, {b.wall_s * 1e3:.3f} ms, {b.passed} match fsim")
    finally:
        dev.close()
    n_pass = sum(r.passed for r in report.results)
    log(f"{'PASS' if report.passed else 'FAIL'}: {n_pass}/{len(report.results)} programs match "
        f"fsim on {dev.name}")
    return report


def _run_batch(dev: Any, programs: list[Program], refs: list[np.ndarray],
               timeout_s: float) -> BatchResult:
    """Every program again in one run_programs call, each image checked against fsim's."""
    images = [p.dram.copy() for p in programs]
    t0 = time.perf_counter()
    try:
        results = dev.run_programs([replace(p, dram=img) for p, img in zip(programs, images)],
                                   timeout_s)
    except Exception as exc:  # noqa: BLE001 - reported as the batch's failure
        return BatchResult(len(programs), 0, time.perf_counter() - t0, None,
                           [f"{type(exc).__name__}: {exc}"[:300]])
    wall = time.perf_counter() - t0
    kernel = {r.stats.get("batch_kernel_s") for r in results if not isinstance(r, Exception)}
    failures = []
    for p, img, ref, r in zip(programs, images, refs, results):
        if isinstance(r, Exception):
            failures.append(f"{p.name}: {type(r).__name__}: {r}"[:300])
        elif not np.array_equal(img, ref):
            failures.append(f"{p.name}: {_describe_mismatch(ref, img)}")
    kernel_s = sum(k for k in kernel if k is not None) if None not in kernel else None
    return BatchResult(len(programs), len(programs) - len(failures), wall, kernel_s, failures)
