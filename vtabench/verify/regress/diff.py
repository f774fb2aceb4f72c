"""Differential runs: one program on several targets, checked against fsim and what it expects.

Everything the bench observes is checked (:func:`check`, :func:`compare`): the DRAM image
(compared with fsim's when the run must be clean; after any run, every byte no STORE writes is
the input's, fsim's image included: the generator fills those bytes at random, so a write beside
a store's rows shows), the run state, the error code and instruction index (what the
program's :class:`~vtabench.spec.program.Outcome` says: none, or the code and index of an
illegal stream or an injected response error), and on the RTL the DRAM model's counters:
protocol errors (a burst across 4 KiB, a wrong WLAST...), error responses of a clean run, bytes
written outside the image (stray writes) and a done raised while a burst was still open.

A mismatch names the first differing byte, the element and lane it belongs to, both values, and
the instruction that wrote it (the last STORE in execution order whose rows cover the byte), so a
failure points at an instruction before anyone opens a waveform.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from vtabench.drivers.api import target as target_table
from vtabench.spec.contracts.errors import ErrorCode, describe
from vtabench.spec.isa.asm import format_insn
from vtabench.spec.isa.layout import MemType, Opcode, mem_elem_bytes
from vtabench.spec.tokens import schedule
from vtabench.verify.random_case import buffer_mask

if TYPE_CHECKING:
    from vtabench.spec.config import Config
    from vtabench.spec.isa.insn import Insn
    from vtabench.spec.program import Program


@dataclass
class Mismatch:
    target: str
    byte: int
    expected: int
    got: int
    differing_bytes: int
    writer: int | None  # instruction index
    writer_text: str
    element: str
    reference: str = "fsim"  # what ``expected`` is: fsim's image, or the input image

    def describe(self) -> str:
        who = (f"written by instruction {self.writer} ({self.writer_text})"
               if self.writer is not None else "no instruction writes it (stray write)")
        return (f"{self.target}: first difference at DRAM byte {self.byte:#x} ({self.element}): "
                f"{self.reference} {self.expected:#04x}, {self.target} {self.got:#04x}; {who}; "
                f"{self.differing_bytes} byte(s) differ")


def store_writer(cfg: Config, insns: Sequence[Insn], byte: int) -> tuple[int | None, str]:
    """The last STORE (in execution order) whose DRAM rows cover ``byte``, and its element."""
    eb = mem_elem_bytes(cfg, MemType.OUT)
    elem, lane = divmod(byte, eb)
    where = f"OUT element {elem} byte {lane}"
    for i in reversed(schedule(insns).order):
        insn = insns[i]
        if insn.opcode != Opcode.STORE or not insn.x_size or not insn.y_size:
            continue
        rel = elem - insn.dram_base
        # Rows may overlap (x_stride < x_size): the last row written wins.
        if any(0 <= rel - y * insn.x_stride < insn.x_size for y in range(insn.y_size)):
            return i, where
    return None, where


def first_mismatch(cfg: Config, target: str, insns: Sequence[Insn], expected: np.ndarray,
                   got: np.ndarray) -> Mismatch | None:
    if expected.shape != got.shape:
        raise ValueError(f"{target}: image of {got.size} bytes, expected {expected.size}")
    diff = np.flatnonzero(expected != got)
    if not diff.size:
        return None
    byte = int(diff[0])
    writer, element = store_writer(cfg, insns, byte)
    text = format_insn(cfg, insns[writer]) if writer is not None else ""
    return Mismatch(target, byte, int(expected[byte]), int(got[byte]), int(diff.size), writer,
                    text, element)


@dataclass
class Observation:
    """What a target reported for one program besides its image: ``state`` (done, error,
    timeout, wall-timeout, failed: the target raised), the error code and instruction index,
    and the RTL bench's DRAM-model counters (``dram_proto_err``, ``dram_resp_err``,
    ``stray_writes``, ``dram_open_at_done``)."""

    state: str
    error: int = 0
    index: int | None = None
    counters: dict[str, int] = field(default_factory=dict)
    detail: str = ""


#: RTL bench counters that must stay 0 on every run, with what a nonzero one means.
ALWAYS_ZERO = {"dram_proto_err": "AXI protocol error(s) (4 KiB crossing, WLAST, burst type)",
               "stray_writes": "byte(s) written outside the image",
               "dram_open_at_done": "done raised while a burst was open"}


def golden_image(cfg: Config, prog: Program,
                 observe_alu: Callable[..., None] | None = None) -> np.ndarray:
    """fsim's image after ``prog`` (its input image for an illegal stream, which fsim does not
    run); ``observe_alu`` sees every ALU instruction's operands (functional coverage)."""
    from vtabench.fsim import Fsim

    img = prog.dram.copy()
    if prog.legal:
        Fsim(cfg).run(prog.insns, img, observe_alu=observe_alu)
    return img


def unstored_change(cfg: Config, target: str, prog: Program, got: np.ndarray) -> Mismatch | None:
    """The first byte of ``got`` outside every STORE's rows that differs from ``prog``'s input
    image (no target may write there, whatever the run's outcome)."""
    if got.shape != prog.dram.shape:
        raise ValueError(f"{target}: image of {got.size} bytes, expected {prog.dram.size}")
    stored = buffer_mask(cfg, list(prog.insns), got.size, (Opcode.STORE,))
    diff = np.flatnonzero((got != prog.dram) & ~stored)
    if not diff.size:
        return None
    byte = int(diff[0])
    return Mismatch(target, byte, int(prog.dram[byte]), int(got[byte]), int(diff.size), None, "",
                    "outside every STORE's rows", "input image")


