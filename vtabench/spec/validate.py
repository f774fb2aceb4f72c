"""Program validation (docs/isa.md section 5): hardware never sees a malformed program.

:func:`validate_program` checks every rule and raises :class:`ValidationError` naming the
instruction index, the field and the limit. Instructions are checked in stream order, then the
token protocol is run through :mod:`vtabench.spec.tokens`.

Micro-op index checks do not enumerate loop iterations: indices and factors are non-negative, so
the largest index a micro-op reaches is its own index plus ``(iter_out - 1) * factor_out +
(iter_in - 1) * factor_in``; one vector comparison per GEMM / ALU finds the first micro-op that
overflows. The micro-op buffer is modelled from the DRAM image: LOAD UOP, GEMM and ALU all run in
the compute stage, whose queue is in order, so stream order is their execution order.

``upstream_completion=True`` adds upstream's completion rule (docs/isa.md section 3): upstream's
cores raise "done" when the compute stage executes FINISH, so every STORE must be ordered before
FINISH by the queues and tokens (:func:`check_upstream_completion`). :func:`validate_stream`
checks the rules that need no DRAM image (encoding, routing, FINISH, tokens).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum
from functools import cache

import numpy as np

from vtabench.spec.config import Config
from vtabench.spec.isa.insn import INSN_FIELD_NAMES, EncodeError, Insn, decode_program, decode_uops
from vtabench.spec.isa.layout import (ENUM_FIELDS, AluOp, MemType, Opcode, insn_layout, mem_depth,
                                 mem_elem_bytes)
from vtabench.spec.tokens import (DEFAULT_STAGE_ORDER, POP_QUEUES, PUSH_QUEUES, Stage, TokenQueue,
                                  schedule, stage_of)

TOKEN_FLAGS = ("pop_prev_dep", "pop_next_dep", "push_prev_dep", "push_next_dep")
PAD_FIELDS = ("y_pad_0", "y_pad_1", "x_pad_0", "x_pad_1")
_BUFFER_NAME = {MemType.UOP: "uop", MemType.WGT: "wgt", MemType.INP: "inp", MemType.ACC: "acc",
                MemType.ACC_8BIT: "acc", MemType.OUT: "out"}


class ValidationError(ValueError):
    """A program breaks a rule of docs/isa.md section 5.

    ``index`` is the instruction (None for a whole-program problem such as an empty stream),
    ``field`` the offending field (None when no single field is at fault).
    """

    def __init__(self, message: str, index: int | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.index = index
        self.field = field


def validate_program(cfg: Config, insns: Sequence[Insn],
                     dram_bytes: np.ndarray | bytes | bytearray | memoryview, *,
                     upstream_completion: bool = False) -> None:
    """Check ``insns`` against every rule, with ``dram_bytes`` the device memory image (its
    length is the DRAM size; LOAD UOPs read the micro-ops the index checks use from it).
    ``upstream_completion``: also upstream's completion rule (:func:`check_upstream_completion`)."""
    validated_order(cfg, insns, dram_bytes)
    if upstream_completion:
        check_upstream_completion(insns)


def validate_stream(cfg: Config, insns: Sequence[Insn], *,
                    upstream_completion: bool = False) -> None:
    """The rules that need no DRAM image: encoding, routing, padding of no-ops, FINISH, the
    token protocol (and, with ``upstream_completion``, upstream's completion rule). DRAM ranges
    and micro-op indices are not checked: :func:`validate_program` does."""
    _validated_order(cfg, insns, None, DEFAULT_STAGE_ORDER)
    if upstream_completion:
        check_upstream_completion(insns)


def validate_binary(cfg: Config, data: bytes,
                    dram_bytes: np.ndarray | bytes | bytearray | memoryview, *,
                    upstream_completion: bool = False) -> list[Insn]:
    """Decode a binary instruction stream and validate it; undecodable records are reported as
    ValidationError with their index and field. Returns the instructions."""
    insns = decode_binary(cfg, data)
    validate_program(cfg, insns, dram_bytes, upstream_completion=upstream_completion)
    return insns


