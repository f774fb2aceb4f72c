"""`make sim`: the default workload on the RTL co-simulation, through the driver, against fsim.

The workload is a residual block compiled by the TVM operator compiler (vtabench.compiler):
conv3x3 + bias + requantising shift + ReLU, then conv3x3 + bias + shift + the block's input added
back (LOAD ACC_8BIT) + ReLU, both queued on one runtime and run with ONE host-device
synchronisation (the cloud RFC's batched sync). It runs on the RTL behind the modeled PCIe
platform (DMA in, launch, MSI, DMA out) and on fsim; the outputs must be identical to each other
and to a TVM-on-CPU (llvm) build of the same operators.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vtabench.config import Config

#: (channels, height, width) of the block's activation.
BLOCK_SHAPE = (32, 14, 14)
SHIFT = 8


def block_specs(cfg: Config) -> tuple[Any, Any]:
    from vtabench.compiler.ops import Conv2dSpec

    c, h, w = BLOCK_SHAPE
    c = max(c, 2 * cfg.block)  # at least two channel blocks in every configuration
    ep1 = (("bias",), ("shift", SHIFT), ("relu",), ("clip", 0, 127))
    ep2 = (("bias",), ("shift", SHIFT), ("residual",), ("relu",), ("clip", 0, 127))
    conv1 = Conv2dSpec(cfg.batch, c, h, w, c, 3, 1, 1, ep1, name="conv1")
    conv2 = Conv2dSpec(cfg.batch, c, h, w, c, 3, 1, 1, ep2, name="conv2")
    return conv1, conv2


def block_inputs(cfg: Config, seed: int = 0) -> dict[str, np.ndarray]:
    """Deterministic inputs: x, weights and biases of both convolutions."""
    from vtabench.compiler.build import compile_op

    rng = np.random.default_rng(seed)
    conv1, conv2 = (compile_op(s, cfg) for s in block_specs(cfg))
    a = conv1.random_inputs(rng, small=True)
    b = conv2.random_inputs(rng, small=True)
    return {"x": a["data"], "w1": a["weight"], "b1": a["bias0"], "w2": b["weight"],
            "b2": b["bias0"]}


def reference(cfg: Config, inputs: dict[str, np.ndarray]) -> np.ndarray:
    """The same two operators built for the CPU by TVM (llvm)."""
    from vtabench.compiler.build import compile_op

    conv1, conv2 = (compile_op(s, cfg) for s in block_specs(cfg))
    y = conv1.reference({"data": inputs["x"], "weight": inputs["w1"], "bias0": inputs["b1"]})
    return conv2.reference({"data": y, "weight": inputs["w2"], "bias0": inputs["b2"],
                            "residual2": inputs["x"]})


@dataclass
class BlockRun:
    out: np.ndarray
    syncs: int
    insns: int
    cycles: int | None
    stats: dict[str, Any] = field(default_factory=dict)
    pcie: dict[str, Any] = field(default_factory=dict)
    wall_s: float = 0.0


def run_block(dev: Any, inputs: dict[str, np.ndarray]) -> BlockRun:
    """Queue both convolutions on one runtime and synchronise once."""
    from vtabench.compiler.build import compile_op
    from vtabench.runtime import Runtime

    cfg = dev.cfg
    conv1, conv2 = (compile_op(s, cfg) for s in block_specs(cfg))
    t0 = time.perf_counter()
    rt = Runtime(dev, sync="batch")
    bufs = {name: rt.alloc(arr.nbytes) for name, arr in inputs.items()}
    for name, arr in inputs.items():
        rt.write(bufs[name], np.ascontiguousarray(arr))
    nbytes = int(np.prod(conv2.output_shape))
    y, out = rt.alloc(nbytes), rt.alloc(nbytes)
    conv1.emit(rt, {"data": bufs["x"], "weight": bufs["w1"], "bias0": bufs["b1"], "out": y})
    conv2.emit(rt, {"data": y, "weight": bufs["w2"], "bias0": bufs["b2"],
                    "residual2": bufs["x"], "out": out})
    rt.sync()
    result = rt.read(out).view(np.int8).reshape(conv2.output_shape).copy()
    run_stats = dict(rt.stats.run_results[-1].stats) if rt.stats.run_results else {}
    pcie = dev.pcie_stats() if hasattr(dev, "pcie_stats") else {}
    run = BlockRun(result, rt.stats.syncs, rt.stats.insns, rt.stats.cycles(), run_stats, pcie,
                   time.perf_counter() - t0)
    rt.close()
    return run


def _rtl_job(cfg_name: str, inputs: dict[str, np.ndarray], mem_bytes: int) -> BlockRun:
    from vtabench.config import load_config
    from vtabench.drivers import open_device

    with open_device("rtl", load_config(cfg_name), mem_bytes=mem_bytes) as dev:
        return run_block(dev, inputs)


def simulate(cfg: Config, *, link: str = "gen3x16", seed: int | None = None,
             waves: bool | str = False) -> tuple[bool, str]:
    """Run the workload on rtl and fsim; returns (passed, summary text)."""
    from vtabench.drivers import open_device
    from vtabench.drivers.rtl_backend import run_in_simulator
    from vtabench.tb.platform.link import format_pcie

    inputs = block_inputs(cfg)
    mem = 16 << 20
    with open_device("fsim", cfg, mem_bytes=mem) as dev:
        golden = run_block(dev, inputs)
    t0 = time.perf_counter()
    rtl: BlockRun = run_in_simulator(cfg, _rtl_job, (cfg.name, inputs, mem), link=link,
                                     seed=seed, waves=waves, quiet=False)
    wall = time.perf_counter() - t0
    ref = reference(cfg, inputs)
    conv1, conv2 = block_specs(cfg)
    macs = conv1.macs + conv2.macs
    ok_fsim = np.array_equal(rtl.out, golden.out)
    ok_ref = np.array_equal(golden.out, ref)
    cycles = rtl.cycles or 0
    util = macs / cfg.macs_per_cycle / cycles if cycles else 0.0
    lines = [
        f"vtabench sim: config {cfg.name} ({cfg.batch}x{cfg.block}x{cfg.block}, "
        f"{cfg.macs_per_cycle} MAC/cycle), residual block {conv1.c}x{conv1.h}x{conv1.w}, "
        f"2 x conv3x3 ({macs / 1e6:.1f} M MACs)",
        f"  rtl vs fsim:          {'PASS' if ok_fsim else 'FAIL'} (bit-exact int8 output)",
        f"  fsim vs TVM llvm:     {'PASS' if ok_ref else 'FAIL'}",
        f"  instructions:         {rtl.insns}",
        f"  core cycles:          {cycles}",
        f"  MAC utilization:      {100 * util:.1f}% of peak",
        f"  host-device syncs:    {rtl.syncs}",
        f"  PCIe ({rtl.pcie.get('link', link)}): {format_pcie(rtl.pcie)}",
        f"  wall time:            {wall:.1f} s (simulator start, DMA, run; fsim "
        f"{golden.wall_s * 1e3:.0f} ms)",
    ]
    return ok_fsim and ok_ref, "\n".join(lines)
