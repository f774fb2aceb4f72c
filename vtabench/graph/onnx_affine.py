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
to float32 precision, and the weight's magnitude (1 to 127) is the one that puts the int32 bias
closest to ``b`` (:func:`_weight_and_bias`).

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

#: A QuantizeLinear's (scale, zero point, lowest, highest value of its type).
Quant = tuple[float, int, int, int]
#: Candidate weight magnitudes scored on every input level (the closest biases first).
SCORED = 8

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

    def quant(node: Any) -> Quant | None:
        """(scale, zero point, lowest, highest value of its type) of a per-tensor
        QuantizeLinear or DequantizeLinear, or None."""
        s = consts.get(node.input[1])
        z = consts.get(node.input[2]) if len(node.input) > 2 and node.input[2] else None
        if s is None or s.size != 1 or (z is not None and z.size != 1):
            return None
        info = np.iinfo(np.uint8 if z is None else z.dtype)
        return float(s), 0 if z is None else int(z.reshape(-1)[0]), int(info.min), int(info.max)

    def data_quant(name: str) -> Quant | None:
        """The parameters of a per-tensor DequantizeLinear's data, or None."""
        p = producer.get(name)
        return None if p is None or p.op_type != "DequantizeLinear" else quant(p)

    def reference(chain: list[Any], x: str, q: Any, c: int, levels: np.ndarray
                  ) -> np.ndarray | None:
        """onnxruntime's output of ``chain`` (its data's DequantizeLinear, the constants'
        ones, the chain, ``q``) on every input level of every channel: (c, levels)."""
        inner = {o for n in chain for o in n.output}
        nodes = [producer[x]] + [producer[i] for n in chain for i in n.input
                                 if i != x and i in producer and i not in inner] \
            + list(chain) + [q]
        return _run_alone(nodes, consts, list(m.opset_import), (1, c, 1, levels.size),
                          np.broadcast_to(levels, (1, c, 1, levels.size)))

    new_nodes: list[Any] = []
    count = 0
    gone: set[int] = set()
    for node in g.node:
        if id(node) in gone:
            continue
        rewritten = None
        if node.op_type in AFFINE_OPS and node.domain in ("", "ai.onnx") and \
                data_quant(node.input[_data_index(node, const_value) or 0]) is not None:
            rewritten = _rewrite(node, const_value, data_quant, quant, reference, shapes,
                                 consumers, graph_outs, f"{node.output[0]}__vtab_affine")
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
           ) -> tuple[str, list[Any], np.ndarray, np.ndarray, tuple[float, float] | None,
                      Any] | None:
    """The affine chain that starts at ``node`` (its data input dequantized) and ends at a
    QuantizeLinear: (data input, its nodes, a, b, clip, the QuantizeLinear);
    ops after the first take the previous one's output as their data, each with that one
    consumer; a clip (HardSigmoid, Clip) ends it."""
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
            return x, nodes, a, b, clip, nxt
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


def _levels(q: Quant) -> np.ndarray:
    """Every value of a quantized tensor's type, as int64."""
    return np.arange(q[2], q[3] + 1, dtype=np.int64)


def _run_alone(nodes: list[Any], consts: dict[str, np.ndarray], opsets: list[Any],
               shape: tuple[int, ...], data: np.ndarray) -> np.ndarray | None:
    """onnxruntime's output of ``nodes`` (the first a DequantizeLinear of the data, the last a
    QuantizeLinear) as a model of their own at the model's ``opsets``, fed ``data`` in the first
    node's input type; None when onnxruntime refuses it."""
    import onnxruntime as ort
    from onnx import helper, numpy_helper

    first, last = nodes[0], nodes[-1]
    zp = consts.get(first.input[2]) if len(first.input) > 2 and first.input[2] else None
    dtype = np.uint8 if zp is None else zp.dtype
    used = {i for n in nodes for i in n.input if i in consts}
    out_zp = consts.get(last.input[2]) if len(last.input) > 2 and last.input[2] else None
    g = helper.make_graph(
        nodes, "chain",
        [helper.make_tensor_value_info(first.input[0], helper.np_dtype_to_tensor_dtype(
            np.dtype(dtype)), list(shape))],
        [helper.make_tensor_value_info(last.output[0], helper.np_dtype_to_tensor_dtype(
            np.dtype(np.uint8 if out_zp is None else out_zp.dtype)), list(shape))],
        [numpy_helper.from_array(consts[k], k) for k in sorted(used)])
    model = helper.make_model(g, opset_imports=opsets)
    model.ir_version = 8
    try:
        sess = ort.InferenceSession(model.SerializeToString(),
                                    providers=["CPUExecutionProvider"])
        out = sess.run(None, {first.input[0]: data.astype(dtype)})[0]
    except Exception:  # noqa: BLE001 -- onnxruntime's errors have no common base
        return None
    return out.reshape(shape[1], -1).astype(np.int64)


