"""A ``ReduceMean`` over the spatial axes of an NCHW tensor as the average pool it is (ONNX to
ONNX), so that it takes the average-pool lowerings VTA already has.

onnxruntime's ``quantize_static`` leaves ``ReduceMean`` in float between a ``DequantizeLinear``
and the next operator's ``QuantizeLinear``: ``Q(ReduceMean(DQ(x)))``, the chain of a
``GlobalAveragePool`` with its own output scale. Over the axes ``(2, 3)`` it is a
``GlobalAveragePool`` (the ``vta.avgpool`` pattern), over ``2`` alone an ``AveragePool`` of an
``H x 1`` window, over ``3`` alone one of ``1 x W`` (``vta.avgpool2d``: the depthwise conv of a
ones kernel), stride 1, no padding: every window full, the same mean. ``keepdims = 0`` adds the
``Reshape`` that drops the reduced axes; when the one consumer is a per-tensor
``QuantizeLinear`` the pool's output is quantized with its parameters first
(``Q -> DQ -> Reshape``: the reshape of the int8 tensor at one scale, exact), so the pool's
chain stays ``Q(pool(DQ(x)))``. :func:`vtabench.graph.compare.onnxruntime_tensors` runs
onnxruntime on the same rewrite, so the pool compares on its own.

Axes, negative or not, come from the attribute (opset < 18) or the constant second input
(opset 18; the axes initializer goes when nothing else reads it). A mean over the channel or
batch axis, over all axes (no axes given), or of a tensor that is not 4-D is left as it is: the
CPU runs it and ``vtabench compile -v`` says why
(:func:`vtabench.graph.qdq_params.composite_params`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

SUFFIX = "__vtab_mean"


def reduce_mean_to_pool(m: Any) -> int:
    """Rewrite the spatial ``ReduceMean`` nodes of ``m`` in place (see the module docstring);
    the number rewritten."""
    from onnx import numpy_helper

    from vtabench.graph.onnx_affine import graph_index, static_shapes

    g = m.graph
    consts, _, consumers, graph_outs = graph_index(g)
    shapes: dict[str, list[int]] | None = None
    out: list[Any] = []
    axes_inputs: set[str] = set()
    count = 0
    for node in g.node:
        if node.op_type == "ReduceMean" and node.domain in ("", "ai.onnx"):
            shapes = static_shapes(m) if shapes is None else shapes
            axes = _spatial_axes(node, consts, shapes.get(node.input[0], []))
            if axes is not None:
                users = consumers.get(node.output[0], [])
                quant = users[0] if len(users) == 1 and node.output[0] not in graph_outs \
                    and _per_tensor_quantize(users[0], consts) else None
                nodes, inits = _rewrite(node, axes, shapes[node.input[0]], quant)
                out += nodes
                g.initializer.extend(numpy_helper.from_array(a, k) for k, a in inits.items())
                axes_inputs.update(node.input[1:])
                count += 1
                continue
        out.append(node)
    if count:
        del g.node[:]
        g.node.extend(out)
        used = {i for n in out for i in n.input} | graph_outs | {i.name for i in g.input}
        keep = [t for t in g.initializer if t.name not in axes_inputs - used]
        del g.initializer[:]
        g.initializer.extend(keep)
    return count


def _spatial_axes(node: Any, consts: dict[str, np.ndarray], shape: list[int]
                  ) -> tuple[int, ...] | None:
    """The reduced axes of ``node`` when they are H and/or W of a 4-D tensor, else None. The
    node says where its axes are: the attribute below opset 18, the second input from 18 on
    (each version forbids the other); neither means all axes."""
    if len(shape) != 4:
        return None
    attrs = {a.name: a for a in node.attribute}
    if "axes" in attrs:
        raw = list(attrs["axes"].ints)
    elif len(node.input) > 1 and node.input[1] in consts:
        raw = [int(a) for a in consts[node.input[1]].reshape(-1)]
    else:
        return None
    axes = tuple(sorted({a % 4 for a in raw if -4 <= a < 4}))
    if not raw or len(axes) != len(raw) or not set(axes) <= {2, 3}:
        return None
    return axes


def _per_tensor_quantize(node: Any, consts: dict[str, np.ndarray]) -> bool:
    return node.op_type == "QuantizeLinear" and len(node.input) >= 3 and all(
        node.input[j] in consts and consts[node.input[j]].size == 1 for j in (1, 2))


def _rewrite(node: Any, axes: tuple[int, ...], shape: list[int], quant: Any | None
             ) -> tuple[list[Any], dict[str, np.ndarray]]:
    """The nodes and initializers that replace ``ReduceMean`` ``node`` of an input of
    ``shape``; the last one writes its output tensor."""
    from onnx import helper

    keep = next((a.i for a in node.attribute if a.name == "keepdims"), 1)
    base = node.output[0] + SUFFIX
    name = node.name or node.output[0]
    pooled = node.output[0] if keep else f"{base}_pool"
    if axes == (2, 3):
        pool = helper.make_node("GlobalAveragePool", [node.input[0]], [pooled], name=name)
    else:
        kernel = [shape[2], 1] if axes == (2,) else [1, shape[3]]
        pool = helper.make_node("AveragePool", [node.input[0]], [pooled], name=name,
                                kernel_shape=kernel)
    if keep:
        return [pool], {}
    nodes, src = [pool], pooled
    if quant is not None:
        q, dq = f"{base}_q", f"{base}_dq"
        nodes += [helper.make_node("QuantizeLinear", [pooled, *quant.input[1:3]], [q], name=q),
                  helper.make_node("DequantizeLinear", [q, *quant.input[1:3]], [dq], name=dq)]
        src = dq
    dims = f"{base}_shape"
    nodes.append(helper.make_node("Reshape", [src, dims], [node.output[0]],
                                  name=f"{base}_reshape"))
    return nodes, {dims: np.array([d for k, d in enumerate(shape) if k not in axes], np.int64)}
