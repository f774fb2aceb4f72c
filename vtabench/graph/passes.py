"""Graph passes: activation and residual folding, integer forms, uint8 conversions, legality,
placement, copies, device-program merging.

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
   wrong on ResNet-50's first residual block). A per-channel scale and shift (a depthwise
   1x1 conv: the affine rewrite's form) whose producers and consumers all end up on the CPU
   joins them (:func:`_isolated_affine`): on VTA it would be a device program, a sync, of
   its own; on the CPU it runs its integer form, the same bits. Then propagation runs again.
3. *Copies*: every edge whose ends sit on different devices gets one copy node per (tensor,
   destination device), shared by every consumer on that side.

Merging: each VTA node gets a *wave* number (how many CPU round trips precede it); VTA nodes of
one wave form one device program (one sync), CPU nodes between two waves one CPU function.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from vtabench.graph.ir import CPU, VTA, Graph, Node
from vtabench.graph.pack import groups_in_blocks, groups_of_blocks, phys_channels

if TYPE_CHECKING:
    from vtabench.spec.config import Config

#: ``Node.attrs`` key of a grouped conv whose groups are whole blocks of input and output
#: channels: its ``spec`` is one group's conv, run once per group on the group's channel blocks
#: (contiguous in the packed layout), the value the group count.
GROUP_SPLIT = "group_split"

NEUTRAL_OPS = {"relax.reshape", "relax.flatten", "relax.squeeze", "relax.expand_dims",
               "reshape"}


def lower_integer(g: Graph) -> None:
    """The integer form (:func:`vtabench.graph.integer.integer_form`) of every integer
    conv2d / dense / avgpool; a chain without one keeps its reason and its QDQ chain."""
    from vtabench.graph.integer import integer_form

    for n in g.nodes.values():
        if not (n.is_candidate and n.integer):
            continue
        x = g.nodes[n.inputs[0]]
        try:
            n.iform = integer_form(n.q, tuple(x.shape[2:4]) if len(x.shape) == 4 else (1, 1))
        except ValueError as exc:
            n.q.unsupported = str(exc)
            n.q.integer_exact = False
            n.iform = None


def fold_activations(g: Graph) -> None:
    """Fold a ReLU / Clip chain that keeps its input's scale and zero point into the clip
    bounds of the integer operator producing it, when that operator feeds only it."""
    for name in list(g.order):
        n = g.nodes.get(name)
        if n is None or n.op != "act" or not n.integer:
            continue
        p = g.nodes[n.inputs[0]]
        if p.q is None or p.q.unsupported or g.consumers(p.name) != [name] \
                or p.name in g.outputs:
            continue
        if p.op in ("conv2d", "dense", "avgpool", "mul") and p.integer and p.q.out == n.q.x:
            if p.q.residual:
                p.q.res_lo, p.q.res_hi = max(p.q.res_lo, n.q.lo), min(p.q.res_hi, n.q.hi)
            else:
                p.q.lo, p.q.hi = max(p.q.lo, n.q.lo), min(p.q.hi, n.q.hi)
        elif p.op in ("add", "eltwise_add") and p.q.y == n.q.x:
            p.q.lo, p.q.hi = max(p.q.lo, n.q.lo), min(p.q.hi, n.q.hi)
        else:
            continue
        if p.q.lo > p.q.hi or p.q.res_lo > p.q.res_hi:
            continue
        p.q.key = f"{p.q.key}+act{n.q.lo},{n.q.hi}"
        p.onnx = n.onnx
        g.replace_uses(name, p.name)
        g.remove(name)


def fuse_residuals(g: Graph) -> None:
    """Fold ``q(act(dq(conv) + dq(r)))`` into the conv's epilogue (LOAD ACC_8BIT + ALU ADD, with
    ALU MULs when the Add's scales differ: :mod:`vtabench.graph.integer`) when the conv result
    feeds only the Add. When both operands qualify, the one deeper in the graph (the main
    branch, not the shortcut) is chosen, then the smaller key: the same choice for either
    argument order."""
    from vtabench.graph.requant import choose_add

    depth = g.depth()
    for name in list(g.order):
        n = g.nodes.get(name)
        if n is None or n.op != "add":
            continue
        q = n.q
        if q.unsupported:
            n.reason = q.unsupported
            continue
        try:
            choose_add(q.x.scale / q.y.scale, q.res.scale / q.y.scale)
        except ValueError as exc:
            n.reason = str(exc)
            continue
        cands = []
        for i, src in enumerate(n.inputs):
            p = g.nodes[src]
            operand = q.x if i == 0 else q.res
            if (p.op == "conv2d" and p.integer and not p.q.residual
                    and g.consumers(src) == [name] and src not in g.outputs
                    and p.q.y == operand):
                cands.append((-depth[src], p.q.key, i))
        if not cands:
            _standalone_add(g, n)
            continue
        _, _, i = min(cands)
        conv = g.nodes[n.inputs[i]]
        other = n.inputs[1 - i]
        conv.q.res = q.res if i == 0 else q.x
        conv.q.add_out = q.y
        conv.q.res_lo, conv.q.res_hi = q.lo, q.hi
        conv.q.key = f"{conv.q.key}+res"
        conv.inputs = [conv.inputs[0], other]
        conv.shape = n.shape
        conv.onnx = n.onnx
        g.replace_uses(name, conv.name)
        g.remove(name)
        # the conv now comes after `other`
        g.topo()


def _standalone_add(g: Graph, n: Node) -> None:
    """An Add of two activations of the same NCHW shape that no conv takes becomes an
    ``eltwise_add`` node (an identity blockwise conv of the first operand with the second
    loaded as a residual: :func:`vtabench.graph.integer.integer_form`); other shapes stay on
    the CPU with the reason."""
    a, b = (g.nodes[i] for i in n.inputs)
    if len(n.shape) != 4 or tuple(a.shape) != tuple(n.shape) or tuple(b.shape) != tuple(n.shape):
        n.reason = (f"add not fusable into a conv, operands of shapes {tuple(a.shape)} and "
                    f"{tuple(b.shape)} (a standalone Add needs two NCHW tensors of one shape)")
        return
    n.op = "eltwise_add"
    n.q.kind = "eltwise_add"
    n.q.integer_exact = True
    c = n.shape[1]
    n.q.w_scale = np.ones(c)
    n.q.bias = np.zeros(c, np.int32)
    n.q.key = f"eltwise_add_{n.name}"


def insert_conversions(g: Graph) -> None:
    """A uint8 tensor is int8 ``q - 128`` inside integer operators (TensorQ.offset): add a CPU
    node converting each uint8 tensor that crosses between an integer operator and a Relax op
    (or a graph output)."""
    orig_dtype = {}
    for n in g.nodes.values():
        orig_dtype[n.name] = n.dtype
        if n.integer:
            n.dtype = "int8"
    for name in list(g.order):
        n = g.nodes[name]
        orig = orig_dtype[name]
        if orig != "uint8":
            continue
        for c in g.consumers(name):
            m = g.nodes[c]
            if m.integer != n.integer:
                conv_name = f"{name}_{'to' if m.integer else 'from'}_stored"
                if conv_name not in g.nodes:
                    g.add(Node(conv_name, "to_stored" if m.integer else "from_stored", [name],
                               n.shape, "int8" if m.integer else "uint8"))
                m.inputs = [conv_name if i == name else i for i in m.inputs]
                m.relax_args = [conv_name if i == name else i for i in m.relax_args]
        if n.integer and name in g.outputs:
            conv_name = f"{name}_from_stored"
            if conv_name not in g.nodes:
                g.add(Node(conv_name, "from_stored", [name], n.shape, "uint8"))
            g.outputs = [conv_name if o == name else o for o in g.outputs]
    g.topo()


def check_legal(g: Graph, cfg: Config, force_cpu: set[str] | None = None) -> None:
    """Annotate VTA candidates the operator compiler can take (sets ``spec``), with the reason
    for every one it cannot. Channels are padded to whole blocks (the padded weights are 0)."""
    from vtabench.compiler import (CompileError, Conv2dSpec, ConvTransposeSpec, DenseSpec,
                                   UpsampleSpec, choose_tiling)

    force_cpu = force_cpu or set()
    for name in g.order:
        n = g.nodes[name]
        if not n.vta_op:
            if n.q is not None and n.q.unsupported:  # a composite without an integer form
                n.reason = n.q.unsupported
            continue
        if n.key in force_cpu or n.name in force_cpu:
            n.reason = "placed on the CPU by request"
            continue
        if n.q.unsupported or not n.integer:
            n.reason = n.q.unsupported or "input and output quantized differently"
            continue
        try:
            x = g.nodes[n.inputs[0]]
            if n.shape[0] != 1:
                raise CompileError(f"{n.name}: batch {n.shape[0]} (VTA runs batch 1)")
            if n.op == "maxpool":
                spec = _maxpool_spec(g, n, cfg)
            elif n.op == "resize":  # a copy of each pixel to its block (UpsampleSpec)
                _, c, h, w = x.shape
                sh, sw = n.attrs["scales"]
                spec = UpsampleSpec(1, phys_channels(c, cfg), h, w, sh, sw if sw != sh else 0,
                                    name=n.name)
            elif n.op in ("leaky", "mul", "hardswish", "eltwise_add"):  # identity kernels
                _, c, h, w = x.shape
                cp = phys_channels(c, cfg)
                spec = Conv2dSpec(1, cp, h, w, cp, 1, 1, 0, epilogue=n.iform.epilogue,
                                  name=n.name, blockwise=True)
            elif n.op == "avgpool":  # a blockwise conv with all-ones kernels over the map
                _, c, h, w = x.shape
                cp = phys_channels(c, cfg)
                spec = Conv2dSpec(1, cp, h, w, cp, h, 1, 0, epilogue=n.iform.epilogue,
                                  name=n.name, blockwise=True, kernel_w=w if w != h else 0)
            elif n.op == "conv2d" and n.q.transposed:
                _, cin, h, w = x.shape
                spec = ConvTransposeSpec(1, phys_channels(cin, cfg), h, w,
                                         phys_channels(n.q.weight.shape[0], cfg), n.q.stride,
                                         epilogue=n.iform.epilogue, name=n.name)
            elif n.op == "conv2d":
                o, c, k, kw = n.q.weight.shape
                _, cin, h, w = x.shape
                # depthwise, or groups inside the blocks: one GEMM per block; groups of whole
                # blocks: one conv per group; other grouped convs: the dense conv of their
                # block-diagonal weight
                groups = n.q.groups
                blockwise = groups > 1 and groups_in_blocks(cin, o, groups, cfg)
                split = groups if groups > 1 and not blockwise and groups_of_blocks(
                    cin, o, groups, cfg) else 1
                n.attrs.pop(GROUP_SPLIT, None)
                if split > 1:
                    n.attrs[GROUP_SPLIT] = split
                spec = Conv2dSpec(1, phys_channels(cin // split, cfg), h, w,
                                  phys_channels(o // split, cfg), k,
                                  n.q.stride, n.q.pad, epilogue=n.iform.epilogue, name=n.name,
                                  blockwise=blockwise, kernel_w=kw if kw != k else 0,
                                  stride_w=n.q.stride_w)
            else:
                m, k = n.q.weight.shape
                spec = DenseSpec(1, phys_channels(k, cfg), phys_channels(m, cfg),
                                 epilogue=n.iform.epilogue, name=n.name)
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
        elif n.vta_op:
            allowed[name] = {VTA} if n.spec is not None else {CPU}
        elif n.op in NEUTRAL_OPS and n.dtype == "int8" and _layout_neutral(g, n):
            allowed[name] = {CPU, VTA}
        else:
            allowed[name] = {CPU}
    cons = {name: g.consumers(name) for name in g.order}
    outputs = set(g.outputs)
    dev: dict[str, str] = {k: next(iter(v)) for k, v in allowed.items() if len(v) == 1}
    while True:
        _propagate(g, allowed, dev, cons, outputs)
        moved = [name for name in g.order if dev.get(name) == VTA and _isolated_affine(
            g.nodes[name], dev, cons[name], name in outputs)]
        if not moved:
            break
        for name in moved:
            allowed[name] = {CPU}
            dev[name] = CPU
            g.nodes[name].spec = None
            g.nodes[name].reason = ("a per-channel scale and shift between CPU nodes: on VTA "
                                    "a device program (a sync) of its own")
    for name in g.order:
        n = g.nodes[name]
        n.device = dev.get(name, CPU)
        if n.device == CPU and not n.reason and n.op not in ("input", "copy"):
            n.reason = ("no VTA pattern: CPU (llvm)" if not n.vta_op
                        else "placed with its neighbours")


def _isolated_affine(n: Node, dev: dict[str, str], consumers: list[str], output: bool) -> bool:
    """A depthwise 1x1 conv (one multiply-add per element) whose producers and consumers are
    all placed on the CPU."""
    if n.op != "conv2d" or n.q is None or n.q.weight is None or n.q.transposed or output:
        return False
    o, i, kh, kw = n.q.weight.shape
    if (i, kh, kw) != (1, 1, 1) or n.q.groups != o or not consumers:
        return False
    return all(dev.get(p) == CPU for p in n.inputs) and all(dev.get(c) == CPU
                                                            for c in consumers)


def _propagate(g: Graph, allowed: dict[str, set[str]], dev: dict[str, str],
               cons: dict[str, list[str]], outputs: set[str]) -> None:
    """Step 2 of the placement rule, to a fixpoint (``dev`` updated)."""
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


def _maxpool_spec(g: Graph, n: Node, cfg: Config) -> Any:
    """The MaxPoolSpec of an integer max pool. VTA's LOAD pads with zeros: an input that cannot
    be negative (its producer's lower clip bound, stored form) is pooled as it is; any other
    (``signed``) is moved up by 128 around the maximum, with padding only its interior
    (docs/graph.md, "Channels, pools, depthwise"). Pads as Relax writes them, (top, left,
    bottom, right): the same before on both axes and the same after (Caffe's ceil mode,
    exported as ``[0, 0, 1, 1]``)."""
    from vtabench.compiler import CompileError, MaxPoolSpec

    a = n.attrs["attrs"]
    ks, st = {int(v) for v in a.pool_size}, {int(v) for v in a.strides}
    top, left, bottom, right = (int(v) for v in a.padding)
    if (len(ks) != 1 or len(st) != 1 or top != left or bottom != right or bool(a.ceil_mode)
            or any(int(d) != 1 for d in a.dilation) or str(a.layout) != "NCHW"):
        raise CompileError(f"{n.name}: max pool attributes outside VTA's form (square window, "
                           f"one stride, pads (top, left, bottom, right) with top = left and "
                           f"bottom = right, no dilation or ceil mode)")
    p = g.nodes[n.inputs[0]]
    low = None
    if p.is_candidate and p.integer and p.q.out is not None:
        low = (p.q.res_lo if p.q.residual else p.q.lo) - p.q.out.offset
    _, c, h, w = p.shape
    return MaxPoolSpec(1, phys_channels(c, cfg), h, w, ks.pop(), st.pop(), top, name=n.name,
                       signed=low is None or low < 0, pad_end=bottom if bottom != top else None)


def _layout_neutral(g: Graph, n: Node) -> bool:
    """A reshape is the same bytes in VTA's layout only between (N, C, 1, 1) and (N, C)."""
    shapes = [n.shape] + [g.nodes[i].shape for i in n.inputs]
    return all(len(s) in (2, 4) and s[0] == 1 and all(d == 1 for d in s[2:]) for s in shapes) \
        and len({s[1] for s in shapes}) == 1


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
