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
  two more keep them reached if that timing moves by a cycle or two);
- ``store_pad``: a STORE with a pad (vta_store's pad check, ERR_MEM_TYPE; early in the list, so
  that the next launches clear its error bits again).

And for toggle points (issue #31 part B), the extremes no random program is sure to reach:

- ``long_stream``: 2^LONG_BITS - 1 no-ops of the three stages in turn, then an illegal opcode,
  in a launch of 2^(LONG_BITS + 1) - 1 instructions: the instruction index, error index, count
  and per-stage counter bits below LONG_BITS (the shell bench's long_runs does the same for
  the registers; its core points are not the core bench's);
- ``extreme_<type>_<variant>``: a LOAD of each memory type and a STORE past its buffer, with
  every field all ones (with and without pads) or the bases and sizes whose range sums set the
  remaining bits: the DMAs and the store register the fields and sums before they fail;
- ``loop_extremes`` (valid): reset GEMMs on micro-op slot UOP_DEPTH - 1 whose outer, then inner
  loop runs 2^14 - 1 times with every factor the spec ignores at its largest, then 2 more acc
  writes: the loop counters and offsets, and 2^15 acc writes in one run;
- ``whole_rows`` (valid): one row as long as each buffer under a slow memory (the longest read
  requests) and the out buffer stored twice (write bursts of a whole 4 KiB window);
- ``many_rows`` (valid): one-element rows as many as each buffer holds: the DMAs' and the
  store's row counters at the buffer depths;
- ``store_push_wait`` (valid): the STORE stage pushes one token more than s2g holds while
  compute is busy: its push waits.

The expected error and index of an illegal case come from the validator
(:func:`vtabench.verify.illegal.expected_outcomes`), as for the random generator's defects; a
valid case must run cleanly and leave fsim's image (:func:`run_closure`).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from vtabench.rtl.coverage import RtlCoverage
from vtabench.spec.config import TOKEN_QUEUE_DEPTH, Config
from vtabench.spec.isa.insn import INSN_BYTES, Insn, encode_program
from vtabench.spec.isa.layout import AluOp, MemType, Opcode, insn_layout, mem_depth
from vtabench.spec.program import Origin, Program
from vtabench.verify.builder import ProgramBuilder, Tokens, random_tiles
from vtabench.verify.illegal import expected_outcomes

#: Empty GEMMs between the LOAD and the illegal opcode in the halt cases: 0 .. HALT_DELAYS - 1.
HALT_DELAYS = 5
#: The opcode no instruction kind has (fetch's decode error).
BAD_OPCODE = 7
#: The memory types of the extreme cases (OUT: a STORE).
EXTREME_MEMS = (MemType.INP, MemType.WGT, MemType.UOP, MemType.ACC, MemType.ACC_8BIT,
                MemType.OUT)
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


def _field_max(cfg: Config, op: Opcode, name: str) -> int:
    """The largest value the instruction field ``name`` of ``op`` holds (all ones)."""
    return (1 << next(f.width for f in insn_layout(cfg, op).fields if f.name == name)) - 1


def _legal(name: str, prog: Program, knobs: dict[str, int] | None = None) -> Program:
    """The valid case ``name``: it must run cleanly, its image equal to fsim's."""
    return replace(prog, name=f"closure-{name}", knobs=dict(knobs or {}),
                   origin=Origin(f"closure.{name}"))


def _loop_extremes(cfg: Config) -> Program:
    """Two reset GEMMs on the last micro-op slot: the outer loop, then the inner one, at their
    largest trip count, with every factor at its largest value where the spec ignores it (src
    and wgt of a reset GEMM, the factor of the loop that runs once); dst stays at 0."""
    p = ProgramBuilder(cfg)
    last = mem_depth(cfg, MemType.UOP) - 1
    uops = p.load_uops(last, dst=0)
    top = {f: _field_max(cfg, Opcode.GEMM, f) for f in
           ("iter_out", "iter_in", "dst_factor_out", "dst_factor_in", "src_factor_out",
            "src_factor_in", "wgt_factor_out", "wgt_factor_in")}
    src = (top["src_factor_out"], top["src_factor_in"])
    wgt = (top["wgt_factor_out"], top["wgt_factor_in"])
    p.gemm(uops, (top["iter_out"], 1), dst=(0, top["dst_factor_in"]), src=src, wgt=wgt,
           reset=True)
    p.gemm(uops, (1, top["iter_in"]), dst=(top["dst_factor_out"], 0), src=src, wgt=wgt,
           reset=True)
    p.gemm(uops, (2, 1), reset=True)  # acc writes of the run: past 2 * (2^14 - 1), to 2^15
    p.finish()
    return _legal("loop_extremes", p.build(""))


#: OUT elements left free before each row of whole_rows (100 * 16 B: 25 beats into a window).
_ROW_SKEW = 100
#: Elements of the mid-sized INP load and STORE of whole_rows (896 * 16 B = 0x3800: lengths
#: and beat counts with the bits the whole buffers' powers of two leave 0).
_MID_ROW = 896


def _whole_rows(cfg: Config) -> Program:
    """Each buffer filled by one row as long as the buffer (the longest read requests of each
    DMA, write bursts as long as the 4 KiB window allows), under a slow memory; then every
    acc element reset and the whole out buffer stored as one row, twice; and a row of
    _MID_ROW elements loaded and stored."""
    p = ProgramBuilder(cfg)
    rng = np.random.default_rng(37)
    for mem in (MemType.INP, MemType.WGT, MemType.ACC):
        n = mem_depth(cfg, mem)
        p.load(mem, 0, p.data(mem, random_tiles(cfg, rng, mem, n)), 1, n)
    p.load(MemType.INP, 0, 0, 1, _MID_ROW)
    n = mem_depth(cfg, MemType.OUT)
    uops = p.load_uops(0, dst=0)
    p.gemm(uops, (1, n), dst=(0, 1), reset=True)
    for _ in range(2):  # 16 write bursts: each slot of the W-length FIFO holds a long one
        p.alloc(MemType.OUT, _ROW_SKEW)  # the row starts mid-window: bursts of 39 and 25 beats
        p.store_synced(0, p.alloc(MemType.OUT, n, fill=0x5A), 1, n)
    p.store_synced(0, p.alloc(MemType.OUT, _MID_ROW, fill=0x5A), 1, _MID_ROW)
    p.finish()
    return _legal("whole_rows", p.build(""), {"rd_latency": 300, "wr_latency": 300})


def _many_rows(cfg: Config) -> Program:
    """One-element rows, as many as each buffer holds: a LOAD INP (load DMA), a LOAD UOP and a
    LOAD ACC (compute DMA) and a STORE of the whole out buffer (reset first), under a read
    latency of a few hundred cycles, so that the DMAs' row descriptors in flight fill their
    FIFO and the row counters reach the buffer depths."""
    p = ProgramBuilder(cfg)
    rng = np.random.default_rng(41)
    for mem in (MemType.INP, MemType.UOP, MemType.ACC):
        n = mem_depth(cfg, mem)
        tiles = (rng.integers(0, 1 << 32, n, np.uint32) if mem == MemType.UOP
                 else random_tiles(cfg, rng, mem, n))
        p.load(mem, 0, p.data(mem, tiles), n, 1)
    n = mem_depth(cfg, MemType.OUT)
    uops = p.load_uops(0, dst=0)
    p.gemm(uops, (1, n), dst=(0, 1), reset=True)
    p.store_synced(0, p.alloc(MemType.OUT, n, fill=0x5A), n, 1)
    p.finish()
    return _legal("many_rows", p.build(""), {"rd_latency": 400})


def _store_push_wait(cfg: Config) -> Program:
    """The STORE stage pushes one token more than its s2g queue holds while compute is busy
    with a long reset GEMM: the push of the last one waits for room."""
    p = ProgramBuilder(cfg)
    uops = p.load_uops(0, dst=0)
    p.gemm(uops, (1, 4 * TOKEN_QUEUE_DEPTH), reset=True)
    for _ in range(TOKEN_QUEUE_DEPTH + 1):
        p.noop(MemType.OUT, Tokens(push_prev=True))
    for _ in range(TOKEN_QUEUE_DEPTH + 1):
        p.noop(MemType.UOP, Tokens(pop_next=True))
    p.finish()
    return _legal("store_push_wait", p.build(""))


def _store_pad(cfg: Config) -> Program:
    """A STORE with a pad (vta_store's pad check: ERR_MEM_TYPE)."""
    insns = [Insn(Opcode.STORE, memory_type=MemType.OUT, y_size=1, x_size=1, x_stride=1,
                  x_pad_1=1), Insn(Opcode.FINISH)]
    return _illegal(cfg, "store_pad", insns, np.zeros(cfg.bus_bytes, np.uint8))


#: LOAD / STORE fields set to all ones in the extreme cases, and the pads (set in the "max"
#: variant only: x_size + pads then carries into the 17th bit of the DMA's row sums).
_EXTREME_FIELDS = ("sram_base", "dram_base", "y_size", "x_size", "x_stride")
_PAD_FIELDS = ("y_pad_0", "y_pad_1", "x_pad_0", "x_pad_1")
#: The "end" variant: one element at this SRAM base, past every buffer, so that the range
#: check's sum (sram_base + rows * elements) has its bits 7..15 set but bit 11.
_END_BASE = 0xF780
#: The "prod" variant: 5 rows of 0x64C0 elements 0xBE00 apart, so that the store's range
#: products y * x = 0x1F7C0 and (y - 1) * stride = 0x2F800 set the bits the others leave 0.
_PROD_FIELDS = {"y_size": 5, "x_size": 0x64C0, "x_stride": 0xBE00}
#: The extreme variants: every field all ones with pads ("max"), without ("nopad"), "end"
#: (see _END_BASE) and "prod" (see _PROD_FIELDS).
EXTREME_VARIANTS = ("max", "nopad", "end", "prod")


def _extreme(cfg: Config, mem: MemType, variant: str) -> Program:
    """A LOAD of ``mem`` (or a STORE for OUT) far past its buffer, with its fields at their
    extremes (:data:`EXTREME_VARIANTS`): it fails its pad or range check after its DMA or the
    store has registered the fields and their sums; the next cases' small instructions clear
    the bits again."""
    op = Opcode.STORE if mem == MemType.OUT else Opcode.LOAD
    if variant == "end":
        fields = {"sram_base": _END_BASE, "y_size": 1, "x_size": 1, "x_stride": 1}
    elif variant == "prod":
        fields = dict(_PROD_FIELDS)
    else:
        names = _EXTREME_FIELDS + (_PAD_FIELDS if variant == "max" else ())
        fields = {f: _field_max(cfg, op, f) for f in names}
    insns = [Insn(op, memory_type=mem, **fields), Insn(Opcode.FINISH)]
    return _illegal(cfg, f"extreme_{mem.name.lower()}_{variant}", insns,
                    np.zeros(cfg.bus_bytes, np.uint8))


#: log2 of the instruction index the long stream fails at, plus one (its error index has bits
#: LONG_BITS - 1 .. 0 set); its count is 2^(LONG_BITS + 1) - 1.
LONG_BITS = 16


def _long_stream(cfg: Config) -> Program:
    """No-ops of the three stages in turn (a LOAD INP, an empty GEMM, a STORE, no tokens), the
    instruction at index 2^LONG_BITS - 1 an illegal opcode, then more up to a count of
    2^(LONG_BITS + 1) - 1 (all ones): the instruction counts, indices and fetch's count
    registers through bit LONG_BITS - 1 (the count's through LONG_BITS), and the error index
    2^LONG_BITS - 1."""
    bad = (1 << LONG_BITS) - 1
    count = (1 << (LONG_BITS + 1)) - 1
    kinds = [Insn(Opcode.LOAD, memory_type=MemType.INP), Insn(Opcode.GEMM),
             Insn(Opcode.STORE, memory_type=MemType.OUT)]
    body = encode_program(cfg, kinds)
    code = bytearray(body * (count // len(kinds)) + body[:(count % len(kinds)) * INSN_BYTES])
    code[-INSN_BYTES:] = encode_program(cfg, [Insn(Opcode.FINISH)])
    at = INSN_BYTES * bad  # the first byte holds the opcode (bits 2:0)
    code[at] = (code[at] & ~7) | BAD_OPCODE
    return _illegal(cfg, "long_stream", [], np.zeros(cfg.bus_bytes, np.uint8), bytes(code))


def closure_cases(cfg: Config) -> list[Program]:
    """The directed cases of coverage closure (see the module docstring), in a fixed order."""
    empty = _illegal(cfg, "empty", [], np.zeros(cfg.bus_bytes, np.uint8), b"")
    return [_alu_src_range(cfg), _load_wgt_pad(cfg), _load_inp_sram(cfg), _load_inp_dram(cfg),
            empty,
            _token(cfg, "load_token", MemType.INP, Tokens(pop_prev=True)),
            _token(cfg, "store_token", MemType.OUT, Tokens(push_next=True)), _store_pad(cfg),
            *(_halt(cfg, mem, k) for mem in (MemType.INP, MemType.UOP)
              for k in range(HALT_DELAYS)),
            _long_stream(cfg),
            *(_extreme(cfg, mem, v) for mem in EXTREME_MEMS for v in EXTREME_VARIANTS),
            _loop_extremes(cfg), _whole_rows(cfg), _many_rows(cfg), _store_push_wait(cfg)]


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
    return their verdicts (a valid case's image compared with fsim's) and coverage."""
    from vtabench.verify.regress.diff import compare, golden_image, run_on_target

    cases = closure_cases(cfg)
    with tempfile.TemporaryDirectory(prefix="vtabench-closure-") as tmp:
        dat = Path(tmp) / "coverage.dat"
        images, problems = run_on_target(cfg, TARGET, cases, seed=seed,
                                         target_opts={"coverage": dat})
        cov = RtlCoverage.from_files([dat])
    for k, (case, image) in enumerate(zip(cases, images, strict=True)):
        if case.legal and problems[k] is None:  # a valid case: its image is fsim's
            wrong = compare(cfg, TARGET, case, golden_image(cfg, case), image)
            problems[k] = wrong.describe() if wrong else None
    return ClosureResult([c.name for c in cases], problems, cov)
