"""Names for the runs of a network package's trace: which inference and wave a run is, and where
each layer lies inside a batched program.

A package (:class:`vtabench.graph.package.Package`) holds one device program per wave of an
inference and, for profiling, one program per layer. The batched program is not the layer
programs put end to end (it shares micro-op loads and hands tokens from layer to layer), but each
layer ends with the STORE of the last tile of its output, at the same DRAM address in both: a
layer's instruction range inside the batched program (:class:`~vtabench.report.breakdown.Segment`)
runs from after the previous layer's last STORE to its own. When a layer's last STORE is not
found in order, the program stays one window (one segment: all its instructions).

Each segment carries its layers' useful MACs (the manifest's ``macs``), which its MAC utilization
is of (:mod:`vtabench.runtime.utilization`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from vtabench.report.breakdown import Segment
from vtabench.spec.isa.insn import Insn, decode_program
from vtabench.spec.isa.layout import Opcode

if TYPE_CHECKING:
    from vtabench.graph.package import Package, WaveProgram
    from vtabench.spec.config import Config


def _store_key(insn: Insn) -> tuple[int, int, int, int, int]:
    """A STORE's destination, whatever its token flags."""
    return (insn.sram_base, insn.dram_base, insn.y_size, insn.x_size, insn.x_stride)


def layer_macs(pkg: Package, layers: Sequence[str]) -> int:
    """The useful MACs of the named layers (the manifest's ``macs``)."""
    return sum(int(pkg.manifest["layers"][name]["macs"]) for name in layers)


def layer_segments(cfg: Config, pkg: Package, program: WaveProgram) -> list[Segment]:
    """The layers of ``program`` as instruction ranges, or [] when they cannot be told apart
    (see the module docstring)."""
    parts = [q for q in pkg.profile if q.wave == program.wave]
    insns = decode_program(cfg, program.program.encoded(cfg))
    out: list[Segment] = []
    first = 0
    counted: set[str] = set()  # a layer of several profiling programs counts its MACs once
    for k, q in enumerate(parts):
        stores = [_store_key(i) for i in decode_program(cfg, q.program.encoded(cfg))
                  if i.opcode == Opcode.STORE]
        if not stores:
            return []
        last = next((j for j in range(first, len(insns)) if insns[j].opcode == Opcode.STORE
                     and _store_key(insns[j]) == stores[-1]), None)
        if last is None:
            return []
        end = len(insns) - 1 if k == len(parts) - 1 else last
        new = [name for name in q.layers if name not in counted]
        counted.update(new)
        out.append(Segment(", ".join(q.layers), first, end, layer_macs(pkg, new)))
        first = end + 1
    return out


def inference_runs(cfg: Config, pkg: Package, runs: int, n_traced: int
                   ) -> tuple[list[str], dict[int, Sequence[Segment]]] | None:
    """Labels and layer segments for the ``n_traced`` runs of ``runs`` inferences (each runs
    the package's programs in wave order), or None when the count does not match. A program
    whose layers cannot be told apart is one segment, with the MACs of all its layers, when it
    is its wave's only program; else (its wave's layers split over several programs) it has
    none, and its window counts the MACs its GEMMs issue."""
    order = sorted(pkg.programs, key=lambda p: p.wave)
    if n_traced != runs * len(order):
        return None
    labels: list[str] = []
    segments: dict[int, Sequence[Segment]] = {}
    for i in range(runs):
        for p in order:
            label = f"inference {i + 1}" + (f", wave {p.wave}" if len(order) > 1 else "")
            segs = layer_segments(cfg, pkg, p)
            if not segs and sum(q.wave == p.wave for q in order) == 1:
                count = p.program.count
                segs = [Segment(label, 0, count - 1, layer_macs(pkg, p.layers))]
            if segs:
                segments[len(labels)] = segs
            labels.append(label)
    return labels, segments

