"""Run compiled operators on any target through the runtime and the driver API.

:func:`run_ops` takes a list of :class:`OpJob` (operator spec, optional tiling, inputs, double
buffering) and returns, per job, the int8 output and statistics (instructions, device cycles
when the target counts them). It opens one device for the whole list (on rtl: one simulator).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from vtabench.compiler.compile import compile_op
from vtabench.compiler.ops import Conv2dSpec, DenseSpec
from vtabench.compiler.tiling import Tiling
from vtabench.drivers import open_device
from vtabench.runtime import Runtime

if TYPE_CHECKING:
    from vtabench.spec.config import Config


@dataclass
class OpJob:
    spec: Conv2dSpec | DenseSpec
    inputs: dict[str, np.ndarray]
    tiling: Tiling | None = None
    double_buffer: bool = True


@dataclass
class OpResult:
    out: np.ndarray
    insns: int
    cycles: int | None
    syncs: int
    tiling: Tiling
    stats: dict[str, Any] = field(default_factory=dict)


def _mem_bytes(jobs: list[OpJob]) -> int:
    total = 0
    for j in jobs:
        total += sum(a.nbytes for a in j.inputs.values()) * 2 + (1 << 16)
    total += 16 << 20
    return 1 << max(24, (total - 1).bit_length())


def run_jobs_on(dev: Any, jobs: list[OpJob]) -> list[OpResult]:
    """Run each job on an open device with a fresh runtime (one sync per job)."""
    cfg = dev.cfg
    results = []
    for j in jobs:
        op = compile_op(j.spec, cfg, tiling=j.tiling, double_buffer=j.double_buffer)
        rt = Runtime(dev, sync="batch")
        out = op.run(rt, j.inputs)
        stats = {}
        if rt.stats.run_results:
            stats = dict(rt.stats.run_results[-1].stats)
        results.append(OpResult(out, rt.stats.insns, rt.stats.cycles(), rt.stats.syncs, op.tiling,
                                {k: v for k, v in stats.items() if isinstance(v, (int, float))}))
        rt.close()
    return results


def run_ops(target: str, cfg: Config, jobs: list[OpJob], **dev_opts: Any) -> list[OpResult]:
    with open_device(target, cfg, _mem_bytes(jobs), **dev_opts) as dev:
        return run_jobs_on(dev, jobs)


# ---------------------------------------------------------------------------------------------
# Networks: several operators through one runtime (the cloud RFC's batched synchronization)
# ---------------------------------------------------------------------------------------------

@dataclass
class NetLayer:
    """One operator of a network: ``inputs`` maps the operator's input names (data, weight,
    bias0, residual2, ...) to network tensor names; ``out`` names its output tensor."""

    spec: Conv2dSpec | DenseSpec
    inputs: dict[str, str]
    out: str


def run_network_on(dev: Any, layers: list[NetLayer], tensors: dict[str, np.ndarray],
                   sync: str = "batch") -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Run the layers in order on an open device with one runtime; host tensors are written once,
    intermediate tensors stay in device memory. Returns every layer output and statistics
    (syncs, instructions, summed run statistics of the target)."""
    cfg = dev.cfg
    ops = [compile_op(layer.spec, cfg) for layer in layers]
    rt = Runtime(dev, sync=sync)
    bufs: dict[str, Any] = {}
    for name, arr in tensors.items():
        bufs[name] = rt.alloc(arr.nbytes)
        rt.write(bufs[name], np.ascontiguousarray(arr))
    for layer, op in zip(layers, ops):
        bufs[layer.out] = rt.alloc(int(np.prod(op.output_shape)))
    for layer, op in zip(layers, ops):
        op.emit(rt, {**{k: bufs[v] for k, v in layer.inputs.items()}, "out": bufs[layer.out]})
    rt.sync()
    outs = {layer.out: rt.read(bufs[layer.out]).view(np.int8).reshape(op.output_shape)
            for layer, op in zip(layers, ops)}
    summed: dict[str, float] = {}
    for r in rt.stats.run_results:
        for k, v in r.stats.items():
            if isinstance(v, (int, float)):
                summed[k] = summed.get(k, 0) + v
    stats = {"syncs": rt.stats.syncs, "auto_syncs": rt.stats.auto_syncs, "insns": rt.stats.insns,
             "noops": rt.stats.noops, **summed}
    for b in bufs.values():
        rt.free(b)
    rt.close()
    return outs, stats


def network_reference(cfg: Config, layers: list[NetLayer],
                      tensors: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The same layers built for llvm, run in order on the CPU."""
    env = dict(tensors)
    for layer in layers:
        op = compile_op(layer.spec, cfg)
        env[layer.out] = op.reference({k: env[v] for k, v in layer.inputs.items()})
    return {layer.out: env[layer.out] for layer in layers}


def run_network(target: str, cfg: Config, layers: list[NetLayer], tensors: dict[str, np.ndarray],
                syncs: tuple[str, ...] = ("layer", "batch"), **dev_opts: Any) -> dict[str, Any]:
    """Run a network on a target once per synchronization mode: {mode: (outputs, stats)}. On
    targets that model time (rtl) ``stats["host_ns"]`` is the modeled host time (DMA, MMIO, runs)
    of the whole inference."""
    mem = 1 << max(24, (sum(a.nbytes for a in tensors.values()) * 4 + (16 << 20)).bit_length())
    res = {}
    with open_device(target, cfg, mem, **dev_opts) as dev:
        for s in syncs:
            t0 = dev.modeled_ns()
            outs, stats = run_network_on(dev, layers, tensors, s)
            t1 = dev.modeled_ns()
            if t0 is not None and t1 is not None:
                stats["host_ns"] = t1 - t0
            res[s] = (outs, stats)
    return res
