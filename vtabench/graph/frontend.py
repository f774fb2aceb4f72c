"""ONNX (QDQ) -> Relax -> partitioned graph.

``import_onnx`` runs TVM's ONNX frontend (``tvm.relax.frontend.onnx.from_onnx``; no constant
folding, so int8 weights stay int8 behind their ``dequantize``), then
``relax.transform.FuseOpsByPattern`` with the :mod:`relax.dpl` patterns below turns every QDQ
chain that VTA can run into a composite function (``vta.conv2d``, ``vta.dense``, ``vta.add``).
:func:`to_graph` reads the partitioned ``main`` into :class:`vtabench.graph.ir.Graph`: composite
calls become integer operator nodes (int8 weights, int32 bias, a power-of-two requantization
shift, ReLU/clip bounds), every other binding stays a Relax call that only the CPU runs.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import numpy as np
import tvm
from tvm import relax
from tvm.relax.dpl import is_const, is_op, wildcard

from vtabench.graph.ir import Graph, Node, QParams

# -- patterns --------------------------------------------------------------------------------


def _dq(x: Any) -> Any:
    return is_op("relax.dequantize")(x, is_const(), is_const())


def _q(x: Any) -> Any:
    return is_op("relax.quantize")(x, is_const(), is_const())


def _conv_pattern(relu: bool) -> Any:
    conv = is_op("relax.nn.conv2d")(_dq(wildcard()), _dq(is_const()))
    bias = is_op("relax.reshape")(_dq(is_const()), wildcard())
    y = is_op("relax.add")(conv, bias)
    if relu:
        y = is_op("relax.nn.relu")(y)
    return _q(y)


def _dense_pattern(flatten: bool) -> Any:
    x = _dq(wildcard())
    if flatten:
        x = is_op("relax.reshape")(x, wildcard())
    mm = is_op("relax.matmul")(x, is_op("relax.permute_dims")(_dq(is_const())))
    return _q(is_op("relax.add")(mm, _dq(is_const())))


def _add_pattern(relu: bool) -> Any:
    y = is_op("relax.add")(_dq(wildcard()), _dq(wildcard()))
    if relu:
        y = is_op("relax.nn.relu")(y)
    return _q(y)


def _avgpool_pattern() -> Any:
    return _q(is_op("relax.mean")(_dq(wildcard())))


PATTERNS = [
    ("vta.avgpool", _avgpool_pattern()),
    ("vta.conv2d_relu", _conv_pattern(True)),
    ("vta.conv2d", _conv_pattern(False)),
    ("vta.dense_flatten", _dense_pattern(True)),
    ("vta.dense", _dense_pattern(False)),
    ("vta.add_relu", _add_pattern(True)),
    ("vta.add", _add_pattern(False)),
]


def import_onnx(model: Any) -> tvm.IRModule:
    """ONNX ModelProto (or path) -> Relax IRModule with VTA composite functions."""
    import onnx
    from tvm.relax.frontend.onnx import from_onnx

    if not isinstance(model, onnx.ModelProto):
        model = onnx.load(str(model))
    mod = from_onnx(model, keep_params_in_input=False)
    return partition(mod)


def partition(mod: tvm.IRModule) -> tvm.IRModule:
    return relax.transform.FuseOpsByPattern(PATTERNS, bind_constants=True,
                                            annotate_codegen=False)(mod)


# -- reading the partitioned module ------------------------------------------------------------

def _ty(v: Any) -> Any:
    return v.ty if hasattr(v, "ty") else v.struct_info


def _shape(v: Any) -> tuple[int, ...]:
    return tuple(int(s) for s in _ty(v).shape)


def _dtype(v: Any) -> str:
    return str(_ty(v).dtype)


def _const(e: Any) -> np.ndarray:
    return e.value.numpy()


def _log2_scale(s: Any, what: str) -> int:
    """-log2 of a power-of-two scale (2^-k -> k); ValueError otherwise."""
    v = float(np.asarray(s).reshape(-1)[0]) if np.asarray(s).size else 0.0
    if np.asarray(s).size != 1:
        raise ValueError(f"{what}: per-channel scales are not supported (power-of-two "
                         f"per-tensor only)")
    if v <= 0:
        raise ValueError(f"{what}: scale {v} is not positive")
    k = -math.log2(v)
    if abs(k - round(k)) > 1e-9:
        raise ValueError(f"{what}: scale {v} is not a power of two")
    return round(k)


def _calls(func: relax.Function) -> list[Any]:
    return [b for blk in func.body.blocks for b in blk.bindings]


def _find(bindings: list[Any], op: str) -> list[Any]:
    return [b.value for b in bindings if isinstance(b.value, relax.Call)
            and hasattr(b.value.op, "name") and b.value.op.name == op]


def _dq_info(call: Any) -> tuple[Any, int, int]:
    """(data, log2 inverse scale, zero point) of a dequantize/quantize call."""
    scale = _const(call.args[1])
    zp = int(np.asarray(_const(call.args[2])).reshape(-1)[0])
    return call.args[0], _log2_scale(scale, call.op.name), zp


def _fingerprint(*arrays: np.ndarray) -> str:
    h = hashlib.sha1()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:10]


def _composite_params(kind: str, func: relax.Function) -> tuple[QParams, list[int]]:
    """Integer parameters of a composite and, for its parameters, which are inputs (in order)."""
    bs = _calls(func)
    params = list(func.params)
    qs = _find(bs, "relax.quantize")
    q_out = qs[-1]
    _, out_log2, out_zp = _dq_info(q_out)
    relu = bool(_find(bs, "relax.nn.relu"))
    var_val = {b.var: b.value for b in bs}

    def producer(e: Any) -> Any:
        return var_val.get(e, e)

    if kind in ("conv2d", "dense"):
        main = _find(bs, "relax.nn.conv2d" if kind == "conv2d" else "relax.matmul")[0]
        x_dq = producer(main.args[0])
        if kind == "dense" and x_dq.op.name == "relax.reshape":
            x_dq = producer(x_dq.args[0])
        xin, in_log2, in_zp = _dq_info(x_dq)
        w_src = producer(main.args[1])
        if kind == "dense":
            w_src = producer(w_src.args[0])  # permute_dims
        w, w_log2, w_zp = _dq_info(w_src)
        w = _const(w)
        add = _find(bs, "relax.add")[0]
        b_src = producer(add.args[1])
        if b_src.op.name == "relax.reshape":
            b_src = producer(b_src.args[0])
        b, b_log2, b_zp = _dq_info(b_src)
        b = _const(b).astype(np.int32)
        if in_zp or w_zp or b_zp or out_zp:
            raise ValueError(f"{kind}: nonzero zero points are not supported (symmetric int8)")
        if b_log2 != in_log2 + w_log2:
            raise ValueError(f"{kind}: bias scale 2^-{b_log2} is not input x weight scale")
        shift = in_log2 + w_log2 - out_log2
        qp = QParams(kind=kind, weight=w.astype(np.int8), bias=b, shift=shift, relu=relu,
                     in_log2=in_log2, out_log2=out_log2, key=f"{kind}_{_fingerprint(w, b)}")
        if kind == "conv2d":
            a = main.attrs
            qp.stride = int(a.strides[0])
            qp.pad = int(a.padding[0])
            ok = (len({int(s) for s in a.strides}) == 1 and len({int(p) for p in a.padding})
                  == 1 and all(int(d) == 1 for d in a.dilation) and int(a.groups) == 1
                  and str(a.data_layout) == "NCHW" and str(a.kernel_layout) == "OIHW")
            if not ok:
                qp.unsupported = ("conv2d attributes outside VTA's form (square stride/pad, "
                                  "no dilation, groups 1, NCHW/OIHW)")
        inputs = [params.index(xin)]
        return qp, inputs
    if kind == "avgpool":
        mean = _find(bs, "relax.mean")[0]
        xin, in_log2, in_zp = _dq_info(producer(mean.args[0]))
        axes = sorted(int(a) for a in mean.attrs.axis)
        shape = _shape(xin)
        if in_zp or out_zp:
            raise ValueError("avgpool: nonzero zero points are not supported")
        c, h, w = shape[1], shape[2], shape[3]
        hw = h * w
        # Global average pooling as a conv with an identity kernel over the whole map: the sum
        # is exact in the accumulator; dividing by a power-of-two count is the rounding shift.
        wgt = np.zeros((c, c, h, w), np.int8)
        wgt[np.arange(c), np.arange(c)] = 1
        qp = QParams(kind="conv2d", weight=wgt, bias=np.zeros(c, np.int32),
                     shift=round(math.log2(hw)) + in_log2 - out_log2, relu=False,
                     in_log2=in_log2, out_log2=out_log2, key=f"avgpool_{c}x{h}x{w}",
                     label="global average pool")
        if axes != [2, 3] or len(shape) != 4 or not bool(mean.attrs.keepdims):
            qp.unsupported = "mean over axes other than (2, 3) with keepdims"
            qp.integer_exact = False
        elif hw & (hw - 1):
            qp.unsupported = (f"average over {h}x{w} = {hw} elements is not a power-of-two "
                              f"shift")
            qp.integer_exact = False
        return qp, [params.index(xin)]
    if kind == "add":
        add = _find(bs, "relax.add")[0]
        a, la, za = _dq_info(producer(add.args[0]))
        b, lb, zb = _dq_info(producer(add.args[1]))
        if za or zb or out_zp:
            raise ValueError("add: nonzero zero points are not supported")
        qp = QParams(kind="add", relu=relu, in_log2=la, in2_log2=lb, out_log2=out_log2,
                     key="add")
        return qp, [params.index(a), params.index(b)]
    raise ValueError(kind)


def to_graph(mod: tvm.IRModule) -> Graph:
    """The partitioned main function as a :class:`Graph` (nodes in the order of ``main``)."""
    main = mod["main"]
    g = Graph()
    for p in main.params:
        g.add(Node(name=p.name, op="input", inputs=[], shape=_shape(p), dtype=_dtype(p)))
        g.inputs.append(p.name)
    names: dict[Any, str] = {p: p.name for p in main.params}
    counter: dict[str, int] = {}
    for b in _calls(main):
        v, e = b.var, b.value
        name = v.name
        if isinstance(e, relax.Call) and isinstance(e.op, tvm.ir.GlobalVar):
            # operator nodes are numbered by kind in graph order: conv1, conv2, ..., dense1
            kind = str(mod[e.op].attrs["Composite"]).split(".")[1].split("_")[0]
            kind = {"conv2d": "conv"}.get(kind, kind)
            counter[kind] = counter.get(kind, 0) + 1
            name = f"{kind}{counter[kind]}"
        k = 1
        while name in g.nodes:
            name = f"{name}_{k}"
            k += 1
        names[v] = name
        if isinstance(e, relax.Call) and isinstance(e.op, tvm.ir.GlobalVar):
            func = mod[e.op]
            comp = func.attrs["Composite"] if func.attrs and "Composite" in func.attrs else None
            if comp is None:
                raise ValueError(f"call to {e.op.name_hint} is not a composite")
            kind = str(comp).split(".")[1].split("_")[0]
            try:
                qp, idx = _composite_params(kind, func)
            except (ValueError, IndexError, AttributeError) as exc:
                # Not VTA's arithmetic (e.g. a scale that is not a power of two): the CPU runs
                # the composite's own QDQ chain.
                kind_q = {"avgpool": "conv2d"}.get(kind, kind)
                qp = QParams(kind=kind_q, key=f"{kind}_{name}", unsupported=str(exc),
                             integer_exact=False)
                idx = list(range(len(e.args)))
            args = [names[e.args[i]] for i in idx]
            node = Node(name=name, op=qp.kind, inputs=args, shape=_shape(v), dtype=_dtype(v), q=qp,
                        relax_func=func, relax_args=[names[a] for a in e.args])
            g.add(node)
        elif isinstance(e, relax.Call):
            fv = _free_vars(e, names)
            g.add(Node(name=name, op=e.op.name if hasattr(e.op, "name") else str(e.op),
                       inputs=[names[x] for x in fv], shape=_shape(v) if _is_tensor(v) else (),
                       dtype=_dtype(v) if _is_tensor(v) else "", expr=e, arg_vars=fv))
        else:
            fv = _free_vars(e, names)
            g.add(Node(name=name, op="expr", inputs=[names[x] for x in fv],
                       shape=_shape(v) if _is_tensor(v) else (),
                       dtype=_dtype(v) if _is_tensor(v) else "", expr=e, arg_vars=fv))
    out = main.body.body
    g.outputs = [names[out]] if isinstance(out, relax.Var) else [names[f] for f in out.fields]
    if len(g.outputs) == 1 and isinstance(g.nodes[g.outputs[0]].expr, relax.Tuple):
        tup = g.nodes[g.outputs[0]]
        g.outputs = [names[f] for f in tup.expr.fields]
        g.remove(tup.name)
    return g


def _is_tensor(v: Any) -> bool:
    return isinstance(_ty(v), relax.TensorType)


def _free_vars(e: Any, names: dict[Any, str]) -> list[Any]:
    out: list[Any] = []
    for v in relax.analysis.free_vars(e):
        if v in names and not any(v.same_as(o) for o in out):
            out.append(v)
    return out
