"""The graph the partitioner, placement and the executor share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

CPU = "cpu"
VTA = "vta"


@dataclass(frozen=True)
class TensorQ:
    """How an integer tensor encodes reals: ``real = scale * (q - zero)``, ``q`` of ``dtype``.

    Integer operators hold every tensor in its *stored* form, int8 ``v = q - offset``: int8
    tensors as they are (offset 0), uint8 ones shifted by 128 (``v = q - 128``), because VTA's
    GEMM and LOAD ACC_8BIT read bytes as signed."""

    scale: float
    zero: int = 0
    dtype: str = "int8"

    @property
    def offset(self) -> int:
        return 128 if self.dtype == "uint8" else 0

    @property
    def zero_stored(self) -> int:
        """The zero point in the stored form (``zero - offset``)."""
        return self.zero - self.offset

    @property
    def qmin(self) -> int:
        return 0 if self.dtype == "uint8" else -128

    @property
    def qmax(self) -> int:
        return 255 if self.dtype == "uint8" else 127


@dataclass
class QParams:
    """Quantization facts of one integer operator chain read from a QDQ composite.

    conv2d / dense: ``y = q(act(dq(x) * dq(w) + dq(b)))``: int8 ``weight`` (conv OIHW, dense
    (M, K)) with per-output-channel ``w_scale`` (one value repeated for per-tensor scales), the
    int32 ``bias`` in units of ``x.scale * w_scale`` (zeros when absent), the activation folded
    into ``[lo, hi]`` (q units of ``y``). With a fused residual, ``res`` (the other operand) and
    ``add_out`` (the Add's output, then ``y`` is the conv's own output before the Add) and the
    Add's bounds ``res_lo``, ``res_hi``. The integer arithmetic they lead to is
    :mod:`vtabench.graph.integer`'s.
    add: ``q(act(dq(a) + dq(b)))`` with ``x`` = a, ``res`` = b, ``y`` the output.
    act: ``q(act(dq(x)))`` (ReLU, Clip) folded into ``[lo, hi]``.
    leaky: ``q(leakyrelu(dq(x), alpha))``, or ``q(prelu(dq(x), slopes))`` (per channel).
    mul: ``q(act(dq(x) * dq(res)))``, ``res`` of x's shape or one value per channel.
    hardswish: ``q(hardswish(dq(x)))`` (the ONNX operator).
    """

    kind: str  # conv2d | dense | add | act
    x: TensorQ | None = None
    y: TensorQ | None = None
    weight: np.ndarray | None = None
    w_scale: np.ndarray | None = None
    bias: np.ndarray | None = None
    lo: int = -128
    hi: int = 127
    stride: int = 1
    stride_w: int = 0  # the horizontal stride when it differs (PaddleOCR's (2, 1)); 0: stride
    pad: int = 0
    groups: int = 1  # the conv's groups: weight (O, C / groups, K, K); depthwise: groups = C
    # a grouped conv whose weight became the dense block-diagonal one (a channel shuffle folded
    # into it: vtabench.graph.shuffle): its group count, so that MAC counts stay the model's
    expanded_groups: int = 1
    alpha: float = 0.0  # leaky: the negative slope
    slopes: np.ndarray | None = None  # leaky from a PReLU: each channel's slope (alpha unused)
    # an average pool as a depthwise conv of ones whose padding is not counted: L, the least
    # common multiple of the window counts (weight scale 1 / L; the epilogue multiplies each
    # pixel by L / count: vtabench.graph.integer); 0: not such a pool
    pool_lcm: int = 0
    # a transposed conv whose kernel equals its stride (``stride``; weight (O, C, s, s), ONNX's
    # (C, O, s, s) transposed): each output pixel is one tap's dot product
    transposed: bool = False
    res: TensorQ | None = None  # residual operand (inputs[1])
    add_out: TensorQ | None = None  # a fused Add's output
    res_lo: int = -128
    res_hi: int = 127
    key: str = ""
    unsupported: str = ""
    integer_exact: bool = True  # the integer form stands for the chain (else CPU runs the chain)
    label: str = ""

    @property
    def residual(self) -> bool:
        return self.add_out is not None

    @property
    def out(self) -> TensorQ | None:
        """The tensor this node finally produces (the Add's output once one is fused)."""
        return self.add_out or self.y


@dataclass
class Node:
    name: str
    op: str  # input | conv2d | dense | avgpool | leaky | mul | add | act | reshape | maxpool |
    # resize |
    # copy | to_stored | from_stored | a Relax op name
    inputs: list[str]
    shape: tuple[int, ...]
    dtype: str
    q: QParams | None = None
    expr: Any = None  # the Relax call (CPU ops)
    relax_func: Any = None  # the composite function (VTA candidates)
    relax_args: list[str] = field(default_factory=list)
    arg_vars: list[Any] = field(default_factory=list)  # CPU ops: the Relax var of each input
    attrs: dict[str, Any] = field(default_factory=dict)  # integer CPU ops: shape, pool attrs
    device: str = ""
    reason: str = ""  # why a VTA candidate runs on the CPU
    spec: Any = None  # Conv2dSpec / DenseSpec when on VTA
    iform: Any = None  # the integer form (vtabench.graph.integer.IntegerForm) of a candidate
    onnx: str = ""  # the ONNX tensor it computes (after folding: the last one folded in)
    # channel c holds channel onnx_perm[c] of that ONNX tensor (a channel shuffle folded into
    # the node: vtabench.graph.shuffle); None: the same order
    onnx_perm: np.ndarray | None = None

    @property
    def key(self) -> str:
        """Stable identity independent of binding names and argument order."""
        return self.q.key if self.q is not None else f"{self.op}:{self.name}"

    @property
    def is_candidate(self) -> bool:
        """A GEMM operator VTA may run (conv2d, dense, global average pool, and LeakyReLU and
        the product of two activations as an identity conv)."""
        return self.op in ("conv2d", "dense", "avgpool", "leaky", "mul", "hardswish",
                           "eltwise_add")

    @property
    def vta_op(self) -> bool:
        """An operator VTA may run (it gets a ``spec`` when the compiler takes it)."""
        return self.is_candidate or self.op in ("maxpool", "resize")

    @property
    def integer(self) -> bool:
        """Computes its integer form on stored int8 tensors (else: a Relax call, or a
        composite's own QDQ chain, on the tensors' original types)."""
        return self.q is not None and self.q.integer_exact and not self.q.unsupported


class Graph:
    def __init__(self) -> None:
        self.nodes: dict[str, Node] = {}
        self.order: list[str] = []
        self.inputs: list[str] = []
        self.outputs: list[str] = []
        self.functions: dict[Any, Any] = {}  # TIR functions the CPU ops call (call_tir)

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
