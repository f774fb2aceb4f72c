"""The runtime: upstream VTA runtime's role (``vta/runtime/runtime.cc``) on top of the driver.

A :class:`Runtime` builds one instruction stream incrementally and runs it through the driver API
(:func:`vtabench.drivers.open_device`), so the same code runs on every target. Its parts:

* **Queues** (:mod:`vtabench.runtime.queues`): the per-stage queues of the stream and the
  token helpers :meth:`Runtime.dep_push` / :meth:`Runtime.dep_pop` (upstream's ``VTADepPush`` /
  ``VTADepPop``).
* **Micro-op kernels** (:mod:`vtabench.runtime.uop_kernels`) are built with a small loop API
  (:class:`UopKernelBuilder`), cached by content, uploaded to device memory once per runtime and
  loaded into the micro-op buffer (LOAD UOP) only when the buffer does not already hold them
  (:mod:`vtabench.runtime.uop_cache`).
* **Dependency tokens** (:mod:`vtabench.runtime.hazards`): with ``auto_deps`` (the default) the
  runtime tracks which SRAM ranges and which device-memory byte ranges each instruction reads and
  writes, and inserts exactly the tokens that order conflicting accesses of different stages.
* **Synchronization** (the cloud RFC's choice): ``sync="layer"`` runs the stream at every
  :meth:`Runtime.layer_end` (upstream), ``sync="batch"`` (default) keeps queueing and runs once at
  :meth:`Runtime.sync` (once per inference). Either way the runtime syncs by itself at a
  :meth:`Runtime.checkpoint` when the next piece of work would overflow the instruction buffer or
  the device micro-op pool. On-chip SRAM contents are not assumed to survive a sync.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from vtabench.runtime.buffers import DeviceBuffer
from vtabench.runtime.errors import RuntimeError_
from vtabench.runtime.hazards import DramAccess, HazardTracker, SramAccess
from vtabench.runtime.queues import StageQueues
from vtabench.runtime.stats import RuntimeStats
from vtabench.runtime.uop_cache import UopPool, UopResidency
from vtabench.runtime.uop_kernels import UopKernel
from vtabench.spec.isa.insn import INSN_BYTES, Insn, encode_program
from vtabench.spec.isa.layout import AluOp, MemType, Opcode, mem_elem_bytes
from vtabench.spec.tokens import Stage, stage_of

if TYPE_CHECKING:
    from vtabench.drivers.api import Device, RunResult
    from vtabench.spec.config import Config

# The on-chip buffer each memory type of a LOAD lands in.
_SRAM_KIND = {MemType.INP: "inp", MemType.WGT: "wgt", MemType.ACC: "acc", MemType.ACC_8BIT: "acc"}


class Runtime:
    """Builds instruction streams for one device and runs them. See the module docstring."""

    def __init__(self, device: Device, *, sync: str = "batch", insn_capacity: int = 16384,
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
        self._insn_buf: int | None = device.alloc(self.insn_capacity * INSN_BYTES,
                                                  align=max(64, INSN_BYTES))
        self._uop_pool = UopPool(device, cfg, uop_pool_uops)
        self._reset_stream()

    # -- stream state ------------------------------------------------------------------------
    def _reset_stream(self) -> None:
        self._queues = StageQueues(self.stats)
        self._hazards = HazardTracker(self._queues)
        self._uop_resident = UopResidency(self.cfg.uop_depth)
        # Every device-memory range the queued work touches (host reads / writes sync first).
        self._dram_pending: list[tuple[int, int]] = []

    @property
    def insns(self) -> list[Insn]:
        """The instructions queued and not yet run, in stream order."""
        return self._queues.insns

    @property
    def pending(self) -> int:
        """Instructions queued and not yet run."""
        return len(self._queues.insns)

    @property
    def uop_pool_used(self) -> int:
        """Micro-ops in the device micro-op pool (since it was last recycled)."""
        return self._uop_pool.used

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
        self._queues.dep_push(src, dst, at)

    def dep_pop(self, src: Stage, dst: Stage) -> None:
        """Make the next instruction of stage ``dst`` wait for a token from ``src``."""
        self._queues.dep_pop(src, dst)

    def _emit(self, insn: Insn, sram: list[SramAccess], dram: list[DramAccess]) -> int:
        """Queue an instruction after the tokens its accesses need."""
        st = stage_of(insn)
        if self.auto_deps:
            self._hazards.wait_before(st, sram, dram)
        i = self._queues.append(insn)
        if self.auto_deps:
            self._hazards.record(st, i, sram, dram)
        for acc in dram:
            if acc.hi > acc.lo:
                self._dram_pending.append((acc.lo, acc.hi))
        return i

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
        return self._emit(insn, [SramAccess(_SRAM_KIND[mem], sram_base, sram_base + rows * row,
                                            True)],
                          [DramAccess(dlo, dhi, False)])

    def store(self, sram_base: int, dram_base: int, y_size: int, x_size: int,
              x_stride: int) -> int:
        insn = Insn(Opcode.STORE, memory_type=MemType.OUT, sram_base=sram_base,
                    dram_base=dram_base, y_size=y_size, x_size=x_size, x_stride=x_stride)
        eb = self.cfg.out_elem_bytes
        dlo = dram_base * eb
        dhi = (dram_base + (y_size - 1) * x_stride + x_size) * eb
        return self._emit(insn, [SramAccess("acc", sram_base, sram_base + y_size * x_size, False)],
                          [DramAccess(dlo, dhi, True)])

    def _bind_kernel(self, kernel: UopKernel) -> tuple[int, int]:
        """Make ``kernel`` resident in the micro-op buffer; returns (uop_bgn, uop_end)."""
        n = len(kernel)
        depth = self.cfg.uop_depth
        if n > depth:
            raise RuntimeError_(f"micro-op kernel of {n} micro-ops exceeds the micro-op buffer "
                                f"({depth} entries)")
        bgn = self._uop_resident.lookup(kernel)
        if bgn is not None:
            return bgn, bgn + n
        dram_elem, uploaded = self._uop_pool.upload(kernel)
        if uploaded:
            self.stats.uop_uploads += 1
        bgn = self._uop_resident.place(kernel)
        self.stats.uop_loads += 1
        eb = self.cfg.uop_elem_bytes
        self._emit(Insn(Opcode.LOAD, memory_type=MemType.UOP, sram_base=bgn, dram_base=dram_elem,
                        y_size=1, x_size=n, x_stride=n), [],
                   [DramAccess(dram_elem * eb, (dram_elem + n) * eb, False)])
        return bgn, bgn + n

    @staticmethod
    def _loop_fields(kernel: UopKernel, alu: bool) -> dict[str, int]:
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
        acc = [SramAccess("acc", dlo, dhi + 1, True)]
        if not reset:
            slo, shi = kernel.index_range("src")
            wlo, whi = kernel.index_range("wgt")
            acc += [SramAccess("inp", slo, shi + 1, False), SramAccess("wgt", wlo, whi + 1, False)]
        return self._emit(insn, acc, [])

    def alu(self, kernel: UopKernel, op: AluOp, imm: int | None = None) -> int:
        bgn, end = self._bind_kernel(kernel)
        use_imm = imm is not None
        insn = Insn(Opcode.ALU, uop_bgn=bgn, uop_end=end, alu_opcode=AluOp(op),
                    use_imm=int(use_imm), imm=int(imm) if use_imm else 0,
                    **self._loop_fields(kernel, alu=True))
        dlo, dhi = kernel.index_range("dst")
        acc = [SramAccess("acc", dlo, dhi + 1, True)]
        if not use_imm:
            slo, shi = kernel.index_range("src")
            acc.append(SramAccess("acc", slo, shi + 1, False))
        return self._emit(insn, acc, [])

    # -- synchronization ---------------------------------------------------------------------
    def checkpoint(self, insns_needed: int = 0, uops_needed: int = 0) -> None:
        """A point where no on-chip data is live. Syncs when ``insns_needed`` more instructions
        (plus the tokens' no-ops and FINISH) would not fit the instruction buffer, or
        ``uops_needed`` new micro-ops would not fit the device micro-op pool."""
        insns_needed = min(int(insns_needed), self.insn_capacity - 8)
        full_i = self.pending + insns_needed + 8 > self.insn_capacity
        full_u = self._uop_pool.used + uops_needed > self._uop_pool.capacity
        if full_i or full_u:
            if self.insns:
                self.stats.auto_syncs += 1
                self.sync()
            if full_u:
                self._uop_pool.recycle()

    def layer_end(self) -> None:
        """End of a layer: runs the stream in ``sync="layer"`` mode, nothing in batch mode."""
        if self.sync_mode == "layer":
            self.sync()

    def sync(self) -> RunResult | None:
        """Run everything queued (adds FINISH, fenced behind the last STORE) and wait for it.
        Returns the RunResult (None if nothing was queued)."""
        if not self.insns:
            return None
        self._queues.place_pending_pops()
        self._queues.fence_finish()
        self._queues.append(Insn(Opcode.FINISH))
        insns = self.insns
        if len(insns) > self.insn_capacity:
            raise RuntimeError_(f"stream of {len(insns)} instructions overflows the "
                                f"instruction buffer ({self.insn_capacity}): the work between "
                                f"two checkpoints (one tile) is larger than the buffer")
        if self._insn_buf is None:
            raise RuntimeError_("sync on a closed runtime")
        data = encode_program(self.cfg, insns)
        self.dev.write(self._insn_buf, data)
        result = self.dev.run(self._insn_buf, len(insns), timeout_s=self.timeout_s)
        self.stats.syncs += 1
        self.stats.insns += len(insns)
        self.stats.run_results.append(result)
        self.stats.wall_s += result.wall_s
        self._reset_stream()
        return result

    def close(self) -> None:
        """Run what is queued and give the instruction buffer and micro-op pool back to the
        device (the device itself stays open)."""
        if self._insn_buf is None:
            return
        self.sync()
        self.dev.free(self._insn_buf)
        self._uop_pool.free()
        self._insn_buf = None

    def __enter__(self) -> Runtime:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            self.close()
