"""Helpers of the simulated-card suites (test_rtl_device.py, test_serve_faults.py): the directed
programs encoded, a runner for any open device, and whether a simulator process lives."""

from __future__ import annotations

import numpy as np


def programs(cfg):  # type: ignore[no-untyped-def]
    from vtabench.spec.isa.insn import encode_program
    from vtabench.verify.directed import directed_programs

    return [(p.name, encode_program(cfg, p.insns), p.dram) for p in directed_programs(cfg)]


def run_programs(dev, progs):  # type: ignore[no-untyped-def]
    """Runs on an open device of any target: image at 0, instructions after it."""
    outs = []
    for name, code, dram in progs:
        base = dev.alloc(dram.size, align=4096)
        assert base == 0
        ia = dev.alloc(len(code), align=4096)
        dev.write(base, dram)
        dev.write(ia, np.frombuffer(code, np.uint8))
        res = dev.run(ia, len(code) // 16, timeout_s=120)
        outs.append((name, dev.read(base, dram.size), res.stats))
        dev.free(base)
        dev.free(ia)
    return outs


