"""Reading an ONNX file and putting it into the one form the graph compiler imports.

* :func:`load_model`: a path or bytes -> ``ModelProto``; a file that is not ONNX (or is cut
  short) is a :class:`ModelError`, one line.
* :func:`normalize` (on a copy):

  - fixes every graph input to a static shape: ``shapes`` (``vtabench compile --shape
    NAME=1,3,224,224``) for dynamic dimensions; a dynamic dimension without one is an error
    that names the input and what to pass;
  - rewrites QOperator nodes (``QLinearConv``, ``QLinearMatMul``, com.microsoft ``QLinearAdd``,
    ``QGemm``, ``QLinearGlobalAveragePool``, ...) into the QDQ form they stand for
    (DequantizeLinear -> float operator -> QuantizeLinear; the bias of a QLinearConv behind a
    DequantizeLinear with scale input scale x weight scale), so they take the same path as
    onnxruntime's QDQ output;
  - gives every consumer of a ``DequantizeLinear`` its own copy (standard QDQ shares one between
    a residual block's branches; a pattern match owns its dequantize);
  - folds constants once the input shapes are static: ``Shape`` of a tensor of known shape,
    integer-valued nodes of constants (the ``Shape -> Cast -> Slice -> Concat -> Reshape`` a
    flatten exported for a dynamic batch becomes a constant shape, which TVM's importer requires
    of a ``Reshape``), data movement of constants (``Reshape`` of a bias) and the
    ``QuantizeLinear`` of a constant (what onnxruntime writes for a constant it takes for an
    activation: the stored int8 value);
  - keeps a transformer's token sequence ``(1, T, C)`` in the ``(1, C, 1, T)`` layout of the
    map it was flattened from, its Linear layers as 1x1 convs
    (:mod:`vtabench.graph.onnx_tokens`);
  - writes a two-input ``Sum`` as ``Add``, an ``AveragePool`` over its whole input as
    ``GlobalAveragePool`` and a ``ReduceMean`` over H and/or W as the average pool it is
    (:mod:`vtabench.graph.onnx_reduce`): the forms the patterns match;
  - quantizes the input of a ``MaxPool`` that follows a float operator with the pool's output
    parameters (exact: rounding is monotone), and rewrites per-channel affine operators between
    a dequantize and a quantize
    (BatchNormalization, Add/Sub/Mul/Div by a constant, HardSigmoid) into depthwise 1x1 convs
    (:mod:`vtabench.graph.onnx_affine`), and a channel ``Concat`` of quantized activations into
    placement convs and Adds (:mod:`vtabench.graph.onnx_concat`).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np

from vtabench.graph.onnx_affine import affine_to_conv, quantize_before_maxpool
from vtabench.graph.onnx_concat import concat_to_convs
from vtabench.graph.onnx_reduce import reduce_mean_to_pool
from vtabench.graph.onnx_tokens import tokens_to_nchw

MS_DOMAIN = "com.microsoft"


class ModelError(ValueError):
    """A model the compiler cannot take, said in one line (which file, node or input, and why)."""


def load_model(model: Any) -> Any:
    """``model``: an ``onnx.ModelProto``, bytes, or a path."""
    import onnx
    from google.protobuf.message import DecodeError

    if isinstance(model, onnx.ModelProto):
        return model
    where = "model bytes"
    if not isinstance(model, (bytes, bytearray)):
        where = str(model)
        try:
            data = Path(model).read_bytes()
        except OSError as exc:
            raise ModelError(f"{where}: {exc.strerror or exc}") from None
    else:
        data = bytes(model)
    try:
        m = onnx.load_model_from_string(data)
    except (DecodeError, ValueError, RuntimeError) as exc:
        raise ModelError(f"{where}: not an ONNX model, or cut short ({exc})") from None
    if not m.HasField("graph") or not m.graph.node:
        raise ModelError(f"{where}: not an ONNX model (no graph nodes)")
    if m.ir_version < 3:
        raise ModelError(f"{where}: ONNX IR version {m.ir_version} is older than 3")
    if isinstance(model, (str, Path)) and any(
            t.data_location == onnx.TensorProto.EXTERNAL for t in m.graph.initializer):
        try:
            onnx.load_external_data_for_model(m, str(Path(model).parent))
        except (OSError, ValueError) as exc:
            raise ModelError(f"{where}: external tensor data: {exc}") from None
    return m


def node_label(node: Any) -> str:
    """``name (OpType)``, the output name when the node has no name."""
    name = node.name or (node.output[0] if node.output else "?")
    dom = f"{node.domain}." if node.domain not in ("", "ai.onnx") else ""
    return f"{name} ({dom}{node.op_type})"


def default_opset(m: Any) -> int:
    for o in m.opset_import:
        if o.domain in ("", "ai.onnx"):
            return int(o.version)
    return 1


def normalize(model: Any, shapes: dict[str, list[int]] | None = None) -> Any:
    """A normalized copy of ``model`` (see the module docstring)."""
    m = copy.deepcopy(model)
    _fix_input_shapes(m, shapes or {})
    _Rewriter(m).rewrite()
    fold_constants(m)
    tokens_to_nchw(m)
    reduce_mean_to_pool(m)
    _plain_forms(m)
    quantize_before_maxpool(m)
    affine_to_conv(m)
    concat_to_convs(m)
    return m


#: Operators folded when every input is a constant and every output an integer tensor (shape
#: arithmetic, the QuantizeLinear of a constant); float arithmetic of constants is left alone,
#: and so is DequantizeLinear (the patterns take a quantized model's weights behind it).
_SHAPE_OPS = frozenset({"Cast", "Slice", "Concat", "Gather", "Unsqueeze", "Squeeze", "Identity",
                        "Add", "Sub", "Mul", "Div", "ConstantOfShape", "Range", "ReduceProd",
                        "QuantizeLinear"})
#: Data movement, folded whatever the type of the constant.
_MOVE_OPS = frozenset({"Reshape", "Unsqueeze", "Squeeze", "Identity", "Flatten", "Transpose"})


def fold_constants(m: Any) -> None:
    """Folds until nothing is left to fold: a ``Reshape`` to a folded shape gives its output a
    static shape, whose own ``Shape`` the next round folds (PaddleOCR's recognizer reshapes its
    tokens by the ``Shape`` of an earlier reshape's output)."""
    while _fold_constants_once(m):
        pass


def _fold_constants_once(m: Any) -> bool:
    """One round of :func:`fold_constants`; whether it folded anything."""
    import onnx
    from onnx import numpy_helper
    from onnx.reference import ReferenceEvaluator

    try:
        inferred = onnx.shape_inference.infer_shapes(m)
    except (onnx.shape_inference.InferenceError, ValueError):
        return False  # the importer reports what it cannot take
    static: dict[str, list[int]] = {}
    for vi in (*inferred.graph.value_info, *inferred.graph.input, *inferred.graph.output):
        dims = vi.type.tensor_type.shape.dim
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape") and all(
                d.HasField("dim_value") for d in dims):
            static[vi.name] = [d.dim_value for d in dims]
    known = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    for node in m.graph.node:
        if node.op_type == "Constant" and not node.domain and node.attribute[0].name == "value":
            known[node.output[0]] = numpy_helper.to_array(node.attribute[0].t)
    keep, folded = [], []
    for node in m.graph.node:
        value = None
        if node.domain in ("", "ai.onnx") and node.op_type == "Shape" and node.input[0] in static \
                and not node.attribute:
            value = np.array(static[node.input[0]], np.int64)
        elif node.domain in ("", "ai.onnx") and node.op_type in _SHAPE_OPS | _MOVE_OPS and len(
                node.output) == 1 and all(i in known for i in node.input if i):
            one = onnx.helper.make_model(
                onnx.helper.make_graph([node], "fold", [], [onnx.helper.make_tensor_value_info(
                    node.output[0], onnx.TensorProto.UNDEFINED, None)]),
                opset_imports=[o for o in m.opset_import if o.domain in ("", "ai.onnx")])
            try:
                out = ReferenceEvaluator(one).run(None, {i: known[i] for i in node.input if i})[0]
            except Exception:  # noqa: BLE001 - not foldable: left to the importer
                out = None
            if out is not None and (np.asarray(out).dtype.kind in "iu"
                                    or node.op_type in _MOVE_OPS):
                value = np.asarray(out)
        if value is None:
            keep.append(node)
            continue
        known[node.output[0]] = value
        folded.append(numpy_helper.from_array(value, node.output[0]))
    if folded:
        del m.graph.node[:]
        m.graph.node.extend(keep)
        m.graph.initializer.extend(folded)
    return bool(folded)


