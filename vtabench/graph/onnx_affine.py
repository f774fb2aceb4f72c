"""Per-channel affine operators of a QDQ model as depthwise 1x1 convolutions (ONNX to ONNX).

onnxruntime's ``quantize_static`` quantizes every operator on its own: a BatchNormalization
that follows a convolution (no fusion without onnxruntime's pre-processing), the ``+ 3`` and
``/ 6`` of a hard-swish written as ``Add``/``Clip``/``Mul``/``Div``, the bias ``Add`` of a
squeeze-and-excitation block, a ``HardSigmoid``: each between a ``DequantizeLinear`` and a
``QuantizeLinear`` of its own. Each is ``y = a[c] * x + b[c]`` per channel ``c`` of an NCHW
activation (HardSigmoid: then clipped to [0, 1]), and so is a chain of them that onnxruntime left
unquantized between one dequantize and one quantize (``Div -> HardSigmoid`` when the HardSigmoid
is not quantized, a ``Clip`` at its end). :func:`affine_to_conv` rewrites such a node (chain)
into a depthwise (``group = C``) 1x1 ``Conv`` with the weight ``+-127`` (int8), the
per-channel weight scale ``|a| / 127`` and the int32 bias ``round(b / (s_x * s_w))`` behind
``DequantizeLinear``: the form the ``vta.conv2d`` pattern takes, so the node gets the integer
form of any conv (docs/graph.md: Requantization) and runs on VTA. The output keeps its ONNX
name. Not exact in float, but within one output step: the weight and its scale represent ``a``
to float32 precision, the bias is off by at most ``s_x * |a| / (254 * s_y)`` output steps.

Before that, :func:`quantize_before_maxpool`: onnxruntime leaves a ``MaxPool`` that follows a
float operator unquantized (``Div -> MaxPool -> QuantizeLinear``: the last hard-swish of the
classifier); quantizing its input with the pool's output parameters first changes nothing
(rounding is monotone, so the maximum of the rounded values is the rounded maximum) and gives
both the operator and the pool a QDQ chain of their own.

A node is rewritten only when its data input is a per-tensor ``DequantizeLinear`` of a 4-D
tensor, its other inputs are constants (an initializer, or a ``DequantizeLinear`` of one) of one
value or one per channel, and its one consumer is a ``QuantizeLinear`` (or the next node of a
chain); anything else is left as it is (it keeps its QDQ chain on the CPU).
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Ops of the form ``a * x + b`` with constant ``a``, ``b`` (HardSigmoid then clips).
AFFINE_OPS = frozenset({"BatchNormalization", "Add", "Sub", "Mul", "Div", "HardSigmoid"})
WEIGHT = 127


def affine_to_conv(m: Any) -> int:
    """Rewrite the affine nodes of ``m`` in place (see the module docstring); the number
    rewritten."""
    from onnx import numpy_helper

    g = m.graph
    consts, producer, consumers, graph_outs = graph_index(g)
    shapes = static_shapes(m)

    def const_value(name: str) -> np.ndarray | None:
        """A constant input as float32: an initializer, or a DequantizeLinear of one."""
        if name in consts:
            return consts[name].astype(np.float32)
        p = producer.get(name)
        if p is None or p.op_type != "DequantizeLinear" or not all(
                i in consts for i in p.input if i):
            return None
        q = consts[p.input[0]].astype(np.float32)
        s = consts[p.input[1]].astype(np.float32)
        z = consts[p.input[2]].astype(np.float32) if len(p.input) > 2 and p.input[2] else 0
        if np.ndim(s) and q.ndim != 1:
            return None  # per-axis scales of a tensor of more than one axis: none seen
        return ((q - z) * s).astype(np.float32)

    def data_scale(name: str) -> float | None:
        p = producer.get(name)
        if p is None or p.op_type != "DequantizeLinear" or p.input[1] not in consts:
            return None
        s = consts[p.input[1]]
        return float(s) if s.size == 1 else None

    new_nodes: list[Any] = []
    count = 0
    gone: set[int] = set()
    for node in g.node:
        if id(node) in gone:
            continue
        rewritten = None
        if node.op_type in AFFINE_OPS and node.domain in ("", "ai.onnx") and \
                data_scale(node.input[_data_index(node, const_value) or 0]) is not None:
            rewritten = _rewrite(node, const_value, data_scale, shapes, consumers, graph_outs,
                                 f"{node.output[0]}__vtab_affine")
        if rewritten is None:
            new_nodes.append(node)
            continue
        nodes, inits, replaced = rewritten
        gone.update(id(n) for n in replaced)
        new_nodes += nodes
        g.initializer.extend(numpy_helper.from_array(a, k) for k, a in inits.items())
        count += 1
    if count:
        del g.node[:]
        g.node.extend(new_nodes)
        _drop_dead(g)
    return count


def quantize_before_maxpool(m: Any) -> int:
    """Insert ``QuantizeLinear -> DequantizeLinear`` (the parameters of the ``QuantizeLinear``
    after the pool) between a float operator and a ``MaxPool`` whose one consumer is that
    ``QuantizeLinear`` (see the module docstring); the number inserted."""
    from onnx import helper

    g = m.graph
    producer = {o: n for n in g.node for o in n.output}
    consumers: dict[str, list[Any]] = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    graph_outs = {o.name for o in g.output}
    out: list[Any] = []
    count = 0
    for node in g.node:
        users = consumers.get(node.output[0], []) if node.output else []
        src = producer.get(node.input[0]) if node.input else None
        if (node.op_type == "MaxPool" and node.domain in ("", "ai.onnx") and len(node.output) == 1
                and src is not None and src.op_type not in ("DequantizeLinear", "MaxPool")
                and len(consumers.get(node.input[0], [])) == 1
                and node.input[0] not in graph_outs and len(users) == 1
                and users[0].op_type == "QuantizeLinear" and node.output[0] not in graph_outs):
            q = users[0]
            t = node.input[0]
            out += [helper.make_node("QuantizeLinear", [t, *q.input[1:]], [f"{t}__vtab_q"],
                                     name=f"{t}__vtab_q"),
                    helper.make_node("DequantizeLinear", [f"{t}__vtab_q", *q.input[1:]],
                                     [f"{t}__vtab_dq"], name=f"{t}__vtab_dq")]
            node.input[0] = f"{t}__vtab_dq"
            count += 1
        out.append(node)
    if count:
        del g.node[:]
        g.node.extend(out)
    return count


def graph_index(g: Any) -> tuple[dict[str, np.ndarray], dict[str, Any], dict[str, list[Any]],
                                  set[str]]:
    """What the rewrites of an ONNX graph ``g`` look up: its initializers as arrays, each
    tensor's producing node, each tensor's consuming nodes, the graph's output names."""
    from onnx import numpy_helper

    consts = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    producer = {o: n for n in g.node for o in n.output}
    consumers: dict[str, list[Any]] = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    return consts, producer, consumers, {o.name for o in g.output}