def decode_binary(cfg: Config, data: bytes) -> list[Insn]:
    """Decode a binary instruction stream; an undecodable record is a ValidationError with its
    index and field."""
    try:
        return decode_program(cfg, data)
    except EncodeError as exc:
        raise ValidationError(str(exc), exc.index, exc.field) from None


def check_upstream_completion(insns: Sequence[Insn]) -> None:
    """Upstream's completion rule: no STORE can execute after FINISH.

    Upstream's HLS and Chisel cores raise "done" when the compute stage executes FINISH, and
    upstream's C++ functional simulator stops once FINISH is the last instruction executed; a
    STORE that the queues and tokens do not order before FINISH may still be writing when the
    host reads its output. A STORE is ordered before FINISH when a chain of same-queue order
    (each stage runs its instructions in stream order) and tokens (the k-th pop of a queue waits
    for its k-th push) leads from it to FINISH; upstream's runtime builds one by fencing FINISH:
    the last STORE pushes s2g, a compute no-op pops it, then FINISH. Raises ValidationError at
    the first STORE that can run after FINISH. The program must pass the token checks first
    (validate_program or validate_stream)."""
    n = len(insns)
    if n == 0 or insns[-1].opcode != Opcode.FINISH:
        raise ValidationError("the program must end with FINISH", n - 1 if n else None, "opcode")
    result = schedule(insns)
    if result.deadlock is not None:
        d = result.deadlock
        raise ValidationError(f"instruction {d.index}: deadlock: {d.describe()}", d.index, d.flag)
    stages = [stage_of(i) for i in insns]
    stores = [k for k, st in enumerate(stages) if st == Stage.STORE]
    if not stores:
        return
    # Per instruction: for each stage, the last (in that stage's order) instruction of the stage
    # that happens before it, as a position in the stage's list (-1: none). Instructions are
    # visited in an execution order, in which every predecessor comes first.
    pos = [0] * n
    count = [0, 0, 0]
    for k, st in enumerate(stages):
        pos[k] = count[st]
        count[st] += 1
    pushers: dict[TokenQueue, list[int]] = {q: [] for q in TokenQueue}
    for k, insn in enumerate(insns):
        for q in _queues(PUSH_QUEUES, stages[k], insn):
            pushers[q].append(k)
    popped = {q: 0 for q in TokenQueue}
    last_of_stage: list[int | None] = [None, None, None]
    before: list[list[int]] = [[]] * n
    for k in result.order:
        st = stages[k]
        hb = [-1, -1, -1]
        preds = [last_of_stage[st]]
        for q in _queues(POP_QUEUES, st, insns[k]):
            preds.append(pushers[q][popped[q]])
            popped[q] += 1
        for p in preds:
            if p is not None:
                hb = [max(a, b) for a, b in zip(hb, before[p], strict=True)]
        hb[st] = pos[k]
        before[k] = hb
        last_of_stage[st] = k
    done = before[n - 1][Stage.STORE]
    late = [k for k in stores if pos[k] > done]
    if late:
        first = late[0]
        raise ValidationError(
            f"instruction {first} ({_kind(insns[first])}): can execute after FINISH (instruction "
            f"{n - 1}), {len(late)} STORE(s) in all: upstream's cores report done when the compute "
            f"stage executes FINISH; fence it: the last STORE pushes s2g (push_prev_dep), a "
            f"compute no-op pops it (pop_next_dep), then FINISH", first, None)


def _queues(table: dict[tuple[Stage, str], TokenQueue], stage: Stage,
            insn: Insn) -> list[TokenQueue]:
    return [q for (s, flag), q in table.items() if s == stage and getattr(insn, flag)]


def validated_order(cfg: Config, insns: Sequence[Insn],
                    dram_bytes: np.ndarray | bytes | bytearray | memoryview,
                    stage_order: Sequence[Stage] = DEFAULT_STAGE_ORDER) -> list[int]:
    """Validate and return the execution order of :func:`vtabench.spec.tokens.schedule` (with the
    given priority of the stages within a round)."""
    return _validated_order(cfg, insns, _as_bytes_array(dram_bytes), stage_order)


