"""Differential runs: one program on several targets, DRAM images compared with fsim.

A mismatch names the first differing byte, the element and lane it belongs to, both values, and
the instruction that wrote it (the last STORE in execution order whose rows cover the byte), so a
failure points at an instruction before anyone opens a waveform.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from vtabench.spec.isa.asm import format_insn
from vtabench.spec.isa.layout import MemType, Opcode, mem_elem_bytes
from vtabench.spec.tokens import schedule

if TYPE_CHECKING:
    from vtabench.spec.config import Config
    from vtabench.spec.isa.insn import Insn
    from vtabench.verify.builder import TestProgram


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

    def describe(self) -> str:
        who = (f"written by instruction {self.writer} ({self.writer_text})"
               if self.writer is not None else "no instruction writes it (stray write)")
        return (f"{self.target}: first difference at DRAM byte {self.byte:#x} ({self.element}): "
                f"fsim {self.expected:#04x}, {self.target} {self.got:#04x}; {who}; "
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


def run_on_target(cfg: Config, target: str, programs: Sequence[TestProgram], *, seed: int,
                  target_opts: dict[str, Any] | None = None
                  ) -> tuple[list[np.ndarray], list[str | None]]:
    """Run every program on ``target``; returns the DRAM images after the runs (inputs untouched)
    and, per program, None or why the run did not complete (a core error code, a timeout).

    rtl runs the whole list in one simulator process; opencl opens one device (one kernel build,
    memory for the largest program) and runs every program on it.
    """
    opts = dict(target_opts or {})
    images = [p.dram.copy() for p in programs]
    problems: list[str | None] = [None] * len(programs)
    if target == "rtl":
        from vtabench.targets.rtl.simjob import RawProgram, run_batch

        raws = [RawProgram(p.name, p.insns, img) for p, img in zip(programs, images)]
        for k, r in enumerate(run_batch(cfg, raws, seed=seed, quiet=True, **opts)):
            if r.get("state") != "done":
                problems[k] = (f"rtl: run ended in state {r.get('state')} (error code "
                               f"{r.get('error', 0):#x} at instruction {r.get('error_insn')})")
    elif target == "fsim":
        from vtabench.fsim import Fsim

        for p, img in zip(programs, images):
            Fsim(cfg).run(p.insns, img)
    elif target == "opencl":
        from vtabench.drivers.api import DeviceError, mem_bytes_for, run_program
        from vtabench.drivers.opencl_backend import OpenCLDevice

        opts.pop("waves", None)
        timeout_s = opts.pop("timeout_s", None)
        mem = max((mem_bytes_for(p.dram.size, 16 * len(p.insns)) for p in programs), default=16)
        try:
            dev = OpenCLDevice(cfg, mem, **opts)
        except DeviceError as exc:
            problems = [f"opencl: {exc}"] * len(programs)
        else:
            with dev:
                for k, (p, img) in enumerate(zip(programs, images)):
                    try:  # the allocator is reset for each program
                        run_program(dev, p.insns, img, timeout_s)
                    except DeviceError as exc:
                        problems[k] = f"opencl: {exc}"
    else:
        raise ValueError(f"unknown target {target!r}; expected fsim, rtl or opencl")
    return images, problems
