"""Device-memory allocator shared by every backend (fsim, opencl, rtl).

Addresses are byte offsets into the device memory image (the DRAM image fsim sees from byte 0).
First fit over an address-ordered free list: allocations are aligned, never overlap, and a freed
block is merged with free neighbours on both sides, so freeing everything always leaves one block
of the whole memory. The allocator holds no data; backends copy bytes.
"""

from __future__ import annotations

import bisect


class OutOfMemoryError(MemoryError):
    """No free block can hold the request. Carries ``requested``, ``align``, ``largest_free``,
    ``free_bytes`` and ``total`` (bytes) and says them in the message."""

    def __init__(self, requested: int, align: int, largest_free: int, free_bytes: int,
                 total: int) -> None:
        self.requested = requested
        self.align = align
        self.largest_free = largest_free
        self.free_bytes = free_bytes
        self.total = total
        super().__init__(
            f"device out of memory: requested {requested} bytes (align {align}); largest free "
            f"block {largest_free} bytes, {free_bytes} bytes free of {total} total")


class AllocError(ValueError):
    """A bad argument: unknown or already freed address, bad alignment, negative size."""


def _is_pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


class Allocator:
    """Aligned first-fit allocator over ``[base, base + size)``.

    ``alloc(nbytes, align)`` returns an address that is a multiple of ``align`` (a power of two);
    ``free(addr)`` takes an address ``alloc`` returned. A zero-byte request reserves one byte so
    that every live allocation has a distinct address.
    """

    def __init__(self, size: int, base: int = 0) -> None:
        if size <= 0:
            raise AllocError(f"allocator size must be positive, got {size}")
        if base < 0:
            raise AllocError(f"allocator base must be >= 0, got {base}")
        self.base = base
        self.size = size
        # Free blocks: parallel sorted lists of start addresses and sizes.
        self._free_start: list[int] = [base]
        self._free_size: list[int] = [size]
        # Live allocations: address -> size in bytes.
        self._live: dict[int, int] = {}

    # -- queries ---------------------------------------------------------------------------
    @property
    def total(self) -> int:
        return self.size

    @property
    def free_bytes(self) -> int:
        return sum(self._free_size)

    @property
    def largest_free(self) -> int:
        return max(self._free_size, default=0)

    def free_blocks(self) -> list[tuple[int, int]]:
        """(start, size) of every free block, in address order."""
        return list(zip(self._free_start, self._free_size))

    def allocations(self) -> dict[int, int]:
        """address -> size of every live allocation."""
        return dict(self._live)

    # -- alloc / free ----------------------------------------------------------------------
    def alloc(self, nbytes: int, align: int = 64) -> int:
        if not isinstance(nbytes, int) or nbytes < 0:
            raise AllocError(f"allocation size must be a non-negative integer, got {nbytes!r}")
        if not isinstance(align, int) or not _is_pow2(align):
            raise AllocError(f"alignment must be a power of two, got {align!r}")
        need = max(nbytes, 1)
        for i, (start, size) in enumerate(zip(self._free_start, self._free_size)):
            addr = (start + align - 1) // align * align
            end = start + size
            if addr + need <= end:
                head = addr - start
                tail = end - (addr + need)
                # Replace block i by its head and tail remainders (either may be empty).
                del self._free_start[i], self._free_size[i]
                j = i
                if head:
                    self._free_start.insert(j, start)
                    self._free_size.insert(j, head)
                    j += 1
                if tail:
                    self._free_start.insert(j, addr + need)
                    self._free_size.insert(j, tail)
                self._live[addr] = need
                return addr
        raise OutOfMemoryError(nbytes, align, self.largest_free, self.free_bytes, self.size)

    def free(self, addr: int) -> None:
        size = self._live.pop(addr, None)
        if size is None:
            raise AllocError(f"free of address {addr:#x}, which is not a live allocation "
                             f"(never allocated or already freed)")
        i = bisect.bisect_left(self._free_start, addr)
        start, end = addr, addr + size
        # Merge with the following free block.
        if i < len(self._free_start) and self._free_start[i] == end:
            end += self._free_size[i]
            del self._free_start[i], self._free_size[i]
        # Merge with the preceding free block.
        if i > 0 and self._free_start[i - 1] + self._free_size[i - 1] == start:
            i -= 1
            start = self._free_start[i]
            del self._free_start[i], self._free_size[i]
        self._free_start.insert(i, start)
        self._free_size.insert(i, end - start)

    def reset(self) -> None:
        """Free everything."""
        self._free_start = [self.base]
        self._free_size = [self.size]
        self._live.clear()

    def check(self) -> None:
        """Assert the invariants (used by tests): blocks sorted, disjoint, merged, and free plus
        live bytes cover the whole range exactly."""
        spans = sorted([(s, n, "free") for s, n in self.free_blocks()]
                       + [(s, n, "live") for s, n in self._live.items()])
        pos = self.base
        prev_kind = None
        for start, n, kind in spans:
            assert start == pos, f"gap or overlap at {start:#x} (expected {pos:#x})"
            assert n > 0
            assert not (kind == "free" and prev_kind == "free"), f"unmerged free at {start:#x}"
            pos = start + n
            prev_kind = kind
        assert pos == self.base + self.size, "blocks do not cover the memory"
