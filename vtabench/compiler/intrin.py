"""Tensor intrinsics of the VTA core for s_tir ``tensorize``: GEMM (one BATCH x BLOCK_IN by
BLOCK_OUT x BLOCK_IN tile product accumulated into a BATCH x BLOCK_OUT accumulator tile) and its
reset. Both implementations call the custom intrinsic ``tirx.vta.gemm(acc, acc_offset, inp,
inp_offset, wgt, wgt_offset)`` (offsets in scalars of the on-chip buffers; -1 for a reset), which
the emitter turns into micro-ops. The match buffers have symbolic strides so that they match
sub-regions of the compacted on-chip buffers.

With BATCH = 1 the batch loop has extent 1 and s_tir drops it, so the descriptions then span the
two loops (oc, ic) and the schedule tensorizes at the oc loop; with BATCH > 1 they span three.
"""

from __future__ import annotations

import tvm
from tvm import s_tir
from tvm.script import tirx as T

GEMM_OP = "tirx.vta.gemm"
_registered: set[str] = set()


def _register_op() -> None:
    if GEMM_OP in _registered:
        return
    # CallEffectKind: 3 = kUpdateState (the call has side effects on on-chip state).
    tvm.ir.register_op_attr(GEMM_OP, "TCallEffectKind", 3)
    _registered.add(GEMM_OP)


def intrin_names(batch: int, block_in: int, block_out: int) -> tuple[str, str]:
    """Register (once) and return the names of the GEMM and reset intrinsics for a shape."""
    _register_op()
    gemm_name = f"vta_gemm_{batch}x{block_in}x{block_out}"
    reset_name = f"vta_reset_{batch}x{block_out}"
    if gemm_name in _registered:
        return gemm_name, reset_name
    B, BI, BO = batch, block_in, block_out

    if B == 1:
        @T.prim_func(s_tir=True)
        def gemm_desc(a: T.handle, w: T.handle, c: T.handle):
            A = T.match_buffer(a, (1, BI), "int8", offset_factor=1, scope="local.inp_buffer")
            W = T.match_buffer(w, (BO, BI), "int8", offset_factor=1, scope="local.wgt_buffer")
            C = T.match_buffer(c, (1, BO), "int32", offset_factor=1, scope="local.acc_buffer")
            with T.sblock("root"):
                T.reads(C[0:1, 0:BO], A[0:1, 0:BI], W[0:BO, 0:BI])
                T.writes(C[0:1, 0:BO])
                for j, k in T.grid(BO, BI):
                    with T.sblock("update"):
                        vj, vk = T.axis.remap("SR", [j, k])
                        C[0, vj] = C[0, vj] + T.Cast("int32", A[0, vk]) * T.Cast("int32", W[vj, vk])

        @T.prim_func(s_tir=True)
        def reset_desc(c: T.handle):
            C = T.match_buffer(c, (1, BO), "int32", offset_factor=1, scope="local.acc_buffer")
            with T.sblock("root"):
                T.reads()
                T.writes(C[0:1, 0:BO])
                for j in T.grid(BO):
                    with T.sblock("init"):
                        vj = T.axis.remap("S", [j])
                        C[0, vj] = 0
    else:
        @T.prim_func(s_tir=True)
        def gemm_desc(a: T.handle, w: T.handle, c: T.handle):
            A = T.match_buffer(a, (B, BI), "int8", offset_factor=1, scope="local.inp_buffer")
            W = T.match_buffer(w, (BO, BI), "int8", offset_factor=1, scope="local.wgt_buffer")
            C = T.match_buffer(c, (B, BO), "int32", offset_factor=1, scope="local.acc_buffer")
            with T.sblock("root"):
                T.reads(C[0:B, 0:BO], A[0:B, 0:BI], W[0:BO, 0:BI])
                T.writes(C[0:B, 0:BO])
                for i, j, k in T.grid(B, BO, BI):
                    with T.sblock("update"):
                        vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                        C[vi, vj] = C[vi, vj] + T.Cast("int32", A[vi, vk]) * T.Cast("int32", W[vj, vk])

        @T.prim_func(s_tir=True)
        def reset_desc(c: T.handle):
            C = T.match_buffer(c, (B, BO), "int32", offset_factor=1, scope="local.acc_buffer")
            with T.sblock("root"):
                T.reads()
                T.writes(C[0:B, 0:BO])
                for i, j in T.grid(B, BO):
                    with T.sblock("init"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        C[vi, vj] = 0

    @T.prim_func(s_tir=True)
    def gemm_impl(a: T.handle, w: T.handle, c: T.handle):
        sa0 = T.int32()
        sw0 = T.int32()
        sc0 = T.int32()
        A = T.match_buffer(a, (B, BI), "int8", offset_factor=1, scope="local.inp_buffer",
                           strides=[sa0, 1])
        W = T.match_buffer(w, (BO, BI), "int8", offset_factor=1, scope="local.wgt_buffer",
                           strides=[sw0, 1])
        C = T.match_buffer(c, (B, BO), "int32", offset_factor=1, scope="local.acc_buffer",
                           strides=[sc0, 1])
        with T.sblock("root"):
            T.reads(C[0:B, 0:BO], A[0:B, 0:BI], W[0:BO, 0:BI])
            T.writes(C[0:B, 0:BO])
            T.evaluate(T.call_intrin("int32", GEMM_OP, C.data, C.elem_offset, A.data,
                                     A.elem_offset, W.data, W.elem_offset))

    @T.prim_func(s_tir=True)
    def reset_impl(c: T.handle):
        sc0 = T.int32()
        C = T.match_buffer(c, (B, BO), "int32", offset_factor=1, scope="local.acc_buffer",
                           strides=[sc0, 1])
        with T.sblock("root"):
            T.reads()
            T.writes(C[0:B, 0:BO])
            T.evaluate(T.call_intrin("int32", GEMM_OP, C.data, C.elem_offset, C.data, -1,
                                     C.data, -1))

    s_tir.TensorIntrin.register(gemm_name, gemm_desc, gemm_impl)
    s_tir.TensorIntrin.register(reset_name, reset_desc, reset_impl)
    _registered.add(gemm_name)
    return gemm_name, reset_name
