"""How a regression program is run and what each target must report (beyond its DRAM image).

A :class:`RandomProgram` is a :class:`~vtabench.verify.builder.TestProgram` with a
:class:`RunSetup`: the core bench's DRAM model knobs (timing, injected response errors), where the
bench places the image and the instruction stream, the stream itself when it is not the
encoding of ``insns`` (an illegal opcode cannot be an :class:`~vtabench.spec.isa.insn.Insn`), and
per target the :class:`Outcome` it must end with. A target missing from ``expect`` must run the
program cleanly (no error, the image equal to fsim's); a target mapped to None does not run it
(an illegal stream whose rule only the RTL checks, say).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from vtabench.spec.contracts.errors import ErrorCode, describe
from vtabench.verify.builder import TestProgram

if TYPE_CHECKING:
    from vtabench.spec.config import Config


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
class RunSetup:
    """See the module docstring. ``kind`` names what the generator chose (``legal``,
    ``fault.read``, ``fault.fetch``, ``fault.write``, ``illegal.<defect>``), for reports and
    coverage. ``dram_base`` and ``insn_pad`` are :class:`~vtabench.rtl.simjob.RawProgram`'s;
    ``knobs`` its DRAM knobs (fault addresses are bus addresses, ``dram_base`` included)."""

    kind: str = "legal"
    knobs: dict[str, int] = field(default_factory=dict)
    dram_base: int = 0
    insn_pad: int = 0
    code: bytes | None = None
    expect: dict[str, Outcome | None] = field(default_factory=dict)

    def outcome(self, target: str) -> Outcome | None:
        """What ``target`` must report, or None when it does not run the program."""
        return self.expect.get(target, CLEAN)

    @property
    def legal(self) -> bool:
        """The stream is a valid program (fsim runs it; the minimiser may shrink it)."""
        return not self.kind.startswith("illegal.")


@dataclass
class RandomProgram(TestProgram):
    """A generated program with how to run it (see the module docstring)."""

    setup: RunSetup = field(default_factory=RunSetup)


def setup_of(prog: TestProgram) -> RunSetup:
    """The run setup of ``prog``: its own, or the default (a clean run) for a plain program."""
    return prog.setup if isinstance(prog, RandomProgram) else RunSetup()


def program_code(cfg: Config, prog: TestProgram) -> bytes:
    """The instruction stream a target runs: the setup's, or the encoding of the instructions."""
    from vtabench.spec.isa.insn import encode_program

    code = setup_of(prog).code
    return code if code is not None else encode_program(cfg, prog.insns)
