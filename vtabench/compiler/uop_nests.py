"""GEMM and ALU nests -> micro-op kernels and their instruction.

The two largest loops of the nest become the instruction's hardware loops (outer and inner, in
their nest order), their tile coefficients the loops' dst / src / wgt factors; the other loops
are enumerated into micro-ops.
"""

from __future__ import annotations

import itertools

from vtabench.compiler.addressing import Addresses
from vtabench.compiler.analysis import AluNest, GemmNest
from vtabench.compiler.sink import InstructionSink
from vtabench.compiler.tir_expr import Env
from vtabench.runtime import UopKernel, UopKernelBuilder
from vtabench.spec.isa.layout import AluOp, MemType


def emit_uop_nest(rt: InstructionSink, n: GemmNest | AluNest, env: Env,
                  addr: Addresses) -> None:
    L = len(n.loops)
    e0 = dict(env)
    for lp in n.loops:
        e0[lp.loop_var] = 0
    zeros = [0] * L
    dst0 = addr.sram(n.dst, e0, MemType.ACC)
    if isinstance(n, GemmNest):
        if n.inp is not None and n.wgt is not None:
            src0, src_c = addr.sram(n.inp, e0, MemType.INP), n.inp.coefs
            wgt0, wgt_c = addr.sram(n.wgt, e0, MemType.WGT), n.wgt.coefs
        else:  # reset
            src0, src_c, wgt0, wgt_c = 0, zeros, 0, zeros
        rt.gemm(_kernel(n.extents, dst0, n.dst.coefs, src0, src_c, wgt0, wgt_c),
                reset=n.inp is None)
        return
    if n.src is not None:
        src0, src_c = addr.sram(n.src, e0, MemType.ACC), n.src.coefs
    else:  # immediate operand
        src0, src_c = 0, zeros
    if isinstance(n.src_scale, int):  # scale the second operand's tile in place first
        rt.alu(_kernel(n.extents, src0, src_c, 0, zeros, 0, zeros), AluOp.MUL, n.src_scale)
    elif n.src_scale is not None:  # ... by a tile of multipliers
        m0, m_c = addr.sram(n.src_scale, e0, MemType.ACC), n.src_scale.coefs
        rt.alu(_kernel(n.extents, src0, src_c, m0, m_c, 0, zeros), AluOp.MUL, None)
    rt.alu(_kernel(n.extents, dst0, n.dst.coefs, src0, src_c, 0, zeros), n.op, n.imm)


def _kernel(extents: list[int], dst0: int, dst_c: list[int], src0: int, src_c: list[int],
            wgt0: int, wgt_c: list[int]) -> UopKernel:
    L = len(extents)
    order = sorted(range(L), key=lambda i: -extents[i])
    hw = sorted(order[:2])  # keep their relative order (outer first)
    sw = [i for i in range(L) if i not in hw]
    kb = UopKernelBuilder()
    for i in hw:
        kb.loop_begin(extents[i], dst_c[i], src_c[i], wgt_c[i])
    for vals in itertools.product(*[range(extents[i]) for i in sw]):
        d, s, w = dst0, src0, wgt0
        for i, v in zip(sw, vals, strict=True):
            d += dst_c[i] * v
            s += src_c[i] * v
            w += wgt_c[i] * v
        kb.push(d, s, w)
    for _ in hw:
        kb.loop_end()
    return kb.build()