def _plain_forms(m: Any) -> None:
    """Operators the patterns know under another name: a ``Sum`` of two tensors is their
    ``Add`` (TVM's converter writes ``Sum`` as stack + sum, which no pattern matches: the
    residual Adds of Caffe2 exports such as the zoo's ShuffleNet); an ``AveragePool`` whose
    unpadded window covers its whole (static) input is a ``GlobalAveragePool``."""
    from onnx import helper

    from vtabench.graph.onnx_affine import static_shapes

    shapes: dict[str, list[int]] | None = None
    for k, node in enumerate(m.graph.node):
        if node.domain not in ("", "ai.onnx"):
            continue
        if node.op_type == "Sum" and len(node.input) == 2:
            m.graph.node[k].CopyFrom(helper.make_node("Add", list(node.input),
                                                      list(node.output), name=node.name))
        elif node.op_type == "AveragePool":
            shapes = static_shapes(m) if shapes is None else shapes
            a = {x.name: helper.get_attribute_value(x) for x in node.attribute}
            shape = shapes.get(node.input[0])
            if (shape is not None and len(shape) == 4
                    and list(a.get("kernel_shape", [])) == shape[2:]
                    and not any(a.get("pads", [])) and all(d == 1 for d in a.get(
                        "dilations", [])) and a.get("auto_pad", b"NOTSET") in (
                        b"NOTSET", b"VALID", "NOTSET", "VALID") and not a.get("ceil_mode", 0)):
                m.graph.node[k].CopyFrom(helper.make_node(
                    "GlobalAveragePool", [node.input[0]], list(node.output), name=node.name))


