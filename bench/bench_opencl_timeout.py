"""OpenCL runaway programs against the kernel's work budget (issue 16, docs/opencl-gpu.md).

Each program below does far more work than the budget of ``--timeout`` allows; the kernel must
stop itself before the instruction the budget does not cover, and the host must raise
RunTimeoutError within the timeout + OVERRUN_S. Printed per program: when the host raised, when
the kernel had ended (a later command waits for it), the instruction reached and the work units
a second the path ran at (the budget rate must stay below the slowest). Then a normal program
(checked against fsim) and, on the group variant, a batch launch of runaways.

Numpy + pyopencl and the numpy-only parts of vtabench (``PYTHONPATH=.``): runs on the accelerator
machine.

    python bench/bench_opencl_timeout.py --platform NVIDIA --timeout 2
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from vtabench.drivers import RunTimeoutError
from vtabench.drivers.opencl.device import OpenCLDevice
from vtabench.drivers.api import run_program
from vtabench.fsim import Fsim
from vtabench.spec.config import Config, load_config
from vtabench.spec.program import Program
from vtabench.spec.isa import encode_program
from vtabench.spec.isa.insn import decode_program
from vtabench.spec.isa.layout import AluOp, MemType
from vtabench.verify.builder import ProgramBuilder


def program(cfg: Config, kind: str, iters: tuple[int, int] = (128, 128), repeat: int = 4000,
            n_uops: int = 1) -> tuple[bytes, np.ndarray]:
    """``repeat`` instructions of one kind, every loop into acc[0] (the sequential paths)."""
    b = ProgramBuilder(cfg)
    uops = b.load_uops(0, [0] * n_uops)
    for _ in range(repeat):
        if kind == "alu":
            b.alu(AluOp.ADD, uops, iters=iters)
        elif kind == "alu-imm":
            b.alu(AluOp.SHR, uops, iters=iters, imm=1)
        elif kind == "reset":
            b.gemm(uops, iters=iters, reset=True)
        elif kind == "load-acc":
            b.load(MemType.ACC, 0, 0, 1, cfg.acc_depth)
        else:
            b.gemm(uops, iters=iters)
    b.finish()
    p = b.build(kind)
    return encode_program(cfg, p.insns), p.dram


def runaways(cfg: Config) -> dict[str, tuple[bytes, np.ndarray]]:
    return {"one GEMM 16383 x 16383 x 256": program(cfg, "gemm", (16383, 16383), 1, 256),
            "4000 GEMM 128 x 128": program(cfg, "gemm"),
            "4000 reset GEMM 128 x 128": program(cfg, "reset"),
            "4000 ALU 128 x 128": program(cfg, "alu"),
            "4000 ALU imm 128 x 128": program(cfg, "alu-imm"),
            "200000 LOAD ACC (whole buffer)": program(cfg, "load-acc", repeat=200000)}


def measure(dev: OpenCLDevice, code: bytes, dram: np.ndarray, timeout: float) -> str:
    t0 = time.perf_counter()
    try:
        r = run_program(dev, code, dram, timeout)
        return f"FINISHED in {time.perf_counter() - t0:.3f} s ({r.stats['work_units']} units)"
    except RunTimeoutError as exc:
        raised = time.perf_counter() - t0
        dev.read(0, 1)  # the image's first byte (run_program puts it at 0): waits for the kernel
        ended = time.perf_counter() - t0
        units = exc.status.get("work_units") or dev.budget(timeout)
        how = "kernel stopped itself" if "work_units" in exc.status else "host gave up"
        return (f"RunTimeoutError after {raised:.3f} s ({how}; kernel ended {ended:.3f} s), "
                f"instruction {exc.status.get('insn_index', '?')}, {units / ended:.2e} units/s")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--platform")
    p.add_argument("--config", default="default")
    p.add_argument("--timeout", type=float, default=2.0)
    p.add_argument("--variants", default="group,item")
    p.add_argument("--budget-rate", type=float, help="work units a second (default: the driver's)")
    args = p.parse_args()
    cfg = load_config(args.config)
    cases = runaways(cfg)
    for variant in args.variants.split(","):
        with OpenCLDevice(cfg, 1 << 24, platform=args.platform, variant=variant,
                          budget_rate=args.budget_rate) as dev:
            print(f"== {dev.name}, variant {variant}, timeout {args.timeout:g} s, budget "
                  f"{dev.budget(args.timeout):.3g} units ({dev.budget_rate:.0e} a second)",
                  flush=True)
            for name, (code, dram) in cases.items():
                print(f"{name}: {measure(dev, code, dram.copy(), args.timeout)}", flush=True)
            code, dram = program(cfg, "gemm", (16, 16), 4)
            got, want = dram.copy(), dram.copy()
            t0 = time.perf_counter()
            run_program(dev, code, got, args.timeout)
            took = time.perf_counter() - t0
            Fsim(cfg).run(decode_program(cfg, code), want)
            print(f"normal program: {took:.3f} s, matches fsim: {np.array_equal(got, want)}",
                  flush=True)
            if dev.variant == "group":
                code, dram = cases["4000 GEMM 128 x 128"]
                n = dev.batch_groups * 2
                t0 = time.perf_counter()
                try:
                    res = dev.run_programs([Program(f"runaway{k}", [], dram.copy(), code)
                                            for k in range(n)], args.timeout)
                    what = ", ".join(sorted({type(r).__name__ for r in res}))
                except RunTimeoutError as exc:
                    what = f"launch: {exc}"
                    dev.read(0, 1)
                print(f"batch of {n} runaways: {time.perf_counter() - t0:.3f} s, each "
                      f"{what}, budget each {dev.budget(args.timeout, n):.3g}", flush=True)


if __name__ == "__main__":
    main()
