"""Regression cases: a random program and how the bench runs it, or a deliberately broken one.

:func:`random_case` draws a valid program (:func:`~vtabench.verify.random_program.random_program`)
and how the bench runs it (the :class:`~vtabench.spec.program.Program`'s knobs, placement and
expected outcomes):

- memory timing (:func:`random_timing`): read and write latency, read bandwidth gaps, random
  back-pressure on every channel, reads served out of order across IDs; or the default ideal
  memory;
- placement: the instruction stream at any 16-byte alignment after the image (the fetch unit
  sees every lane of a bus beat and streams that cross 4 KiB), the image at a nonzero
  bus-aligned DRAM base; then, in :data:`ANYWHERE` of the cases, the whole program moved by a
  multiple of 4 KiB anywhere in the 64-bit bus space (:func:`move_anywhere`: a random address or
  one of :data:`BASE_PATTERNS`, so that over a regression every address bit of the core takes
  both values), and a DRAM size (dram_size_i) from the image's to the end of the bus;
- now and then (:data:`FAR_RANGE`, with ``anywhere``) a clean program made an RTL-only illegal
  stream, ``illegal.dram_far`` (:func:`far_dram_range`): one LOAD or STORE whose dram_base field
  is anywhere in its 32 bits, far past the image (ERR_DRAM_RANGE at it), so that the field's
  high bits and the range check's sums toggle (the OpenCL kernel addresses DRAM in 32 bits and
  is not held to it; :data:`~vtabench.verify.illegal.FAR_BYTES` bounds the ``dram_range``
  defect that every target checks);
- the image's bytes outside every buffer (no LOAD reads them, no STORE writes them: gaps between
  buffers, store rows' strides, and a tail of 1 to :data:`TAIL_BEATS` bus beats after the last
  buffer) random (:func:`fill_outside_buffers`), so that a target writing where no STORE does
  changes a byte that the regression checks (:func:`~vtabench.verify.regress.diff.compare`);
- now and then one failure the targets must report (:data:`KINDS`): an AXI read error on one
  beat of a LOAD's data that no other LOAD or STORE touches (the LOAD's index) or of the instruction stream, an AXI write error on
  one write burst, a misaligned instruction or DRAM base (ALIGN at index 0), or an illegal
  stream (:mod:`vtabench.verify.illegal`: code and index from the validator).

Response errors and placement are the core bench's: other targets run the program as a valid
one (their :class:`~vtabench.spec.program.Outcome` is a clean run). A move keeps every outcome
(the fault windows move with the program); an illegal stream keeps the image's size as its DRAM
size, so that its DRAM range defects stay errors.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from vtabench.spec.config import Config
from vtabench.spec.contracts.errors import ErrorCode
from vtabench.spec.isa.insn import Insn, decode_program, encode_program
from vtabench.spec.isa.layout import MemType, Opcode, mem_elem_bytes
from vtabench.rtl.simjob import bus_window
from vtabench.spec.program import BUS_END, INSN_ALIGN, Origin, Outcome, Placement, Program
from vtabench.verify.illegal import DEFECTS, expected_outcomes
from vtabench.verify.random_program import random_program

#: Kinds of case beside ``legal`` and their share of the cases (``illegal`` covers every defect).
KINDS = {"illegal": 0.16, "fault.read": 0.05, "fault.fetch": 0.03, "fault.write": 0.05,
         "align.insn": 0.02, "align.dram": 0.02}
#: Share of cases run with the default (ideal) memory timing, and with a nonzero DRAM base.
IDEAL_TIMING = 0.3
MOVED_IMAGE = 0.25
#: Most bus beats of random bytes after the program's image (at least one).
TAIL_BEATS = 4
#: Share of cases moved anywhere in the bus space (:func:`move_anywhere`); of those, the share
#: moved towards a pattern of :data:`BASE_PATTERNS` rather than a random address, and the share
#: that keeps the image's size as the DRAM size.
ANYWHERE = 0.5
PATTERN_BASE = 0.3
IMAGE_SIZE = 0.4
#: Share of the clean cases made ``illegal.dram_far`` (:func:`far_dram_range`), and of those
#: whose field plus x_size passes 2^32 - 1 (else the field is any value of its 32 bits).
FAR_RANGE = 0.05
FAR_TOP = 0.4
#: Addresses and sizes whose bits alternate, or are all set: each bit of an address register
#: takes both values between two of them (the highest is clipped to what fits below 2^64).
BASE_PATTERNS = (0xAAAA_AAAA_AAAA_AAAA, 0x5555_5555_5555_5555, BUS_END - 1)


def random_timing(rng: np.random.Generator) -> dict[str, int]:
    """DRAM knobs of one program: latencies from a cycle to a few hundred, read gaps, stalls
    from none to most cycles, in-order or reordered reads (or {} for the default timing)."""
    if rng.random() < IDEAL_TIMING:
        return {}

    def latency() -> int:
        lo, hi = ((0, 4), (5, 60), (100, 400))[int(rng.choice(3, p=[0.3, 0.4, 0.3]))]
        return int(rng.integers(lo, hi + 1))

    stall = ((0, 0), (1, 64), (128, 230))[int(rng.choice(3, p=[0.35, 0.35, 0.3]))]
    return {"rd_latency": latency(), "wr_latency": latency(),
            "rd_gap": 0 if rng.random() < 0.6 else int(rng.integers(1, 5)),
            "stall": int(rng.integers(stall[0], stall[1] + 1)),
            "rd_reorder": int(rng.random() < 0.5)}


def random_case(cfg: Config, rng: np.random.Generator, anywhere: bool = True) -> Program:
    """A random program with a random run setup (see the module docstring). ``anywhere``:
    False keeps every image within its first 64 bus beats of address 0 (no move: for a bench
    whose memory is small); the program and the draws from ``rng`` are the same either way (a
    move draws from a child of ``rng``)."""
    body = fill_outside_buffers(cfg, random_program(cfg, rng), rng.spawn(1)[0])
    case = replace(body, knobs=random_timing(rng), origin=Origin(),
                   placement=Placement(dram_base=cfg.bus_bytes * int(rng.integers(1, 64))
                                       if rng.random() < MOVED_IMAGE else 0,
                                       insn_pad=16 * int(rng.integers(0, INSN_ALIGN // 16))))
    r, kind = rng.random(), "legal"
    for name, share in KINDS.items():
        if r < share:
            kind = name
            break
        r -= share
    at = case.placement
    if kind == "illegal":
        case = _illegal(cfg, case, rng) or case
    elif kind.startswith("fault."):
        case = _fault(cfg, case, kind, rng)
    elif kind == "align.insn":
        case = replace(case, origin=Origin(kind),
                       placement=replace(at, insn_pad=at.insn_pad + int(rng.integers(1, 16))),
                       expect={"rtl": Outcome(ErrorCode.ALIGN, (0,))})
    elif kind == "align.dram":
        case = replace(case, origin=Origin(kind),
                       placement=replace(at, dram_base=at.dram_base
                                         + int(rng.integers(1, cfg.bus_bytes))),
                       expect={"rtl": Outcome(ErrorCode.ALIGN, (0,))})
    if anywhere:
        child = rng.spawn(1)[0]
        case = far_dram_range(cfg, move_anywhere(cfg, case, child), child)
    return case


def far_dram_range(cfg: Config, case: Program, rng: np.random.Generator) -> Program:
    """A clean ``case`` made ``illegal.dram_far`` in :data:`FAR_RANGE` of the draws: one real
    STORE's (half the time) or LOAD's dram_base field set to a random value of its 32 bits past
    the image (or, in :data:`FAR_TOP` of them, one whose sum with x_size passes 2^32 - 1, the
    range check's widest); the image's size as the DRAM size, so that the core reports
    ERR_DRAM_RANGE at it (what the validator says) before it requests anything. RTL only:
    OpenCL does not run it."""
    if case.kind != "legal" or rng.random() >= FAR_RANGE:
        return case
    # a STORE half the time (a random program has many more LOADs), else a LOAD
    ops = (Opcode.STORE, Opcode.LOAD) if rng.random() < 0.5 else (Opcode.LOAD, Opcode.STORE)
    picks = next((found for op in ops if (found := [
        i for i, insn in enumerate(case.insns)
        if insn.opcode == op and insn.x_size and insn.y_size])), None)
    if not picks:
        return case
    k = picks[int(rng.integers(0, len(picks)))]
    insns = list(case.insns)
    top = (1 << 32) - 1  # dram_base + x_size past it sets the range sums' highest bit
    far = (top - int(rng.integers(0, insns[k].x_size)) if rng.random() < FAR_TOP
           else int(rng.integers(0, top + 1)))
    insns[k] = replace(insns[k], dram_base=far)
    code = encode_program(cfg, insns)
    expect = expected_outcomes(cfg, code, case.dram)
    if not expect:  # the field fell inside the image
        return case
    return replace(case, insns=insns, code=code, origin=Origin("illegal.dram_far"),
                   expect={**expect, "opencl": None},
                   placement=replace(case.placement, dram_size=None))


def _random_u64(rng: np.random.Generator, most: int) -> int:
    """A random integer in [0, most] (most < 2^64), every bit of it random below the top."""
    return int.from_bytes(rng.bytes(8), "little") % (most + 1)


def move_anywhere(cfg: Config, case: Program, rng: np.random.Generator) -> Program:
    """``case`` moved in :data:`ANYWHERE` of the draws: its image, stream and fault windows by
    one multiple of 4 KiB (every offset within a page, the lanes and 4 KiB crossings of the
    stream included, unchanged) towards a random bus address or a pattern of
    :data:`BASE_PATTERNS`, as far as the core bench's window (:func:`bus_window`) still ends
    below 2^64; with a DRAM size drawn from the image's up to the end of the bus (the image's
    for an illegal stream)."""
    if rng.random() >= ANYWHERE:
        return case
    at = case.placement
    start, span = bus_window(case.name, at, case.dram.size, 16 * case.count,
                             at.size(case.dram.size))
    room = (BUS_END - (start + span)) // INSN_ALIGN * INSN_ALIGN
    if rng.random() < PATTERN_BASE:
        to = BASE_PATTERNS[int(rng.integers(0, len(BASE_PATTERNS)))]
    else:
        to = _random_u64(rng, BUS_END - 1)
    shift = min(room, max(0, (to - at.dram_base) // INSN_ALIGN * INSN_ALIGN))
    size = None
    if not case.kind.startswith("illegal.") and rng.random() >= IMAGE_SIZE:
        most = BUS_END - (at.dram_base + shift) - case.dram.size
        extra = (min(BASE_PATTERNS[int(rng.integers(0, len(BASE_PATTERNS)))], most)
                 if rng.random() < PATTERN_BASE else _random_u64(rng, most))
        size = case.dram.size + extra
    knobs = dict(case.knobs)
    if knobs.get("fault_hi"):
        knobs.update(fault_lo=knobs["fault_lo"] + shift, fault_hi=knobs["fault_hi"] + shift)
    return replace(case, knobs=knobs, placement=replace(at, dram_base=at.dram_base + shift,
                                                        dram_size=size))


def _illegal(cfg: Config, body: Program, rng: np.random.Generator) -> Program | None:
    """One defect of :data:`~vtabench.verify.illegal.DEFECTS` applied to ``body`` (a few tries:
    a defect needs an instruction it applies to and must break a rule some target checks).
    Returns ``body`` with the broken stream, its expectations, and the instructions to report:
    the broken ones when they decode, else the valid program's."""
    names = list(DEFECTS)
    for _ in range(8):
        name = names[int(rng.integers(0, len(names)))]
        code = DEFECTS[name](cfg, list(body.insns), body.dram, rng)
        if code is None:
            continue
        expect = expected_outcomes(cfg, code, body.dram)
        if not expect:
            continue
        try:
            insns = decode_program(cfg, code)
        except ValueError:
            insns = body.insns
        return replace(body, insns=insns, code=code, expect=expect,
                       origin=Origin(f"illegal.{name}"))
    return None