def _fix_input_shapes(m: Any, shapes: dict[str, list[int]]) -> None:
    inits = {i.name for i in m.graph.initializer}
    names = [i.name for i in m.graph.input if i.name not in inits]
    for name in shapes:
        if name not in names:
            raise ModelError(f"--shape {name}: the model has no input {name!r} (inputs: "
                             f"{', '.join(names)})")
    for inp in m.graph.input:
        if inp.name in inits:
            continue
        tt = inp.type.tensor_type
        if not inp.type.HasField("tensor_type"):
            raise ModelError(f"input {inp.name!r}: not a tensor")
        dims = tt.shape.dim
        if inp.name in shapes:
            want = shapes[inp.name]
            if len(want) != len(dims) and tt.HasField("shape"):
                raise ModelError(f"--shape {inp.name}: {len(want)} dimensions, the input has "
                                 f"{len(dims)}")
            del dims[:]
            for v in want:
                dims.add().dim_value = int(v)
            continue
        if not tt.HasField("shape"):
            raise ModelError(f"input {inp.name!r} has no shape: pass --shape {inp.name}=D0,D1,...")
        bad = [k for k, d in enumerate(dims) if not d.HasField("dim_value") or d.dim_value <= 0]
        if bad:
            k = bad[0]
            what = dims[k].dim_param or "unknown"
            fix = ",".join(str(d.dim_value) if d.HasField("dim_value") and d.dim_value > 0
                           else "1" for d in dims)
            raise ModelError(f"input {inp.name!r} has a dynamic dimension {k} ({what}): pass "
                             f"--shape {inp.name}={fix} (a batch of 1 for a dynamic batch)")


