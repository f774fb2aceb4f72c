"""Random programs: valid programs in double-buffered chunks whose tokens let the load, compute
and store stages overlap (the regression's and the cross-target tests' generator).

Now and then a program starts by filling one token queue to its capacity and draining it
(:func:`fill_token_queue`), by pushing into a full one (:func:`overfill_token_queue`), or by
filling one stage's command queue (:func:`fill_command_queue`); a padded
load is placed between live data in its buffer, so an off-by-one in the padding clobbers (or
leaves stale) elements that are read later; and a chunk loads as ACC_8BIT what the store of two
chunks before wrote (DRAM read after write, ordered by the s2g token).

Every field the spec ignores takes random values (:func:`randomize_ignored`): the source and
weight indices (micro-op fields and loop factors) of a reset GEMM, the source index of an
immediate ALU, the weight index of every ALU micro-op, the immediate of an ALU without one, and
the reserved bits of every instruction but FINISH (whose other bits must be 0). They are drawn
from a generator spawned from the seed's, so a seed still gives the program it gave before
these fields were random, and the draws that follow it are unchanged.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import Callable

import numpy as np

from vtabench.spec.config import CMD_QUEUE_DEPTH, TOKEN_QUEUE_DEPTH, Config
from vtabench.spec.contracts.stages import QUEUE_ENDS, Stage, TokenQueue
from vtabench.spec.isa.insn import Insn, encode_words
from vtabench.spec.isa.layout import (
    AluOp,
    MemType,
    Opcode,
    insn_layout,
    mem_depth,
    uop_layout,
)
from vtabench.spec.program import Program
from vtabench.verify.builder import (
    NO_TOKENS,
    ProgramBuilder,
    Tokens,
    extreme_acc,
    random_tiles,
)


def _random_2d(rng: np.random.Generator, limit: int,
               pads: bool) -> tuple[int, int, tuple[int, int, int, int]]:
    """(y_size, x_size, pads) of a load writing at most ``limit`` (>= 1) elements; now and then
    one side gets the largest pad (15)."""
    if pads and limit >= 16 and rng.random() < 0.08:
        big = [0, 0, 0, 0]
        big[int(rng.integers(0, 4))] = 15
        return 1, 1, tuple(big)  # type: ignore[return-value]
    while True:
        y = int(rng.integers(1, 4) if rng.random() < 0.8 else rng.integers(4, 9))
        x = int(rng.integers(1, 9))
        p = tuple(int(v) for v in rng.integers(0, 3, 4)) if pads and rng.random() < 0.6 else (
            0, 0, 0, 0)
        if (p[0] + y + p[1]) * (p[2] + x + p[3]) <= limit:
            return y, x, p  # type: ignore[return-value]


def _random_loop(rng: np.random.Generator,
                 limits: list[int]) -> tuple[tuple[int, int], list[tuple[int, int]],
                                             list[np.ndarray]]:
    """Random loop counts, factors and micro-op indices keeping field k below ``limits[k]``."""
    iters = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    count = int(rng.integers(1, 6))
    factors, indices = [], []
    for limit in limits:
        fo, fi = (int(v) for v in rng.integers(0, 3, 2))
        if (iters[0] - 1) * fo + (iters[1] - 1) * fi >= limit:
            fo = fi = 0
        reach = (iters[0] - 1) * fo + (iters[1] - 1) * fi
        factors.append((fo, fi))
        indices.append(rng.integers(0, limit - reach, count))
    return iters, factors, indices


def _fill_buffers(p: ProgramBuilder, rng: np.random.Generator) -> None:
    """Edge case prologue: loads that fill whole buffers (the largest legal sizes), one of
    them 2-D. The chunks that follow overwrite whatever they later read."""
    cfg = p.cfg
    for mem in rng.permutation([MemType.UOP, MemType.INP, MemType.ACC, MemType.WGT])[:2]:
        mem = MemType(int(mem))
        depth = mem_depth(cfg, mem)
        rows = 2 if rng.random() < 0.5 else 1
        if mem == MemType.UOP:
            data = p.uop_table(np.zeros(depth, np.int64))[0]
        else:
            data = p.data(mem, random_tiles(cfg, rng, mem, depth))
        p.load(mem, 0, data, rows, depth // rows)


#: A no-op of each stage is a LOAD (or STORE) of this memory type with x_size 0.
NOOP_MEM = {Stage.LOAD: MemType.INP, Stage.COMPUTE: MemType.ACC, Stage.STORE: MemType.OUT}


def _tokens(flag: str) -> Tokens:
    """The Tokens that set one instruction flag (``pop_prev_dep`` ...)."""
    return Tokens(**{flag.removesuffix("_dep"): True})


def fill_token_queue(p: ProgramBuilder, queue: TokenQueue) -> None:
    """Prologue: the producer of ``queue`` pushes TOKEN_QUEUE_DEPTH tokens, then runs
    CMD_QUEUE_DEPTH + 1 plain no-ops before the consumer's pops appear in the stream. Fetch
    routes the first pop only once the producer's command queue has room for its last no-op,
    that is once the producer has taken TOKEN_QUEUE_DEPTH + 1 instructions: its last push has
    completed, with the queue full. A queue that holds one token less blocks the producer on
    that push, fetch on the full command queue, and the program deadlocks."""
    ends = QUEUE_ENDS[queue]
    for _ in range(TOKEN_QUEUE_DEPTH):
        p.noop(NOOP_MEM[ends.producer], _tokens(ends.push_flag))
    for _ in range(CMD_QUEUE_DEPTH + 1):
        p.noop(NOOP_MEM[ends.producer], NO_TOKENS)
    for _ in range(TOKEN_QUEUE_DEPTH):
        p.noop(NOOP_MEM[ends.consumer], _tokens(ends.pop_flag))


def overfill_token_queue(p: ProgramBuilder, rng: np.random.Generator, queue: TokenQueue) -> None:
    """Prologue: while the consumer of ``queue`` is busy (a long reset GEMM, full-buffer loads
    or stores; thousands of cycles), the producer pushes TOKEN_QUEUE_DEPTH plus a few tokens, so
    it finds the queue full and must wait until the consumer pops. A producer that pushes into a
    full queue anyway loses tokens and the consumer's last pops deadlock."""
    cfg = p.cfg
    ends = QUEUE_ENDS[queue]
    extra = int(rng.integers(1, 9))
    if ends.consumer == Stage.COMPUTE:  # 64 x 64 iterations that zero acc[0] and out[0]
        p.gemm(p.load_uops(0, dst=0), (64, 64), reset=True)
    elif ends.consumer == Stage.LOAD:  # four loads of the whole inp buffer
        n = mem_depth(cfg, MemType.INP)
        data = p.data(MemType.INP, random_tiles(cfg, rng, MemType.INP, n))
        for _ in range(4):
            p.load(MemType.INP, 0, data, 1, n)
    else:  # four stores of the whole out buffer, zeroed first by a reset GEMM
        n = mem_depth(cfg, MemType.OUT)
        p.gemm(p.load_uops(0, dst=0), (n, 1), dst=(1, 0), reset=True,
               tok=Tokens(push_next=True))
        out = p.alloc(MemType.OUT, n)
        p.store(0, out, 1, n, tok=Tokens(pop_prev=True))
        for _ in range(3):
            p.store(0, out, 1, n)
    for _ in range(TOKEN_QUEUE_DEPTH + extra):
        p.noop(NOOP_MEM[ends.producer], _tokens(ends.push_flag))
    for _ in range(TOKEN_QUEUE_DEPTH + extra):
        p.noop(NOOP_MEM[ends.consumer], _tokens(ends.pop_flag))


