"""Run raw programs on the RTL core bench (Verilator, top ``vta_tb_top``).

One simulator process runs a whole batch of programs (:func:`run_batch`), resetting the core in
between, because starting the simulator costs about a second and pytest runs dozens of programs.
Two benches read the same job folder and write the same results, cycle for cycle
(tests/test_rtl_fastpath.py): the fast path, a C++ main around the model (tb/csrc/core_main.cpp;
the default), and the cocotb bench (tb/core/core_bench.py; waves, coverage, the stand-in core,
or VTABENCH_RTL_BENCH=cocotb). Below, "the cocotb test" stands for either.
The platform device (``open_device("rtl", cfg)``, ``vtabench exec --target rtl``) runs in a
simulator that ``vtabench.drivers.rtl.launcher`` starts. :class:`SimJob` is the simulator launch
both use: a job folder in /dev/shm, the cocotb runner call, the log.

How the DRAM image moves (no per-beat Python): the runner writes each program's image and
instruction stream to a job directory; inside the simulator, the cocotb test (tb/core/core_bench.py)
copies them into a file in /dev/shm that the DPI DRAM model (tb/csrc/dram.cpp) has mapped with
mmap and that Python has mapped with numpy.memmap (the same pages), resets the core, launches it,
waits for done_o (Python sleeps; the clock runs in C), and copies the image back out.

Image layout of one program (its :class:`~vtabench.spec.program.Placement`): the caller's DRAM
image at bus address ``dram_base`` (dram_base_i: 0 unless the program asks for another, anywhere
in the 64-bit bus space, bus-aligned or not; dram_base fields are element indices from it), the
instruction stream ``insn_pad`` bytes after the next 4 KiB boundary (insn_base_i: any 16-byte
alignment, or a misaligned one), then zero padding and a 4 KiB guard. dram_size_i = the
placement's DRAM size (the image's size unless it names another). The DRAM file holds a window of
bus memory (:func:`bus_window`): from a 4 KiB guard below the image's 4 KiB page (from address 0
when the image sits lower) to the guard's end, its base the DRAM model's ``dram_win_base_i``;
the model answers DECERR outside it. No range may pass 2^64 (``BUS_END``: the spec defines
none that wraps). After the run, bytes of the window outside the image (the guard and bytes
before it, instruction area, padding, guard) are checked unchanged: ``stray_writes`` counts
those that changed.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Literal, Self, Sequence

import numpy as np

from vtabench.spec.config import Config
from vtabench.spec.program import BUS_END, INSN_ALIGN, Placement, Program
from vtabench.rtl.verilator import Build, Mutation, build, waves_format
from vtabench.processes import alive
from vtabench.workdirs import build_root, results_root

#: DRAM model knobs (axi_dram.sv) and their defaults: ideal-ish memory, 1 beat/cycle. The one
#: place for them: the core bench (tb/core/core_bench.py) and the platform (tb/platform/model.py) use it.
DRAM_KNOBS = {"rd_latency": 20, "wr_latency": 10, "rd_gap": 0, "stall": 0, "fault_lo": 0,
              "fault_hi": 0}
#: knob -> the DRAM model input of the simulator tops (vta_tb_top, vta_pcie_top) that sets it.
DRAM_KNOB_SIGNALS = {k: f"dram_{k}_i" for k in DRAM_KNOBS}
#: Knobs of the core bench's DRAM model only (the platform leaves them at these defaults):
#: rd_reorder 1 serves reads out of order across IDs; wr_err_burst N > 0 answers the N-th write
#: burst with SLVERR.
BENCH_KNOBS = {"rd_reorder": 0, "wr_err_burst": 0}
BENCH_KNOB_SIGNALS = {k: f"dram_{k}_i" for k in BENCH_KNOBS}
CLOCK_NS = 10
GUARD_BYTES = 4096


class RtlRunError(RuntimeError):
    """The simulator did not produce results (crash, build problem); the message names the cause
    (:func:`log_cause`) and where the full log is kept."""


#: In a simulator log: a Verilator error (an assertion that failed, $fatal, $stop, $error).
_HDL_ERROR = re.compile(r"%(?:Error|Fatal)\b.*|Assertion failed.*")
#: In a simulator log: the last line of a Python exception (cocotb indents it).
_EXCEPTION = re.compile(r"^\s*((?:\w+\.)*\w*(?:Error|Exception|Failure|Exit)): (.+)$")
#: cocotb's exception when the simulator ended by itself: a consequence, not a cause.
_GENERIC = "SimFailure"
CAUSE_CHARS = 300


def failed_logs_dir() -> Path:
    """Where the logs of failed simulator runs are kept (their job folders are removed)."""
    return build_root() / "logs"


def log_cause(text: str, exit_status: int | None = None) -> str:
    """Why a simulator run failed, in one line, from its log: the first Verilator error (an
    assertion, $fatal, $stop), else the last Python exception (cocotb's generic "ended
    prematurely" only when there is no other), else how the simulator process ended."""
    lines = text.splitlines()
    for line in lines:
        if m := _HDL_ERROR.search(line):
            return m.group(0).strip()[:CAUSE_CHARS]
    found = [m for line in lines if (m := _EXCEPTION.match(line))]
    specific = [m for m in found if not m.group(1).endswith(_GENERIC)] or found
    if specific:
        m = specific[-1]
        return f"{m.group(1).rsplit('.', 1)[-1]}: {m.group(2).strip()}"[:CAUSE_CHARS]
    if exit_status is not None and exit_status < 0:
        try:
            return f"the simulator was killed by {signal.Signals(-exit_status).name}"
        except ValueError:
            pass
    if exit_status:
        return f"the simulator exited with status {exit_status}"
    return "the simulator's log names no error (was it killed?)"


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def bus_window(name: str, at: Placement, image_bytes: int, code_bytes: int,
               dram_size: int) -> tuple[int, int]:
    """The window of bus memory the DRAM file holds for one program: (bus address of its byte 0,
    its bytes). It starts a 4 KiB guard below the image's 4 KiB page (at 0 when the image sits
    lower) and ends a 4 KiB guard past the instruction stream's last page. Raises ValueError,
    naming the program, for a placement the bench cannot serve: a field out of range, or a
    window or DRAM range that passes the end of the bus (``BUS_END``)."""
    if not 0 <= at.insn_pad < INSN_ALIGN or at.dram_base < 0:
        raise ValueError(f"{name}: insn_pad {at.insn_pad} outside [0, {INSN_ALIGN}) or "
                         f"dram_base {at.dram_base} negative")
    if dram_size < 0 or at.dram_base + dram_size > BUS_END:
        raise ValueError(f"{name}: DRAM size {dram_size:#x} from dram_base {at.dram_base:#x} "
                         f"is negative or passes the end of the 64-bit bus")
    start = max(0, at.dram_base // INSN_ALIGN * INSN_ALIGN - GUARD_BYTES)
    end = _align(at.insn_offset(image_bytes) + code_bytes, INSN_ALIGN) + GUARD_BYTES
    if end > BUS_END:
        raise ValueError(f"{name}: image at {at.dram_base:#x}, its instruction stream and a "
                         f"{GUARD_BYTES}-byte guard pass the end of the 64-bit bus")
    return start, end - start


def estimate_cycles(cfg: Config, code: bytes) -> int:
    """A generous upper bound on the cycles a program needs (for the hang timeout)."""
    from vtabench.spec.isa import decode_insn
    from vtabench.spec.isa.layout import MemType, Opcode

    total = 0
    bus = cfg.bus_bytes
    for i in range(len(code) // 16):
        word = int.from_bytes(code[16 * i:16 * i + 16], "little")
        try:
            insn = decode_insn(cfg, word)
        except ValueError:
            total += 100
            continue
        op = insn.opcode
        if op in (Opcode.GEMM, Opcode.ALU):
            total += 4 * max(1, insn.iter_out) * max(1, insn.iter_in) * max(
                1, insn.uop_end - insn.uop_bgn) + 100
        elif op in (Opcode.LOAD, Opcode.STORE):
            from vtabench.spec.isa import mem_elem_bytes

            try:
                eb = mem_elem_bytes(cfg, MemType(insn.memory_type))
            except (ValueError, KeyError):
                eb = 64
            rows = insn.y_size + insn.y_pad_0 + insn.y_pad_1
            row = insn.x_size + insn.x_pad_0 + insn.x_pad_1
            total += 4 * rows * (row * eb // bus + row + 8) + 200
        else:
            total += 100
    return 4 * total + 200_000


def pick_seed(seed: int | None) -> int:
    """``seed``, or a random one when None."""
    return random.SystemRandom().randrange(1, 2**31) if seed is None else int(seed)


def waves_file(waves: bool | str | Path | None, default_name: str) -> Path | None:
    """Where to write the waves: None when ``waves`` is false; a path given; else
    results/waves/``default_name``; the suffix is the format the build writes (.fst, or .vcd
    without the lz4 headers: :func:`waves_format`). Its folder is created."""
    if not waves:
        return None
    if isinstance(waves, (str, Path)) and str(waves) not in ("auto", "", "True", "1"):
        fst = Path(waves).resolve()
    else:
        fst = results_root() / "waves" / default_name
    fst = fst.with_suffix("." + waves_format())
    fst.parent.mkdir(parents=True, exist_ok=True)
    return fst


#: Where job folders go (when the machine has it): memory, so the DRAM file maps fast.
SHM_DIR = Path("/dev/shm")
#: A job folder's name: a SimJob prefix (``vtabench-rtl-<config>-``, ``vtabench-pcie-<config>-``)
#: and the process that owns it (``pid<PID>-<random>``).
_JOB_FOLDER = re.compile(r"^vtabench-(?:rtl|pcie)-.*pid(\d+)-[^-]*$")
#: Tries at removing a job folder while a dying simulator may still write into it.
_REMOVE_TRIES = 50


def remove_folder(folder: Path) -> None:
    """Remove ``folder`` and everything in it, retrying while a writer that is dying (a
    simulator killed a moment ago) still creates files in it."""
    for _ in range(_REMOVE_TRIES):
        shutil.rmtree(folder, ignore_errors=True)
        if not folder.exists():
            return
        time.sleep(0.02)


def reap_orphaned_jobs(where: Path = SHM_DIR) -> list[Path]:
    """Remove the job folders in ``where`` whose owning process is gone (killed with SIGKILL,
    or dead before its ``with`` block ended). Returns them."""
    if not where.is_dir():
        return []
    gone = []
    for folder in where.glob("vtabench-*"):
        m = _JOB_FOLDER.match(folder.name)
        if folder.is_dir() and m and not alive(int(m.group(1))):
            remove_folder(folder)
            gone.append(folder)
    return gone


class SimJob:
    """One simulator run: a job folder (in /dev/shm when there is one) for its files and log,
    removed on exit unless ``keep`` is set or VTABENCH_KEEP_JOBS is in the environment.

    Every way out removes it: the ``with`` block on any exception (a failing simulator is no
    exception here; SIGINT and the CLI's SIGTERM unwind the block after the runner has killed
    and waited for the simulator); the core bench itself when this process dies while the
    simulator runs (``owner_pid`` in job.json: tb/core/core_bench.py stops and removes the folder);
    and the next job of any process (:func:`reap_orphaned_jobs`) for a process killed at any other
    moment. The folder's name carries the owner's PID for that."""

    def __init__(self, prefix: str, *, keep: bool = False) -> None:
        reap_orphaned_jobs()
        shm = SHM_DIR if SHM_DIR.is_dir() else None
        self.dir = Path(tempfile.mkdtemp(prefix=f"{prefix}pid{os.getpid()}-",
                                         dir=str(shm) if shm else None))
        self.log = self.dir / "sim.log"
        self.keep = keep
        self.exit_status: int | None = None  # of the simulator process, when it failed

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        if not self.keep and not os.environ.get("VTABENCH_KEEP_JOBS"):
            remove_folder(self.dir)
        return False

    def simulate(self, b: Build, test_module: str, *, seed: int, plusargs: Sequence[str],
                 fst: Path | None = None, rand_init: bool = True) -> float:
        """Run cocotb test module ``test_module`` on the simulator ``b`` with the job folder as
        its test directory; returns the wall time. ``rand_init``: every register and memory
        without a reset starts random (seeded). A failing simulator is not an exception here
        (the runner raises SystemExit or RuntimeError): the caller checks the results it
        expects and reports :meth:`failure`. Every other exception (KeyboardInterrupt, the
        CLI's SIGTERM) passes."""
        from cocotb_tools.runner import get_runner

        args = list(plusargs)
        if rand_init:
            args += ["+verilator+rand+reset+2", f"+verilator+seed+{seed}"]
        t0 = time.monotonic()
        try:
            get_runner("verilator").test(
                test_module=test_module, hdl_toplevel=b.toplevel, hdl_toplevel_lang="verilog",
                build_dir=str(b.build_dir), test_dir=str(self.dir), seed=seed,
                waves=fst is not None, test_args=["--trace-file", str(fst)] if fst else [],
                plusargs=args, results_xml=str(self.dir / "results.xml"), log_file=str(self.log))
        except (SystemExit, RuntimeError) as exc:
            status = re.search(r"return code: (-?\d+)", str(exc))  # the runner's RuntimeError
            code = exc.code if isinstance(exc, SystemExit) else None
            self.exit_status = int(status.group(1)) if status else (
                code if isinstance(code, int) else None)
        return time.monotonic() - t0

    def run_harness(self, b: Build, *, seed: int, plusargs: Sequence[str],
                    rand_init: bool = True) -> float:
        """Run the fast path's executable ``b`` (a C++ main around the model, no cocotb) with
        ``plusargs``, its output in the job's log; returns the wall time. Like
        :meth:`simulate`, a failing simulator is no exception here, and an exception in this
        process (an interrupt) kills and waits for the simulator before it passes."""
        args = [str(b.executable), *plusargs]
        if rand_init:
            args += ["+verilator+rand+reset+2", f"+verilator+seed+{seed}"]
        t0 = time.monotonic()
        with open(self.log, "wb") as log:
            proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, cwd=self.dir)
            try:
                status = proc.wait()
            except BaseException:
                proc.kill()
                proc.wait()
                raise
        self.exit_status = status or None
        return time.monotonic() - t0

    def log_tail(self, nchars: int = 6000) -> str:
        return self.log.read_text(errors="replace")[-nchars:] if self.log.exists() else "(no log)"

    def failure(self) -> str:
        """Why the run failed (:func:`log_cause`) and where its full log is kept: a copy in
        :func:`failed_logs_dir`, named after the job folder (which is removed). When the copy
        cannot be written, the log's last lines instead."""
        if not self.log.exists():
            return f"the simulator wrote no log ({self.dir})"
        text = self.log.read_text(errors="replace")
        cause = log_cause(text, self.exit_status)
        kept = failed_logs_dir() / f"{self.dir.name}.log"
        try:
            kept.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self.log, kept)
        except OSError as exc:
            return f"{cause}; the log could not be kept ({exc}); its end:\n{text[-2000:]}"
        return f"{cause}; full log: {kept}"


#: VTABENCH_RTL_BENCH: "fast" (the default) or "cocotb": which bench runs a batch when the caller
#: does not say (:func:`run_batch`'s ``fast=None``).
BENCH_ENV = "VTABENCH_RTL_BENCH"


def bench_choice() -> str:
    """The bench a batch runs on when its caller does not say: VTABENCH_RTL_BENCH, "fast" when
    unset; an unknown value is refused in one line naming it."""
    value = os.environ.get(BENCH_ENV, "fast").strip().lower() or "fast"
    if value not in ("fast", "cocotb"):
        raise ValueError(f"{BENCH_ENV}={value!r}: expected 'fast' or 'cocotb'")
    return value


def run_batch(cfg: Config, programs: Sequence[Program], *, seed: int | None = None,
              waves: bool | str | Path | None = None, timeout_s: float | None = None,
              validate: bool = True, quiet: bool = False, stub: bool = False,
              knobs: dict[str, int] | None = None, keep: bool = False,
              coverage: Path | None = None, mutation: Mutation | None = None,
              trace: Path | None = None, fast: bool | None = None, speed: bool = False,
              netlist: Path | None = None, **opts: Any) -> list[dict[str, Any]]:
    """Run ``programs`` in one simulator process, each with its placement, DRAM knobs and cycle
    bound; returns one stats dict per program and updates each program's ``dram`` in place with
    its image after the run. ``stub``: the bench's stand-in core (the DRAM model's self-test):
    each program's ``code`` is whatever that core reads, never validated.

    seed: the DRAM model's back-pressure seed (and COCOTB_RANDOM_SEED); random when None, always
    printed. waves: True or a path: write an FST there (default results/waves/<config>-<seed>.fst)
    and print its path. timeout_s: wall-clock limit per program (the cycle limit is
    estimate_cycles, or a program's max_cycles). knobs: DRAM model settings for every program
    (see DRAM_KNOBS); a program's own knobs override them. trace: write the pipeline event log
    of the batch there, one run per program (vtabench.report.trace; docs/visualize.md).
    validate: run vtabench.spec.validate first
    (False feeds the core unchecked programs). fast: True runs the batch in the C++ harness
    (tb/csrc/core_main.cpp, its own build: docs/rtl.md, Simulation speed), False in the cocotb
    bench (tb/core/core_bench.py): the same job files, the same cycles, the same results
    (tests/test_rtl_fastpath.py); None (the default) picks the harness unless waves, coverage or
    the stand-in core are asked for or VTABENCH_RTL_BENCH=cocotb is set. speed: the fast path's
    build without the RTL's assertions (benchmarks, long runs; implies fast). netlist: the
    gate-level simulation of that synthesised core (vtabench.rtl.gls; implies fast). Raises RtlRunError when the simulator gave no result; a program that ends with
    an error code or a timeout is reported in its stats ("state").
    """
    if opts:
        unknown = set(opts) - {"max_cycles", "dram_size"}
        if unknown:
            raise TypeError(f"run_batch: unknown option(s) {', '.join(sorted(unknown))}")
    seed = pick_seed(seed)
    if not quiet:
        print(f"rtl: seed {seed}", file=sys.stderr, flush=True)

    if speed and fast is False:
        raise ValueError("run_batch: speed is a build of the fast path (fast=True or None)")
    if netlist is not None and (fast is False or trace):
        raise ValueError("run_batch: the gate-level netlist runs on the fast path, untraced")
    if fast is None:
        fast = speed or netlist is not None or (not (waves or coverage is not None or stub)
                         and bench_choice() == "fast")
    if fast and (waves or coverage is not None or stub):
        raise ValueError("run_batch: the fast path has no waves, coverage or stand-in core "
                         "(run those through cocotb: fast=False)")
    b: Build = build(cfg, waves=bool(waves), stub=stub, coverage=coverage is not None,
                     mutation=mutation, fast=fast, speed=speed, netlist=netlist)

    with SimJob(f"vtabench-rtl-{cfg.name}-", keep=keep) as sim:
        job_dir = sim.dir
        manifest: list[dict[str, Any]] = []
        max_total = 0
        for i, p in enumerate(programs):
            dram = p.dram
            if not (isinstance(dram, np.ndarray) and dram.dtype == np.uint8 and dram.ndim == 1):
                raise TypeError(f"{p.name}: dram must be a 1-D uint8 numpy array")
            code = p.encoded(cfg)
            if validate and not stub:
                from vtabench.spec.isa import decode_program
                from vtabench.spec.validate import validate_program

                validate_program(cfg, p.insns if p.code is None else decode_program(cfg, code),
                                 dram)
            at = p.placement
            dram_size = int(opts.get("dram_size", len(dram)) if at.dram_size is None
                            else at.dram_size)
            window, total = bus_window(p.name, at, len(dram), len(code), dram_size)
            insn_base = at.insn_offset(len(dram))
            max_total = max(max_total, total)
            (job_dir / f"p{i}.img").write_bytes(dram.tobytes())
            (job_dir / f"p{i}.insn").write_bytes(code)
            k = {**DRAM_KNOBS, **BENCH_KNOBS}
            k.update(knobs or {})
            k.update(p.knobs)
            bad = set(k) - set(DRAM_KNOBS) - set(BENCH_KNOBS)
            if bad:
                raise TypeError(f"unknown DRAM knob(s) {', '.join(sorted(bad))}")
            max_cycles = p.max_cycles or opts.get("max_cycles") or estimate_cycles(cfg, code)
            manifest.append({
                "name": p.name, "window_base": window, "dram_base": at.dram_base,
                "insn_base": insn_base, "image_offset": at.dram_base - window,
                "image_bytes": len(dram), "insn_offset": insn_base - window,
                "insn_count": len(code) // 16, "total_bytes": total, "dram_size": dram_size,
                "knobs": k, "max_cycles": int(max_cycles), "timeout_s": timeout_s,
                "seed": (seed + 7919 * i) & 0xFFFFFFFF,
            })
        dram_file = job_dir / "dram.bin"
        with open(dram_file, "wb") as f:
            f.truncate(max_total)
        job = {"dram_file": str(dram_file), "programs": manifest, "clock_ns": CLOCK_NS,
               "results": str(job_dir / "results.jsonl"), "owner_pid": os.getpid()}
        (job_dir / "job.json").write_text(json.dumps(job, indent=1))

        fst = waves_file(waves, f"{cfg.name}-{seed}.fst")
        plusargs = ([f"+vta_job={job_dir / 'job.json'}", f"+dram_file={dram_file}"]
                    + ([f"+vta_trace={Path(trace).resolve()}"] if trace else []))
        if fast:
            wall = sim.run_harness(b, seed=seed, plusargs=plusargs)
        else:
            wall = sim.simulate(b, "vtabench.tb.core.core_bench", seed=seed, fst=fst,
                                plusargs=plusargs)

        results: list[dict[str, Any]] = []
        rpath = Path(job["results"])
        if rpath.exists():
            for line in rpath.read_text().splitlines():
                if line.strip():
                    results.append(json.loads(line))
        if len(results) != len(programs):
            raise RtlRunError(f"simulator gave {len(results)} of {len(programs)} results "
                              f"(seed {seed}): {sim.failure()}")
        if coverage is not None:
            dat = job_dir / "coverage.dat"
            if not dat.exists():
                raise RtlRunError(f"the coverage build wrote no {dat}")
            Path(coverage).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(dat, coverage)
        for i, (p, r) in enumerate(zip(programs, results)):
            out = np.fromfile(job_dir / f"p{i}.out", dtype=np.uint8)
            p.dram[:] = out[:len(p.dram)]
            r["seed"] = seed
            r["process_wall_s"] = round(wall, 3)
            if fst is not None:
                r["waves"] = str(fst)
        if fst is not None and not quiet:
            print(f"rtl: waves written to {fst}", file=sys.stderr, flush=True)
        return results
