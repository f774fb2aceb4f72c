"""A hand-written dense layer through the runtime, shared by the runtime and platform tests."""

from __future__ import annotations

from vtabench.spec.config import Config
from vtabench.spec.isa.layout import AluOp, MemType
from vtabench.runtime import DeviceBuffer, Runtime, UopKernelBuilder


def gemm_layer(rt: Runtime, cfg: Config, a: DeviceBuffer, w: DeviceBuffer, c: DeviceBuffer,
               N: int, K: int, M: int, shift: int) -> None:
    """C[n, m] = (sum_k A[n, k] . W[m, k]) >> shift, one output block per tile, two buffers."""
    for m in range(M):
        slot = m % 2
        ib, wb, ab = slot * 64, slot * 8, slot * 64
        rt.load(MemType.INP, ib, a.elem(cfg.inp_elem_bytes), 1, N * K, N * K)
        rt.load(MemType.WGT, wb, w.elem(cfg.wgt_elem_bytes) + m * K, 1, K, K)
        kb = UopKernelBuilder()
        kb.loop_begin(N, 1, 0, 0)
        kb.push(ab, 0, 0)
        kb.loop_end()
        rt.gemm(kb.build(), reset=True)
        kb = UopKernelBuilder()
        kb.loop_begin(N, 1, K, 0)
        for k in range(K):
            kb.push(ab, ib + k, wb + k)
        kb.loop_end()
        rt.gemm(kb.build())
        kb = UopKernelBuilder()
        kb.loop_begin(N, 1, 0, 0)
        kb.push(ab)
        kb.loop_end()
        rt.alu(kb.build(), AluOp.SHR, shift)
        rt.store(ab, c.elem(cfg.out_elem_bytes) + m, N, 1, M)