def _weight_and_bias(a: np.ndarray, b: np.ndarray, sx: float,
                     target: tuple[np.ndarray, Quant, Quant, tuple[float, float] | None] | None
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per channel the int8 weight ``W`` (sign of ``a``, magnitude 1 to 127), its float32 scale
    ``|a| / W``, the bias scale ``sx * ws`` and the bias ``rint(b / bscale)``.

    The bias is an integer in units of the accumulator (``sx * |a| / W``), so ``W = 127`` alone
    rounds it by up to ``sx * |a| / 254``: about a twentieth of an output step for a ``+ 3``
    whose input is coarser than its output (the recognizer's hard-swishes), enough to move
    every value that lands that close to a half step one step off onnxruntime (2 of the 256
    input levels there, 7% of the values on a rendered line). So the :data:`SCORED` weights
    whose bias is closest to ``b`` (and 127) are each scored on every input level against
    onnxruntime's output of the chain run alone (``target``: that output, the input's and the
    output's parameters, the chain's clip): where a real value lands exactly on a half step (an
    asymmetric ``+ 3`` to a ``[0, 6]`` range of 255 steps: 127.5), onnxruntime's float32
    rounding decides, and the closest bias may fall on the other side. The most hits win, then
    the closest bias, then the larger ``W``."""
    mag = np.arange(WEIGHT, 0, -1, dtype=np.float64)[:, None]  # (127, 1): 127 first
    absa = np.abs(a)[None, :]
    ws = np.where(absa != 0, absa / mag, 1.0).astype(np.float32)
    bscale = (np.float64(sx) * ws.astype(np.float64)).astype(np.float32).astype(np.float64)
    bq = np.rint(b[None, :] / bscale)
    err = np.abs(bq * bscale - b[None, :]) + np.abs(mag * ws - absa) * np.float64(sx) * 128
    cols = np.arange(a.size)
    if target is None:
        k = np.argmin(err, axis=0)  # the first minimum: the largest W
    else:
        want, xq, (sy, zy, lo, hi), clip = target
        cand = np.vstack([np.argsort(err, axis=0, kind="stable")[:SCORED],
                          np.zeros((1, a.size), np.int64)])  # and W = 127
        acc = (np.sign(a)[None, :, None] * mag[cand] * (_levels(xq) - xq[1])[None, None, :]
               + bq[cand, cols][..., None])  # (candidates, c, levels)
        real = acc * bscale[cand, cols][..., None]
        if clip is not None:
            real = np.clip(real, clip[0], clip[1])
        got = np.clip(np.floor(real / sy + 0.5).astype(np.int64) + zy, lo, hi)
        e = err[cand, cols]
        score = (got == want[None]).sum(axis=2) - 0.5 * e / np.maximum(e.max(axis=0), 1e-300)
        k = cand[np.argmax(score, axis=0), cols]
    pick = (k, cols)
    w = (np.sign(a) * mag[k, 0]).astype(np.int8)
    return w, ws[pick], bscale[pick].astype(np.float32), bq[pick]


def _rewrite(node: Any, const_value, data_quant, quant, reference,
             shapes: dict[str, list[int]],
             consumers: dict[str, list[Any]], graph_outs: set[str], base: str
             ) -> tuple[list[Any], dict[str, np.ndarray], list[Any]] | None:
    """The depthwise conv (and clip) that replaces the chain starting at ``node``: (new
    nodes, their initializers, the nodes replaced), or None."""
    from onnx import helper

    chain = _chain(node, const_value, shapes, consumers, graph_outs)
    if chain is None:
        return None
    x, replaced, a, b, clip, q_node = chain
    xq, yq = data_quant(x), quant(q_node)
    if xq is None:
        return None
    sx = xq[0]
    c = a.size
    out = replaced[-1].output[0]
    want = None if yq is None else reference(replaced, x, q_node, c, _levels(xq))
    w, ws, bscale, bq = _weight_and_bias(a, b, sx, None if want is None else
                                         (want, xq, yq, clip))
    w = w.reshape(c, 1, 1, 1)
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
