"""Directed cases of coverage closure (issue #31): the illegal streams and timings that random
programs reach too rarely for a `make coverage` of any size, run on the same coverage build after
the regression's random programs (`vtabench regress --rtl-coverage`, :func:`run_closure`).

Each case is there for RTL points no random program of a 2000-program run is sure to reach:

- ``alu_src_range``: a tensor ALU whose source index walks past the acc buffer while its
  destination stays inside (vta_compute's source check, line 180);
- ``load_wgt_pad``: a LOAD WGT with a pad, which the load stage's DMA refuses (vta_dma_rd's pad
  check in the load stage);
- ``load_inp_sram`` / ``load_inp_dram``: a LOAD INP ending one element past the inp buffer, and
  one reading one element past the DRAM image (vta_dma_rd's SRAM and DRAM range errors in the
  load stage: the random defects move any LOAD or STORE, mostly not the load stage's);
- ``empty``: a launch of no instruction (vta_fetch's insn_count 0 check);
- ``load_token`` / ``store_token``: a LOAD INP popping from compute's side (prev) and a STORE
  pushing to a next stage it does not have (vta_fetch's token checks of the load and store
  stage);
- ``halt_<stage>_<k>``: a real LOAD of the load (INP) or compute (UOP) stage, ``k`` empty GEMMs,
  then an illegal opcode: fetch's decode error halts the core ``k`` cycles later, so over
  k = 0 .. HALT_DELAYS - 1 the halt lands in each cycle of the DMA's range check (vta_dma_rd's
  S_SUM, S_CMP and S_CHECK to S_IDLE in both instances: measured, k = 0, 1 and 2; the
  two more keep them reached if that timing moves by a cycle or two).

The expected error and index come from the validator (:func:`vtabench.verify.illegal.
expected_outcomes`), as for the random generator's defects.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vtabench.rtl.coverage import RtlCoverage
from vtabench.spec.config import Config
from vtabench.spec.isa.insn import Insn, encode_program
from vtabench.spec.isa.layout import AluOp, MemType, Opcode, insn_layout, mem_depth
from vtabench.spec.program import Origin, Program
from vtabench.verify.builder import ProgramBuilder, Tokens, random_tiles
from vtabench.verify.illegal import expected_outcomes

#: Empty GEMMs between the LOAD and the illegal opcode in the halt cases: 0 .. HALT_DELAYS - 1.
HALT_DELAYS = 5
#: The opcode no instruction kind has (fetch's decode error).
BAD_OPCODE = 7
#: The target the cases are for (the core bench's coverage build).
TARGET = "rtl"


def _illegal(cfg: Config, name: str, insns: list[Insn], dram: np.ndarray,
             code: bytes | None = None) -> Program:
    """The case ``name``: ``code`` (the encoding of ``insns`` when None) with the validator's
    expectation; an error if the stream is valid or breaks a rule no target checks."""
    code = encode_program(cfg, insns) if code is None else code
    expect = expected_outcomes(cfg, code, dram)
    if not expect or expect.get(TARGET) is None:
        raise ValueError(f"closure case {name}: the RTL expects no error ({expect})")
    return Program(f"closure-{name}", insns, dram, code=code, expect=expect,
                   origin=Origin(f"illegal.closure.{name}"))


def _alu_src_range(cfg: Config) -> Program:
    p = ProgramBuilder(cfg)
    uops = p.load_uops(0, dst=0, src=1)
    depth = mem_depth(cfg, MemType.ACC)
    width = next(f.width for f in insn_layout(cfg, Opcode.ALU).fields
                 if f.name == "src_factor_out")
    factor = min(depth - 1, (1 << width) - 1)  # src = 1 + factor * i0: past the buffer at the end
    p.alu(AluOp.ADD, uops, (-(-(depth - 1) // factor) + 1, 1), src=(factor, 0))
    p.finish()
    prog = p.build("")
    return _illegal(cfg, "alu_src_range", prog.insns, prog.dram)


def _load(cfg: Config, mem: MemType, n: int = 2) -> ProgramBuilder:
    """A builder holding ``n`` random tiles of ``mem`` at DRAM element 0."""
    p = ProgramBuilder(cfg)
    p.data(mem, random_tiles(cfg, np.random.default_rng(31), mem, n))
    return p


def _load_wgt_pad(cfg: Config) -> Program:
    p = _load(cfg, MemType.WGT)
    p.load(MemType.WGT, 0, 0, 1, 2, pads=(0, 0, 1, 0))
    p.finish()
    prog = p.build("")
    return _illegal(cfg, "load_wgt_pad", prog.insns, prog.dram)


def _load_inp_sram(cfg: Config) -> Program:
    p = _load(cfg, MemType.INP)
    p.load(MemType.INP, mem_depth(cfg, MemType.INP) - 1, 0, 1, 2)
    p.finish()
    prog = p.build("")
    return _illegal(cfg, "load_inp_sram", prog.insns, prog.dram)


def _load_inp_dram(cfg: Config) -> Program:
    p = _load(cfg, MemType.INP)
    p.load(MemType.INP, 0, 1, 1, 2)  # elements 1 and 2 of an image of two
    p.finish()
    prog = p.build("")
    return _illegal(cfg, "load_inp_dram", prog.insns, prog.dram)


def _token(cfg: Config, name: str, mem: MemType, tok: Tokens) -> Program:
    p = _load(cfg, MemType.INP)
    if mem == MemType.OUT:
        p.store(0, 0, 1, 1, tok=tok)
    else:
        p.load(mem, 0, 0, 1, 1, tok=tok)
    p.finish()
    prog = p.build("")
    return _illegal(cfg, name, prog.insns, prog.dram)


def _halt(cfg: Config, mem: MemType, delay: int) -> Program:
    """A LOAD of ``mem`` (INP or UOP), ``delay`` empty GEMMs, an illegal opcode, FINISH."""
    if mem == MemType.UOP:
        p = ProgramBuilder(cfg)
        p.load_uops(0, dst=[0, 1])
    else:
        p = _load(cfg, mem)
        p.load(mem, 0, 0, 1, 2)
    for _ in range(delay + 1):  # the last one becomes the illegal opcode
        p.gemm((0, 0))
    p.finish()
    prog = p.build("")
    code = bytearray(encode_program(cfg, prog.insns))
    at = 16 * (delay + 1)  # the placeholder's first byte holds the opcode (bits 2:0)
    code[at] = (code[at] & ~7) | BAD_OPCODE
    stage = "load" if mem == MemType.INP else "compute"
    return _illegal(cfg, f"halt_{stage}_{delay}", prog.insns, prog.dram, bytes(code))


def closure_cases(cfg: Config) -> list[Program]:
    """The directed cases of coverage closure (see the module docstring), in a fixed order."""
    empty = _illegal(cfg, "empty", [], np.zeros(cfg.bus_bytes, np.uint8), b"")
    return [_alu_src_range(cfg), _load_wgt_pad(cfg), _load_inp_sram(cfg), _load_inp_dram(cfg),
            empty,
            _token(cfg, "load_token", MemType.INP, Tokens(pop_prev=True)),
            _token(cfg, "store_token", MemType.OUT, Tokens(push_next=True)),
            *(_halt(cfg, mem, k) for mem in (MemType.INP, MemType.UOP)
              for k in range(HALT_DELAYS))]


@dataclass
class ClosureResult:
    """The cases' verdicts (None: as expected) and the coverage of their run."""

    names: list[str]
    problems: list[str | None]
    coverage: RtlCoverage

    @property
    def failed(self) -> list[str]:
        return [f"{n}: {p}" for n, p in zip(self.names, self.problems) if p]

    def summary(self) -> str:
        return (f"closure cases: {len(self.names) - len(self.failed)} of {len(self.names)} "
                f"as expected on {TARGET} (coverage build)"
                + "".join(f"\nFAIL {line}" for line in self.failed))


def run_closure(cfg: Config, seed: int) -> ClosureResult:
    """Run :func:`closure_cases` on the core bench's coverage build (one simulator process) and
    return their verdicts and coverage."""
    from vtabench.verify.regress.diff import run_on_target

    cases = closure_cases(cfg)
    with tempfile.TemporaryDirectory(prefix="vtabench-closure-") as tmp:
        dat = Path(tmp) / "coverage.dat"
        _, problems = run_on_target(cfg, TARGET, cases, seed=seed,
                                    target_opts={"coverage": dat})
        cov = RtlCoverage.from_files([dat])
    return ClosureResult([c.name for c in cases], problems, cov)