def static_shapes(m: Any) -> dict[str, list[int]]:
    import onnx

    try:
        inferred = onnx.shape_inference.infer_shapes(m)
    except (onnx.shape_inference.InferenceError, ValueError):
        return {}
    out = {}
    for vi in (*inferred.graph.value_info, *inferred.graph.input, *inferred.graph.output):
        tt = vi.type.tensor_type
        if vi.type.HasField("tensor_type") and tt.HasField("shape") and all(
                d.HasField("dim_value") for d in tt.shape.dim):
            out[vi.name] = [d.dim_value for d in tt.shape.dim]
    return out


def _per_channel(v: np.ndarray, c: int, rank: int) -> np.ndarray | None:
    """A constant broadcast against an NCHW tensor: one value, or one per channel (shape
    (C,) for BatchNormalization, or broadcasting to (1, C, 1, 1)); else None."""
    if v.size == 1:
        return np.full(c, float(v.reshape(-1)[0]), np.float64)
    if v.size != c:
        return None
    shape = (1,) * (rank - v.ndim) + tuple(v.shape)
    if len(shape) != 4 or shape[1] != c:
        return None
    return v.reshape(-1).astype(np.float64)


def _data_index(node: Any, const_value) -> int | None:
    """Which input of an affine node is the data (the one that is not a constant)."""
    ins = list(node.input)
    if node.op_type in ("Add", "Mul"):
        cands = [k for k in (0, 1) if const_value(ins[k]) is None]
        return cands[0] if len(cands) == 1 else None
    return 0


def _affine(node: Any, xi: int, const_value, c: int
            ) -> tuple[np.ndarray, np.ndarray, tuple[float, float] | None] | None:
    """(a, b, clip bounds or None) of one node: ``y = clip(a * x + b)``; None when a constant
    operand is not one value or one per channel."""
    op, ins = node.op_type, list(node.input)
    others = [const_value(i) for k, i in enumerate(ins) if k != xi and i]
    if any(v is None for v in others):
        return None
    f32 = np.float32
    if op == "BatchNormalization":
        if len(others) != 4 or any(v.size not in (1, c) for v in others):
            return None
        eps = next((a.f for a in node.attribute if a.name == "epsilon"), 1e-5)
        scale, bias, mean, var = (np.broadcast_to(v.reshape(-1), (c,)).astype(f32)
                                  for v in others)
        a = (scale / np.sqrt(var + f32(eps))).astype(np.float64)
        return a, (bias - mean * a.astype(f32)).astype(np.float64), None
    if op == "HardSigmoid":
        alpha = next((a.f for a in node.attribute if a.name == "alpha"), 0.2)
        beta = next((a.f for a in node.attribute if a.name == "beta"), 0.5)
        return np.full(c, float(f32(alpha))), np.full(c, float(f32(beta))), (0.0, 1.0)
    if op == "Clip":
        if len(others) != 2 or any(v.size != 1 for v in others):
            return None
        return np.ones(c), np.zeros(c), (float(others[0].reshape(-1)[0]),
                                         float(others[1].reshape(-1)[0]))
    v = _per_channel(others[0], c, 4) if len(others) == 1 else None
    if v is None or (op == "Div" and np.any(v == 0)):
        return None
    ones, zeros = np.ones(c), np.zeros(c)
    return {"Add": (ones, v), "Mul": (v, zeros), "Sub": (ones, -v),
            "Div": (1.0 / np.where(v == 0, 1, v), zeros)}[op] + (None,)


