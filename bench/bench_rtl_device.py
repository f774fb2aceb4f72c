"""What the rtl device costs through its socket: a request, MMIO, DMA (docs/platform.md).

    python bench/bench_rtl_device.py [--config default] [--link gen3x16]

Opens one rtl device (a simulator process) and times, in wall clock: a request that advances no
simulated time, the simulated clock with the core idle, MMIO reads and writes alone and in a
batch, and DMAs of 4 KiB, 1 MiB and 16 MiB each way (with the link model's time for them), plus
the memcpy into a shared-memory mapping that carries a DMA's data.
"""

from __future__ import annotations

import argparse
import mmap
import tempfile
import time
from collections.abc import Callable

import numpy as np

from vtabench.drivers import open_device
from vtabench.spec.contracts import regs as R

SIZES = (4096, 1 << 20, 16 << 20)


def mean_s(fn: Callable[[], object], reps: int) -> float:
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) / reps


def shm_copy_gbps(data: np.ndarray, reps: int) -> float:
    """memcpy throughput into a /dev/shm mapping (what a DMA's data costs)."""
    with tempfile.NamedTemporaryFile(dir="/dev/shm") as f:
        f.truncate(data.size)
        with mmap.mmap(f.fileno(), data.size) as m:
            dst = np.frombuffer(m, dtype=np.uint8)
            s = mean_s(lambda: np.copyto(dst, data), reps)
            del dst
    return data.size / s / 1e9


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="default")
    ap.add_argument("--link", default="gen3x16")
    args = ap.parse_args(argv)
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    print(f"# load average {load}")
    with open_device("rtl", args.config, mem_bytes=2 * SIZES[-1], link=args.link) as dev:
        print(f"# {dev.name}")
        print(f"request without simulated time (TAKE_IRQ): "
              f"{mean_s(dev.take_irq, 500) * 1e6:.0f} us")
        idle_ns = 100_000.0
        s = mean_s(lambda: dev.idle(idle_ns), 5)
        print(f"simulated clock, core idle: {idle_ns * dev.clock_mhz / 1e3 / s:,.0f} cycles/s")
        alone = mean_s(lambda: dev.mmio([("r", R.SCRATCH)]), 200)
        print(f"MMIO read, alone: {alone * 1e3:.2f} ms")
        print(f"MMIO write, alone: "
              f"{mean_s(lambda: dev.mmio([('w', R.SCRATCH, 5)]), 200) * 1e3:.2f} ms")
        batch = mean_s(lambda: dev.mmio([("r", R.SCRATCH)] * 64), 10) / 64
        print(f"MMIO read in a batch of 64: {batch * 1e3:.2f} ms each")
        for size in SIZES:
            data = np.random.default_rng(0).integers(0, 256, size, dtype=np.uint8)
            reps = 20 if size <= 1 << 20 else 3
            w = mean_s(lambda: dev.write(0, data), reps)
            r = mean_s(lambda: dev.read(0, size), reps)
            h2d_us, d2h_us = (dev.link.dma_ns(size, d) / 1e3 for d in ("h2d", "d2h"))
            print(f"DMA {size} B: host->device {w * 1e3:.1f} ms ({h2d_us:.1f} us modeled), "
                  f"device->host {r * 1e3:.1f} ms ({d2h_us:.1f} us modeled); memcpy into "
                  f"shared memory {shm_copy_gbps(data, reps):.1f} GB/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
