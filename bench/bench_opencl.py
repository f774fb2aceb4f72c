"""OpenCL benchmarks: a compiled network's device program, and random-program throughput.

Runs with numpy + pyopencl and the numpy-only parts of vtabench (from a checkout with
``PYTHONPATH=.``), so it runs on an accelerator machine where nothing else is installed.

    # ResNet-18's device program per inference (compile it first: vtabench compile), checked
    # bit for bit against fsim; optionally K inferences in one batch launch. On NVIDIA one
    # inference runs on a grid of one work-group per compute unit; --grid 1: one work-group
    python bench/bench_opencl.py package results/resnet18.vtapkg --runs 5 --batch 132
    # the same program on upstream's intelfocl kernel (apache/tvm-vta hardware/intelfocl/src:
    # vta.cl and vta.h, not part of this repository), built with a generated hw_spec_const.h
    python bench/bench_opencl.py package results/resnet18.vtapkg --upstream DIR
    # random programs: generated and run on fsim in a process pool, run on the device in batch
    # launches, every DRAM image compared with fsim's; checked programs per minute
    python bench/bench_opencl.py random --config default --count 10000 --jobs 16
    # the host side alone (no device, no pyopencl needed): programs per minute with 16 workers
    # and per worker, and the main process's share; the end-to-end figure cannot exceed it
    python bench/bench_opencl.py random --config default --count 10000 --jobs 16 --golden-only

``--platform`` / ``--device`` pick the device (name substrings), ``--variant`` / ``--group-size``
the kernel. ``--json PATH`` writes the figures. The int32 multiply-add rate a figure is set
against is compute units x ``--int32-lanes`` (64 per SM on NVIDIA Hopper) x the device's maximum
clock.

OpenBLAS runs single-threaded unless OPENBLAS_NUM_THREADS says otherwise: the random mode's
workers, one per core, each run small matmuls, where more threads only compete for the cores.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads OpenBLAS

import argparse
import json
import sys
import tempfile
import time
import zipfile
from contextlib import nullcontext
from dataclasses import dataclass
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import numpy as np

from vtabench.spec.config import Config, load_config
from vtabench.spec.program import Program


def _open(cfg: Config, mem: int, args: argparse.Namespace, **extra: Any) -> Any:
    from vtabench.drivers.opencl.device import OpenCLDevice

    opts = {k: v for k, v in (("platform", args.platform), ("device", args.device),
                              ("variant", args.variant), ("group_size", args.group_size),
                              ("grid", getattr(args, "grid", None)))
            if v is not None}
    return OpenCLDevice(cfg, mem, **opts, **extra)


def _peak_int32_mac(dev: Any, lanes: int) -> float:
    """int32 multiply-adds per second of the whole device: compute units x lanes x clock."""
    d = dev.device
    return float(d.max_compute_units * lanes * d.max_clock_frequency * 1e6)


# ---------------------------------------------------------------------------------------------
# A package's device program
# ---------------------------------------------------------------------------------------------

def load_package(path: Path, seed: int = 0) -> tuple[Config, np.ndarray, list[np.ndarray]]:
    """The package's device memory before an inference (static image, seeded int8 activations
    in every tensor copied to VTA; the plan at address 0) and its device programs (encoded)."""
    z = zipfile.ZipFile(path)
    man = json.loads(z.read("manifest.json"))
    cfg = load_config(man["config"])
    image = np.zeros(man["plan_bytes"], np.uint8)
    for e in man["image"]:
        data = np.frombuffer(z.read(e["file"]), np.uint8)
        image[e["addr"]:e["addr"] + data.size] = data
    rng = np.random.default_rng(seed)
    nodes = {n["name"]: n for n in man["nodes"]}
    for name, t in man["tensors"].items():
        if nodes[name]["op"] == "copy":
            image[t["addr"]:t["addr"] + t["nbytes"]] = rng.integers(0, 64, t["nbytes"],
                                                                     dtype=np.int8).view(np.uint8)
    programs = [np.frombuffer(z.read(e["file"]), np.uint8) for e in man["programs"]]
    return cfg, image, programs


def bench_package(args: argparse.Namespace) -> dict[str, Any]:
    from vtabench.drivers.api import mem_bytes_for, run_program
    from vtabench.fsim import Fsim
    from vtabench.spec.isa.insn import decode_program

    cfg, image, programs = load_package(args.package, args.seed)
    # fsim: the reference image after one inference, and the multiply-accumulates.
    golden, macs = image.copy(), 0
    t0 = time.perf_counter()
    for code in programs:
        macs += Fsim(cfg).run(decode_program(cfg, code), golden).macs
    fsim_s = time.perf_counter() - t0
    mem = mem_bytes_for(image.size, max(c.size for c in programs))
    t0 = time.perf_counter()
    dev = _open(cfg, mem, args)
    setup_s = time.perf_counter() - t0
    report: dict[str, Any] = {
        "package": str(args.package), "config": cfg.name, "device": dev.name,
        "kernel": dev.info()["kernel"], "build_options": dev.build_options,
        "instructions": int(sum(c.size // 16 for c in programs)), "macs": int(macs),
        "fsim_s": round(fsim_s, 4), "open_build_s": round(setup_s, 3)}
    print(f"# {args.package.name}: {cfg.name}, {report['instructions']} instructions, "
          f"{macs / 1e9:.3f} GMAC; {dev.name}, kernel {report['kernel']} "
          f"{' '.join(dev.build_options)}; open + build {setup_s:.2f} s; fsim {fsim_s:.3f} s")
    with dev:
        kernel, wall = [], []
        for i in range(args.runs):
            got = image.copy()
            k = w = 0.0
            waits = 0
            for code in programs:
                r = run_program(dev, code, got, args.timeout)
                k += r.stats.get("kernel_s") or 0.0
                w += r.wall_s
                waits += r.stats.get("grid_waits", 0)
            same = bool(np.array_equal(got, golden))
            kernel.append(k)
            wall.append(w)
            report["grid_waits"] = waits
            print(f"run {i + 1}: kernel {k * 1e3:.3f} ms, launch to completion {w * 1e3:.3f} ms, "
                  f"{waits} grid waits, "
                  f"{'bit-identical to fsim' if same else 'DIFFERS FROM FSIM'}")
            report.setdefault("identical", True)
            report["identical"] &= same
        best = min(kernel)
        peak = _peak_int32_mac(dev, args.int32_lanes)
        report.update(kernel_ms=[round(x * 1e3, 3) for x in kernel],
                      wall_ms=[round(x * 1e3, 3) for x in wall],
                      best_kernel_ms=round(best * 1e3, 3),
                      gmac_per_s=round(macs / best / 1e9, 2), peak_int32_mac_per_s=peak,
                      fraction_of_int32_peak=round(macs / best / peak, 5))
        print(f"best {best * 1e3:.3f} ms per inference: {macs / best / 1e9:.1f} GMAC/s, "
              f"{100 * macs / best / peak:.3f}% of the device's int32 multiply-add rate "
              f"({peak / 1e12:.2f} T/s: {dev.device.max_compute_units} compute units x "
              f"{args.int32_lanes} lanes x {dev.device.max_clock_frequency} MHz)")
        if args.batch and len(programs) == 1:
            images = [image.copy() for _ in range(args.batch)]
            t0 = time.perf_counter()
            results = dev.run_programs([Program(f"inference{k}", [], img, programs[0].tobytes())
                                        for k, img in enumerate(images)], args.timeout)
            wall_b = time.perf_counter() - t0
            ok = all(not isinstance(r, Exception) for r in results)
            same = ok and all(np.array_equal(img, golden) for img in images)
            kern = sum({r.stats["batch_kernel_s"] for r in results if not isinstance(r, Exception)})
            report.update(batch=args.batch, batch_kernel_ms=round(kern * 1e3, 3),
                          batch_wall_ms=round(wall_b * 1e3, 3), batch_identical=same)
            print(f"batch of {args.batch} inferences ({dev.batch_groups} work-groups): kernel "
                  f"{kern * 1e3:.1f} ms ({kern / args.batch * 1e3:.3f} ms per inference, "
                  f"{macs * args.batch / kern / 1e9:.1f} GMAC/s), with transfers "
                  f"{wall_b * 1e3:.1f} ms; {'all bit-identical to fsim' if same else 'MISMATCH'}")
    if args.upstream:
        report["upstream"] = bench_upstream(cfg, image, programs, golden, args)
    return report


UPSTREAM_NAMES = {  # upstream hw_spec_const.h name: this project's vta_config.h name
    "VTA_UOP_BUFF_DEPTH": "VTA_UOP_DEPTH", "VTA_INP_BUFF_DEPTH": "VTA_INP_DEPTH",
    "VTA_WGT_BUFF_DEPTH": "VTA_WGT_DEPTH", "VTA_ACC_BUFF_DEPTH": "VTA_ACC_DEPTH",
    "VTA_LOG_UOP_BUFF_DEPTH": "VTA_LOG_UOP_DEPTH", "VTA_LOG_INP_BUFF_DEPTH": "VTA_LOG_INP_DEPTH",
    "VTA_LOG_WGT_BUFF_DEPTH": "VTA_LOG_WGT_DEPTH", "VTA_LOG_ACC_BUFF_DEPTH": "VTA_LOG_ACC_DEPTH",
    "VTA_OPCODE_BIT_WIDTH": "VTA_OPCODE_WIDTH", "VTA_MEMOP_ID_BIT_WIDTH": "VTA_MEMTYPE_WIDTH",
    "VTA_MEMOP_SRAM_ADDR_BIT_WIDTH": "VTA_SRAM_ADDR_WIDTH",
    "VTA_MEMOP_DRAM_ADDR_BIT_WIDTH": "VTA_DRAM_ADDR_WIDTH",
    "VTA_MEMOP_SIZE_BIT_WIDTH": "VTA_SIZE_WIDTH", "VTA_MEMOP_STRIDE_BIT_WIDTH": "VTA_STRIDE_WIDTH",
    "VTA_MEMOP_PAD_BIT_WIDTH": "VTA_PAD_WIDTH", "VTA_ALU_OPCODE_BIT_WIDTH": "VTA_ALUOP_WIDTH",
    "VTA_ALUOP_IMM_BIT_WIDTH": "VTA_IMM_WIDTH",
}


def bench_upstream(cfg: Config, image: np.ndarray, programs: list[np.ndarray],
                   golden: np.ndarray, args: argparse.Namespace) -> dict[str, Any]:
    """Upstream's intelfocl kernel (one work-item, instructions in stream order, buffers as
    private arrays) on the same program and memory image: kernel time and whether the image
    after the run equals fsim's."""
    import pyopencl as cl

    from vtabench.drivers.opencl.platforms import select_device
    from vtabench.hwgen.constants import c_header

    src = Path(args.upstream)
    shim = tempfile.mkdtemp(prefix="vta-upstream-")
    os.makedirs(f"{shim}/vta")
    lines = [c_header(cfg)] + [f"#define {up} {ours}" for up, ours in UPSTREAM_NAMES.items()]
    lines += [f"#define VTA_LOG_{k} {v}" for k, v in (
        ("INP_WIDTH", 3), ("WGT_WIDTH", 3), ("ACC_WIDTH", 5))]
    Path(f"{shim}/vta/hw_spec_const.h").write_text("\n".join(lines) + "\n")
    _, device = select_device(args.platform, args.device)
    ctx = cl.Context([device])
    t0 = time.perf_counter()
    prg = cl.Program(ctx, (src / "vta.cl").read_text()).build(options=[f"-I{shim}", f"-I{src}"])
    print(f"upstream intelfocl kernel built in {time.perf_counter() - t0:.1f} s")
    kernel = cl.Kernel(prg, "vta_core")
    queue = cl.CommandQueue(ctx, device, properties=cl.command_queue_properties.PROFILING_ENABLE)
    times, same = [], True
    for _ in range(args.runs):
        got = image.copy()
        code_at = -(-got.size // 4096) * 4096
        mem = np.zeros(code_at + max(c.size for c in programs), np.uint8)
        mem[:got.size] = got
        buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=mem)
        t = 0.0
        for code in programs:
            cl.enqueue_copy(queue, buf, code, dst_offset=code_at, is_blocking=True)
            kernel.set_args(np.uint32(code.size // 16), np.uint32(code_at // 16), *[buf] * 6)
            evt = cl.enqueue_nd_range_kernel(queue, kernel, (1,), (1,))
            evt.wait()
            t += (evt.profile.end - evt.profile.start) * 1e-9
        cl.enqueue_copy(queue, mem, buf, is_blocking=True)
        same &= bool(np.array_equal(mem[:got.size], golden))
        times.append(t)
    print(f"upstream intelfocl kernel: best {min(times) * 1e3:.1f} ms "
          f"({', '.join(f'{x * 1e3:.1f}' for x in times)} ms); image "
          f"{'bit-identical to fsim' if same else 'differs from fsim'}")
    return {"kernel_ms": [round(x * 1e3, 3) for x in times], "identical": same}


# ---------------------------------------------------------------------------------------------
# Random programs
# ---------------------------------------------------------------------------------------------

@dataclass
class GoldenChunk:
    """Random programs as a worker hands them to the main process: what the device run and the
    comparison need, packed in a few buffers.

    A :class:`Program` with its list of Insn objects pickles to about 80 kB and takes the main
    process about 1 ms to unpickle: at ~25,000 programs per minute that alone fills the one
    process that feeds the device, whatever the number of workers. Packed, a program costs it a
    few microseconds."""

    names: list[str]
    code: bytes  # the encoded streams, one after the other
    code_at: list[int]  # program k's stream: code[code_at[k]:code_at[k + 1]]
    dram: np.ndarray  # the images before the run, one after the other (uint8)
    ref: np.ndarray  # fsim's images after the run, at the same offsets
    dram_at: list[int]
    generate_s: float  # the worker's time generating the programs
    validate_s: float  # fsim validating them (and working out the schedule)
    fsim_s: float  # fsim's whole run: validation and execution
    pack_s: float  # packing the chunk (encoded streams, images)
    cpu_s: float  # the worker's CPU time for the whole chunk (wall above, when it shares cores)

    def programs(self) -> tuple[list[Program], list[np.ndarray]]:
        """The programs, each with a copy of its image to run on, and fsim's images."""
        images = self.dram.copy()
        a, c = self.dram_at, self.code_at
        progs = [Program(name, [], images[a[k]:a[k + 1]], self.code[c[k]:c[k + 1]])
                 for k, name in enumerate(self.names)]
        return progs, [self.ref[a[k]:a[k + 1]] for k in range(len(self.names))]


def _golden_chunk(config: str, seed: int, indices: list[int]) -> GoldenChunk:
    """Worker: random programs ``indices`` of the run (as vtabench regress generates them) and
    their fsim images."""
    from vtabench.fsim import Fsim
    from vtabench.verify.random_program import random_program

    cpu0 = time.process_time()
    cfg = load_config(config)
    names, codes, drams, refs = [], [], [], []
    gen_s = validate_s = fsim_s = 0.0
    for k in indices:
        t0 = time.perf_counter()
        prog = random_program(cfg, np.random.default_rng([seed, k]))
        t1 = time.perf_counter()
        ref = prog.dram.copy()
        validate_s += Fsim(cfg).run(prog.insns, ref).validate_seconds
        fsim_s += time.perf_counter() - t1
        gen_s += t1 - t0
        names.append(f"{prog.name} (seed [{seed}, {k}])")
        codes.append(prog.encoded(cfg))
        drams.append(prog.dram)
        refs.append(ref)
    t0 = time.perf_counter()
    packed = (b"".join(codes), _offsets(len(c) for c in codes), np.concatenate(drams),
              np.concatenate(refs), _offsets(d.size for d in drams))
    return GoldenChunk(names, *packed, gen_s, validate_s, fsim_s, time.perf_counter() - t0,
                       time.process_time() - cpu0)


def _offsets(sizes: Any) -> list[int]:
    out = [0]
    for n in sizes:
        out.append(out[-1] + n)
    return out


def _check_batch(dev: Any, batch: list[tuple[Program, np.ndarray]], timeout: float,
                 clock: dict[str, float]) -> int:
    """Run ``batch`` in one batch launch and compare each image with fsim's; returns the
    failures. Adds the launch's seconds (transfers included; ``kernel``: of which the kernel,
    as the OpenCL profiler measured it) and the comparison's to ``clock``."""
    t0 = time.perf_counter()
    results = dev.run_programs([p for p, _ in batch], timeout)
    t1 = time.perf_counter()
    clock["launch"] += t1 - t0
    clock["kernel"] += sum({r.stats.get("batch_kernel_s") or 0.0 for r in results
                            if not isinstance(r, Exception)})
    bad = 0
    for (p, ref), r in zip(batch, results):
        if isinstance(r, Exception) or not np.array_equal(p.dram, ref):
            bad += 1
            print(f"FAIL {p.name}: {r if isinstance(r, Exception) else 'image differs'}")
    clock["compare"] += time.perf_counter() - t1
    return bad


#: The main process's stages (:func:`bench_random`), seconds of its wall clock each.
MAIN_STAGES = {"open": "the device opened, its kernel built",
               "wait": "waiting for the workers' next chunk",
               "unpack": "unpacking chunks",
               "launch": "device batches, transfers included",
               "kernel": "of which the kernels, as the OpenCL profiler measured them",
               "compare": "images compared with fsim's"}


def _where_the_time_went(report: dict[str, Any], jobs: int) -> str:
    """The report's per-stage split: the workers' ms per program (wall clock of each worker;
    their CPU time below it means they waited for a core) and the main process's seconds."""
    n, total = report["programs"], report["seconds"]
    w = report["worker_ms"]
    busy = (w["generate"] + w["fsim"] + w["pack"]) * n / 1e3
    return "\n".join(
        [f"where the time went ({n} programs, {total:.2f} s end to end):",
         f"  {jobs} workers, ms per program: generate {w['generate']:.3f}, fsim {w['fsim']:.3f} "
         f"(of which validate {w['validate']:.3f}), pack {w['pack']:.3f}; CPU "
         f"{report['worker_cpu_ms']:.3f}; busy {100 * busy / (jobs * total):.0f}% of {jobs} x "
         f"{total:.2f} s",
         f"  main process, s (CPU {report['main_cpu_s']:.3f}, the device's threads included): " + "; ".join(f"{k} {v:.3f} ({MAIN_STAGES[k]})"
                                          for k, v in report["main_s"].items())])


def bench_random(args: argparse.Namespace) -> dict[str, Any]:
    """Random programs generated and run on fsim by ``--jobs`` worker processes, each chunk of
    ``--golden-chunk`` programs handed back as it completes; the main process collects them into
    batch launches of ``--chunk`` programs and compares every image with fsim's. With
    ``--golden-only`` the main process does all of that but the launch (and compares nothing):
    the host side's rate, which bounds the end-to-end figure. Prints where the time went: the
    workers' ms per program by part, the main process's seconds by stage (MAIN_STAGES)."""
    cfg = load_config(args.config)
    step = max(1, args.golden_chunk)
    checked = bad = 0
    clock = dict.fromkeys(MAIN_STAGES, 0.0)
    worker = dict.fromkeys(("generate", "fsim", "validate", "pack"), 0.0)
    worker_cpu_s = 0.0
    cpu0 = time.process_time()
    pending: list[tuple[Program, np.ndarray]] = []
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        # Every task is submitted (and the workers forked) before the device is opened.
        futures = [pool.submit(_golden_chunk, cfg.name, args.seed,
                               list(range(i, min(i + step, args.count))))
                   for i in range(0, args.count, step)]
        m0 = time.perf_counter()
        with nullcontext() if args.golden_only else _open(cfg, 1 << 20, args) as dev:
            clock["open"] = time.perf_counter() - m0
            m0 = time.perf_counter()
            for k, fut in enumerate(as_completed(futures)):
                chunk = fut.result()
                m1 = time.perf_counter()
                clock["wait"] += m1 - m0
                for part, seconds in (("generate", chunk.generate_s), ("fsim", chunk.fsim_s),
                                      ("validate", chunk.validate_s), ("pack", chunk.pack_s)):
                    worker[part] += seconds
                worker_cpu_s += chunk.cpu_s
                progs, refs = chunk.programs()
                clock["unpack"] += time.perf_counter() - m1
                if dev is not None:
                    pending += zip(progs, refs)
                    last = k == len(futures) - 1
                    while pending and (len(pending) >= args.chunk or last):
                        batch, pending = pending[:args.chunk], pending[args.chunk:]
                        bad += _check_batch(dev, batch, args.timeout, clock)
                        checked += len(batch)
                m0 = time.perf_counter()
    total = time.perf_counter() - t0
    main_cpu_s = time.process_time() - cpu0
    n = args.count
    per_worker = 60 * n / (worker["generate"] + worker["fsim"] + worker["pack"])
    report: dict[str, Any] = {
        "config": cfg.name, "seed": args.seed, "jobs": args.jobs, "golden_chunk": step,
        "programs": n, "seconds": round(total, 2), "programs_per_minute": round(60 * n / total),
        "worker_generate_ms": round(1e3 * worker["generate"] / n, 3),
        "worker_fsim_ms": round(1e3 * worker["fsim"] / n, 3),
        "worker_ms": {k: round(1e3 * v / n, 3) for k, v in worker.items()},
        "worker_cpu_ms": round(1e3 * worker_cpu_s / n, 3),
        "main_cpu_s": round(main_cpu_s, 3),
        "per_worker_per_minute": round(per_worker),
        "main_s": {k: round(v, 6) for k, v in clock.items()},
        "main_ms": round(1e3 * (clock["unpack"] + clock["compare"]) / n, 4)}
    host = (f"workers: {report['worker_generate_ms']:.2f} ms generating + "
            f"{report['worker_fsim_ms']:.2f} ms on fsim per program = {per_worker:,.0f} per "
            f"minute per worker; main process {report['main_ms']:.3f} ms per program besides the "
            f"device")
    if dev is None:
        print(f"{n} random programs ({cfg.name}, seed {args.seed}), golden side only: {total:.1f} "
              f"s with {args.jobs} workers = {report['programs_per_minute']:,} programs per "
              f"minute; {host}")
        print(_where_the_time_went(report, args.jobs))
        return report
    device_s = clock["launch"]
    report.update(device=dev.name, kernel=dev.info()["kernel"], programs=checked, failed=bad,
                  checked_per_minute=report["programs_per_minute"],
                  device_seconds=round(device_s, 3),
                  device_programs_per_minute=round(60 * checked / device_s))
    print(f"{checked} random programs ({cfg.name}, seed {args.seed}) on {dev.name}: {bad} failed; "
          f"{total:.1f} s end to end with {args.jobs} fsim workers = "
          f"{report['checked_per_minute']:,} checked programs per minute; device batches "
          f"(transfers included) {device_s:.2f} s = {report['device_programs_per_minute']:,} "
          f"per minute; {host}")
    print(_where_the_time_went(report, args.jobs))
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    pk = sub.add_parser("package", help="a .vtapkg's device program per inference")
    pk.add_argument("package", type=Path)
    pk.add_argument("--runs", type=int, default=3)
    pk.add_argument("--batch", type=int, default=0, help="also K inferences in one launch")
    pk.add_argument("--grid", type=int, help="work-groups of one inference (group variant; "
                    "default: an NVIDIA GPU's compute units; 1: one work-group)")
    pk.add_argument("--upstream", type=Path, help="directory with upstream's intelfocl vta.cl "
                                                  "and vta.h: time it on the same program")
    rnd = sub.add_parser("random", help="random-program throughput, checked against fsim")
    rnd.add_argument("--config", default="default")
    rnd.add_argument("--count", type=int, default=2000)
    rnd.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    rnd.add_argument("--chunk", type=int, default=500, help="programs per batch launch")
    rnd.add_argument("--golden-chunk", type=int, default=50,
                     help="programs a worker generates and runs on fsim per task")
    rnd.add_argument("--golden-only", action="store_true",
                     help="no device: the host side's rate (generation, fsim, the main "
                          "process's share) with --jobs workers")
    for p in (pk, rnd):
        p.add_argument("--platform")
        p.add_argument("--device")
        p.add_argument("--variant", choices=("group", "item"))
        p.add_argument("--group-size", type=int)
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--timeout", type=float, default=600.0)
        p.add_argument("--int32-lanes", type=int, default=64,
                       help="int32 multiply-add lanes per compute unit (NVIDIA Hopper SM: 64)")
        p.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    report = bench_package(args) if args.what == "package" else bench_random(args)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    ok = report.get("identical", True) and report.get("batch_identical", True) and \
        not report.get("failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
