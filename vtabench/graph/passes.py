"""Graph passes: residual fusion, legality, placement, copies, device-program merging.

Placement rule (docs/graph.md): a node's device is a *set* of allowed devices, narrowed in three
steps, none of which looks at argument positions:

1. *Annotation*: conv2d / dense chains that the operator compiler accepts (shape and tiling
   checked with ``compile_op``'s own checks) are VTA; anything else is CPU (with the reason);
   graph inputs and outputs live on the host. Layout-neutral data movement on int8 tensors
   (reshape, flatten, squeeze, expand_dims) may go either way.
2. *Propagation* to a fixpoint: a node allowed on both follows its neighbours - it is VTA when
   every placed producer *and* consumer is VTA, else CPU. Each round looks at the full
   neighbour sets, so the result does not depend on the order of arguments or of bindings
   (post-DFS propagation that takes the first argument's device is what the cloud RFC found
   wrong on ResNet-50's first residual block).
3. *Copies*: every edge whose ends sit on different devices gets one copy node per (tensor,
   destination device), shared by every consumer on that side.

Merging: each VTA node gets a *wave* number (how many CPU round trips precede it); VTA nodes of
one wave form one device program (one sync), CPU nodes between two waves one CPU function.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vtabench.graph.ir import CPU, VTA, Graph, Node

if TYPE_CHECKING:
    from vtabench.spec.config import Config

NEUTRAL_OPS = {"relax.reshape", "relax.flatten", "relax.squeeze", "relax.expand_dims"}


def fuse_residuals(g: Graph) -> None:
    """Fold ``q(relu?(dq(conv) + dq(r)))`` into the conv's epilogue (LOAD ACC_8BIT + ALU ADD)
    when the conv result feeds only the Add and the three scales are equal. When both operands
    qualify, the one deeper in the graph (the main branch, not the shortcut) is chosen, then the
    smaller key: the same choice for either argument order."""
    depth = g.depth()
    for name in list(g.order):
        n = g.nodes.get(name)
        if n is None or n.op != "add":
            continue
        q = n.q
        if q.unsupported:
            n.reason = q.unsupported
            continue
        if not (q.in_log2 == q.in2_log2 == q.out_log2):
            n.reason = "add with unequal scales"
            continue
        cands = []
        for i, src in enumerate(n.inputs):
            p = g.nodes[src]
            if (p.op == "conv2d" and not p.q.residual and not p.q.relu and not p.q.unsupported
                    and g.consumers(src) == [name] and p.q.out_log2 == q.out_log2):
                cands.append((-depth[src], p.q.key, i))
        if not cands:
            n.reason = "add not fusable into a conv (standalone elementwise add)"
            continue
        _, _, i = min(cands)
        conv = g.nodes[n.inputs[i]]
        other = n.inputs[1 - i]
        conv.q.residual = True
        conv.q.res_relu = q.relu
        conv.q.key = f"{conv.q.key}+res"
        conv.inputs = [conv.inputs[0], other]
        g.replace_uses(name, conv.name)
        g.remove(name)
        # the conv now comes after `other`
        g.topo()


def check_legal(g: Graph, cfg: Config, force_cpu: set[str] | None = None) -> None:
    """Annotate VTA candidates the operator compiler can take (sets ``spec``), with the reason
    for every one it cannot."""
    from vtabench.compiler import CompileError, Conv2dSpec, DenseSpec, choose_tiling

    force_cpu = force_cpu or set()
    for name in g.order:
        n = g.nodes[name]
        if not n.is_candidate:
            continue
        if n.key in force_cpu or n.name in force_cpu:
            n.reason = "placed on the CPU by request"
            continue
        if n.q.unsupported:
            n.reason = n.q.unsupported
            continue
        if not 0 <= n.q.shift <= 31:
            n.reason = f"requantization shift {n.q.shift} outside [0, 31]"
            continue
        try:
            if n.q.weight is None:
                raise CompileError("no integer form")
            if n.op == "conv2d":
                o, c, k, k2 = n.q.weight.shape
                x = g.nodes[n.inputs[0]]
                _, _, h, w = x.shape
                if k != k2:
                    raise CompileError("non-square kernel")
                spec = Conv2dSpec(1, c, h, w, o, k, n.q.stride, n.q.pad,
                                  epilogue=n.q.epilogue(), name=n.name)
                if n.shape[0] != 1:
                    raise CompileError(f"batch {n.shape[0]}")
            else:
                m, k = n.q.weight.shape
                spec = DenseSpec(1, k, m, epilogue=n.q.epilogue(), name=n.name)
            spec.check(cfg)
            choose_tiling(spec, cfg)
            n.spec = spec
        except (CompileError, ValueError) as exc:
            n.reason = str(exc)


def place(g: Graph) -> None:
    """Annotate, then propagate to a fixpoint (see the module docstring)."""
    allowed: dict[str, set[str]] = {}
    for name in g.order:
        n = g.nodes[name]
        if n.op == "input":
            allowed[name] = {CPU}
        elif n.is_candidate:
            allowed[name] = {VTA} if n.spec is not None else {CPU}
        elif n.op in NEUTRAL_OPS and n.dtype == "int8":
            allowed[name] = {CPU, VTA}
        else:
            allowed[name] = {CPU}
    cons = {name: g.consumers(name) for name in g.order}
    outputs = set(g.outputs)
    dev: dict[str, str] = {k: next(iter(v)) for k, v in allowed.items() if len(v) == 1}
    changed = True
    while changed:
        changed = False
        for name in g.order:
            if len(allowed[name]) == 1:
                continue
            n = g.nodes[name]
            neigh = [dev.get(i) for i in n.inputs] + [dev.get(c) for c in cons[name]]
            if name in outputs:
                neigh.append(CPU)
            placed = [d for d in neigh if d is not None]
            if placed and all(d == VTA for d in placed) and len(placed) == len(neigh):
                new = VTA
            elif any(d == CPU for d in placed):
                new = CPU
            else:
                continue
            if dev.get(name) != new:
                dev[name] = new
                changed = True
    for name in g.order:
        n = g.nodes[name]
        n.device = dev.get(name, CPU)
        if n.device == CPU and not n.reason and n.op not in ("input", "copy"):
            n.reason = ("no VTA pattern: CPU (llvm)" if not n.is_candidate
                        else "placed with its neighbours")


def insert_copies(g: Graph) -> list[str]:
    """One copy node per (tensor, destination device) wherever an edge crosses devices, and for
    graph outputs produced on VTA. Returns the copy nodes' names."""
    copies: list[str] = []
    for name in list(g.order):
        n = g.nodes[name]
        for c in g.consumers(name):
            m = g.nodes[c]
            if m.op == "copy" or m.device == n.device:
                continue
            cname = f"copy_{name}_to_{m.device}"
            if cname not in g.nodes:
                cp = Node(name=cname, op="copy", inputs=[name], shape=n.shape, dtype=n.dtype,
                          device=m.device)
                g.add(cp)
                copies.append(cname)
            m.inputs = [cname if i == name else i for i in m.inputs]
            m.relax_args = [cname if i == name else i for i in m.relax_args]
        if name in g.outputs and n.device != CPU:
            cname = f"copy_{name}_to_{CPU}"
            if cname not in g.nodes:
                g.add(Node(name=cname, op="copy", inputs=[name], shape=n.shape, dtype=n.dtype,
                           device=CPU))
                copies.append(cname)
            g.outputs = [cname if o == name else o for o in g.outputs]
    g.topo()
    return copies


def waves(g: Graph) -> dict[str, int]:
    """Wave of every node: a VTA node's wave is the largest wave among its producers (a CPU
    producer of wave w counts w); a CPU node's is the largest of its producers' waves, plus one
    after a VTA producer. Copies take the wave of their destination side."""
    w: dict[str, int] = {}
    for name in g.topo():
        n = g.nodes[name]
        best = 0
        for i in n.inputs:
            p = g.nodes[i]
            pw = w[i]
            if n.device == CPU and p.device == VTA:
                pw += 1
            best = max(best, pw)
        w[name] = best
    return w


def check_boundaries(g: Graph) -> None:
    """Every edge joins nodes of one device, or goes through a copy (an assertion of the
    placement's invariant, run after :func:`insert_copies`)."""
    for name in g.order:
        n = g.nodes[name]
        for i in n.inputs:
            p = g.nodes[i]
            if n.op == "copy":
                continue
            if p.device != n.device:
                raise AssertionError(f"{i} ({p.device}) -> {name} ({n.device}) without a copy")
