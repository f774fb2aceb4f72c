"""Where micro-op kernels live: a pool in device memory and the on-chip micro-op buffer.

Kernels are cached by content (:attr:`UopKernel.key`): each is uploaded to the device pool once
(until the pool is recycled at a sync) and loaded into the micro-op buffer (LOAD UOP) only when
the buffer does not already hold it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from vtabench.runtime.errors import RuntimeError_
from vtabench.runtime.uop_kernels import UopKernel
from vtabench.spec.isa.insn import encode_uops

if TYPE_CHECKING:
    from vtabench.drivers.api import Device
    from vtabench.spec.config import Config


class UopPool:
    """Kernels uploaded to a fixed region of device memory (``capacity`` micro-ops)."""

    def __init__(self, device: Device, cfg: Config, capacity: int) -> None:
        self._dev = device
        self._cfg = cfg
        self.capacity = int(capacity)
        self.addr: int | None = device.alloc(self.capacity * cfg.uop_elem_bytes, align=64)
        self.used = 0  # micro-ops uploaded since the pool was last recycled
        self._elem: dict[Any, int] = {}  # kernel key -> element index in device memory

    def upload(self, kernel: UopKernel) -> tuple[int, bool]:
        """The device-memory element index of ``kernel``, uploading it if the pool does not
        hold it yet; and whether it was uploaded now."""
        key = kernel.key
        if key in self._elem:
            return self._elem[key], False
        n = len(kernel)
        if self.used + n > self.capacity:
            raise RuntimeError_("device micro-op pool full (call checkpoint() between "
                                "pieces of work so the runtime can sync and recycle it)")
        uops = encode_uops(self._cfg, np.array(kernel.dst), np.array(kernel.src),
                           np.array(kernel.wgt))
        if self.addr is None:
            raise RuntimeError_("micro-op kernel queued on a closed runtime")
        eb = self._cfg.uop_elem_bytes
        addr = self.addr + self.used * eb
        self._dev.write(addr, uops)
        self._elem[key] = addr // eb
        self.used += n
        return self._elem[key], True

    def recycle(self) -> None:
        """Forget every uploaded kernel (only once no queued work refers to them)."""
        self.used = 0
        self._elem.clear()

    def free(self) -> None:
        if self.addr is not None:
            self._dev.free(self.addr)
            self.addr = None


class UopResidency:
    """Which kernels the on-chip micro-op buffer (``depth`` entries) holds in one stream; when
    a new kernel does not fit, the buffer is refilled from entry 0 (compute runs in order)."""

    def __init__(self, depth: int) -> None:
        self.depth = depth
        self._bgn: dict[Any, int] = {}  # kernel key -> first entry
        self._next = 0

    def lookup(self, kernel: UopKernel) -> int | None:
        """First entry of ``kernel`` if the buffer holds it."""
        return self._bgn.get(kernel.key)

    def place(self, kernel: UopKernel) -> int:
        """Entries for ``kernel`` (whose LOAD UOP the caller queues); returns the first."""
        n = len(kernel)
        if self._next + n > self.depth:
            self._bgn.clear()
            self._next = 0
        bgn = self._next
        self._bgn[kernel.key] = bgn
        self._next += n
        return bgn
