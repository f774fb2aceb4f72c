"""Fault injection hooks of the platform model (pure Python; the model consults them).

A test arms a fault before the operation it targets; each armed fault fires once (or ``count``
times) and is then spent. Faults:

- :meth:`FaultPlan.dma_late`: the ``nth`` next DMA (of a direction, or any) completes
  ``delay_ns`` later than the cost model says;
- :meth:`FaultPlan.dma_error`: the ``nth`` next DMA completes with an error status after
  ``after_bytes`` bytes of it have landed (the rest of the target is untouched);
- :meth:`FaultPlan.lose_irq`: the next ``count`` MSIs are dropped (the core's interrupt output
  still rises; the host never hears of it);
- :meth:`FaultPlan.mmio_all_ones`: the next ``count`` MMIO reads (of one offset, or any) return
  0xFFFFFFFF, what a host reads when a read request is not completed (completion timeout,
  surprise removal).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class DmaFault:
    kind: str                   # "late" or "error"
    direction: str | None       # "h2d", "d2h" or None (any)
    skip: int = 0               # matching DMAs to let pass first
    delay_ns: float = 0.0
    after_bytes: int = 0


@dataclass
class FaultPlan:
    dma_faults: list[DmaFault] = field(default_factory=list)
    irq_to_lose: int = 0
    mmio_ones: list[list] = field(default_factory=list)  # [offset or None, remaining count]
    fired: list[str] = field(default_factory=list)        # log of faults that fired

    # --- arming ---------------------------------------------------------------------------------
    def dma_late(self, delay_ns: float, direction: str | None = None, nth: int = 0) -> None:
        self.dma_faults.append(DmaFault("late", direction, nth, delay_ns=float(delay_ns)))

    def dma_error(self, direction: str | None = None, nth: int = 0, after_bytes: int = 0) -> None:
        self.dma_faults.append(DmaFault("error", direction, nth, after_bytes=int(after_bytes)))

    def lose_irq(self, count: int = 1) -> None:
        self.irq_to_lose += int(count)

    def mmio_all_ones(self, count: int = 1, offset: int | None = None) -> None:
        self.mmio_ones.append([offset, int(count)])

    def clear(self) -> None:
        self.dma_faults.clear()
        self.irq_to_lose = 0
        self.mmio_ones.clear()

    # --- consulted by the model -----------------------------------------------------------------
    def take_dma(self, direction: str) -> DmaFault | None:
        for f in self.dma_faults:
            if f.direction not in (None, direction):
                continue
            if f.skip > 0:
                f.skip -= 1
                continue
            self.dma_faults.remove(f)
            self.fired.append(f"dma_{f.kind}:{direction}")
            return f
        return None

    def take_irq_loss(self) -> bool:
        if self.irq_to_lose > 0:
            self.irq_to_lose -= 1
            self.fired.append("lost_irq")
            return True
        return False

    def take_mmio_ones(self, offset: int) -> bool:
        for entry in self.mmio_ones:
            if entry[0] is None or entry[0] == offset:
                entry[1] -= 1
                if entry[1] <= 0:
                    self.mmio_ones.remove(entry)
                self.fired.append(f"mmio_all_ones:{offset:#x}")
                return True
        return False