def _validated_order(cfg: Config, insns: Sequence[Insn], dram: np.ndarray | None,
                     stage_order: Sequence[Stage]) -> list[int]:
    """The rules, the DRAM-dependent ones only with an image (``dram``)."""
    n = len(insns)
    if n == 0:
        raise ValidationError("empty program: it must end with exactly one FINISH")
    checker = _Checker(cfg, dram, insns)
    for i, insn in enumerate(insns):
        checker.check(i, insn)
    last = insns[-1]
    if last.opcode != Opcode.FINISH:
        raise ValidationError(f"instruction {n - 1} ({_kind(last)}): opcode: the program must end "
                              f"with FINISH (found none after it)", n - 1, "opcode")
    result = schedule(insns, stage_order=stage_order)
    if result.deadlock is not None:
        d = result.deadlock
        raise ValidationError(f"instruction {d.index} ({_kind(insns[d.index])}): {d.flag}: "
                              f"deadlock: {d.describe()}", d.index, d.flag)
    if result.leftover:
        t = result.leftover[0]
        more = f" ({len(result.leftover) - 1} more left)" if len(result.leftover) > 1 else ""
        raise ValidationError(f"instruction {t.index} ({_kind(insns[t.index])}): {t.flag}: pushes "
                              f"a token into {t.queue} that no instruction pops; every token "
                              f"queue must be empty at the end{more}", t.index, t.flag)
    return result.order


def _as_bytes_array(dram: np.ndarray | bytes | bytearray | memoryview) -> np.ndarray:
    if isinstance(dram, (int, np.integer)):
        raise TypeError("validate_program needs the DRAM image (uint8 array or bytes), not its "
                        "size: the micro-op index checks read the micro-ops LOAD UOPs load from it")
    if isinstance(dram, np.ndarray):
        if dram.dtype != np.uint8 or dram.ndim != 1:
            raise TypeError("the DRAM image must be a 1-D uint8 array")
        return dram
    return np.frombuffer(dram, np.uint8)


def _kind(insn: Insn) -> str:
    try:
        op = Opcode(insn.opcode)
    except ValueError:
        return f"opcode {int(insn.opcode)}"
    if op in (Opcode.LOAD, Opcode.STORE):
        try:
            return f"{op.name} {MemType(insn.memory_type).name}"
        except ValueError:
            return op.name
    if op == Opcode.ALU:
        try:
            return f"ALU {AluOp(insn.alu_opcode).name}"
        except ValueError:
            return op.name
    return op.name


@cache
def _ranges(cfg: Config, op: Opcode) -> tuple[tuple[str, int, int, int, type[IntEnum] | None], ...]:
    """(name, min, max, width, enum or None) of every field of a kind; the opcode is checked
    before the kind is known, so it is left out."""
    return tuple((f.name, *f.value_range, f.width, ENUM_FIELDS.get(f.name))
                 for f in insn_layout(cfg, op).fields if f.name != "opcode")


#: Token flags a stage must leave 0 (docs/isa.md section 3).
_MUST_BE_ZERO = {s: tuple(f for f in TOKEN_FLAGS
                          if (s, f) not in POP_QUEUES and (s, f) not in PUSH_QUEUES)
                 for s in Stage}
_OPCODES = {int(o): o for o in Opcode}
_ENUM_VALUES = {name: frozenset(int(e) for e in enum) for name, enum in ENUM_FIELDS.items()}


