"""The light zoo networks (``zoo_models``) through quantization and the graph compiler: one row
per network of what runs where, for docs/graph.md's "The onnx package's light models" and for
benches that want the same figures.

    row = sweep_model("squeezenet")          # onnxruntime's quantize_static defaults
    print(row.text())                        # one summary line, then each CPU node's reason

Quantization is onnxruntime's ``quantize_static`` with its own defaults (asymmetric uint8
activations, symmetric per-tensor int8 weights), calibrated on ``calibration_set``'s seeded
samples; the compile is ``compile_model`` without the profiling programs (what ``vtabench
compile --no-profile`` times), wall time measured around it.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from vtabench.workloads.quantize import calibration_set, quantize
from vtabench.workloads.zoo_models import ZOO_NAMES, zoo_model

#: Operators that are bookkeeping, not computation, in a node count.
_NOT_COUNTED = ("copy", "input")


@dataclass(frozen=True)
class CpuNode:
    """A node the compiler left on the CPU: its name, operator, ONNX tensor and reason."""

    name: str
    op: str
    onnx: str
    reason: str


@dataclass
class ZooRow:
    """One network's placement: counts from the package's manifest."""

    name: str
    compile_s: float
    nodes_vta: int
    nodes_cpu: int
    copies: int
    syncs: int
    insns: int
    macs: int  # the model's conv / Gemm multiply-accumulates
    macs_vta: int  # those of the convs and Gemms placed on VTA
    cpu: list[CpuNode] = field(default_factory=list)

    @property
    def share(self) -> float:
        """Fraction of the model's conv / Gemm MACs that VTA runs."""
        return self.macs_vta / self.macs if self.macs else 0.0

    def text(self) -> str:
        """One summary line, then one line per CPU node with its reason."""
        head = (f"{self.name}: compile {self.compile_s:.1f} s, {self.nodes_vta} nodes on VTA / "
                f"{self.nodes_cpu} on the CPU, {self.copies} copies, {self.syncs} syncs, "
                f"{self.insns} instructions, conv/Gemm MACs on VTA {self.share:.2%} of "
                f"{self.macs / 1e6:.1f} M")
        return "\n".join([head] + [f"  CPU: {c.name} ({c.op}, {c.onnx}): {c.reason}"
                                   for c in self.cpu])


def quantized_zoo_model(name: str, seed: int = 0, count: int = 8) -> Any:
    """The zoo network ``name`` (seeded weights) quantized with onnxruntime's defaults on
    ``count`` seeded calibration samples."""
    model = zoo_model(name, seed)
    return quantize(model, calibration_set(model, count), symmetric=False, activation="uint8")


def package_row(name: str, pkg: Any, compile_s: float) -> ZooRow:
    """The row of a compiled package."""
    nodes = pkg.manifest["nodes"]
    stats = pkg.manifest["stats"]
    counted = [n for n in nodes if n["op"] not in _NOT_COUNTED]
    cpu = [CpuNode(n["name"], n["op"], n.get("onnx") or "-", n.get("reason") or "no VTA pattern")
           for n in counted if n["device"] != "vta"]
    return ZooRow(name=name, compile_s=compile_s,
                  nodes_vta=len(counted) - len(cpu), nodes_cpu=len(cpu),
                  copies=sum(n["op"] == "copy" for n in nodes), syncs=len(pkg.programs),
                  insns=int(stats["insns"]), macs=int(stats["macs_conv_gemm"]),
                  macs_vta=int(stats["macs_conv_gemm_vta"]), cpu=cpu)


def sweep_model(name: str, cfg: str = "default", seed: int = 0,
                count: int = 8) -> tuple[ZooRow, Any, Any]:
    """Quantize and compile one zoo network: its row, the package and the quantized model."""
    from vtabench.graph import compile_model

    q = quantized_zoo_model(name, seed, count)
    t0 = time.perf_counter()
    pkg = compile_model(q, cfg, profile=False)
    return package_row(name, pkg, time.perf_counter() - t0), pkg, q


def sweep(names: Iterable[str] = ZOO_NAMES, cfg: str = "default", seed: int = 0,
          count: int = 8) -> list[ZooRow]:
    """The rows of ``names`` (default all nine), compiled one after the other."""
    return [sweep_model(n, cfg, seed, count)[0] for n in names]


def main(argv: list[str] | None = None) -> int:
    """``python -m vtabench.workloads.zoo_sweep [NAME...]``: print each network's row."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m vtabench.workloads.zoo_sweep",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("names", nargs="*", metavar="NAME",
                   help=f"zoo networks (default all: {', '.join(ZOO_NAMES)})")
    p.add_argument("--config", default="default")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    unknown = [n for n in args.names if n not in ZOO_NAMES]
    if unknown:
        p.error(f"unknown zoo network {unknown[0]!r}: one of {', '.join(ZOO_NAMES)}")
    for name in args.names or ZOO_NAMES:
        print(sweep_model(name, args.config, args.seed)[0].text(), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
