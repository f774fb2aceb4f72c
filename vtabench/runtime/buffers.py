"""Device tensors: allocations in device memory made through the runtime."""

from __future__ import annotations

from dataclasses import dataclass

from vtabench.runtime.errors import RuntimeError_


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
