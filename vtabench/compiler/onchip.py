"""The on-chip buffers as the schedule names them: storage scopes, and the scalars of one tile.

An on-chip buffer of scope ``local.inp_buffer`` / ``local.wgt_buffer`` / ``local.acc_buffer``
lives in the input, weight or accumulator SRAM (its *kind*: inp, wgt, acc); one SRAM element
holds one tile (BATCH x BLOCK_IN inputs, BLOCK_OUT x BLOCK_IN weights, BATCH x BLOCK_OUT
accumulators).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vtabench.spec.isa.layout import MemType

if TYPE_CHECKING:
    from vtabench.spec.config import Config

#: storage scope -> SRAM kind
SCOPES = {"local.inp_buffer": "inp", "local.wgt_buffer": "wgt", "local.acc_buffer": "acc"}
ACC_SCOPE = "local.acc_buffer"


def scope(buf: Any) -> str:
    """The storage scope of a buffer ("global" for device memory)."""
    return str(buf.scope())


def tile_scalars(cfg: Config, kind: str) -> int:
    """Scalars in one SRAM element of ``kind`` (inp, wgt, acc)."""
    return {"inp": cfg.batch * cfg.block_in, "wgt": cfg.block_out * cfg.block_in,
            "acc": cfg.batch * cfg.block_out}[kind]


def mem_tile_scalars(cfg: Config, mem: MemType) -> int:
    """Scalars in one element of memory type ``mem`` (ACC, ACC_8BIT and OUT are acc tiles)."""
    return tile_scalars(cfg, {MemType.INP: "inp", MemType.WGT: "wgt"}.get(mem, "acc"))
