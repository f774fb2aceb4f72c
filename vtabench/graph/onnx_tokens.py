"""A transformer's token sequence as an NCHW map (ONNX to ONNX): PaddleOCR's recognizer.

SVTR-style networks flatten a ``(1, C, 1, T)`` feature map into ``T`` tokens of ``C``
features (``Reshape -> (1, C, T)``, ``Transpose -> (1, T, C)``), run transformer blocks on the
``(1, T, C)`` sequence (LayerNorm, Linear layers as ``MatMul`` by a constant ``(C, C')`` plus
a bias ``Add``, residual ``Add``, ``x * Sigmoid(k x)``) and write it back
(``Reshape -> (1, 1, T, C)``, ``Transpose -> (1, C, 1, T)``). Every VTA pattern takes NCHW
tensors, so in that form only the CPU runs the blocks. :func:`tokens_to_nchw` keeps the
sequence in the map's layout instead: a token tensor ``(1, T, K)`` is represented by the
``(1, K, 1, T)`` tensor of the same values (``x'[0, k, 0, t] = x[0, t, k]``), so

* the flatten, the transposes and the write-back are gone (their outputs are their inputs
  in the new layout; a ``QuantizeLinear`` of a ``DequantizeLinear`` with the same parameters,
  left between them, is the int8 tensor itself);
* ``MatMul(x, W)`` with a constant ``W`` of shape ``(K, K')`` is the 1x1 ``Conv`` by
  ``W^T`` (the int8 weight transposed behind its ``DequantizeLinear``): the conv pattern;
* elementwise operators keep their form: constants of shape ``(K,)`` become ``(K, 1, 1)``
  (per channel: the affine rewrite makes the bias ``Add`` and LayerNorm's scale and shift
  depthwise convs), two token operands broadcast as before (``(1, T, 1)`` is ``(1, 1, 1, T)``);
* a ``ReduceMean`` over the features (LayerNorm's) is one over the channels (the CPU's);
* any other consumer (the attention's reshape into heads, a Softmax) gets the original
  ``(1, T, K)`` tensor back through ``Reshape -> Transpose`` inserted before it, on the CPU
  beside the operator that is there anyway.

Every step only moves values, so the rewritten model computes the same numbers. The rewrite is
kept only when it turns at least one ``MatMul`` into a conv (a model without a token sequence
is left as it is).
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from vtabench.graph.onnx_affine import _drop_dead, static_shapes

#: Elementwise operators whose form does not depend on the layout (constants aside).
ELEMENTWISE = frozenset({"Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Sigmoid", "Relu",
                         "HardSigmoid", "HardSwish", "Clip", "Tanh", "Erf"})

#: Layouts of a rewritten tensor of primed shape ``(1, K, 1, T)``: the original is
#: ``(1, T, K)`` (tokens), ``(1, K, T)`` (the flattened map) or ``(1, 1, T, K)`` (NHWC).
TOKENS, FLAT, NHWC = "tokens", "flat", "nhwc"


def tokens_to_nchw(m: Any) -> int:
    """Rewrite ``m`` in place (see the module docstring); the number of MatMuls made convs
    (0: ``m`` is unchanged)."""
    trial = copy.deepcopy(m)
    count = _Rewrite(trial).run()
    if count:
        m.CopyFrom(trial)
    return count


class _Rewrite:
    """One pass over the nodes in order. ``layout[name]``: an original tensor now held in the
    primed layout; ``data[name]``: the tensor of the rewritten graph that holds an original
    tensor's values (itself unless the node that made it was dropped)."""

    def __init__(self, m: Any) -> None:
        from onnx import numpy_helper

        self.g = m.graph
        self.shapes = static_shapes(m)
        self.consts = {i.name: numpy_helper.to_array(i) for i in self.g.initializer}
        self.producer: dict[str, Any] = {}
        self.layout: dict[str, tuple[str, int, int]] = {}  # name -> (layout, K, T)
        self.data: dict[str, str] = {}
        self.back: dict[str, str] = {}  # name -> its copy in the original layout
        self.out: list[Any] = []
        self.graph_outs = {o.name for o in self.g.output}
        self.convs = 0
        self.steps: set[int] = set()  # T of the flattened maps

    # --- helpers ---------------------------------------------------------------------------
    def fresh(self, base: str) -> str:
        name, k = base, 0
        while name in self.consts or name in self.producer:
            k += 1
            name = f"{base}{k}"
        return name

    def const(self, arr: np.ndarray, base: str) -> str:
        from onnx import numpy_helper

        name = self.fresh(base)
        self.consts[name] = arr
        self.g.initializer.append(numpy_helper.from_array(arr, name))
        return name

    def emit(self, node: Any) -> None:
        self.out.append(node)
        for o in node.output:
            self.producer[o] = node

    def phys(self, name: str) -> str:
        return self.data.get(name, name)

    def scalar_params(self, node: Any) -> bool:
        """A QuantizeLinear / DequantizeLinear with one scale and zero point."""
        return all(i in self.consts and self.consts[i].size == 1 for i in node.input[1:3] if i)

    def same_params(self, a: Any, b: Any) -> bool:
        return len(a.input) == len(b.input) and all(
            np.array_equal(self.consts[x], self.consts[y])
            for x, y in zip(a.input[1:3], b.input[1:3]) if x or y)

    def const_operand(self, name: str) -> tuple[np.ndarray, Any | None] | None:
        """(array, its DequantizeLinear or None) of a constant input."""
        if name in self.consts:
            return self.consts[name], None
        p = self.producer.get(name)
        if p is not None and p.op_type == "DequantizeLinear" and p.input[0] in self.consts \
                and all(i in self.consts for i in p.input[1:3] if i):
            return self.consts[p.input[0]], p
        return None

    def reshaped_const(self, name: str, k: int, node: Any) -> str | None:
        """A constant operand broadcast against ``(1, T, K)`` as one against ``(1, K, 1, T)``:
        one value as it is, ``K`` values along the last axis as ``(K, 1, 1)``; else None."""
        from onnx import helper

        found = self.const_operand(name)
        if found is None:
            return None
        arr, dq = found
        if arr.size == 1:
            return name
        if dq is not None and not self.scalar_params(dq) or arr.size != k or arr.shape[-1] != k:
            return None
        new = self.const(arr.reshape(k, 1, 1), f"{dq.input[0] if dq else name}__vtab_tok")
        if dq is None:
            return new
        out = self.fresh(f"{dq.output[0]}__vtab_tok")
        self.emit(helper.make_node("DequantizeLinear", [new, *dq.input[1:]], [out],
                                   name=out))
        return out

    def original(self, name: str) -> str:
        """The tensor in its original layout, converted (on the first use) if it is not."""
        from onnx import helper

        if name not in self.layout:
            return self.phys(name)
        if name in self.back:
            return self.back[name]
        kind, k, t = self.layout[name]
        src = self.phys(name)
        out = self.fresh(f"{name}__vtab_untok")
        if kind == NHWC:
            self.emit(helper.make_node("Transpose", [src], [out], perm=[0, 2, 3, 1], name=out))
        else:
            flat = out if kind == FLAT else self.fresh(f"{name}__vtab_flat")
            shape = self.const(np.array([1, k, t], np.int64), f"{name}__vtab_shape")
            self.emit(helper.make_node("Reshape", [src, shape], [flat], name=flat))
            if kind == TOKENS:
                self.emit(helper.make_node("Transpose", [flat], [out], perm=[0, 2, 1],
                                           name=out))
        self.back[name] = out
        return out

    # --- the pass --------------------------------------------------------------------------
    def run(self) -> int:
        for node in list(self.g.node):
            if not self.rewrite(node):
                for k, i in enumerate(node.input):
                    node.input[k] = self.original(i)
                self.emit(node)
        if self.convs:
            del self.g.node[:]
            self.g.node.extend(self.out)
            del self.g.value_info[:]
            _drop_dead(self.g)
        return self.convs

    def rewrite(self, node: Any) -> bool:
        """Rewrite (or drop) ``node`` for the new layout; False to keep it as it is."""
        if node.domain not in ("", "ai.onnx") or len(node.output) != 1 or not node.input or \
                node.output[0] in self.graph_outs:
            return False
        op, x, y = node.op_type, node.input[0], node.output[0]
        lay = self.layout.get(x)
        attrs = {a.name: _value(a) for a in node.attribute}
        shape_in, shape_out = self.shapes.get(x), self.shapes.get(y)
        if op in ("Reshape", "Squeeze") and lay is None and shape_in and shape_out and len(
                shape_in) == 4 and shape_in[0] == 1 and shape_in[2] == 1 and shape_out == [
                1, shape_in[1], shape_in[3]]:
            self.steps.add(shape_in[3])
            return self.move(y, x, (FLAT, shape_in[1], shape_in[3]))
        if op == "Transpose" and lay and lay[0] in (FLAT, TOKENS) and attrs.get("perm") == [
                0, 2, 1]:
            return self.move(y, x, (TOKENS if lay[0] == FLAT else FLAT, lay[1], lay[2]))
        if op == "Reshape" and lay and lay[0] == TOKENS and shape_out == [1, 1, lay[2], lay[1]]:
            return self.move(y, x, (NHWC, lay[1], lay[2]))
        if op == "Transpose" and lay and lay[0] == NHWC and attrs.get("perm") == [0, 3, 1, 2]:
            return self.move(y, x, None)
        if op == "DequantizeLinear" and lay is None and shape_in and len(shape_in) == 3 and \
                shape_in[0] == 1 and shape_in[1] in self.steps and self.scalar_params(node) \
                and "axis" not in attrs:
            return self.enter(node, shape_in[2], shape_in[1])
        if op in ("QuantizeLinear", "DequantizeLinear") and (lay or x in self.data) and \
                self.scalar_params(node) and "axis" not in attrs:
            src = self.producer.get(self.phys(x))
            if op == "QuantizeLinear" and src is not None and \
                    src.op_type == "DequantizeLinear" and self.scalar_params(src) and \
                    self.same_params(node, src):
                # Q(DQ(q)) with the same parameters is q (a data movement between them gone)
                return self.move(y, src.input[0], lay)
            return self.keep(node, lay) if lay else False
        if op == "ReduceMean" and lay and lay[0] == TOKENS and attrs.get("axes") in (
                [-1], [2]) and attrs.get("keepdims", 1) == 1 and len(node.input) == 1:
            from onnx import helper

            node.CopyFrom(helper.make_node("ReduceMean", [x], [y], axes=[1], keepdims=1,
                                           name=node.name))
            return self.keep(node, (TOKENS, 1, lay[2]))
        if op == "MatMul" and lay and lay[0] == TOKENS and len(node.input) == 2:
            return self.matmul(node, lay)
        if op in ELEMENTWISE:
            return self.elementwise(node)
        return False

    def move(self, y: str, x: str, lay: tuple[str, int, int] | None) -> bool:
        """``y`` holds ``x``'s values in ``lay`` (None: the original layout): the node that made
        it goes."""
        self.data[y] = self.phys(x)
        if lay is not None:
            self.layout[y] = lay
        return True

    def enter(self, node: Any, k: int, t: int) -> bool:
        """A dequantize of an int8 sequence ``(1, T, K)`` made on the CPU (the attention's
        output): its int8 tensor moved into the new layout before it."""
        from onnx import helper

        x = self.phys(node.input[0])
        flat = self.fresh(f"{x}__vtab_flat")
        self.emit(helper.make_node("Transpose", [x], [flat], perm=[0, 2, 1], name=flat))
        tok = self.fresh(f"{x}__vtab_tok")
        shape = self.const(np.array([1, k, 1, t], np.int64), f"{x}__vtab_shape")
        self.emit(helper.make_node("Reshape", [flat, shape], [tok], name=tok))
        node.input[0] = tok
        return self.keep(node, (TOKENS, k, t))

    def keep(self, node: Any, lay: tuple[str, int, int]) -> bool:
        """Emit ``node`` on the new layout's tensors; its output has ``lay``."""
        for k, i in enumerate(node.input):
            node.input[k] = self.phys(i)
        self.layout[node.output[0]] = lay
        self.emit(node)
        return True

    def elementwise(self, node: Any) -> bool:
        lays = [self.layout[i] for i in node.input if i in self.layout]
        if not lays or any(lay[0] != TOKENS or lay[2] != lays[0][2] for lay in lays):
            return False
        k = max(lay[1] for lay in lays)
        ins = []
        for i in node.input:
            new = i if not i or i in self.layout else self.reshaped_const(i, k, node)
            if new is None:
                return False
            ins.append(new)
        del node.input[:]
        node.input.extend(ins)
        return self.keep(node, (TOKENS, k, lays[0][2]))

    def matmul(self, node: Any, lay: tuple[str, int, int]) -> bool:
        """``MatMul(x, W)``, ``W`` a constant ``(K, K')`` (per-tensor, or per column behind
        its DequantizeLinear): the 1x1 conv by ``W^T``."""
        from onnx import helper

        found = self.const_operand(node.input[1])
        if found is None or found[0].ndim != 2 or found[0].shape[0] != lay[1]:
            return False
        arr, dq = found
        axis = {a.name: _value(a) for a in dq.attribute}.get("axis") if dq else None
        if dq is not None and not self.scalar_params(dq) and axis not in (1, -1):
            return False
        kout = arr.shape[1]
        w = self.const(np.ascontiguousarray(arr.T).reshape(kout, lay[1], 1, 1),
                       f"{dq.input[0] if dq else node.input[1]}__vtab_conv")
        if dq is not None:
            wq = self.fresh(f"{dq.output[0]}__vtab_conv")
            extra = {} if axis is None else {"axis": 0}  # per column -> per output channel
            self.emit(helper.make_node("DequantizeLinear", [w, *dq.input[1:]], [wq],
                                       name=wq, **extra))
            w = wq
        node.CopyFrom(helper.make_node("Conv", [node.input[0], w], [node.output[0]],
                                       kernel_shape=[1, 1], name=node.name))
        self.convs += 1
        return self.keep(node, (TOKENS, kout, lay[2]))


def _value(a: Any) -> Any:
    from onnx import helper

    return helper.get_attribute_value(a)
