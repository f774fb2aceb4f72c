"""Addresses of one emission: an access under loop values -> an SRAM element (through the
placement of the on-chip buffers) or a device-memory element (through the bound device
buffers)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from vtabench.compiler.onchip import mem_tile_scalars
from vtabench.compiler.ops import CompileError
from vtabench.compiler.tir_expr import Env, compile_index
from vtabench.spec.isa.layout import MemType, mem_elem_bytes

if TYPE_CHECKING:
    from vtabench.compiler.analysis import Access
    from vtabench.compiler.sram_layout import SramPlacement
    from vtabench.runtime import DeviceBuffer
    from vtabench.spec.config import Config


class Addresses:
    def __init__(self, cfg: Config, placement: SramPlacement,
                 bindings: dict[str, DeviceBuffer]) -> None:
        self.cfg = cfg
        self._placement = placement
        self._bindings = bindings
        self._offsets: dict[int, Callable[[Env], int]] = {}  # id of an access -> its offset

    def _tiles(self, acc: Access, env: Env, escal: int) -> int:
        key = id(acc.offset)
        if key not in self._offsets:
            self._offsets[key] = compile_index(acc.offset)
        off = self._offsets[key](env)
        if off % escal:
            raise CompileError(f"{acc.buf.name}: offset {off} is not tile aligned")
        return off // escal

    def sram(self, acc: Access, env: Env, mem: MemType) -> int:
        """SRAM element of the access's offset (``mem`` gives the tile size)."""
        return self._placement.base(acc.buf.name) + self._tiles(acc, env,
                                                                mem_tile_scalars(self.cfg, mem))

    def dram(self, acc: Access, env: Env, mem: MemType) -> int:
        """Device-memory element (of ``mem``'s size) of the access's offset."""
        tiles = self._tiles(acc, env, mem_tile_scalars(self.cfg, mem))
        return self._bindings[acc.buf.name].elem(mem_elem_bytes(self.cfg, mem)) + tiles