class _Rewriter:
    """The node rewrites of :func:`normalize`, in one pass over the nodes (then the DQ copies)."""

    def __init__(self, m: Any) -> None:
        self.m = m
        self.g = m.graph
        self.inits = {i.name: i for i in self.g.initializer}
        self.n = 0

    def fresh(self, base: str) -> str:
        self.n += 1
        return f"{base}__vtab{self.n}"

    def const(self, arr: np.ndarray, base: str) -> str:
        from onnx import numpy_helper

        name = self.fresh(base)
        t = numpy_helper.from_array(arr, name)
        self.g.initializer.append(t)
        self.inits[name] = t
        return name

    def value(self, name: str, node: Any) -> np.ndarray:
        from onnx import numpy_helper

        if name not in self.inits:
            raise ModelError(f"node {node_label(node)}: {name!r} must be a constant initializer")
        return numpy_helper.to_array(self.inits[name])

    def rewrite(self) -> None:
        out: list[Any] = []
        for node in self.g.node:
            fn = _QOPS.get((node.domain or "", node.op_type))
            if fn is not None:
                out += fn(self, node)
            elif node.domain == MS_DOMAIN and node.op_type in ("QuantizeLinear",
                                                              "DequantizeLinear"):
                n2 = copy.deepcopy(node)
                n2.domain = ""
                out.append(n2)
            else:
                out.append(node)
        out = self.split_shared_dequantize(out)
        del self.g.node[:]
        self.g.node.extend(out)
        if not any(n.domain == MS_DOMAIN for n in out):
            keep = [o for o in self.m.opset_import if o.domain != MS_DOMAIN]
            del self.m.opset_import[:]
            self.m.opset_import.extend(keep)

    # -- helpers building nodes ------------------------------------------------------------------
    def dq(self, x: str, s: str, z: str, node: Any, axis: int | None = None) -> tuple[Any, str]:
        from onnx import helper

        y = self.fresh(f"{x}_dq")
        attrs = {"axis": axis} if axis is not None else {}
        ins = [x, s] + ([z] if z else [])
        return helper.make_node("DequantizeLinear", ins, [y], name=self.fresh(
            f"{node.name or node.output[0]}_dq"), **attrs), y

    def q(self, x: str, s: str, z: str, out: str, node: Any) -> Any:
        from onnx import helper

        ins = [x, s] + ([z] if z else [])
        return helper.make_node("QuantizeLinear", ins, [out], name=self.fresh(
            f"{node.name or out}_q"))

    def float_node(self, op: str, ins: list[str], node: Any, **attrs: Any) -> tuple[Any, str]:
        from onnx import helper

        y = self.fresh(f"{node.output[0]}_f")
        return helper.make_node(op, ins, [y], name=node.name or self.fresh(op), **attrs), y

    @staticmethod
    def attrs(node: Any, drop: tuple[str, ...] = ()) -> dict[str, Any]:
        from onnx import helper

        return {a.name: helper.get_attribute_value(a) for a in node.attribute
                if a.name not in drop}

    def weight_axis(self, s: str, node: Any, axis: int) -> int | None:
        return axis if self.value(s, node).size > 1 else None

    # -- the rewrites ----------------------------------------------------------------------------
    def qlinear_conv(self, node: Any) -> list[Any]:
        x, xs, xz, w, ws, wz, ys, yz = list(node.input[:8])
        n1, xd = self.dq(x, xs, xz, node)
        n2, wd = self.dq(w, ws, wz, node, self.weight_axis(ws, node, 0))
        ins, nodes = [xd, wd], [n1, n2]
        if len(node.input) > 8 and node.input[8]:
            bscale = (self.value(xs, node).astype(np.float64)
                      * self.value(ws, node).astype(np.float64)).astype(np.float32)
            s = self.const(bscale.reshape(-1) if bscale.size > 1 else bscale.reshape(()),
                           f"{node.output[0]}_bias_scale")
            z = self.const(np.zeros(bscale.shape if bscale.size > 1 else (), np.int32),
                           f"{node.output[0]}_bias_zero")
            n3, bd = self.dq(node.input[8], s, z, node, 0 if bscale.size > 1 else None)
            nodes.append(n3)
            ins.append(bd)
        n4, y = self.float_node("Conv", ins, node, **self.attrs(node))
        return nodes + [n4, self.q(y, ys, yz, node.output[0], node)]

    def qlinear_matmul(self, node: Any) -> list[Any]:
        a, as_, az, b, bs, bz, ys, yz = list(node.input[:8])
        n1, ad = self.dq(a, as_, az, node)
        n2, bd = self.dq(b, bs, bz, node, self.weight_axis(bs, node, 1))
        n3, y = self.float_node("MatMul", [ad, bd], node)
        return [n1, n2, n3, self.q(y, ys, yz, node.output[0], node)]

    def qlinear_binary(self, node: Any) -> list[Any]:
        a, as_, az, b, bs, bz, ys, yz = list(node.input[:8])
        n1, ad = self.dq(a, as_, az, node)
        n2, bd = self.dq(b, bs, bz, node)
        op = node.op_type.replace("QLinear", "")
        n3, y = self.float_node(op, [ad, bd], node)
        return [n1, n2, n3, self.q(y, ys, yz, node.output[0], node)]

    def qlinear_unary(self, node: Any) -> list[Any]:
        x, xs, xz, ys, yz = list(node.input[:5])
        a = self.attrs(node, drop=("channels_last",))
        if self.attrs(node).get("channels_last", 0):
            raise ModelError(f"node {node_label(node)}: channels_last layout is not supported")
        op = {"QLinearGlobalAveragePool": "GlobalAveragePool",
              "QLinearAveragePool": "AveragePool", "QLinearLeakyRelu": "LeakyRelu",
              "QLinearSigmoid": "Sigmoid"}[node.op_type]
        n1, xd = self.dq(x, xs, xz, node)
        n2, y = self.float_node(op, [xd], node, **a)
        return [n1, n2, self.q(y, ys, yz, node.output[0], node)]

    def qlinear_softmax(self, node: Any) -> list[Any]:
        x, xs, xz, ys, yz = list(node.input[:5])
        a = self.attrs(node, drop=("opset",))
        n1, xd = self.dq(x, xs, xz, node)
        n2, y = self.float_node("Softmax", [xd], node, **a)
        return [n1, n2, self.q(y, ys, yz, node.output[0], node)]

    def qlinear_concat(self, node: Any) -> list[Any]:
        ins = list(node.input)
        ys, yz, rest = ins[0], ins[1], ins[2:]
        nodes, xs = [], []
        for k in range(0, len(rest), 3):
            n, xd = self.dq(rest[k], rest[k + 1], rest[k + 2], node)
            nodes.append(n)
            xs.append(xd)
        n2, y = self.float_node("Concat", xs, node, **self.attrs(node))
        return nodes + [n2, self.q(y, ys, yz, node.output[0], node)]

    def qgemm(self, node: Any) -> list[Any]:
        ins = list(node.input) + [""] * (9 - len(node.input))
        a, as_, az, b, bs, bz, c, ys, yz = ins[:9]
        attrs = self.attrs(node)
        n1, ad = self.dq(a, as_, az, node)
        n2, bd = self.dq(b, bs, bz, node, self.weight_axis(
            bs, node, 0 if attrs.get("transB", 0) else 1))
        nodes, gin = [n1, n2], [ad, bd]
        if c:
            cs = (self.value(as_, node).astype(np.float64) * self.value(bs, node)
                  .astype(np.float64) * float(attrs.get("alpha", 1.0))).astype(np.float32)
            s = self.const(cs.reshape(-1) if cs.size > 1 else cs.reshape(()),
                           f"{node.output[0]}_c_scale")
            z = self.const(np.zeros(cs.shape if cs.size > 1 else (), np.int32),
                           f"{node.output[0]}_c_zero")
            n3, cd = self.dq(c, s, z, node, 0 if cs.size > 1 else None)
            nodes.append(n3)
            gin.append(cd)
        out = node.output[0]
        n4, y = self.float_node("Gemm", gin, node, **attrs)
        if not ys:  # float output
            n4.output[0] = out
            return nodes + [n4]
        return nodes + [n4, self.q(y, ys, yz, out, node)]

    def split_shared_dequantize(self, nodes: list[Any]) -> list[Any]:
        """Every consumer of a DequantizeLinear output gets its own DequantizeLinear (placed
        right before it)."""
        dq = {n.output[0]: n for n in nodes if n.op_type == "DequantizeLinear"
              and n.domain in ("", "ai.onnx")}
        uses: dict[str, int] = {}
        for n in nodes:
            for i in n.input:
                if i in dq:
                    uses[i] = uses.get(i, 0) + 1
        graph_outs = {o.name for o in self.g.output}
        seen: dict[str, int] = {}
        out: list[Any] = []
        for n in nodes:
            extra = []
            for k, i in enumerate(n.input):
                if i not in dq or uses[i] + (i in graph_outs) < 2:
                    continue
                seen[i] = seen.get(i, 0) + 1
                if seen[i] == 1 and i not in graph_outs:
                    continue  # the first consumer keeps the original
                d = copy.deepcopy(dq[i])
                d.output[0] = self.fresh(i)
                d.name = self.fresh(dq[i].name or "dq")
                n.input[k] = d.output[0]
                extra.append(d)
            out += extra + [n]
        return out


_QOPS = {
    ("", "QLinearConv"): _Rewriter.qlinear_conv,
    ("", "QLinearMatMul"): _Rewriter.qlinear_matmul,
    (MS_DOMAIN, "QLinearAdd"): _Rewriter.qlinear_binary,
    (MS_DOMAIN, "QLinearMul"): _Rewriter.qlinear_binary,
    (MS_DOMAIN, "QLinearGlobalAveragePool"): _Rewriter.qlinear_unary,
    (MS_DOMAIN, "QLinearAveragePool"): _Rewriter.qlinear_unary,
    (MS_DOMAIN, "QLinearLeakyRelu"): _Rewriter.qlinear_unary,
    (MS_DOMAIN, "QLinearSigmoid"): _Rewriter.qlinear_unary,
    (MS_DOMAIN, "QLinearSoftmax"): _Rewriter.qlinear_softmax,
    (MS_DOMAIN, "QLinearConcat"): _Rewriter.qlinear_concat,
    (MS_DOMAIN, "QGemm"): _Rewriter.qgemm,
}
