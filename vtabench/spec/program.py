"""The VTA program: the one record that every producer hands on and every consumer takes.

It is the stage of the flow between the compiler and the runtime (docs/dev/flow.md). Producers:
the builder and the directed, smoke, perf and random programs (:mod:`vtabench.verify`), the
regression's cases, the compiler's packages (:mod:`vtabench.graph.package` holds one per sync).
Consumers: fsim, the driver API (``run_program``, ``run_programs``, the core bench of a target),
the OpenCL batch launch, the regression's checks.

A :class:`Program` is

- its instructions: ``insns`` (decoded), and ``code``, the encoded stream when it is not the
  encoding of ``insns`` (an illegal opcode cannot be an :class:`~vtabench.spec.isa.insn.Insn`)
  or when only the stream is known (a package's programs: ``insns`` is empty);
- its DRAM image ``dram`` (uint8, from byte 0 of the program's DRAM): the data and the micro-op
  tables, which LOAD UOP instructions fetch from there like any tile (there is no separate
  micro-op store). A package's programs share the package's image (``dram`` is empty);
- where a bench places image and stream in bus memory (:class:`Placement`) and the memory timing
  of its run (``knobs``: the core bench's DRAM model knobs) and its cycle bound;
- what it must end with, per target, where that is known (``expect``: a target missing from it
  must run the program cleanly, its image equal to fsim's; one mapped to None does not run it);
- its ``name``, and for a generated program where it came from (:class:`Origin`).

Numpy and spec only: the OpenCL card path imports it where nothing else is installed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from vtabench.spec.contracts.errors import ErrorCode, describe
from vtabench.spec.isa.insn import INSN_BYTES, Insn, encode_program

if TYPE_CHECKING:
    from vtabench.spec.config import Config

#: The instruction stream starts at a multiple of this after the image (plus ``insn_pad``).
INSN_ALIGN = 4096
#: One past the last bus address (the core's AXI addresses are 64 bits). A placement's ranges
#: end at or below it: docs/isa.md and docs/rtl.md define no range that wraps past 2^64 (the
#: DRAM range is "dram_size bytes from dram_base"), so a bench never asks for one.
BUS_END = 1 << 64


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


@dataclass(frozen=True)
class Placement:
    """Where a bench puts a program in bus memory: the image at bus address ``dram_base``
    (anywhere below :data:`BUS_END`; dram_base fields of the instructions are element indices
    from it; bus-aligned or not), the instruction stream ``insn_pad`` bytes after the next 4 KiB
    boundary past the image (any 16-byte alignment, or a misaligned one), and ``dram_size``, the
    bytes from ``dram_base`` the core may touch (its dram_size_i; None: the image's size, what
    the validator checks DRAM ranges against). A larger size changes nothing for a valid
    program (it touches only its image); with None, a LOAD or STORE past the image is the
    core's DRAM range error."""

    dram_base: int = 0
    insn_pad: int = 0
    dram_size: int | None = None

    def insn_offset(self, image_bytes: int) -> int:
        """Bus address of the instruction stream for an image of ``image_bytes``."""
        return _align(self.dram_base + max(image_bytes, 1), INSN_ALIGN) + self.insn_pad

    def size(self, image_bytes: int) -> int:
        """The DRAM size the core checks against (dram_size_i) for an image of ``image_bytes``."""
        return image_bytes if self.dram_size is None else self.dram_size


@dataclass(frozen=True)
class Outcome:
    """What a run must end with: ``error`` (ErrorCode.NONE: a clean run whose image is compared
    with fsim's) and the error indices that are right (None: any; the index of an AXI write
    error, say, depends on timing)."""

    error: ErrorCode = ErrorCode.NONE
    indices: tuple[int, ...] | None = None

    def describe(self) -> str:
        if self.error == ErrorCode.NONE:
            return "a clean run"
        where = ("" if self.indices is None else f" at instruction {self.indices[0]}"
                 if len(self.indices) == 1 else
                 f" at one of instructions {', '.join(map(str, self.indices[:6]))}"
                 + (" ..." if len(self.indices) > 6 else ""))
        return describe(self.error) + where


CLEAN = Outcome()


@dataclass(frozen=True)
class Origin:
    """Where a generated program came from: ``kind``, what the generator chose (``legal``,
    ``fault.read``, ``fault.fetch``, ``fault.write``, ``align.insn``, ``align.dram``,
    ``illegal.<defect>``: for reports and coverage), and the regression run's ``seed`` and the
    program's ``index`` in it (it is regenerated from these two alone)."""

    kind: str = "legal"
    seed: int | None = None
    index: int | None = None


@dataclass
class Program:
    """A VTA program (see the module docstring)."""

    name: str
    insns: list[Insn]
    dram: np.ndarray  # uint8
    code: bytes | None = None
    placement: Placement = Placement()
    knobs: dict[str, int] = field(default_factory=dict)
    max_cycles: int | None = None
    expect: dict[str, Outcome | None] = field(default_factory=dict)
    origin: Origin | None = None

    def encoded(self, cfg: Config) -> bytes:
        """The instruction stream a target runs: ``code``, or the encoding of ``insns``."""
        return self.code if self.code is not None else encode_program(cfg, self.insns)

    @property
    def count(self) -> int:
        """Instructions in the stream."""
        return len(self.code) // INSN_BYTES if self.code is not None else len(self.insns)

    @property
    def kind(self) -> str:
        """What the generator chose (``legal`` for a program no generator made)."""
        return self.origin.kind if self.origin is not None else "legal"

    @property
    def legal(self) -> bool:
        """The stream is a valid program (fsim runs it; the minimiser may shrink it)."""
        return not self.kind.startswith("illegal.")

    def outcome(self, target: str) -> Outcome | None:
        """What ``target`` must report, or None when it does not run the program."""
        return self.expect.get(target, CLEAN)
