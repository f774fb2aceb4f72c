"""A channel ``Concat`` of quantized activations as placement convolutions and Adds (ONNX to
ONNX), so that it runs on VTA whatever its operands' scales, zero points and channel counts.

``quantize_static`` quantizes ``Concat(DequantizeLinear(a_1), ..., DequantizeLinear(a_N))`` with
one output scale and zero point ``(s_y, z_y)`` while each operand keeps its own ``(s_k, z_k)``
(ShuffleNet's downsampling units: the shortcut pool's scale is three times the branch's), and
the operands' channel counts need not be whole blocks (136 + 136). VTA's layout cannot place a
tensor at a channel offset inside a block, and no requantization reads two tensors at once, but
a GEMM moves channels anywhere and a fused residual Add combines two scales. So:

    t_k  = Q_k(Conv(DQ(a_k), P_k))            (s_k, z_k: the operand's own quantization)
    o_2  = Q_y(Add(DQ(t_2), DQ(t_1)))          then o_k = Q(Add(DQ(t_k), DQ(o_(k-1))))

``P_k`` (C x C_k x 1 x 1, int8 ``1`` with weight scale 1.0 behind ``DequantizeLinear``) puts
channel ``i`` of operand ``k`` at channel ``offset_k + i`` of the ``C`` outputs, zero
elsewhere. Each ``t_k`` is exact: its requantization multiplier is ``s_k * 1 / s_k = 1``, so
``t_k`` holds ``a_k`` at its channels and ``z_k`` (the value 0) at all others. In every Add one
operand is 0 at every channel, so ``o`` is ``round(s_k (a_k - z_k) / s_y) + z_y`` at the
channels of operand ``k``: the Concat's value, within the integer form's one rounding (the
intermediate ``o_k`` are in ``(s_y, z_y)`` already: that operand's multiplier is exactly one).
The graph compiler then folds each Add into one of its two convs (a fused residual Add) and the
last Add's output keeps the Concat's ONNX name. :func:`vtabench.graph.compare.onnxruntime_tensors`
runs onnxruntime on the same rewrite (the same outputs: onnxruntime's identity convs are exact),
so each node compares on its own.

Rewritten only when every operand is a per-tensor ``DequantizeLinear`` (with a zero point) of a
4-D activation, the axis is the channel axis and the one consumer of the output is a
``QuantizeLinear``; anything else is left as it is (the CPU runs it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

SUFFIX = "__vtab_concat"


def is_placement(onnx_name: str) -> bool:
    """Whether ONNX tensor ``onnx_name`` is a placement conv's output (such a conv is no
    convolution of the model: its MACs are not the model's)."""
    return SUFFIX in onnx_name


def concat_to_convs(m: Any) -> int:
    """Rewrite the channel Concats of ``m`` in place (see the module docstring); the number
    rewritten."""
    from onnx import numpy_helper

    from vtabench.graph.onnx_affine import graph_index, static_shapes

    g = m.graph
    consts, producer, consumers, graph_outs = graph_index(g)
    shapes: dict[str, list[int]] | None = None
    out: list[Any] = []
    count = 0
    for node in g.node:
        dqs = _operands(node, producer, consts, consumers, graph_outs)
        if dqs is not None:
            shapes = static_shapes(m) if shapes is None else shapes
            if all(len(shapes.get(i, [])) == 4 for i in node.input):
                nodes, inits = _rewrite(node, dqs, [shapes[i][1] for i in node.input],
                                        consumers[node.output[0]][0])
                out += nodes
                g.initializer.extend(numpy_helper.from_array(a, k) for k, a in inits.items())
                count += 1
                continue
        out.append(node)
    if count:
        del g.node[:]
        g.node.extend(out)
    return count


def _operands(node: Any, producer: dict[str, Any], consts: dict[str, np.ndarray],
              consumers: dict[str, list[Any]], graph_outs: set[str]) -> list[Any] | None:
    """The DequantizeLinear nodes of a Concat this module rewrites, else None."""
    if node.op_type != "Concat" or node.domain not in ("", "ai.onnx") or len(node.input) < 2:
        return None
    axis = next((a.i for a in node.attribute if a.name == "axis"), None)
    users = consumers.get(node.output[0], [])
    if axis not in (1, -3) or node.output[0] in graph_outs or len(users) != 1 \
            or users[0].op_type != "QuantizeLinear" or len(users[0].input) < 3:
        return None
    dqs = []
    for i in node.input:
        p = producer.get(i)
        if p is None or p.op_type != "DequantizeLinear" or len(p.input) < 3 \
                or p.input[0] in consts or any(p.input[j] not in consts
                                               or consts[p.input[j]].size != 1 for j in (1, 2)):
            return None
        dqs.append(p)
    return dqs


def _rewrite(node: Any, dqs: list[Any], chans: list[int], quant: Any
             ) -> tuple[list[Any], dict[str, np.ndarray]]:
    """The nodes and initializers that replace Concat ``node`` (operands ``dqs``, channel counts
    ``chans``, the QuantizeLinear ``quant`` reading its output); the last Add writes the
    Concat's output tensor, the earlier ones sums quantized with ``quant``'s parameters."""
    from onnx import helper

    base = node.output[0] + SUFFIX
    total = sum(chans)
    one, zero = f"{base}_one", f"{base}_zero"
    inits: dict[str, np.ndarray] = {one: np.array(1.0, np.float32), zero: np.array(0, np.int8)}
    nodes: list[Any] = []
    placed: list[str] = []
    offset = 0
    for k, (dq, c) in enumerate(zip(dqs, chans, strict=True)):
        w = np.zeros((total, c, 1, 1), np.int8)
        w[offset + np.arange(c), np.arange(c)] = 1
        offset += c
        wq, wf, conv, t, td = (f"{base}{k}_{s}" for s in ("w", "wf", "conv", "q", "dq"))
        inits[wq] = w
        nodes += [helper.make_node("DequantizeLinear", [wq, one, zero], [wf], name=wf),
                  helper.make_node("Conv", [node.input[k], wf], [conv], name=conv,
                                   kernel_shape=[1, 1]),
                  helper.make_node("QuantizeLinear", [conv, dq.input[1], dq.input[2]], [t],
                                   name=t),
                  helper.make_node("DequantizeLinear", [t, dq.input[1], dq.input[2]], [td],
                                   name=td)]
        placed.append(td)
    acc = placed[0]
    for k in range(1, len(placed)):
        if k == len(placed) - 1:
            nodes.append(helper.make_node("Add", [placed[k], acc], [node.output[0]],
                                          name=node.name or node.output[0]))
            break
        s, q, d = (f"{base}_sum{k}{x}" for x in ("", "_q", "_dq"))
        nodes += [helper.make_node("Add", [placed[k], acc], [s], name=s),
                  helper.make_node("QuantizeLinear", [s, *quant.input[1:3]], [q], name=q),
                  helper.make_node("DequantizeLinear", [q, *quant.input[1:3]], [d], name=d)]
        acc = d
    return nodes, inits
