"""The graph IR's invariants, checked after every pass of the pipeline
(:mod:`vtabench.graph.pipeline`). A broken invariant is a bug of the pass that ran last, not of
the model: :class:`IRError` names the pass, the node and what is wrong.

What the IR promises (:mod:`vtabench.graph.ir`):

* ``order`` lists every node of ``nodes`` once, each under its own name; graph inputs are
  ``input`` nodes without inputs, graph outputs are nodes;
* ``order`` is a topological order: every node's ``inputs`` (and a composite's ``relax_args``)
  name nodes that come before it (so the graph has no cycle);
* every node has a shape (a tuple of non-negative ints, empty only for a value that is not a
  tensor) and a dtype (a string, set for every tensor); a graph output is a tensor;
* a node read from a QDQ composite carries its quantization facts (``q``);
* placement: a device is ``cpu``, ``vta`` or not yet chosen, for all nodes at once; inputs are
  on the CPU; a VTA node is an operator the compiler took (``spec`` set), layout-neutral data
  movement or a copy; only an operator VTA may run has a ``spec``; a copy has one input, on the
  other device.
"""

from __future__ import annotations

from collections.abc import Callable

from vtabench.graph.ir import CPU, VTA, Graph, Node
from vtabench.graph.passes import NEUTRAL_OPS

#: Node ops that only a QDQ composite makes (vtabench.graph.relax_to_graph).
COMPOSITE_OPS = frozenset({"conv2d", "dense", "avgpool", "avgpool2d", "leaky", "mul", "hardswish",
                           "add", "eltwise_add", "act", "reshape", "maxpool",
                           "resize"})


class IRError(Exception):
    """A graph that breaks an invariant of the IR (after the pass named in the message)."""


def verify_graph(g: Graph, after: str = "") -> None:
    """Raise :class:`IRError` at the first broken invariant (see the module docstring);
    ``after``: the pass that produced ``g``, for the message."""
    where = f"after {after}: " if after else ""

    def fail(what: str) -> IRError:
        return IRError(f"{where}{what}")

    if len(g.order) != len(set(g.order)) or set(g.order) != set(g.nodes):
        raise fail(f"order and nodes differ: only in order "
                   f"{sorted(set(g.order) - set(g.nodes))}, only in nodes "
                   f"{sorted(set(g.nodes) - set(g.order))}, repeated "
                   f"{sorted({n for n in g.order if g.order.count(n) > 1})}")
    pos = {name: i for i, name in enumerate(g.order)}
    for name in g.order:
        n = g.nodes[name]
        if n.name != name:
            raise fail(f"node {name!r} is named {n.name!r}")
        for ref in (*n.inputs, *n.relax_args):
            if ref not in pos:
                raise fail(f"node {name}: input {ref!r} is not defined")
            if pos[ref] >= pos[name]:
                raise fail(f"node {name}: input {ref!r} is defined after its use")
        _check_tensor(n, fail)
    for i in g.inputs:
        if i not in g.nodes or g.nodes[i].op != "input" or g.nodes[i].inputs:
            raise fail(f"graph input {i!r} is not an input node")
    for o in g.outputs:
        if o not in g.nodes:
            raise fail(f"graph output {o!r} is not defined")
        if not g.nodes[o].shape and g.nodes[o].op != "input":
            raise fail(f"graph output {o!r} is not a tensor")
    _check_placement(g, fail)


def _check_tensor(n: Node, fail: Callable[[str], IRError]) -> None:
    if not isinstance(n.shape, tuple) or not all(
            isinstance(d, int) and d >= 0 for d in n.shape):
        raise fail(f"node {n.name}: shape {n.shape!r} is not a tuple of sizes")
    if not isinstance(n.dtype, str) or (n.shape and not n.dtype):
        raise fail(f"node {n.name}: tensor of shape {n.shape} without a dtype")
    if n.op in COMPOSITE_OPS and n.q is None:
        raise fail(f"node {n.name}: {n.op} without its quantization facts")


def _check_placement(g: Graph, fail: Callable[[str], IRError]) -> None:
    devices = {n.device for n in g.nodes.values()}
    if not devices <= {"", CPU, VTA}:
        raise fail(f"unknown device(s) {sorted(devices - {'', CPU, VTA})}")
    if "" in devices and devices != {""}:
        unplaced = sorted(n.name for n in g.nodes.values() if not n.device)
        raise fail(f"nodes without a device beside placed ones: {unplaced[:5]}")
    for name in g.order:
        n = g.nodes[name]
        if n.spec is not None and not n.vta_op:
            raise fail(f"node {name}: {n.op} has an operator spec (only VTA operators do)")
        if not n.device:
            continue
        if n.op == "input" and n.device != CPU:
            raise fail(f"graph input {name} placed on {n.device}")
        if n.device == VTA and n.spec is None and n.op not in NEUTRAL_OPS | {"copy"}:
            raise fail(f"node {name}: {n.op} on VTA without an operator spec")
        if n.op == "copy" and (len(n.inputs) != 1 or g.nodes[n.inputs[0]].device == n.device):
            raise fail(f"copy {name}: not one input on the other device")