def _fault(cfg: Config, body: Program, kind: str, rng: np.random.Generator) -> Program:
    """``body`` with one injected AXI response error of ``kind`` (unchanged when the program
    has nothing to hit)."""
    insns = body.insns
    if kind == "fault.write":
        stores = [i for i, insn in enumerate(insns) if insn.opcode == Opcode.STORE]
        rows = sum(insns[i].y_size for i in stores if insns[i].x_size)
        if not rows:
            return body
        return replace(body, origin=Origin(kind),
                       knobs={**body.knobs, "wr_err_burst": int(rng.integers(1, rows + 1))},
                       expect={"rtl": Outcome(ErrorCode.AXI_WR, tuple(stores))})
    if kind == "fault.fetch":
        start = body.placement.insn_offset(body.dram.size)
        j = int(rng.integers(0, len(insns)))
        beat = (start + 16 * j) // cfg.bus_bytes * cfg.bus_bytes
        first = max(0, (beat - start) // 16)
        return replace(body, origin=Origin(kind), knobs={**body.knobs, "fault_lo": beat,
                                                         "fault_hi": beat + cfg.bus_bytes},
                       expect={"rtl": Outcome(ErrorCode.AXI_RD, tuple(range(first + 1)))})
    owners = beat_owners(cfg, insns, Opcode.LOAD)
    stored = beat_owners(cfg, insns, Opcode.STORE)
    # the window answers writes with SLVERR too: a beat a STORE writes would fail it first
    alone = [(beat, who) for beat, who in owners.items() if len(who) == 1 and beat not in stored]
    if not alone:
        return body
    beat, (index,) = alone[int(rng.integers(0, len(alone)))]
    lo = body.placement.dram_base + beat * cfg.bus_bytes
    return replace(body, origin=Origin(kind), knobs={**body.knobs, "fault_lo": lo,
                                                     "fault_hi": lo + cfg.bus_bytes},
                   expect={"rtl": Outcome(ErrorCode.AXI_RD, (index,))})


def buffer_mask(cfg: Config, insns: list[Insn], size: int,
                ops: tuple[Opcode, ...] = (Opcode.LOAD, Opcode.STORE)) -> np.ndarray:
    """Bytes of an image of ``size`` bytes that the rows of the ``ops`` instructions (LOADs read,
    STOREs write) cover, as a boolean mask."""
    mask = np.zeros(size, bool)
    for insn in insns:
        if insn.opcode not in ops or not insn.x_size or not insn.y_size:
            continue
        eb = mem_elem_bytes(cfg, MemType(insn.memory_type))
        for y in range(insn.y_size):
            start = (insn.dram_base + y * insn.x_stride) * eb
            mask[start:start + insn.x_size * eb] = True
    return mask


def fill_outside_buffers(cfg: Config, body: Program, rng: np.random.Generator) -> Program:
    """``body`` with 1 to TAIL_BEATS bus beats appended to its image and every byte that no LOAD
    or STORE row covers random. The draws come from ``rng`` alone (the caller's stream is not
    touched: the same seed makes the same program as before, on a filled image)."""
    tail = cfg.bus_bytes * int(rng.integers(1, TAIL_BEATS + 1))
    dram = np.concatenate([body.dram, np.zeros(tail, np.uint8)])
    outside = ~buffer_mask(cfg, body.insns, dram.size)
    dram[outside] = rng.integers(0, 256, int(outside.sum()), np.uint8)
    return replace(body, dram=dram)


def beat_owners(cfg: Config, insns: list[Insn], op: Opcode) -> dict[int, set[int]]:
    """Bus beats of the image (byte offset // bus bytes) that the LOADs (or STOREs) touch -> the
    instructions."""
    owners: dict[int, set[int]] = {}
    for i, insn in enumerate(insns):
        if insn.opcode != op or not insn.x_size or not insn.y_size:
            continue
        eb = mem_elem_bytes(cfg, MemType(insn.memory_type))
        for y in range(insn.y_size):
            start = (insn.dram_base + y * insn.x_stride) * eb
            for beat in range(start // cfg.bus_bytes,
                              (start + insn.x_size * eb - 1) // cfg.bus_bytes + 1):
                owners.setdefault(beat, set()).add(i)
    return owners
