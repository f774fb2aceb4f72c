"""Device-memory allocator shared by every backend (fsim, opencl, rtl).

Addresses are byte offsets into the device memory image (the DRAM image fsim sees from byte 0).
First fit over an address-ordered free list: allocations are aligned, never overlap, and a freed
block is merged with free neighbours on both sides, so freeing everything always leaves one block
of the whole memory. The allocator holds no data; backends copy bytes.

It also keeps what a sanitizer needs, so that a simulated card refuses what a real one would
corrupt: the freed allocations not yet reused, so that :meth:`Allocator.check_access` (the
driver API calls it for every write and read) names a copy that runs past the end of the
allocation it starts in (:class:`BufferOverrunError`) or starts in a freed one
(:class:`UseAfterFreeError`), and :meth:`Allocator.free` a double free (:class:`DoubleFreeError`).
Memory outside every allocation stays a raw image (``run_program`` writes one at address 0).
"""

from __future__ import annotations

import bisect

from vtabench.drivers.errors import DeviceError


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


class BufferMisuseError(DeviceError):
    """A use of an allocation that a real card would turn into corrupted memory. ``addr`` and
    ``size``: the allocation (the buffer); the message also names the offending offset and
    size."""

    def __init__(self, message: str, addr: int, size: int) -> None:
        super().__init__(message)
        self.addr = addr
        self.size = size

    def __reduce__(self) -> tuple:
        return (type(self), (self.args[0], self.addr, self.size))


class BufferOverrunError(BufferMisuseError):
    """A write or read that starts in an allocation and runs past its end."""


class UseAfterFreeError(BufferMisuseError):
    """A write or read that starts in a freed allocation (not reused since)."""


class DoubleFreeError(BufferMisuseError):
    """A free of an allocation that is freed already."""


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
        # Live allocations: address -> size in bytes, and their addresses in order.
        self._live: dict[int, int] = {}
        self._live_starts: list[int] = []
        # Freed allocations no later one overlaps (disjoint): address -> size, addresses in order.
        self._freed: dict[int, int] = {}
        self._freed_starts: list[int] = []

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
                bisect.insort(self._live_starts, addr)
                self._forget_freed(addr, addr + need)
                return addr
        raise OutOfMemoryError(nbytes, align, self.largest_free, self.free_bytes, self.size)

    def free(self, addr: int) -> None:
        size = self._live.pop(addr, None)
        if size is None:
            if addr in self._freed:
                raise DoubleFreeError(f"double free of buffer {addr:#x} "
                                      f"({self._freed[addr]} bytes)", addr, self._freed[addr])
            raise AllocError(f"free of address {addr:#x}, which is not a live allocation "
                             f"(never allocated or already freed)")
        del self._live_starts[bisect.bisect_left(self._live_starts, addr)]
        self._freed[addr] = size
        bisect.insort(self._freed_starts, addr)
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
        """Free everything and forget it: the whole memory is a raw image again."""
        self._free_start = [self.base]
        self._free_size = [self.size]
        self._live.clear()
        self._live_starts.clear()
        self._freed.clear()
        self._freed_starts.clear()

    # -- the sanitizer ---------------------------------------------------------------------
    def check_access(self, addr: int, nbytes: int, what: str) -> None:
        """Refuse a ``what`` ("write", "read") of ``nbytes`` at ``addr`` that starts in a live
        allocation and runs past its end, or starts in a freed one; one that starts outside
        every allocation is a raw access and passes."""
        start = _containing(self._live_starts, self._live, addr)
        if start is not None:
            size = self._live[start]
            if addr + nbytes > start + size:
                raise BufferOverrunError(
                    f"{what} of {nbytes} bytes at {addr:#x} (offset {addr - start}) runs past the "
                    f"end of buffer {start:#x} ({size} bytes)", start, size)
            return
        start = _containing(self._freed_starts, self._freed, addr)
        if start is not None:
            size = self._freed[start]
            raise UseAfterFreeError(
                f"use after free: {what} of {nbytes} bytes at {addr:#x} (offset {addr - start}) "
                f"of buffer {start:#x} ({size} bytes), which was freed", start, size)

    def _forget_freed(self, lo: int, hi: int) -> None:
        """Drop the freed allocations that overlap ``[lo, hi)`` (allocated again)."""
        i = max(bisect.bisect_right(self._freed_starts, lo) - 1, 0)
        while i < len(self._freed_starts) and self._freed_starts[i] < hi:
            start = self._freed_starts[i]
            if start + self._freed[start] > lo:
                del self._freed[start], self._freed_starts[i]
            else:
                i += 1

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
        assert self._live_starts == sorted(self._live)
        assert self._freed_starts == sorted(self._freed)
        freed = [(s, s + n) for s, n in self._freed.items()]
        for lo, hi in freed:
            assert _containing(self._live_starts, self._live, lo) is None, \
                f"freed {lo:#x} overlaps a live allocation"
            assert all(h <= lo or hi <= l2 for l2, h in freed if l2 != lo), \
                f"freed {lo:#x} overlaps another"


def _containing(starts: list[int], sizes: dict[int, int], addr: int) -> int | None:
    """The start of the allocation among ``starts`` (disjoint, in order) that holds ``addr``."""
    i = bisect.bisect_right(starts, addr) - 1
    if i >= 0 and addr < starts[i] + sizes[starts[i]]:
        return starts[i]
    return None