def _chain(node: Any, const_value, shapes: dict[str, list[int]],
           consumers: dict[str, list[Any]], graph_outs: set[str]
           ) -> tuple[str, list[Any], np.ndarray, np.ndarray, tuple[float, float] | None] | None:
    """The affine chain that starts at ``node`` (its data input dequantized) and ends at a
    QuantizeLinear: (data input, its nodes, a, b, clip); ops after the first take the previous
    one's output as their data, each with that one consumer; a clip (HardSigmoid, Clip) ends
    it."""
    xi = _data_index(node, const_value)
    if xi is None:
        return None
    x = node.input[xi]
    shape = shapes.get(x)
    if shape is None or len(shape) != 4:
        return None
    c = shape[1]
    first = _affine(node, xi, const_value, c)
    if first is None:
        return None
    a, b, clip = first
    nodes = [node]
    while True:
        out = nodes[-1].output[0]
        users = consumers.get(out, [])
        if out in graph_outs or len(users) != 1 or shapes.get(out) != shape:
            return None
        nxt = users[0]
        if nxt.op_type == "QuantizeLinear":
            return x, nodes, a, b, clip
        if clip is not None or nxt.op_type not in AFFINE_OPS | {"Clip"} \
                or nxt.domain not in ("", "ai.onnx"):
            return None
        k = _data_index(nxt, const_value)
        step = _affine(nxt, k, const_value, c) if k is not None and nxt.input[k] == out else None
        if step is None:
            return None
        a2, b2, clip = step
        a, b = a2 * a, a2 * b + b2
        nodes.append(nxt)


def _rewrite(node: Any, const_value, data_scale, shapes: dict[str, list[int]],
             consumers: dict[str, list[Any]], graph_outs: set[str], base: str
             ) -> tuple[list[Any], dict[str, np.ndarray], list[Any]] | None:
    """The depthwise conv (and clip) that replaces the chain starting at ``node``: (new
    nodes, their initializers, the nodes replaced), or None."""
    from onnx import helper

    chain = _chain(node, const_value, shapes, consumers, graph_outs)
    if chain is None:
        return None
    x, replaced, a, b, clip = chain
    sx = data_scale(x)
    if sx is None:
        return None
    c = a.size
    out = replaced[-1].output[0]
    w = np.where(a > 0, WEIGHT, np.where(a < 0, -WEIGHT, 0)).astype(np.int8).reshape(c, 1, 1, 1)
    ws = np.where(a != 0, np.abs(a) / WEIGHT, 1.0).astype(np.float32)
    bscale = (np.float64(sx) * ws.astype(np.float64)).astype(np.float32)
    bq = np.rint(b / bscale.astype(np.float64))
    if np.abs(bq).max() >= 2 ** 31 - 2 ** 24:
        return None
    inits = {f"{base}_w": w, f"{base}_ws": ws, f"{base}_wz": np.zeros(c, np.int8),
             f"{base}_b": bq.astype(np.int32), f"{base}_bs": bscale,
             f"{base}_bz": np.zeros(c, np.int32)}
    nodes = [
        helper.make_node("DequantizeLinear", [f"{base}_w", f"{base}_ws", f"{base}_wz"],
                         [f"{base}_wd"], name=f"{base}_wdq", axis=0),
        helper.make_node("DequantizeLinear", [f"{base}_b", f"{base}_bs", f"{base}_bz"],
                         [f"{base}_bd"], name=f"{base}_bdq", axis=0),
    ]
    conv_out = f"{base}_conv" if clip is not None else out
    nodes.append(helper.make_node("Conv", [x, f"{base}_wd", f"{base}_bd"], [conv_out],
                                  name=node.name or base, group=c, kernel_shape=[1, 1]))
    if clip is not None:
        inits[f"{base}_lo"] = np.array(clip[0], np.float32)
        inits[f"{base}_hi"] = np.array(clip[1], np.float32)
        nodes.append(helper.make_node("Clip", [conv_out, f"{base}_lo", f"{base}_hi"], [out],
                                      name=f"{base}_clip"))
    return nodes, inits, replaced


def _drop_dead(g: Any) -> None:
    """Remove nodes none of whose outputs is used (the constants' dequantize nodes left
    behind), repeatedly."""
    outs = {o.name for o in g.output}
    while True:
        used = {i for n in g.node for i in n.input} | outs
        keep = [n for n in g.node if any(o in used for o in n.output)]
        if len(keep) == len(g.node):
            return
        del g.node[:]
        g.node.extend(keep)
