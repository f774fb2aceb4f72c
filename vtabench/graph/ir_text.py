"""A readable text form of the graph IR (what ``vtabench compile --dump-passes DIR`` writes after
every pass): one line per node in ``order``, its details indented below it.

    conv1 = conv2d(input) (1, 16, 16, 16) int8 @vta key=conv2d_3f2a9c01de+act0,127 onnx=q_7
        q: x 0.03125 z0 int8, y 0.0625 z0 int8, clip [0, 127], stride 1 pad 1
        spec: 16x16 16->16 k3 s1 p1
"""

from __future__ import annotations

from typing import Any

from vtabench.graph.ir import Graph, Node, QParams, TensorQ


def graph_text(g: Graph, title: str = "") -> str:
    """The whole graph: a header (title, graph inputs and outputs), then every node."""
    lines = [f"# {title}: {len(g.nodes)} nodes" if title else f"# {len(g.nodes)} nodes",
             f"inputs: {', '.join(g.inputs)}", f"outputs: {', '.join(g.outputs)}", ""]
    for name in g.order:
        lines += node_lines(g.nodes[name])
    return "\n".join(lines) + "\n"


def node_lines(n: Node) -> list[str]:
    head = f"{n.name} = {n.op}({', '.join(n.inputs)}) {n.shape} {n.dtype or '-'}"
    if n.device:
        head += f" @{n.device}"
    if n.q is not None:
        head += f" key={n.key}"
    if n.onnx:
        head += f" onnx={n.onnx}"
    lines = [head]
    if n.q is not None:
        lines.append(f"    q: {_q_text(n.q)}")
    attrs = {k: v for k, v in n.attrs.items() if isinstance(v, (int, float, str, tuple, list))}
    if attrs:
        lines.append(f"    attrs: {attrs}")
    if n.iform is not None:
        lines.append(f"    epilogue: {[list(e) for e in n.iform.epilogue]}")
    if n.spec is not None:
        lines.append(f"    spec: {spec_text(n.spec)}")
    if n.reason:
        lines.append(f"    reason: {n.reason}")
    return lines


def _tq(t: TensorQ) -> str:
    return f"{t.scale:.6g} z{t.zero} {t.dtype}"


def _q_text(q: QParams) -> str:
    parts = [f"{k} {_tq(t)}" for k, t in (("x", q.x), ("res", q.res), ("y", q.y),
                                         ("add_out", q.add_out)) if t is not None]
    parts.append(f"clip [{q.lo}, {q.hi}]")
    if q.residual:
        parts.append(f"add clip [{q.res_lo}, {q.res_hi}]")
    if q.kind == "conv2d":
        parts.append(f"stride {q.stride} pad {q.pad}" + (f" groups {q.groups}"
                                                          if q.groups != 1 else "")
                     + (f" expanded from {q.expanded_groups} groups"
                        if q.expanded_groups != 1 else ""))
    if q.kind == "leaky" and q.slopes is not None:
        parts.append(f"slopes [{q.slopes.min():.3g}, {q.slopes.max():.3g}]")
    elif q.kind == "leaky":
        parts.append(f"alpha {q.alpha}")
    if not q.integer_exact:
        parts.append("not integer-exact")
    if q.unsupported:
        parts.append(f"no integer form: {q.unsupported}")
    return ", ".join(parts)


def spec_text(s: Any) -> str:
    """An operator spec in one phrase: ``16x16 16->32 k3 s2 p1`` (conv), ``512->1000``
    (dense), ``8x8 16 max k2 s2 p0`` (max pool)."""
    from vtabench.compiler import Conv2dSpec, ConvTransposeSpec, MaxPoolSpec, UpsampleSpec

    if isinstance(s, Conv2dSpec):
        return (f"{s.h}x{s.w} {s.c}->{s.o} k{s.k}{f'x{s.k_w}' if s.kernel_w else ''} "
                f"s{s.stride}{f'x{s.s_w}' if s.stride_w else ''} p{s.pad}"
                f"{' blockwise' if s.blockwise else ''}")
    if isinstance(s, MaxPoolSpec):
        return (f"{s.h}x{s.w} {s.c} max k{s.k} s{s.stride} p{s.pad}"
                f"{f',{s.pad_end}' if s.pad_end is not None else ''}")
    if isinstance(s, ConvTransposeSpec):
        return f"{s.h}x{s.w} {s.c}->{s.o} transposed k{s.stride} s{s.stride}"
    if isinstance(s, UpsampleSpec):
        return f"{s.h}x{s.w} {s.c} upsample x{s.scale}{f'x{s.s_w}' if s.scale_w else ''}"
    return f"{s.k}->{s.m}"