def fill_command_queue(p: ProgramBuilder, rng: np.random.Generator, queue: TokenQueue) -> None:
    """Prologue: the consumer of ``queue`` waits for a token at the head of its command queue
    while CMD_QUEUE_DEPTH - 1 more of its instructions queue up behind it; the producer's push
    comes only after them in the stream. Fetch routes the push only if the consumer's command
    queue holds all CMD_QUEUE_DEPTH of them: one entry less and the program deadlocks.

    As many instructions of the consumer follow the push. A load or compute consumer loads one
    element at its head and every 64th instruction (into element 0, which the chunks overwrite
    before reading it): the stage needs read data while fetch, stalled on its full queue, still
    has hundreds of instructions to read ahead, so a fetch that asks for more instruction beats
    than it can hold blocks that data behind its own."""
    ends = QUEUE_ENDS[queue]
    mem = NOOP_MEM[ends.consumer]
    for k in range(2 * CMD_QUEUE_DEPTH):
        if k == CMD_QUEUE_DEPTH:
            p.noop(NOOP_MEM[ends.producer], _tokens(ends.push_flag))
        tok = _tokens(ends.pop_flag) if k == 0 else NO_TOKENS
        if k % 64 == 0 and mem != MemType.OUT:
            p.load(mem, 0, p.data(mem, random_tiles(p.cfg, rng, mem, 1)), 1, 1, tok=tok)
        else:
            p.noop(mem, tok)