class _Checker:
    """Per-instruction rules, with the micro-op buffer model they need."""

    def __init__(self, cfg: Config, dram: np.ndarray | None, insns: Sequence[Insn]) -> None:
        self.cfg = cfg
        self.dram = dram
        self.n = len(insns)
        self.uop = np.zeros(cfg.uop_depth, np.uint32)
        self.uop_written = np.zeros(cfg.uop_depth, bool)
        self.insns = insns
        self.stored: _StoredRanges | None = None  # built at the first LOAD UOP
        self.depth = {m: mem_depth(cfg, m) for m in MemType}
        self.uop_depth = cfg.uop_depth
        self.elem_bytes = {m: mem_elem_bytes(cfg, m) for m in MemType}
        self.ranges = {op: _ranges(cfg, op) for op in Opcode}
        # Per micro-op slice (uop_bgn, uop_end): (all written, max dst, max src, max wgt) for
        # the buffer contents of generation `uop_generation` (bumped by every LOAD UOP).
        self.uop_generation = 0
        self.slice_cache: dict[tuple[int, int], tuple[int, bool, int, int, int]] = {}

    def fail(self, i: int, insn: Insn, field: str | None, msg: str) -> ValidationError:
        where = f"{field}: " if field else ""
        return ValidationError(f"instruction {i} ({_kind(insn)}): {where}{msg}", i, field)

    def check(self, i: int, insn: Insn) -> None:
        op = self._encoding(i, insn)
        self._routing(i, insn, op)
        if self.dram is None:
            return
        if op == Opcode.LOAD or op == Opcode.STORE:
            self._load_store(i, insn, op)
        elif op == Opcode.GEMM or op == Opcode.ALU:
            self._micro_ops(i, insn, op)

    # --- rule 1 ---------------------------------------------------------------------------------
    def _encoding(self, i: int, insn: Insn) -> Opcode:
        try:
            op = _OPCODES[insn.opcode]
        except (KeyError, TypeError):
            raise self.fail(i, insn, "opcode", f"opcode={insn.opcode!r} is not one of "
                            + ", ".join(f"{o.name}={o.value}" for o in Opcode)) from None
        values = insn.__dict__
        for name, lo, hi, width, enum in self.ranges[op]:
            v = values[name]
            t = type(v)
            if (t is int and enum is None and lo <= v <= hi) or t is enum:
                continue  # the common cases (a member of the field's enum is in range)
            if isinstance(v, (bool, float)) or not isinstance(v, (int, np.integer)):
                raise self.fail(i, insn, name, f"{name}={v!r} is not an integer")
            if enum is not None:
                if v not in _ENUM_VALUES[name]:
                    raise self.fail(i, insn, name, f"{name}={v!r} is not one of " + ", ".join(
                        f"{e.name}={e.value}" for e in enum))
            elif not lo <= v <= hi:
                raise self.fail(i, insn, name, f"{name}={v} outside [{lo}, {hi}] ({width} bits)")
        return op

    # --- rules 2 and 3 --------------------------------------------------------------------------
    def _routing(self, i: int, insn: Insn, op: Opcode) -> None:
        if op == Opcode.FINISH:
            for name in INSN_FIELD_NAMES:
                if name != "opcode" and getattr(insn, name):
                    raise self.fail(i, insn, name, f"FINISH must have every field but the opcode "
                                    f"0, found {name}={int(getattr(insn, name))}")
            if i != self.n - 1:
                raise self.fail(i, insn, "opcode", f"FINISH must be the last instruction "
                                f"(and appear once); {self.n - 1 - i} instruction(s) follow it")
            return
        if op == Opcode.LOAD and insn.memory_type == MemType.OUT:
            raise self.fail(i, insn, "memory_type", "LOAD cannot target OUT (allowed: UOP, WGT, "
                            "INP, ACC, ACC_8BIT)")
        if op == Opcode.STORE and insn.memory_type != MemType.OUT:
            raise self.fail(i, insn, "memory_type", f"STORE must use memory_type=OUT, found "
                            f"{MemType(insn.memory_type).name}")
        if op == Opcode.ALU and insn.reset_reg:
            raise self.fail(i, insn, "reset_reg", "ALU must have reset_reg=0 (only GEMM resets)")
        stage = stage_of(insn)
        for flag in _MUST_BE_ZERO[stage]:
            if getattr(insn, flag):
                raise self.fail(i, insn, flag, f"{flag} must be 0 for an instruction of the "
                                f"{stage.name.lower()} stage (no such token queue)")
        if op in (Opcode.LOAD, Opcode.STORE):
            noop = insn.x_size == 0 or insn.y_size == 0
            pads_forbidden = (op == Opcode.STORE or noop
                              or insn.memory_type in (MemType.UOP, MemType.WGT))
            if pads_forbidden:
                for pad in PAD_FIELDS:
                    if getattr(insn, pad):
                        why = ("a no-op (x_size or y_size 0)" if noop else
                               "a STORE" if op == Opcode.STORE else
                               f"a {MemType(insn.memory_type).name} load")
                        raise self.fail(i, insn, pad, f"{pad}={getattr(insn, pad)} but {why} "
                                        f"must have all pads 0")

    # --- rules 4 (LOAD / STORE) and 5 -----------------------------------------------------------
    def _load_store(self, i: int, insn: Insn, op: Opcode) -> None:
        if insn.x_size == 0 or insn.y_size == 0:
            return
        mem = MemType(insn.memory_type)
        depth = self.depth[mem]
        if op == Opcode.LOAD:
            row = insn.x_pad_0 + insn.x_size + insn.x_pad_1
            count = (insn.y_pad_0 + insn.y_size + insn.y_pad_1) * row
            what = "writes"
        else:
            count = insn.y_size * insn.x_size
            what = "reads"
        if insn.sram_base + count > depth:
            raise self.fail(i, insn, "sram_base", f"{what} {_BUFFER_NAME[mem]} elements "
                            f"{insn.sram_base}..{insn.sram_base + count - 1} but the buffer has "
                            f"{depth} (limit: sram_base + {count} <= {depth})")
        eb = self.elem_bytes[mem]
        last = insn.dram_base + (insn.y_size - 1) * insn.x_stride + insn.x_size - 1
        if (last + 1) * eb > self.dram.size:
            access = "reads" if op == Opcode.LOAD else "writes"
            raise self.fail(i, insn, "dram_base", f"{access} DRAM bytes up to "
                            f"{(last + 1) * eb - 1} (element {last} of {eb} bytes) but the DRAM "
                            f"image has {self.dram.size} bytes")
        if op == Opcode.LOAD and mem == MemType.UOP:
            self._load_uops(i, insn)

    def _load_uops(self, i: int, insn: Insn) -> None:
        eb = self.cfg.uop_elem_bytes
        starts = (insn.dram_base + np.arange(insn.y_size, dtype=np.int64) * insn.x_stride) * eb
        if self.stored is None:
            self.stored = _StoredRanges(self.cfg, self.insns)
        if self.stored.overlaps(starts, starts + insn.x_size * eb):
            raise self.fail(i, insn, "dram_base", "LOAD UOP reads DRAM that a STORE of this "
                            "program writes; micro-ops are validated from the DRAM image before "
                            "the run, so a program must not compute its own micro-ops")
        rows = starts[:, None] + np.arange(insn.x_size * eb)[None, :]
        words = self.dram[rows.reshape(-1)].view("<u4")
        dst = slice(insn.sram_base, insn.sram_base + words.size)
        self.uop[dst] = words
        self.uop_written[dst] = True
        self.uop_generation += 1

    # --- rule 4 (micro-op loops) ----------------------------------------------------------------
    def _micro_ops(self, i: int, insn: Insn, op: Opcode) -> None:
        if insn.uop_end > self.uop_depth:
            raise self.fail(i, insn, "uop_end", f"uop_end={insn.uop_end} exceeds the micro-op "
                            f"buffer depth {self.uop_depth}")
        if insn.uop_bgn > insn.uop_end:
            raise self.fail(i, insn, "uop_bgn", f"uop_bgn={insn.uop_bgn} > uop_end={insn.uop_end}")
        if insn.iter_out == 0 or insn.iter_in == 0 or insn.uop_bgn == insn.uop_end:
            return
        written, max_dst, max_src, max_wgt = self._slice_summary(insn.uop_bgn, insn.uop_end)
        if not written:
            unwritten = np.flatnonzero(~self.uop_written[insn.uop_bgn:insn.uop_end])
            raise self.fail(i, insn, "uop_bgn", f"micro-op slot {insn.uop_bgn + unwritten[0]} "
                            f"(of {insn.uop_bgn}..{insn.uop_end - 1}) is read before any LOAD UOP "
                            f"wrote it")
        acc_depth = self.depth[MemType.ACC]
        checks = [("dst_idx", 0, max_dst, "dst", "acc", acc_depth,
                   insn.dst_factor_out, insn.dst_factor_in)]
        if op == Opcode.GEMM and not insn.reset_reg:
            checks += [("src_idx", 1, max_src, "src", "inp", self.depth[MemType.INP],
                        insn.src_factor_out, insn.src_factor_in),
                       ("wgt_idx", 2, max_wgt, "wgt", "wgt", self.depth[MemType.WGT],
                        insn.wgt_factor_out, insn.wgt_factor_in)]
        elif op == Opcode.ALU and not insn.use_imm:
            checks.append(("src_idx", 1, max_src, "src", "acc", acc_depth,
                           insn.src_factor_out, insn.src_factor_in))
        for name, k, top, factor, buf, depth, fo, fi in checks:
            reach = (insn.iter_out - 1) * fo + (insn.iter_in - 1) * fi
            if top + reach < depth:
                continue
            idx = self._uop_fields(insn.uop_bgn, insn.uop_end)[k]
            u = int(np.flatnonzero(idx + reach >= depth)[0])
            raise self.fail(i, insn, name, f"micro-op slot {insn.uop_bgn + u} ({name}="
                            f"{int(idx[u])}) reaches {buf} index {int(idx[u]) + reach} at "
                            f"i0={insn.iter_out - 1}, i1={insn.iter_in - 1} ({factor}_factor_"
                            f"out={fo}, {factor}_factor_in={fi}); the {buf} buffer has "
                            f"{depth} elements")

    def _uop_fields(self, bgn: int, end: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return decode_uops(self.cfg, self.uop[bgn:end])

    def _slice_summary(self, bgn: int, end: int) -> tuple[bool, int, int, int]:
        """(every slot written, max dst, max src, max wgt) of micro-op slots [bgn, end).

        Cached per slice until the next LOAD UOP: kernels are loaded once and run many times.
        """
        hit = self.slice_cache.get((bgn, end))
        if hit is not None and hit[0] == self.uop_generation:
            return hit[1:]
        written = bool(self.uop_written[bgn:end].all())
        dst, src, wgt = self._uop_fields(bgn, end)
        summary = (written, int(dst.max()), int(src.max()), int(wgt.max()))
        self.slice_cache[(bgn, end)] = (self.uop_generation, *summary)
        return summary


class _StoredRanges:
    """The DRAM byte ranges the STOREs of a program write, for overlap queries."""

    def __init__(self, cfg: Config, insns: Sequence[Insn]) -> None:
        eb = cfg.out_elem_bytes
        stores = [(i.dram_base, i.y_size, i.x_size, i.x_stride) for i in insns
                  if i.opcode == Opcode.STORE and i.x_size and i.y_size]
        base, rows, size, stride = (np.array(c, np.int64).reshape(-1) for c in zip(*stores)) \
            if stores else (np.zeros(0, np.int64),) * 4
        row = np.repeat(np.arange(rows.size), rows)  # one entry per stored row
        first = np.repeat(np.cumsum(rows) - rows, rows)
        start = (base[row] + (np.arange(row.size) - first) * stride[row]) * eb
        end = start + size[row] * eb
        by_start = np.argsort(start, kind="stable")
        self.starts = start[by_start]
        self.max_end = np.maximum.accumulate(end[by_start]) if end.size else end

    def overlaps(self, lo: np.ndarray, hi: np.ndarray) -> bool:
        """Whether any byte range [lo, hi) meets a stored range."""
        if not self.starts.size:
            return False
        k = np.searchsorted(self.starts, hi, side="left")  # stored ranges starting before hi
        return bool(np.any((k > 0) & (self.max_end[np.maximum(k - 1, 0)] > lo)))
