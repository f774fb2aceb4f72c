"""The graph the partitioner, placement and the executor share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

CPU = "cpu"
VTA = "vta"


@dataclass
class QParams:
    """Integer form of a QDQ operator chain (power-of-two scales, zero points 0).

    conv2d / dense: ``out = clip(((x * w) + bias + 2^(shift-1)) >> shift, lo, hi)`` with
    ``lo = 0`` after a ReLU else -128, ``hi = 127``; with a fused residual the conv's int8 result
    is added to the residual and clipped again (``res_lo`` from the Add's ReLU).
    add: ``q(dq(a) + dq(b))`` (scales ``in_log2``, ``in2_log2``, ``out_log2``)."""

    kind: str
    weight: np.ndarray | None = None  # conv OIHW / dense (M, K) int8
    bias: np.ndarray | None = None  # int32
    shift: int = 0
    relu: bool = False
    in_log2: int = 0
    in2_log2: int = 0
    out_log2: int = 0
    stride: int = 1
    pad: int = 0
    residual: bool = False  # a residual int8 tensor (inputs[1]) added after requantization
    res_relu: bool = False
    key: str = ""
    unsupported: str = ""
    integer_exact: bool = True  # the integer form equals the QDQ chain (else CPU runs the chain)
    label: str = ""

    def epilogue(self) -> tuple:
        """The operator compiler's epilogue (vtabench.compiler.ops) for these parameters."""
        ep: list[tuple] = [("bias",)]
        if self.shift > 0:
            ep.append(("shift", self.shift))
        if self.residual:
            ep.append(("clip", 0 if self.relu else -128, 127))
            ep.append(("residual",))
            ep.append(("clip", 0 if self.res_relu else -128, 127))
        else:
            ep.append(("clip", 0 if self.relu else -128, 127))
        return tuple(ep)


@dataclass
class Node:
    name: str
    op: str  # input | conv2d | dense | add | copy | a Relax op name
    inputs: list[str]
    shape: tuple[int, ...]
    dtype: str
    q: QParams | None = None
    expr: Any = None  # the Relax call (CPU ops)
    relax_func: Any = None  # the composite function (VTA candidates)
    relax_args: list[str] = field(default_factory=list)
    arg_vars: list[Any] = field(default_factory=list)  # CPU ops: the Relax var of each input
    device: str = ""
    reason: str = ""  # why a VTA candidate runs on the CPU
    spec: Any = None  # Conv2dSpec / DenseSpec when on VTA

    @property
    def key(self) -> str:
        """Stable identity independent of binding names and argument order."""
        return self.q.key if self.q is not None else f"{self.op}:{self.name}"

    @property
    def is_candidate(self) -> bool:
        return self.op in ("conv2d", "dense")


class Graph:
    def __init__(self) -> None:
        self.nodes: dict[str, Node] = {}
        self.order: list[str] = []
        self.inputs: list[str] = []
        self.outputs: list[str] = []

    def add(self, n: Node) -> Node:
        self.nodes[n.name] = n
        self.order.append(n.name)
        return n

    def remove(self, name: str) -> None:
        del self.nodes[name]
        self.order.remove(name)

    def consumers(self, name: str) -> list[str]:
        return [m for m in self.order if name in self.nodes[m].inputs]

    def replace_uses(self, old: str, new: str) -> None:
        for m in self.order:
            n = self.nodes[m]
            n.inputs = [new if i == old else i for i in n.inputs]
            n.relax_args = [new if i == old else i for i in n.relax_args]
        self.outputs = [new if o == old else o for o in self.outputs]

    def topo(self) -> list[str]:
        """Nodes in a topological order (stable: ties keep ``order``)."""
        done: set[str] = set()
        out: list[str] = []
        pos = {n: i for i, n in enumerate(self.order)}

        def visit(n: str, stack: set[str]) -> None:
            if n in done:
                return
            if n in stack:
                raise ValueError(f"cycle at {n}")
            stack.add(n)
            for i in sorted(self.nodes[n].inputs, key=lambda x: pos.get(x, -1)):
                if i in self.nodes:
                    visit(i, stack)
            stack.discard(n)
            done.add(n)
            out.append(n)

        for n in self.order:
            visit(n, set())
        self.order = out
        return out

    def depth(self) -> dict[str, int]:
        """Longest path from a graph input (argument-order independent)."""
        d: dict[str, int] = {}
        for n in self.topo():
            ins = [d[i] for i in self.nodes[n].inputs if i in d]
            d[n] = 1 + max(ins) if ins else 0
        return d