def _padded_between(p: ProgramBuilder, rng: np.random.Generator, mem: MemType, base: int,
                    half: int, tok: Tokens, source: Callable[[int], int]) -> int:
    """Loads into [base, base + n) of ``mem``'s buffer: a random (padded) 2-D load and, in
    about half of the chunks, plain loads of live data right before and after its region,
    issued first, so that the padded load is the one that could overwrite them. ``source(k)``
    is the dram_base of k elements of data; ``tok`` goes on the first load of the stream.
    Returns n."""
    before, after = ((int(rng.integers(0, 3)), int(rng.integers(1, 4)))
                     if rng.random() < 0.5 else (0, 0))
    y, x, pads = _random_2d(rng, half - before - after, pads=True)
    stride = x + int(rng.integers(0, 3)) if mem == MemType.INP else x
    region = (pads[0] + y + pads[1]) * (pads[2] + x + pads[3])
    data = source((y - 1) * stride + x)
    for start, count in rng.permutation(np.array([(base, before),
                                                  (base + before + region, after)])):
        if count:
            p.load(mem, int(start), source(int(count)), 1, int(count), tok=tok)
            tok = NO_TOKENS
    p.load(mem, base + before, data, y, x, stride, pads, tok=tok)
    return before + region + after


def randomize_ignored(cfg: Config, insns: list[Insn], dc: np.random.Generator) -> bytes:
    """Random values in the instruction fields the spec ignores (the loop factors of indices a
    reset GEMM or an immediate ALU does not read, the immediate of an ALU without one; changed
    in ``insns``), and the stream encoded with random reserved bits (FINISH keeps them 0).

    The draws, in order: each ignored field's value (instruction by instruction), then 16 bytes
    of noise per instruction but FINISH, in stream order, taken as one ``dc.bytes`` call (the
    same bytes as one call per instruction: ``bytes`` draws whole 32-bit words)."""
    ranges: dict[tuple[Opcode, str], tuple[int, int]] = {}
    for insn in insns:
        if insn.opcode == Opcode.GEMM and insn.reset_reg:
            names = _IGNORED_BY_RESET_GEMM
        elif insn.opcode == Opcode.ALU:
            names = _IGNORED_BY_IMM_ALU if insn.use_imm else _IGNORED_BY_ALU
        else:
            continue
        for name in names:
            bounds = ranges.get((insn.opcode, name))
            if bounds is None:
                bounds = ranges[(insn.opcode, name)] = insn_layout(
                    cfg, insn.opcode).field(name).value_range
            setattr(insn, name, int(dc.integers(bounds[0], bounds[1] + 1)))
    words = encode_words(cfg, insns)
    ops = (words[:, 0] & np.uint64(0b111)).astype(np.int64)
    noisy = np.flatnonzero(ops != Opcode.FINISH)
    noise = np.frombuffer(dc.bytes(16 * noisy.size), "<u8").reshape(-1, 2)
    words[noisy] |= noise & _unused_words(cfg)[ops[noisy]]
    return words.tobytes()