def compare(cfg: Config, target: str, prog: Program, expected: np.ndarray,
            got: np.ndarray) -> Mismatch | None:
    """The first difference of ``got`` from fsim's image, when ``prog`` must run cleanly on
    ``target`` (after an error the image is whatever the target did until it stopped; bytes no
    STORE writes are checked in :func:`run_on_target` after every run); first, a byte fsim's
    ``expected`` changed outside every STORE's rows (reported as fsim's)."""
    want = prog.outcome(target)
    if want is None or want.error != ErrorCode.NONE:
        return None
    return (unstored_change(cfg, "fsim", prog, expected)
            or first_mismatch(cfg, target, prog.insns, expected, got))


def check(target: str, prog: Program, obs: Observation) -> str | None:
    """Why ``obs`` is wrong for ``prog`` on ``target`` (None when it is right)."""
    want = prog.outcome(target)
    if want is None:
        return None
    tag = f"{target} [{prog.kind}]"
    if obs.state not in ("done", "error"):
        return f"{tag}: run ended in state {obs.state}{': ' + obs.detail if obs.detail else ''}"
    problems = []
    got = "no error" if not obs.error else f"{describe(obs.error)} at instruction {obs.index}"
    if obs.error != want.error or (want.indices is not None and obs.error
                                   and obs.index not in want.indices):
        problems.append(f"expected {want.describe()}, got {got}")
    for name, what in ALWAYS_ZERO.items():
        if obs.counters.get(name):
            problems.append(f"{obs.counters[name]} {what}")
    if want.error == ErrorCode.NONE and obs.counters.get("dram_resp_err"):
        problems.append(f"{obs.counters['dram_resp_err']} error response(s) on a clean run")
    return f"{tag}: {'; '.join(problems)}" if problems else None


def run_on_target(cfg: Config, target: str, programs: Sequence[Program], *, seed: int,
                  target_opts: dict[str, Any] | None = None
                  ) -> tuple[list[np.ndarray], list[str | None]]:
    """Run every program on ``target``; returns the DRAM images after the runs (inputs untouched;
    a program the target does not run keeps its input image) and, per program, None or what
    :func:`check` found wrong and a byte the run changed outside every STORE's rows.

    A target with a core bench (rtl) runs the whole list there, in one simulator process, with
    each program's DRAM knobs and placement; the other targets open one device (memory for the
    largest program) and run every program on it.
    """
    images = [p.dram.copy() for p in programs]
    runs = [k for k, p in enumerate(programs) if p.outcome(target) is not None]
    observed = (_observe_bench if target_table(target).bench else _observe_device)(
        cfg, target, [programs[k] for k in runs], [images[k] for k in runs], seed,
        dict(target_opts or {}))
    problems: list[str | None] = [None] * len(programs)
    for k, obs in zip(runs, observed, strict=True):
        stray = unstored_change(cfg, target, programs[k], images[k])
        found = [check(target, programs[k], obs), stray.describe() if stray else None]
        problems[k] = "; ".join(f for f in found if f) or None
    return images, problems


def _observe_bench(cfg: Config, target: str, programs: Sequence[Program],
                   images: list[np.ndarray], seed: int,
                   opts: dict[str, Any]) -> list[Observation]:
    """The target's core bench (the driver table's ``bench``) runs the whole list at once, on
    copies of the images (the programs keep their inputs)."""
    from vtabench.drivers.api import run_on_bench

    if not programs:
        return []
    runs = [replace(p, dram=img) for p, img in zip(programs, images, strict=True)]
    out = []
    for r in run_on_bench(target, cfg, runs, seed=seed, quiet=True, validate=False, **opts):
        out.append(Observation(str(r.get("state")), int(r.get("error") or 0),
                               r.get("error_insn"),
                               {k: int(r.get(k) or 0) for k in (*ALWAYS_ZERO, "dram_resp_err")},
                               f"status {r}" if r.get("state") not in ("done", "error") else ""))
    return out


def _observe_device(cfg: Config, target: str, programs: Sequence[Program],
                    images: list[np.ndarray], seed: int,
                    opts: dict[str, Any]) -> list[Observation]:
    """One device of ``target`` runs the programs one after another. A run error carries the
    code and index the target reported (``code`` and ``index`` of the OpenCL backend's
    KernelRunError, ``insn`` of the rtl driver's DeviceRunError)."""
    from vtabench.drivers.api import (DeviceError, RunTimeoutError, mem_bytes_for, open_device,
                                      run_program)

    if not programs:
        return []
    timeout_s = opts.pop("timeout_s", None)
    codes = [p.encoded(cfg) for p in programs]
    mem = max(mem_bytes_for(p.dram.size, len(c)) for p, c in zip(programs, codes))
    try:
        dev = open_device(target, cfg, mem, **opts)
    except DeviceError as exc:
        return [Observation("failed", detail=str(exc))] * len(programs)
    out = []
    with dev:
        for code, img in zip(codes, images, strict=True):
            try:  # the allocator is reset for each program
                run_program(dev, code, img, timeout_s)
                out.append(Observation("done"))
            except RunTimeoutError as exc:
                out.append(Observation("timeout", detail=str(exc)))
            except DeviceError as exc:
                code_ = getattr(exc, "code", None)
                if code_ is None:
                    out.append(Observation("failed", detail=str(exc)))
                else:
                    index = getattr(exc, "index", getattr(exc, "insn", None))
                    out.append(Observation("error", int(code_), index, detail=str(exc)))
    return out
