"""The stream builder: upstream VTA runtime's role (``vta/runtime/runtime.cc``) on top of the driver.

A :class:`Runtime` builds one instruction stream incrementally and runs it through the driver API
(:func:`vtabench.drivers.open_device`), so the same code runs on every target:

* **Queues.** Every instruction is routed to its stage (load / compute / store) as fetch will
  route it. The three per-stage queues are kept as views of one list in emission order; that
  order is the merged stream, and it is always valid because a token is pushed by an instruction
  emitted before the instruction that pops it.
* **Micro-op kernels** are built with a small loop API (:meth:`UopKernelBuilder.loop_begin` /
  :meth:`~UopKernelBuilder.push` / :meth:`~UopKernelBuilder.loop_end`, upstream's
  ``VTAUopLoopBegin`` / ``VTAUopPush`` / ``VTAUopLoopEnd``), cached by content, uploaded to device
  memory once per runtime and loaded into the micro-op buffer (LOAD UOP) only when the buffer does
  not already hold them.
* **Dependency tokens.** :meth:`Runtime.dep_push` / :meth:`Runtime.dep_pop` are upstream's
  ``VTADepPush`` / ``VTADepPop``: they set the token flags on the last / next instruction of a
  stage and insert a no-op (LOAD or STORE with ``x_size = 0``) when that instruction cannot carry
  the flag. With ``auto_deps`` (the default) the runtime also tracks which SRAM ranges and which
  device-memory byte ranges each instruction reads and writes, and inserts exactly the tokens that
  order conflicting accesses of different stages (read-after-write and write-after-read), so a
  caller that double-buffers only has to alternate buffer addresses. A dependency of the load
  stage on the store stage (a layer loading what the previous one stored, batched in one run)
  travels store -> compute -> load through a compute no-op.
* **Synchronization** (the cloud RFC's choice): ``sync="layer"`` runs the stream at every
  :meth:`Runtime.layer_end` (upstream), ``sync="batch"`` (default) keeps queueing and runs once at
  :meth:`Runtime.sync` (once per inference). Either way the runtime syncs by itself at a
  :meth:`Runtime.checkpoint` when the next piece of work would overflow the instruction buffer or
  the device micro-op pool. On-chip SRAM contents are not assumed to survive a sync.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from vtabench.spec.isa.insn import INSN_BYTES, Insn, encode_program, encode_uops
from vtabench.spec.isa.layout import AluOp, MemType, Opcode, mem_elem_bytes
from vtabench.spec.tokens import POP_FLAG, PUSH_FLAG, Stage, TokenQueue, stage_of

if TYPE_CHECKING:
    from vtabench.spec.config import Config


def open_device(target: str, cfg: Config | str, mem_bytes: int = 64 << 20, **opts: Any):
    """The driver API's open_device with the runtime's default device memory size."""
    from vtabench.drivers import open_device as _open

    return _open(target, cfg, mem_bytes=mem_bytes, **opts)


def available_targets() -> list[str]:
    """Targets whose backend module exists in this checkout (importable by name)."""
    from vtabench.drivers.api import BACKENDS

    return [target for target, spec in BACKENDS.items()
            if importlib.util.find_spec(spec.split(":")[0]) is not None]


class RuntimeError_(RuntimeError):
    """A stream cannot be built (bad argument, a piece of work larger than a buffer)."""


# The token queue between two stages, by (from, to).
_QUEUE = {(Stage.LOAD, Stage.COMPUTE): TokenQueue.L2G, (Stage.COMPUTE, Stage.LOAD): TokenQueue.G2L,
          (Stage.COMPUTE, Stage.STORE): TokenQueue.G2S, (Stage.STORE, Stage.COMPUTE): TokenQueue.S2G}


# ---------------------------------------------------------------------------------------------
# Micro-op kernels
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class UopKernel:
    """A micro-op kernel: up to two loop levels (extent, dst, src, wgt factors), outer first, and
    the micro-ops of the loop body. ``key`` (the micro-op content) is what the caches use."""

    loops: tuple[tuple[int, int, int, int], ...]
    dst: tuple[int, ...]
    src: tuple[int, ...]
    wgt: tuple[int, ...]

    @property
    def key(self) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        return (self.dst, self.src, self.wgt)

    def __len__(self) -> int:
        return len(self.dst)

    def index_range(self, which: str) -> tuple[int, int]:
        """Smallest and largest index of ``which`` (dst/src/wgt) over every loop iteration."""
        vals = getattr(self, which)
        lo, hi = min(vals), max(vals)
        pos = {"dst": 1, "src": 2, "wgt": 3}[which]
        for lp in self.loops:
            f = lp[pos] * (lp[0] - 1)
            lo += min(0, f)
            hi += max(0, f)
        return lo, hi


class UopKernelBuilder:
    """Upstream's VTAUopLoopBegin / VTAUopPush / VTAUopLoopEnd: at most two nested loops, every
    micro-op pushed inside the innermost open loop (or with no loop)."""

    def __init__(self) -> None:
        self._loops: list[tuple[int, int, int, int]] = []
        self._open = 0
        self._dst: list[int] = []
        self._src: list[int] = []
        self._wgt: list[int] = []

    def loop_begin(self, extent: int, dst_factor: int, src_factor: int, wgt_factor: int) -> None:
        if self._dst:
            raise RuntimeError_("micro-op loops must be opened before any micro-op is pushed")
        if len(self._loops) >= 2:
            raise RuntimeError_("a micro-op kernel has at most two loop levels")
        self._loops.append((int(extent), int(dst_factor), int(src_factor), int(wgt_factor)))
        self._open += 1

    def loop_end(self) -> None:
        if self._open <= 0:
            raise RuntimeError_("loop_end without loop_begin")
        self._open -= 1

    def push(self, dst: int, src: int = 0, wgt: int = 0) -> None:
        self._dst.append(int(dst))
        self._src.append(int(src))
        self._wgt.append(int(wgt))

    def build(self) -> UopKernel:
        if self._open:
            raise RuntimeError_("micro-op kernel has an unclosed loop")
        if not self._dst:
            raise RuntimeError_("empty micro-op kernel")
        return UopKernel(tuple(self._loops), tuple(self._dst), tuple(self._src), tuple(self._wgt))


# ---------------------------------------------------------------------------------------------
# Device tensors
# ---------------------------------------------------------------------------------------------

@dataclass
class DeviceBuffer:
    """A device-memory allocation made through the runtime (``addr`` and ``nbytes`` in bytes)."""

    addr: int
    nbytes: int

    def elem(self, elem_bytes: int) -> int:
        """The absolute element index of the start of this buffer for an element size."""
        if self.addr % elem_bytes:
            raise RuntimeError_(f"buffer at {self.addr:#x} is not aligned to {elem_bytes}-byte "
                                f"elements")
        return self.addr // elem_bytes


@dataclass
class RuntimeStats:
    syncs: int = 0
    insns: int = 0  # instructions run, FINISH included
    noops: int = 0  # token-carrying no-ops inserted
    uop_loads: int = 0  # LOAD UOP instructions
    uop_uploads: int = 0  # distinct kernels copied to device memory
    auto_syncs: int = 0  # syncs forced by a full instruction buffer or micro-op pool
    run_results: list[Any] = field(default_factory=list)
    wall_s: float = 0.0

    def cycles(self) -> int | None:
        """Total device cycles of every run, if the target reports them."""
        total = 0
        for r in self.run_results:
            c = r.stats.get("cycles") if hasattr(r, "stats") else None
            if c is None:
                return None
            total += int(c)
        return total


# ---------------------------------------------------------------------------------------------
# The runtime
# ---------------------------------------------------------------------------------------------

_SHARERS = {"inp": (Stage.LOAD, Stage.COMPUTE), "wgt": (Stage.LOAD, Stage.COMPUTE),
            "acc": (Stage.COMPUTE, Stage.STORE)}
_SRAM_KIND = {MemType.INP: "inp", MemType.WGT: "wgt", MemType.ACC: "acc", MemType.ACC_8BIT: "acc",
              MemType.OUT: "acc", MemType.UOP: "uop"}


class Runtime:
    """Builds instruction streams for one device and runs them. See the module docstring."""

    def __init__(self, device: Any, *, sync: str = "batch", insn_capacity: int = 16384,
                 uop_pool_uops: int = 1 << 16, auto_deps: bool = True,
                 timeout_s: float | None = 600.0) -> None:
        if sync not in ("batch", "layer"):
            raise RuntimeError_(f"sync must be 'batch' or 'layer', got {sync!r}")
        if insn_capacity < 16:
            raise RuntimeError_("insn_capacity must be at least 16 instructions")
        self.dev = device
        self.cfg: Config = device.cfg
        self.sync_mode = sync
        self.insn_capacity = int(insn_capacity)
        self.auto_deps = auto_deps
        self.timeout_s = timeout_s
        self.stats = RuntimeStats()
        cfg = self.cfg
        self._align = max(cfg.inp_elem_bytes, cfg.wgt_elem_bytes, cfg.acc_elem_bytes,
                          cfg.out_elem_bytes, cfg.acc8_elem_bytes, 64)
        self._insn_buf = device.alloc(self.insn_capacity * INSN_BYTES, align=max(64, INSN_BYTES))
        self._uop_pool_uops = int(uop_pool_uops)
        self._uop_pool = device.alloc(self._uop_pool_uops * self.cfg.uop_elem_bytes, align=64)
        self._uop_pool_used = 0
        self._uop_dram: dict[Any, int] = {}  # kernel key -> element index in device memory
        self._reset_stream()

    # -- stream state ------------------------------------------------------------------------
    def _reset_stream(self) -> None:
        self.insns: list[Insn] = []
        self._stage_last: dict[Stage, int] = {}
        self._pending_pop: dict[Stage, set[TokenQueue]] = {s: set() for s in Stage}
        # Hazard tracking: per SRAM kind, list of (lo, hi, stage, index, is_write); device
        # memory byte ranges likewise.
        self._sram_hist: dict[str, list[tuple[int, int, Stage, int, bool]]] = {
            "inp": [], "wgt": [], "acc": []}
        self._dram_hist: list[tuple[int, int, Stage, int, bool]] = []
        # Every device-memory range the queued work touches (host reads / writes sync first).
        self._dram_pending: list[tuple[int, int]] = []
        # synced[(Y, X)]: the latest Y instruction that X has already waited for.
        self._synced: dict[tuple[Stage, Stage], int] = {}
        self._uop_sram: dict[Any, int] = {}
        self._uop_sram_next = 0
        self._uop_new_in_stream = 0

    @property
    def pending(self) -> int:
        """Instructions queued and not yet run."""
        return len(self.insns)

    # -- memory ------------------------------------------------------------------------------
    def alloc(self, nbytes: int) -> DeviceBuffer:
        return DeviceBuffer(self.dev.alloc(int(nbytes), align=self._align), int(nbytes))

    def free(self, buf: DeviceBuffer) -> None:
        if self.insns:
            self.sync()
        self.dev.free(buf.addr)

    def write(self, buf: DeviceBuffer, data: np.ndarray | bytes) -> None:
        """Copy host data into a device buffer. Work already queued that touches the buffer runs
        first (writes take effect at the point of the call)."""
        arr = np.ascontiguousarray(data).reshape(-1).view(np.uint8) if isinstance(
            data, np.ndarray) else np.frombuffer(bytes(data), np.uint8)
        if arr.size > buf.nbytes:
            raise RuntimeError_(f"write of {arr.size} bytes into a {buf.nbytes}-byte buffer")
        if self._dram_touched(buf.addr, arr.size):
            self.sync()
        self.dev.write(buf.addr, arr)

    def read(self, buf: DeviceBuffer, nbytes: int | None = None) -> np.ndarray:
        """Device buffer contents (uint8); runs queued work first if it touches the buffer."""
        n = buf.nbytes if nbytes is None else int(nbytes)
        if self._dram_touched(buf.addr, n):
            self.sync()
        return self.dev.read(buf.addr, n)

    def _dram_touched(self, addr: int, n: int) -> bool:
        return any(lo < addr + n and addr < hi for lo, hi in self._dram_pending)

    # -- dependency helpers ------------------------------------------------------------------
    def dep_push(self, src: Stage, dst: Stage, at: int | None = None) -> None:
        """Make stage ``src`` push a token towards ``dst`` after instruction ``at`` (default: its
        last queued instruction); inserts a no-op in ``src`` when there is none or it already
        pushes that queue."""
        q = _QUEUE[(Stage(src), Stage(dst))]
        flag = PUSH_FLAG[(Stage(src), q)]
        i = self._stage_last.get(Stage(src)) if at is None else at
        if i is None or getattr(self.insns[i], flag):
            i = self._noop(Stage(src))
        setattr(self.insns[i], flag, 1)

    def dep_pop(self, src: Stage, dst: Stage) -> None:
        """Make the next instruction of stage ``dst`` wait for a token from ``src``."""
        q = _QUEUE[(Stage(src), Stage(dst))]
        if q in self._pending_pop[Stage(dst)]:  # one pop per queue and instruction: the pending
            self._noop(Stage(dst))  # one goes on a no-op
        self._pending_pop[Stage(dst)].add(q)

    def _noop(self, stage: Stage) -> int:
        if stage == Stage.LOAD:
            insn = Insn(Opcode.LOAD, memory_type=MemType.INP)
        elif stage == Stage.COMPUTE:
            insn = Insn(Opcode.LOAD, memory_type=MemType.UOP)
        else:
            insn = Insn(Opcode.STORE, memory_type=MemType.OUT)
        self.stats.noops += 1
        return self._append(insn)

    def _append(self, insn: Insn) -> int:
        st = stage_of(insn)
        for q in self._pending_pop[st]:
            setattr(insn, POP_FLAG[(st, q)], 1)
        self._pending_pop[st] = set()
        self.insns.append(insn)
        i = len(self.insns) - 1
        self._stage_last[st] = i
        return i

    def _wait_for(self, producer: Stage, consumer: Stage, j: int) -> None:
        """Consumer's next instruction must wait until producer's instruction j completes."""
        if self._synced.get((producer, consumer), -1) >= j:
            return
        if {producer, consumer} == {Stage.LOAD, Stage.STORE}:
            # No direct queue: store -> compute -> load (or load -> compute -> store).
            self._wait_for(producer, Stage.COMPUTE, j)
            k = self._noop(Stage.COMPUTE)
            self._synced[(producer, consumer)] = j
            self._wait_for(Stage.COMPUTE, consumer, k)
            return
        self.dep_push(producer, consumer, at=j)
        self.dep_pop(producer, consumer)
        self._synced[(producer, consumer)] = j

    def _emit(self, insn: Insn, sram: list[tuple[str, int, int, bool]],
              dram: list[tuple[int, int, bool]]) -> int:
        """Queue an instruction after the tokens its accesses need. ``sram``: (kind, lo, hi,
        is_write) element ranges (hi exclusive); ``dram``: (lo, hi, is_write) byte ranges."""
        st = stage_of(insn)
        if self.auto_deps:
            need: dict[Stage, int] = {}
            for kind, lo, hi, w in sram:
                for (a, b, s2, j, w2) in self._sram_hist[kind]:
                    if s2 != st and (w or w2) and a < hi and lo < b:
                        need[s2] = max(need.get(s2, -1), j)
            for lo, hi, w in dram:
                for (a, b, s2, j, w2) in self._dram_hist:
                    if s2 != st and (w or w2) and a < hi and lo < b:
                        need[s2] = max(need.get(s2, -1), j)
            for s2, j in sorted(need.items()):
                self._wait_for(s2, st, j)
        i = self._append(insn)
        if self.auto_deps:
            for kind, lo, hi, w in sram:
                self._record(self._sram_hist[kind], (lo, hi, st, i, w), _SHARERS[kind])
            for lo, hi, w in dram:
                self._record(self._dram_hist, (lo, hi, st, i, w), tuple(Stage))
        for lo, hi, _w in dram:
            if hi > lo:
                self._dram_pending.append((lo, hi))
        return i

    def _record(self, hist: list, entry: tuple, sharers: tuple[Stage, ...]) -> None:
        lo, hi, st, _, w = entry
        # Drop entries of this stage that the new one covers (same kind of access) and entries
        # every other stage has already synchronized past.
        keep = []
        for e in hist:
            a, b, s2, j, w2 = e
            if s2 == st and w2 == w and lo <= a and b <= hi:
                continue
            if s2 != st and all(self._synced.get((s2, o), -1) >= j for o in sharers if o != s2):
                continue
            keep.append(e)
        keep.append(entry)
        hist[:] = keep

    # -- instructions ------------------------------------------------------------------------
    def load(self, mem: MemType, sram_base: int, dram_base: int, y_size: int, x_size: int,
             x_stride: int, y_pad_0: int = 0, y_pad_1: int = 0, x_pad_0: int = 0,
             x_pad_1: int = 0) -> int:
        """LOAD (INP, WGT, ACC, ACC_8BIT); DRAM addresses in elements of ``mem``."""
        mem = MemType(mem)
        if mem in (MemType.UOP, MemType.OUT):
            raise RuntimeError_(f"load of {mem.name}: micro-ops go through kernels; OUT is "
                                f"store-only")
        insn = Insn(Opcode.LOAD, memory_type=mem, sram_base=sram_base, dram_base=dram_base,
                    y_size=y_size, x_size=x_size, x_stride=x_stride, y_pad_0=y_pad_0,
                    y_pad_1=y_pad_1, x_pad_0=x_pad_0, x_pad_1=x_pad_1)
        rows = y_pad_0 + y_size + y_pad_1
        row = x_pad_0 + x_size + x_pad_1
        eb = mem_elem_bytes(self.cfg, mem)
        dlo = dram_base * eb
        dhi = (dram_base + (y_size - 1) * x_stride + x_size) * eb if y_size and x_size else dlo
        return self._emit(insn, [(_SRAM_KIND[mem], sram_base, sram_base + rows * row, True)],
                          [(dlo, dhi, False)])

    def store(self, sram_base: int, dram_base: int, y_size: int, x_size: int,
              x_stride: int) -> int:
        insn = Insn(Opcode.STORE, memory_type=MemType.OUT, sram_base=sram_base,
                    dram_base=dram_base, y_size=y_size, x_size=x_size, x_stride=x_stride)
        eb = self.cfg.out_elem_bytes
        dlo = dram_base * eb
        dhi = (dram_base + (y_size - 1) * x_stride + x_size) * eb
        return self._emit(insn, [("acc", sram_base, sram_base + y_size * x_size, False)],
                          [(dlo, dhi, True)])

    def _bind_kernel(self, kernel: UopKernel) -> tuple[int, int]:
        """Make ``kernel`` resident in the micro-op buffer; returns (uop_bgn, uop_end)."""
        n = len(kernel)
        depth = self.cfg.uop_depth
        if n > depth:
            raise RuntimeError_(f"micro-op kernel of {n} micro-ops exceeds the micro-op buffer "
                                f"({depth} entries)")
        key = kernel.key
        if key in self._uop_sram:
            bgn = self._uop_sram[key]
            return bgn, bgn + n
        if key not in self._uop_dram:
            if self._uop_pool_used + n > self._uop_pool_uops:
                raise RuntimeError_("device micro-op pool full (call checkpoint() between "
                                    "pieces of work so the runtime can sync and recycle it)")
            uops = encode_uops(self.cfg, np.array(kernel.dst), np.array(kernel.src),
                               np.array(kernel.wgt))
            eb = self.cfg.uop_elem_bytes
            addr = self._uop_pool + self._uop_pool_used * eb
            self.dev.write(addr, uops)
            self._uop_dram[key] = addr // eb
            self._uop_pool_used += n
            self.stats.uop_uploads += 1
        if self._uop_sram_next + n > depth:  # buffer full: start over (compute is in order)
            self._uop_sram.clear()
            self._uop_sram_next = 0
        bgn = self._uop_sram_next
        self._append_uop_load(bgn, self._uop_dram[key], n)
        self._uop_sram[key] = bgn
        self._uop_sram_next += n
        return bgn, bgn + n

    def _append_uop_load(self, sram: int, dram_elem: int, n: int) -> None:
        self.stats.uop_loads += 1
        eb = self.cfg.uop_elem_bytes
        self._emit(Insn(Opcode.LOAD, memory_type=MemType.UOP, sram_base=sram, dram_base=dram_elem,
                        y_size=1, x_size=n, x_stride=n), [],
                   [(dram_elem * eb, (dram_elem + n) * eb, False)])

    def _loop_fields(self, kernel: UopKernel, alu: bool) -> dict[str, int]:
        loops = list(kernel.loops)
        while len(loops) < 2:
            loops.insert(0, (1, 0, 0, 0))
        (eo, do, so, wo), (ei, di, si, wi) = loops
        f = {"iter_out": eo, "iter_in": ei, "dst_factor_out": do, "dst_factor_in": di,
             "src_factor_out": so, "src_factor_in": si}
        if not alu:
            f.update({"wgt_factor_out": wo, "wgt_factor_in": wi})
        return f

    def gemm(self, kernel: UopKernel, reset: bool = False) -> int:
        bgn, end = self._bind_kernel(kernel)
        insn = Insn(Opcode.GEMM, reset_reg=int(reset), uop_bgn=bgn, uop_end=end,
                    **self._loop_fields(kernel, alu=False))
        dlo, dhi = kernel.index_range("dst")
        acc = [("acc", dlo, dhi + 1, True)]
        if not reset:
            slo, shi = kernel.index_range("src")
            wlo, whi = kernel.index_range("wgt")
            acc += [("inp", slo, shi + 1, False), ("wgt", wlo, whi + 1, False)]
        return self._emit(insn, acc, [])

    def alu(self, kernel: UopKernel, op: AluOp, imm: int | None = None) -> int:
        bgn, end = self._bind_kernel(kernel)
        use_imm = imm is not None
        insn = Insn(Opcode.ALU, uop_bgn=bgn, uop_end=end, alu_opcode=AluOp(op),
                    use_imm=int(use_imm), imm=int(imm) if use_imm else 0,
                    **self._loop_fields(kernel, alu=True))
        dlo, dhi = kernel.index_range("dst")
        acc = [("acc", dlo, dhi + 1, True)]
        if not use_imm:
            slo, shi = kernel.index_range("src")
            acc.append(("acc", slo, shi + 1, False))
        return self._emit(insn, acc, [])

    # -- synchronization ---------------------------------------------------------------------
    def checkpoint(self, insns_needed: int = 0, uops_needed: int = 0) -> None:
        """A point where no on-chip data is live. Syncs when ``insns_needed`` more instructions
        (plus the tokens' no-ops and FINISH) would not fit the instruction buffer, or
        ``uops_needed`` new micro-ops would not fit the device micro-op pool."""
        insns_needed = min(int(insns_needed), self.insn_capacity - 8)
        full_i = len(self.insns) + insns_needed + 8 > self.insn_capacity
        full_u = self._uop_pool_used + uops_needed > self._uop_pool_uops
        if full_i or full_u:
            if self.insns:
                self.stats.auto_syncs += 1
                self.sync()
            if full_u:
                self._uop_pool_used = 0
                self._uop_dram.clear()

    def layer_end(self) -> None:
        """End of a layer: runs the stream in ``sync="layer"`` mode, nothing in batch mode."""
        if self.sync_mode == "layer":
            self.sync()

    def sync(self) -> Any:
        """Run everything queued (adds FINISH) and wait for it. Returns the RunResult (None if
        nothing was queued)."""
        if not self.insns:
            return None
        for st in Stage:  # pending pops with no instruction to carry them
            if self._pending_pop[st]:
                self._noop(st)
        self._append(Insn(Opcode.FINISH))
        if len(self.insns) > self.insn_capacity:
            raise RuntimeError_(f"stream of {len(self.insns)} instructions overflows the "
                                f"instruction buffer ({self.insn_capacity}): the work between "
                                f"two checkpoints (one tile) is larger than the buffer")
        data = encode_program(self.cfg, self.insns)
        self.dev.write(self._insn_buf, data)
        result = self.dev.run(self._insn_buf, len(self.insns), timeout_s=self.timeout_s)
        self.stats.syncs += 1
        self.stats.insns += len(self.insns)
        self.stats.run_results.append(result)
        self.stats.wall_s += getattr(result, "wall_s", 0.0)
        self._reset_stream()
        return result

    def close(self) -> None:
        """Run what is queued and give the instruction buffer and micro-op pool back to the
        device (the device itself stays open)."""
        if self._insn_buf is None:
            return
        self.sync()
        self.dev.free(self._insn_buf)
        self.dev.free(self._uop_pool)
        self._insn_buf = None
        self._uop_pool = None

    def __enter__(self) -> Runtime:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            self.close()