_IGNORED_BY_RESET_GEMM = ("src_factor_out", "src_factor_in", "wgt_factor_out", "wgt_factor_in")
_IGNORED_BY_IMM_ALU = ("src_factor_out", "src_factor_in")
_IGNORED_BY_ALU = ("imm",)


@lru_cache(maxsize=None)
def _unused_words(cfg: Config) -> np.ndarray:
    """(opcode, word) -> the reserved bits of that word of an instruction of that kind."""
    table = np.zeros((max(Opcode) + 1, 2), np.uint64)
    for op in Opcode:
        table[op] = insn_layout(cfg, op).unused_words
    return table


def random_program(cfg: Config, rng: np.random.Generator) -> Program:
    """A valid random program in chunks whose tokens let load, compute and store overlap.

    Each chunk loads inp and wgt into one of two buffer halves (load stage), loads acc and runs
    random GEMMs and ALUs in one of two acc halves (compute), and stores that half (store).
    Tokens: compute pops the chunk's l2g; a load reusing a half pops the g2l that compute pushed
    two chunks earlier; compute reusing an acc half pops the s2g its last store pushed.
    """
    p = ProgramBuilder(cfg)
    dc = rng.spawn(1)[0]  # the ignored fields (see the module docstring)
    ulay = uop_layout(cfg)

    def ignored(field_max: int, like: np.ndarray | int) -> np.ndarray:
        """Random micro-op indices the instruction does not read, one per micro-op of ``like``."""
        return dc.integers(0, field_max + 1, np.size(like))

    chunks = int(rng.integers(2, 6))
    inp_half = min(cfg.inp_depth // 2, 32)
    wgt_half = min(cfg.wgt_depth // 2, 4)
    acc_half = min(cfg.acc_depth // 2, 32)
    uop_next = 0

    def uops(dst: np.ndarray, src: np.ndarray | int = 0, wgt: np.ndarray | int = 0,
             tok: Tokens = NO_TOKENS) -> tuple[int, int]:
        nonlocal uop_next
        if uop_next + np.size(dst) > cfg.uop_depth:
            uop_next = 0
        span = p.load_uops(uop_next, dst, src, wgt, tok=tok)
        uop_next = span[1]
        return span

    outs: list[tuple[int, int]] = []  # per chunk: the dram_base and size of its OUT region
    if rng.random() < 0.12:
        queue = TokenQueue(int(rng.integers(0, len(TokenQueue))))
        r = rng.random()
        if r < 0.4:
            fill_token_queue(p, queue)
        elif r < 0.7:
            overfill_token_queue(p, rng, queue)
        else:
            fill_command_queue(p, rng, queue)
    if rng.random() < 0.12:
        _fill_buffers(p, rng)
    for c in range(chunks):
        half, reuse_later = c % 2, c + 2 < chunks
        inp_base, wgt_base, acc_base = half * inp_half, half * wgt_half, half * acc_half
        # load stage
        tok = Tokens(pop_next=c >= 2)
        if c >= 2 and rng.random() < 0.2:  # the token wait as a separate load-stage no-op
            p.noop(MemType.INP, tok)
            tok = NO_TOKENS
        inp_n = _padded_between(p, rng, MemType.INP, inp_base, inp_half, tok,
                                lambda k: p.data(MemType.INP,
                                                 random_tiles(cfg, rng, MemType.INP, k)))
        wgt = p.data(MemType.WGT, random_tiles(cfg, rng, MemType.WGT, wgt_half))
        p.load(MemType.WGT, wgt_base, wgt, 1, wgt_half, tok=Tokens(push_next=True))
        # compute stage: the acc half, defined everywhere it is read (acc and out)
        reuse = outs[c - 2] if c >= 2 and rng.random() < 0.2 else None
        mem = MemType.ACC_8BIT if reuse or rng.random() < 0.3 else MemType.ACC
        if mem == MemType.ACC_8BIT:
            def tiles(k: int) -> np.ndarray:
                return random_tiles(cfg, rng, MemType.OUT, k)
        elif rng.random() < 0.15:
            def tiles(k: int) -> np.ndarray:
                return extreme_acc(cfg, rng, k)
        else:
            def tiles(k: int) -> np.ndarray:
                return random_tiles(cfg, rng, MemType.ACC, k, -3000, 3000)

        def source(k: int) -> int:  # what the store of chunk c - 2 wrote, when it is enough
            if reuse is not None and k <= reuse[1]:
                return reuse[0]
            return p.data(mem, tiles(k))

        acc_n = _padded_between(p, rng, mem, acc_base, acc_half,
                                Tokens(pop_prev=True, pop_next=c >= 2), source)
        p.alu(AluOp.ADD, uops(np.array([acc_base]), ignored(ulay.src.max, 1),
                              ignored(ulay.wgt.max, 1)), (acc_n, 1), dst=(1, 0), imm=0)
        for _ in range(int(rng.integers(1, 5))):
            if rng.random() < 0.06:  # a loop that runs no iteration: a compute no-op
                empty = [(0, 1), (1, 0), (1, 1)][int(rng.integers(0, 3))]
                span = (uop_next, uop_next) if empty == (1, 1) else (0, 1)
                if rng.random() < 0.5:
                    p.gemm(span, empty)
                else:
                    p.alu(AluOp(int(rng.integers(0, len(AluOp)))), span, empty, imm=1)
            elif rng.random() < 0.5:
                iters, f, (d, s, w) = _random_loop(rng, [acc_n, inp_n, wgt_half])
                reset = bool(rng.random() < 0.15)
                if reset:
                    s, w = ignored(ulay.src.max, d), ignored(ulay.wgt.max, d)
                else:
                    s, w = s + inp_base, w + wgt_base
                p.gemm(uops(d + acc_base, s, w), iters, f[0], f[1], f[2], reset=reset)
            else:
                iters, f, (d, s) = _random_loop(rng, [acc_n, acc_n])
                op = AluOp(int(rng.integers(0, len(AluOp))))
                imm = None
                if rng.random() < 0.5:
                    imm = int(rng.integers(-40, 41) if op == AluOp.SHR
                              else rng.integers(-(1 << 15), 1 << 15))
                    if rng.random() < 0.25:
                        imm = int(rng.choice([0, 1, -1, (1 << 15) - 1, -(1 << 15)]
                                             + ([31, 32, -31, -32] if op == AluOp.SHR else [])))
                src = ignored(ulay.src.max, d) if imm is not None else s + acc_base
                p.alu(op, uops(d + acc_base, src, ignored(ulay.wgt.max, d)), iters, f[0], f[1],
                      imm=imm)
        p.noop(MemType.ACC, Tokens(push_prev=reuse_later, push_next=True))
        # store stage
        divisors = [d for d in range(3, 17) if acc_n % d == 0]
        rows = (1 if rng.random() < 0.4 else 2 if acc_n % 2 == 0 and rng.random() < 0.5 else
                int(rng.choice(divisors)) if divisors else 1)
        gap = int(rng.integers(0, 3))
        out = p.alloc(MemType.OUT, rows * (acc_n // rows + gap), fill=0xEE)
        outs.append((out, rows * (acc_n // rows + gap)))
        if rng.random() < 0.2:  # the token wait as a separate store-stage no-op
            p.noop(MemType.OUT, Tokens(pop_prev=True))
            p.store(acc_base, out, rows, acc_n // rows, acc_n // rows + gap,
                    tok=Tokens(push_prev=reuse_later))
        else:
            p.store(acc_base, out, rows, acc_n // rows, acc_n // rows + gap,
                    tok=Tokens(pop_prev=True, push_prev=reuse_later))
    p.finish()
    prog = p.build(f"random_{chunks}chunks")
    return replace(prog, code=randomize_ignored(cfg, prog.insns, dc))
