"""Micro-op kernels and the loop API that builds them (upstream's ``VTAUopLoopBegin`` /
``VTAUopPush`` / ``VTAUopLoopEnd``)."""

from __future__ import annotations

from dataclasses import dataclass

from vtabench.runtime.errors import RuntimeError_


@dataclass(frozen=True)
class UopKernel:
    """A micro-op kernel: up to two loop levels (extent, dst, src, wgt factors), outer first, and
    the micro-ops of the loop body. ``key`` (the micro-op content) is what the caches use."""

    loops: tuple[tuple[int, int, int, int], ...]
    dst: tuple[int, ...]
    src: tuple[int, ...]
    wgt: tuple[int, ...]

    @property
    def key(self) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        return (self.dst, self.src, self.wgt)

    def __len__(self) -> int:
        return len(self.dst)

    def index_range(self, which: str) -> tuple[int, int]:
        """Smallest and largest index of ``which`` (dst/src/wgt) over every loop iteration."""
        vals = getattr(self, which)
        lo, hi = min(vals), max(vals)
        pos = {"dst": 1, "src": 2, "wgt": 3}[which]
        for lp in self.loops:
            f = lp[pos] * (lp[0] - 1)
            lo += min(0, f)
            hi += max(0, f)
        return lo, hi


class UopKernelBuilder:
    """Upstream's VTAUopLoopBegin / VTAUopPush / VTAUopLoopEnd: at most two nested loops, every
    micro-op pushed inside the innermost open loop (or with no loop)."""

    def __init__(self) -> None:
        self._loops: list[tuple[int, int, int, int]] = []
        self._open = 0
        self._dst: list[int] = []
        self._src: list[int] = []
        self._wgt: list[int] = []

    def loop_begin(self, extent: int, dst_factor: int, src_factor: int, wgt_factor: int) -> None:
        if self._dst:
            raise RuntimeError_("micro-op loops must be opened before any micro-op is pushed")
        if len(self._loops) >= 2:
            raise RuntimeError_("a micro-op kernel has at most two loop levels")
        self._loops.append((int(extent), int(dst_factor), int(src_factor), int(wgt_factor)))
        self._open += 1

    def loop_end(self) -> None:
        if self._open <= 0:
            raise RuntimeError_("loop_end without loop_begin")
        self._open -= 1

    def push(self, dst: int, src: int = 0, wgt: int = 0) -> None:
        self._dst.append(int(dst))
        self._src.append(int(src))
        self._wgt.append(int(wgt))

    def build(self) -> UopKernel:
        if self._open:
            raise RuntimeError_("micro-op kernel has an unclosed loop")
        if not self._dst:
            raise RuntimeError_("empty micro-op kernel")
        return UopKernel(tuple(self._loops), tuple(self._dst), tuple(self._src), tuple(self._wgt))
