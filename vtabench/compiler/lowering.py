"""Lowering: the subset of the s_tir pipeline that keeps the schedule's structure.

LowerInitBlock, PlanAndUpdateBufferAllocationLocation, ConvertBlocksToOpaque,
CompactBufferAllocation, LowerMatchBuffer, StmtSimplify. After it, every on-chip buffer is
allocated in the opaque block of the loop it was attached to, with its tile footprint as shape,
and every leaf block is one of the nests :mod:`vtabench.compiler.analysis` recognises.
"""

from __future__ import annotations

import tvm
from tvm import s_tir, tirx


def lower(mod: tvm.IRModule) -> tirx.PrimFunc:
    seq = tvm.transform.Sequential([
        s_tir.transform.LowerInitBlock(),
        s_tir.transform.PlanAndUpdateBufferAllocationLocation(),
        s_tir.transform.ConvertBlocksToOpaque(),
        s_tir.transform.CompactBufferAllocation(),
        s_tir.transform.LowerMatchBuffer(),
        s_tir.transform.StmtSimplify(),
    ])
    return seq(mod)["main"]
