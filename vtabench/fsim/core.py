"""fsim: the functional reference simulator, the golden model every design entry is held to.

:class:`Fsim` validates a program, asks :mod:`vtabench.spec.tokens` for the order in which the three
stages execute it under the token rules, and runs each instruction with the exact semantics of
docs/isa.md section 4 against a DRAM image (a uint8 array updated in place).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

import numpy as np

from vtabench.spec.config import Config
from vtabench.fsim import kernels
from vtabench.spec.isa.insn import Insn, decode_uops
from vtabench.spec.isa.layout import AluOp, MemType, Opcode, mem_elem_bytes
from vtabench.spec.tokens import DEFAULT_STAGE_ORDER, Stage
from vtabench.spec.validate import validated_order


#: Called with (instruction, A operands, B operands) before an ALU instruction executes.
AluObserver = Callable[[Insn, np.ndarray, np.ndarray], None]

#: The most micro-op iterations of one GEMM or ALU instruction fsim runs. fsim expands a loop
#: into index arrays and checks the timeout between instructions, so this caps one
#: instruction's memory and time: 2^22 iterations all on one acc row (fsim's slowest case) took
#: 7 s and 1.9 GB peak (measured, default config). A compiled layer's loop pairs each acc row
#: with each weight tile at most once (acc x wgt depth: 2^21 for default and cloud32, 2^20 for
#: cloud64 and edge8); a runaway 16383 x 16383 loop is 2^28.
MAX_INSN_ITERATIONS = 1 << 22

#: The most micro-op iterations of one run (the work budget): 256 of the largest instructions.
MAX_RUN_ITERATIONS = 1 << 30


class FsimBudgetError(RuntimeError):
    """A run stopped before instruction ``index`` (in program order): its work budget or its
    wall-clock timeout was spent. The driver turns this into ``RunTimeoutError``."""

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.index = index


@dataclass
class FsimStats:
    """Counters of one run. Bytes count DRAM traffic (what LOADs read, what STOREs write)."""

    insns: Counter[str] = field(default_factory=Counter)  # per kind: LOAD, STORE, GEMM, ALU, FINISH
    bytes_loaded: Counter[str] = field(default_factory=Counter)  # per memory type name
    bytes_stored: Counter[str] = field(default_factory=Counter)
    gemm_uops: int = 0  # GEMM micro-op loop iterations (reset ones included)
    alu_uops: int = 0
    macs: int = 0  # multiply-accumulates of non-reset GEMM iterations
    seconds: float = 0.0  # the whole run: validation and execution
    validate_seconds: float = 0.0  # of which the validation (and the schedule)

    def as_dict(self) -> dict[str, object]:
        d: dict[str, object] = {f"insns_{k}": v for k, v in sorted(self.insns.items())}
        d.update({f"bytes_loaded_{k}": v for k, v in sorted(self.bytes_loaded.items())})
        d.update({f"bytes_stored_{k}": v for k, v in sorted(self.bytes_stored.items())})
        d.update(gemm_uops=self.gemm_uops, alu_uops=self.alu_uops, macs=self.macs,
                 seconds=round(self.seconds, 6),
                 validate_seconds=round(self.validate_seconds, 6))
        return d


class Fsim:
    """On-chip state of one core and the instruction semantics.

    Buffers (after :meth:`run`, for inspection): ``uop`` (uint32), ``inp`` (depth, batch,
    block_in) int8, ``wgt`` (depth, block_out, block_in) int8, ``acc`` (depth, batch, block_out)
    int32 and ``out`` (same shape, int8).
    """

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        b, bi, bo = cfg.batch, cfg.block_in, cfg.block_out
        self.uop = np.zeros(cfg.uop_depth, np.uint32)
        self.inp = np.zeros((cfg.inp_depth, b, bi), np.int8)
        self.wgt = np.zeros((cfg.wgt_depth, bo, bi), np.int8)
        self.acc = np.zeros((cfg.acc_depth, b, bo), np.int32)
        self.out = np.zeros((cfg.out_depth, b, bo), np.int8)
        self._observe_alu: AluObserver | None = None
        #: memory type of a LOAD -> (its name, the buffer it writes, bytes of an element in
        #: DRAM, how those bytes read: ACC_8BIT's int8 values are widened into acc's int32)
        self._loads: dict[int, tuple[str, np.ndarray, int, str]] = {
            int(mem): (mem.name, buf, mem_elem_bytes(cfg, mem), dtype)
            for mem, buf, dtype in ((MemType.UOP, self.uop, "<u4"), (MemType.WGT, self.wgt, "i1"),
                                    (MemType.INP, self.inp, "i1"), (MemType.ACC, self.acc, "<i4"),
                                    (MemType.ACC_8BIT, self.acc, "i1"))}

    def run(self, insns: Sequence[Insn], dram: np.ndarray,
            observe_alu: AluObserver | None = None,
            stage_order: Sequence[Stage] = DEFAULT_STAGE_ORDER, *,
            timeout_s: float | None = None,
            max_iterations: int = MAX_RUN_ITERATIONS) -> FsimStats:
        """Validate, then execute ``insns`` against ``dram`` (1-D uint8, updated in place).

        ``observe_alu(insn, a, b)``, if given, sees each ALU instruction's operands before it
        runs (A = acc[dst] and B = acc[src] or the immediate, over all iterations; where
        iterations depend on each other these are the values at the instruction's start). The
        regression's functional coverage samples operand signs and shift amounts through it.
        ``stage_order``: the stages' priority within a scheduling round; a race-free program
        gives the same result under every order (the regression's minimiser checks that).

        The work is checked as the run goes, before anything is allocated for an instruction:
        a GEMM or ALU loop longer than :data:`MAX_INSN_ITERATIONS`, a run past
        ``max_iterations`` micro-op iterations in all, or past ``timeout_s`` seconds (checked
        between instructions) raises :class:`FsimBudgetError` naming the instruction reached.
        """
        if not (isinstance(dram, np.ndarray) and dram.dtype == np.uint8 and dram.ndim == 1):
            raise TypeError("dram must be a 1-D uint8 numpy array (the device memory image)")
        if not dram.flags.writeable:
            raise ValueError("dram must be writable: fsim updates it in place")
        t0 = time.perf_counter()
        order = validated_order(self.cfg, insns, dram, stage_order)
        self._observe_alu = observe_alu
        stats = FsimStats(validate_seconds=time.perf_counter() - t0)
        deadline = None if timeout_s is None else t0 + timeout_s
        for i in order:
            self._check_budget(insns[i], i, stats, max_iterations, deadline, timeout_s)
            self._execute(insns[i], dram, stats)
        stats.seconds = time.perf_counter() - t0
        return stats

    @staticmethod
    def _check_budget(insn: Insn, index: int, stats: FsimStats, max_iterations: int,
                      deadline: float | None, timeout_s: float | None) -> None:
        if deadline is not None and time.perf_counter() > deadline:
            raise FsimBudgetError(f"run not finished after {timeout_s} s (wall clock), stopped "
                                  f"before {_where(insn, index)}", index)
        if insn.opcode != Opcode.GEMM and insn.opcode != Opcode.ALU:
            return
        n = max(insn.uop_end - insn.uop_bgn, 0) * insn.iter_out * insn.iter_in
        if n > MAX_INSN_ITERATIONS:
            where = _where(insn, index)
            raise FsimBudgetError(
                f"{where} loops {insn.iter_out} x {insn.iter_in} x {insn.uop_end - insn.uop_bgn} "
                f"micro-ops = {n} iterations, past fsim's {MAX_INSN_ITERATIONS} per instruction "
                f"(a runaway loop?)", index)
        done = stats.gemm_uops + stats.alu_uops
        if done + n > max_iterations:
            raise FsimBudgetError(f"work budget of {max_iterations} micro-op iterations spent "
                                  f"({done} done) at {_where(insn, index)}", index)

    # --- instructions -------------------------------------------------------------------------
    def _execute(self, insn: Insn, dram: np.ndarray, stats: FsimStats) -> None:
        op = insn.opcode
        stats.insns[_OPCODE_NAMES[op]] += 1
        if op == Opcode.LOAD:
            self._load(insn, dram, stats)
        elif op == Opcode.STORE:
            self._store(insn, dram, stats)
        elif op == Opcode.GEMM:
            self._gemm(insn, stats)
        elif op == Opcode.ALU:
            self._alu(insn, stats)

    def _load(self, insn: Insn, dram: np.ndarray, stats: FsimStats) -> None:
        if insn.x_size == 0 or insn.y_size == 0:
            return
        name, buf, eb, dtype = self._loads[insn.memory_type]
        data = _dram_rows(dram, insn.dram_base * eb, insn.y_size, insn.x_size * eb,
                          insn.x_stride * eb).view(dtype)
        if data.dtype != buf.dtype:
            data = data.astype(buf.dtype)  # ACC_8BIT: sign-extended into acc
        tile = buf.shape[1:]
        data = data.reshape(insn.y_size, insn.x_size, *tile)
        row = insn.x_pad_0 + insn.x_size + insn.x_pad_1
        height = insn.y_pad_0 + insn.y_size + insn.y_pad_1
        dst = buf[insn.sram_base:insn.sram_base + height * row].reshape(height, row, *tile)
        if insn.x_pad_0 or insn.x_pad_1 or insn.y_pad_0 or insn.y_pad_1:
            dst[...] = 0
        dst[insn.y_pad_0:insn.y_pad_0 + insn.y_size, insn.x_pad_0:insn.x_pad_0 + insn.x_size] = data
        stats.bytes_loaded[name] += insn.y_size * insn.x_size * eb

    def _store(self, insn: Insn, dram: np.ndarray, stats: FsimStats) -> None:
        if insn.x_size == 0 or insn.y_size == 0:
            return
        eb = self.cfg.out_elem_bytes
        n = insn.y_size * insn.x_size
        src = self.out[insn.sram_base:insn.sram_base + n].view(np.uint8)
        src = src.reshape(insn.y_size, insn.x_size * eb)
        rows = _dram_rows(dram, insn.dram_base * eb, insn.y_size, insn.x_size * eb,
                          insn.x_stride * eb, writeable=True)
        if insn.y_size > 1 and insn.x_stride < insn.x_size:
            for y in range(insn.y_size):  # overlapping rows: later rows land last
                rows[y] = src[y]
        else:
            rows[...] = src
        stats.bytes_stored[MemType.OUT.name] += n * eb

    def _kernel(self, insn: Insn) -> _Kernel:
        """The instruction's micro-op loop (docs/isa.md section 4), unexpanded, and its plans."""
        words = self.uop[insn.uop_bgn:insn.uop_end].tobytes()
        return _kernel(self.cfg, words, (
            insn.iter_out, insn.iter_in, insn.dst_factor_out, insn.dst_factor_in,
            insn.src_factor_out, insn.src_factor_in, insn.wgt_factor_out, insn.wgt_factor_in))

    def _gemm(self, insn: Insn, stats: FsimStats) -> None:
        k = self._kernel(insn)
        stats.gemm_uops += k.loop.size
        if insn.reset_reg:
            kernels.gemm_reset(self.acc, self.out, k.reset_dst)
            return
        kernels.gemm(self.acc, self.out, self.inp, self.wgt, k.loop, k.gemm_plan)
        stats.macs += k.loop.size * self.cfg.batch * self.cfg.block_in * self.cfg.block_out

    def _alu(self, insn: Insn, stats: FsimStats) -> None:
        k = self._kernel(insn)
        loop = k.loop
        stats.alu_uops += loop.size
        if self._observe_alu is not None:
            b = (np.full(1, insn.imm, np.int32) if insn.use_imm
                 else self.acc[loop.expand(1)])
            self._observe_alu(insn, self.acc[loop.expand(0)], b)
        use_imm = bool(insn.use_imm)
        kernels.alu(self.acc, self.out, AluOp(insn.alu_opcode), loop, use_imm, int(insn.imm),
                    k.alu_plan(use_imm))


class _Kernel:
    """A micro-op loop and the plans fsim runs it by, computed on first use.

    Everything here follows from the cache key of :func:`_kernel` alone (the configuration,
    the micro-op words and the loop fields), never from buffer contents, so one kernel serves
    every instruction that repeats the loop: a network's layers issue the same few loops many
    times over.
    """

    def __init__(self, loop: kernels.MicroLoop, cfg: Config) -> None:
        self.loop = loop
        self._cfg = cfg
        self._alu_plans: dict[bool, kernels.AluPlan] = {}

    @cached_property
    def gemm_plan(self) -> kernels.GemmPlan | None:
        if self.loop.size <= kernels.SMALL_LOOP:
            return None  # kernels.gemm's direct path
        cfg = self._cfg
        return kernels.gemm_plan(self.loop, cfg.acc_depth, cfg.batch, cfg.block_in)

    @cached_property
    def reset_dst(self) -> np.ndarray | slice:
        return kernels.as_rows(np.unique(self.loop.expand(0)))

    def alu_plan(self, use_imm: bool) -> kernels.AluPlan | None:
        if self.loop.size <= kernels.SMALL_LOOP:
            return None  # kernels.alu's direct path
        plan = self._alu_plans.get(use_imm)
        if plan is None:
            plan = self._alu_plans[use_imm] = kernels.alu_plan(self.loop, use_imm,
                                                               self._cfg.acc_depth)
        return plan


@lru_cache(maxsize=4096)
def _kernel(cfg: Config, words: bytes, fields: tuple[int, ...]) -> _Kernel:
    """The kernel of micro-op ``words`` under loop ``fields`` (iter_out, iter_in, then the
    out/in factors of dst, src and wgt)."""
    loop = kernels.MicroLoop.build(decode_uops(cfg, np.frombuffer(words, np.uint32)), fields[:2],
                                   (fields[2:4], fields[4:6], fields[6:8]))
    for arr in loop.uop + loop.off:
        arr.setflags(write=False)  # shared by every use of the kernel
    return _Kernel(loop, cfg)


def _dram_rows(dram: np.ndarray, start: int, rows: int, row_bytes: int, stride_bytes: int,
               writeable: bool = False) -> np.ndarray:
    """A (rows, row_bytes) strided view of the DRAM image (ranges are validated beforehand;
    rows that follow each other are a plain slice)."""
    if rows == 1 or stride_bytes == row_bytes:
        view = dram[start:start + rows * row_bytes].reshape(rows, row_bytes)
        if not writeable:
            view.flags.writeable = False
        return view
    return np.lib.stride_tricks.as_strided(dram[start:], shape=(rows, row_bytes),
                                           strides=(stride_bytes, 1), writeable=writeable)


def _where(insn: Insn, index: int) -> str:
    return f"instruction {index} ({Opcode(insn.opcode).name})"


_OPCODE_NAMES = {op: op.name for op in Opcode}


def run_raw(cfg: Config, insns: Sequence[Insn], dram: np.ndarray, *, seed: int | None = None,
            waves: object = None, timeout_s: float | None = None,
            **_: object) -> dict[str, object]:
    """The fsim target of ``vtabench exec``: run a program and return its counters.

    ``seed``, ``waves`` and ``timeout_s`` are for the cycle-level targets; fsim is deterministic
    and has no waveforms, so they are accepted and ignored.
    """
    return Fsim(cfg).run(insns, dram).as_dict()
