"""ONNX (QDQ) -> Relax -> partitioned graph.

``import_onnx`` reads and normalizes the model (:mod:`vtabench.graph.onnx_prep`: static input
shapes, QOperator nodes rewritten to QDQ, one DequantizeLinear per consumer), runs TVM's ONNX
frontend (``tvm.relax.frontend.onnx``; no constant folding, so integer weights stay integer
behind their ``dequantize``), then ``relax.transform.FuseOpsByPattern`` with the
:mod:`relax.dpl` patterns below turns every QDQ chain with an integer form into a composite
function. :func:`to_graph` reads the partitioned ``main`` into :class:`vtabench.graph.ir.Graph`:
composite calls become integer operator nodes (:class:`~vtabench.graph.ir.QParams`: int8
weights, int32 bias, scales and zero points, activation bounds), every other binding stays a
Relax call that only the CPU runs. A composite whose integer form does not exist (a weight zero
point that does not fit int8, per-channel activation scales...) keeps the reason and runs its
own QDQ chain on the CPU.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import io
import os
import sys
import warnings
from typing import Any

import numpy as np
import tvm
from tvm import relax
from tvm.relax.dpl import is_const, is_op, wildcard

from vtabench.graph.ir import Graph, Node, QParams, TensorQ
from vtabench.graph.onnx_prep import ModelError, default_opset, load_model, node_label, normalize

# -- patterns --------------------------------------------------------------------------------


def _dq(x: Any) -> Any:
    return is_op("relax.dequantize")(x, is_const(), is_const())


def _q(x: Any) -> Any:
    return is_op("relax.quantize")(x, is_const(), is_const())


def _act(y: Any, act: str) -> Any:
    if act == "relu":
        return is_op("relax.nn.relu")(y)
    if act == "clip":
        return is_op("relax.clip")(y, wildcard(), wildcard())
    return y


ACTS = ("relu", "clip", "")


def _conv_pattern(bias: bool, act: str) -> Any:
    y = is_op("relax.nn.conv2d")(_dq(wildcard()), _dq(is_const()))
    if bias:
        y = is_op("relax.add")(y, is_op("relax.reshape")(_dq(is_const()), wildcard()))
    return _q(_act(y, act))


def _dense_pattern(flatten: bool, transposed: bool, bias: bool, act: str) -> Any:
    x = _dq(wildcard())
    if flatten:
        x = is_op("relax.reshape")(x, wildcard())
    w = _dq(is_const())
    if transposed:
        w = is_op("relax.permute_dims")(w)
    y = is_op("relax.matmul")(x, w)
    if bias:
        y = is_op("relax.add")(y, _dq(is_const()))
    return _q(_act(y, act))


def _patterns() -> list[tuple[str, Any]]:
    pats: list[tuple[str, Any]] = [("vta.avgpool", _q(is_op("relax.mean")(_dq(wildcard()))))]
    for act in ACTS:
        for bias in (True, False):
            pats.append(("vta.conv2d", _conv_pattern(bias, act)))
    for act in ACTS:
        for bias in (True, False):
            for flatten in (True, False):
                for tr in (True, False):
                    pats.append(("vta.dense", _dense_pattern(flatten, tr, bias, act)))
    for act in ACTS:
        pats.append(("vta.add", _q(_act(is_op("relax.add")(_dq(wildcard()), _dq(wildcard())),
                                        act))))
    for act in ACTS[:-1]:
        pats.append(("vta.act", _q(_act(_dq(wildcard()), act))))
    pats.append(("vta.leaky", _q(is_op("relax.nn.leakyrelu")(_dq(wildcard())))))
    pats.append(("vta.reshape", _q(is_op("relax.reshape")(_dq(wildcard()), wildcard()))))
    pats.append(("vta.maxpool", _q(is_op("relax.nn.max_pool2d")(_dq(wildcard())))))
    return pats


PATTERNS = _patterns()


def import_onnx(model: Any, shapes: dict[str, list[int]] | None = None) -> tvm.IRModule:
    """ONNX model (ModelProto, bytes or path) -> Relax IRModule with the VTA composite
    functions. :class:`ModelError` (one line) for a model it cannot take."""
    m = normalize(load_model(model), shapes)
    return partition(_from_onnx(m))


def _quantize_names(func: relax.Function) -> list[str]:
    """The ONNX names of the quantize calls of ``func``, in binding order."""
    return [_onnx_name(b.value) for b in _calls(func) if isinstance(b.value, relax.Call)
            and getattr(b.value.op, "name", "") == "relax.quantize"]


def _importer() -> Any:
    """TVM's ONNX importer, remembering the node it is converting (for error messages), putting
    each node's ONNX output name into the span of the call it converts to (the span survives
    FuseOpsByPattern: graph nodes know the ONNX tensor they compute), and reading ``Clip`` with
    constant bounds as ``relax.clip``."""
    from tvm.relax.frontend.onnx import onnx_frontend as of

    class Importer(of.ONNXGraphImporter):
        current: Any = None

        def _parse_value_proto(self, value_proto: Any) -> Any:
            if hasattr(value_proto, "op_type"):
                self.current = value_proto
            return super()._parse_value_proto(value_proto)

        def _convert_operator(self, op_name: str, inputs: Any, attrs: dict, opset: int) -> Any:
            op = _clip(inputs, attrs) if op_name == "Clip" else None
            if op is None:
                op = super()._convert_operator(op_name, inputs, attrs, opset)
            node = self.current
            if isinstance(op, relax.Call) and node is not None and len(node.output) == 1:
                span = tvm.ir.Span(tvm.ir.SourceName(node.output[0]), 0, 0, 0, 0)
                op = self.bb.normalize(relax.Call(op.op, op.args, op.attrs, op.ty_args, span))
            return op

    return Importer({}, "float32", keep_params_in_input=False, sanitize=True)


def _clip(inputs: Any, attrs: dict) -> Any:
    """``Clip`` with constant bounds as ``relax.clip`` (TVM's converter emits TIR max/min
    functions, which no pattern matches); None for tensor bounds."""
    bounds = []
    for k, key in ((1, "min"), (2, "max")):
        b = inputs[k] if len(inputs) > k else None
        if b is None:
            v = attrs.get(key)
            bounds.append(float(v) if v is not None else (-3.4e38 if key == "min" else 3.4e38))
        elif isinstance(b, tvm.ir.expr.Constant) and _const(b).size == 1:
            bounds.append(float(_const(b).reshape(-1)[0]))
        else:
            return None
    if not np.isfinite(bounds).all():
        return None
    return relax.op.clip(inputs[0], bounds[0], bounds[1])


def _from_onnx(m: Any) -> tvm.IRModule:
    from tvm.relax.frontend.onnx import onnx_frontend as of

    known = of._get_convert_map()
    for node in m.graph.node:
        if node.domain not in ("", "ai.onnx") or (
                node.op_type not in known and node.op_type not in ("If", "Constant")):
            raise ModelError(f"node {node_label(node)}: operator not supported (TVM's ONNX "
                             f"frontend has no converter for it)")
    imp = _importer()
    try:
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return imp.from_onnx(m.graph, default_opset(m))
    except Exception as exc:  # noqa: BLE001 - any failure of the foreign converter
        where = f"node {node_label(imp.current)}" if imp.current is not None else "model"
        message = f"{where}: TVM's ONNX import failed: {one_line(exc)}"
    # The half-built function's BlockBuilder warns on stderr (C++) when it is destroyed: drop
    # it quietly, so the error stays one line.
    with quiet_stderr():
        del imp
        gc.collect()
    raise ModelError(message)


@contextlib.contextmanager
def quiet_stderr() -> Any:
    """File descriptor 2 to /dev/null (C++ logging bypasses sys.stderr)."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def one_line(exc: BaseException) -> str:
    """The line of an exception's message that says what went wrong (TVM errors carry a
    backtrace in the message)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    text = next((ln for ln in reversed(lines) if "Error" in ln), lines[-1] if lines else "")
    return (text or type(exc).__name__)[:300]


def partition(mod: tvm.IRModule) -> tvm.IRModule:
    """FuseOpsByPattern with :data:`PATTERNS`. The module keeps, as its attribute
    ``vtabench.composite_outputs``, the ONNX name each composite call of ``main`` computes, in
    call order: FuseOpsByPattern shares one function between structurally equal matches (two
    ReLU6 chains with the same scale), so a function body cannot say which tensor a call makes.
    Every pattern ends in a quantize, and each call takes its root's place in the binding order,
    so the calls are the original quantizes that are no longer bindings of ``main``, in order."""
    before = _quantize_names(mod["main"])
    out = relax.transform.FuseOpsByPattern(PATTERNS, bind_constants=True,
                                           annotate_codegen=False)(mod)
    left = set(_quantize_names(out["main"]))
    return out.with_attr("vtabench.composite_outputs", [n for n in before if n not in left])


# -- reading the partitioned module ------------------------------------------------------------

def _ty(v: Any) -> Any:
    return v.ty if hasattr(v, "ty") else v.struct_info


def _is_tensor(v: Any) -> bool:
    t = _ty(v)
    return isinstance(t, relax.TensorType) and t.shape is not None and all(
        isinstance(s, tvm.tirx.IntImm) for s in t.shape)


def _shape(v: Any) -> tuple[int, ...]:
    return tuple(int(s) for s in _ty(v).shape)


def _dtype(v: Any) -> str:
    return str(_ty(v).dtype)


def _const(e: Any) -> np.ndarray:
    return e.value.numpy()


def _calls(func: relax.Function) -> list[Any]:
    return [b for blk in func.body.blocks for b in blk.bindings]


def _find(bindings: list[Any], op: str) -> list[Any]:
    return [b.value for b in bindings if isinstance(b.value, relax.Call)
            and hasattr(b.value.op, "name") and b.value.op.name == op]


def _fingerprint(*arrays: np.ndarray) -> str:
    h = hashlib.sha1()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:10]


class Unsupported(ValueError):
    """A composite with no integer form (the CPU runs its QDQ chain)."""


def _qd(call: Any) -> tuple[Any, np.ndarray, np.ndarray, int, str]:
    """(data, scale, zero point, axis, integer dtype) of a quantize/dequantize call."""
    scale = np.asarray(_const(call.args[1]), np.float64)
    zp = np.asarray(_const(call.args[2]))
    dtype = (str(call.attrs.out_dtype) if call.op.name == "relax.quantize"
             else _dtype(call.args[0]))
    return call.args[0], scale, zp, int(call.attrs.axis), dtype


def _tensor_q(call: Any, what: str) -> tuple[Any, TensorQ]:
    """(data, TensorQ) of an activation's quantize/dequantize: one scale, int8 or uint8."""
    data, scale, zp, _, dtype = _qd(call)
    if scale.size != 1 or zp.size != 1:
        raise Unsupported(f"{what}: per-channel activation scales")
    if dtype not in ("int8", "uint8"):
        raise Unsupported(f"{what}: {dtype} activations (int8 and uint8 only)")
    s = float(scale.reshape(-1)[0])
    if not (np.isfinite(s) and s > 0):
        raise Unsupported(f"{what}: scale {s} is not positive")
    return data, TensorQ(s, int(zp.reshape(-1)[0]), dtype)


def _act_bounds(bs: list[Any], y: TensorQ) -> tuple[int, int]:
    """[lo, hi] in y's q units of the ReLU / Clip between the float op and the quantize."""
    lo, hi = y.qmin, y.qmax
    if _find(bs, "relax.nn.relu"):
        lo = max(lo, y.zero)
    for c in _find(bs, "relax.clip"):
        a, b = (int(np.clip(np.rint(float(v.value) / y.scale) + y.zero, -(1 << 20), 1 << 20))
                for v in c.args[1:])
        lo, hi = max(lo, a), min(hi, b)
    if lo > hi:
        raise Unsupported(f"empty activation range [{lo}, {hi}]")
    return lo, hi


def _weight(call: Any, out_axis: int, what: str) -> tuple[np.ndarray, np.ndarray]:
    """int8 weight (zero point removed) and its per-output-channel scales from a weight's
    dequantize; ``out_axis`` is the output-channel axis."""
    data, scale, zp, axis, dtype = _qd(call)
    q = _const(data).astype(np.int64)
    channels = q.shape[out_axis]
    if dtype not in ("int8", "uint8"):
        raise Unsupported(f"{what}: {dtype} weights")
    if scale.size > 1 and axis != out_axis:
        raise Unsupported(f"{what}: per-channel weight scales along axis {axis} (not the "
                          f"output channels)")
    shape = [1] * q.ndim
    shape[out_axis] = -1
    w = q - (zp.astype(np.int64).reshape(shape) if zp.size > 1 else int(zp.reshape(-1)[0]))
    if w.min(initial=0) < -128 or w.max(initial=0) > 127:
        raise Unsupported(f"{what}: weight zero point {zp.reshape(-1)[:4].tolist()} leaves "
                          f"values outside int8")
    ws = np.broadcast_to(scale.reshape(-1), (channels,)).astype(np.float64)
    if not np.all(np.isfinite(ws) & (ws > 0)):
        raise Unsupported(f"{what}: weight scales must be positive")
    return w.astype(np.int8), ws


def _bias(call: Any | None, x: TensorQ, ws: np.ndarray, what: str) -> np.ndarray:
    """int32 bias in units of x.scale * ws (rescaled, rounded, when its own scale differs)."""
    if call is None:
        return np.zeros(ws.shape, np.int32)
    data, scale, zp, _, _ = _qd(call)
    real = (_const(data).astype(np.float64).reshape(-1) - zp.astype(np.float64).reshape(-1)) \
        * scale.reshape(-1)
    unit = x.scale * ws
    b = real / unit
    exact = _const(data).astype(np.int64).reshape(-1)
    if zp.size == 1 and int(zp.reshape(-1)[0]) == 0 and np.allclose(
            scale.reshape(-1), unit, rtol=1e-5, atol=0):
        return np.broadcast_to(exact, ws.shape).astype(np.int32)
    b = np.rint(np.broadcast_to(b, ws.shape))
    if np.abs(b).max(initial=0) >= 1 << 31:
        raise Unsupported(f"{what}: bias does not fit int32 at scale input x weight")
    return b.astype(np.int32)


def _composite_params(kind: str, func: relax.Function) -> tuple[QParams, list[int], dict]:
    """Integer parameters of a composite, which of its parameters are the node's inputs (in
    order), and the attributes an integer CPU op needs (reshape: shape; maxpool: pool attrs).
    :class:`Unsupported` when the chain has no integer form."""
    bs = _calls(func)
    params = list(func.params)
    var_val = {b.var: b.value for b in bs}

    def producer(e: Any) -> Any:
        return var_val.get(e, e)

    def index(v: Any) -> int:
        if v not in params:
            raise Unsupported("an operand that is not a graph tensor")
        return params.index(v)

    _, y = _tensor_q(_find(bs, "relax.quantize")[-1], f"{kind} output")
    if kind in ("conv2d", "dense"):
        main = _find(bs, "relax.nn.conv2d" if kind == "conv2d" else "relax.matmul")[0]
        x_src = producer(main.args[0])
        if x_src.op.name == "relax.reshape":
            x_src = producer(x_src.args[0])
        xin, x = _tensor_q(x_src, f"{kind} input")
        w_src = producer(main.args[1])
        transposed = w_src.op.name == "relax.permute_dims"
        if transposed:
            w_src = producer(w_src.args[0])
        if kind == "conv2d":
            w, ws = _weight(w_src, 0, kind)
        else:
            w, ws = _weight(w_src, 0 if transposed else 1, kind)
            if not transposed:
                w = np.ascontiguousarray(w.T)
        adds = _find(bs, "relax.add")
        b_src = None
        if adds:
            b_src = producer(adds[0].args[1])
            if b_src.op.name == "relax.reshape":
                b_src = producer(b_src.args[0])
        b = _bias(b_src, x, ws, kind)
        lo, hi = _act_bounds(bs, y)
        qp = QParams(kind=kind, x=x, y=y, weight=w, w_scale=ws, bias=b, lo=lo, hi=hi,
                     key=f"{kind}_{_fingerprint(w, b, ws)}")
        if kind == "conv2d":
            a = main.attrs
            qp.stride = int(a.strides[0])
            qp.pad = int(a.padding[0])
            ok = (len({int(s) for s in a.strides}) == 1 and len({int(p) for p in a.padding})
                  == 1 and all(int(d) == 1 for d in a.dilation)
                  and str(a.data_layout) == "NCHW" and str(a.kernel_layout) == "OIHW")
            qp.groups = int(a.groups)
            if qp.groups != 1 and not (qp.groups == w.shape[0] and w.shape[1] == 1):
                qp.unsupported = (f"grouped convolution (groups={qp.groups}, "
                                  f"{w.shape[1]} input channels per group): only dense and "
                                  f"depthwise convolutions have an integer form here")
            elif w.shape[2] != w.shape[3]:
                qp.unsupported = "non-square kernel"
            elif not ok:
                qp.unsupported = ("conv2d attributes outside VTA's form (square stride/pad, "
                                  "no dilation, NCHW/OIHW)")
        return qp, [index(xin)], {}
    if kind == "avgpool":
        mean = _find(bs, "relax.mean")[0]
        xin, x = _tensor_q(producer(mean.args[0]), "avgpool input")
        axes = sorted(int(a) for a in mean.attrs.axis)
        shape = _shape(xin)
        if axes != [2, 3] or len(shape) != 4 or not bool(mean.attrs.keepdims):
            raise Unsupported("mean over axes other than (2, 3) with keepdims")
        c, h, w = shape[1], shape[2], shape[3]
        qp = QParams(kind="avgpool", x=x, y=y, w_scale=np.full(c, 1.0 / (h * w)),
                     bias=np.zeros(c, np.int32), lo=y.qmin, hi=y.qmax,
                     key=f"avgpool_{c}x{h}x{w}_{_fingerprint(np.array([x.scale, y.scale]))}",
                     label="global average pool")
        return qp, [index(xin)], {"hw": (h, w)}
    if kind == "add":
        add = _find(bs, "relax.add")[0]
        a, qa = _tensor_q(producer(add.args[0]), "add input")
        b, qb = _tensor_q(producer(add.args[1]), "add input")
        lo, hi = _act_bounds(bs, y)
        qp = QParams(kind="add", x=qa, res=qb, y=y, lo=lo, hi=hi, key="add",
                     integer_exact=False)
        return qp, [index(a), index(b)], {}
    xin, x = _tensor_q(_find(bs, "relax.dequantize")[0], f"{kind} input")
    same = x == y
    if kind == "leaky":
        alpha = float(_find(bs, "relax.nn.leakyrelu")[0].attrs.alpha)
        if not 0 <= alpha <= 1:
            raise Unsupported(f"LeakyReLU slope {alpha} outside [0, 1]")
        c = _shape(xin)[1]
        qp = QParams(kind="leaky", x=x, y=y, alpha=alpha, w_scale=np.ones(c),
                     bias=np.zeros(c, np.int32), lo=y.qmin, hi=y.qmax,
                     key=f"leaky_{alpha}_{_fingerprint(np.array([x.scale, y.scale]))}")
        return qp, [index(xin), index(xin)], {}
    if kind == "act":
        lo, hi = _act_bounds(bs, y)
        qp = QParams(kind="act", x=x, y=y, lo=lo, hi=hi, key=f"act_{lo}_{hi}",
                     integer_exact=same)
        return qp, [index(xin)], {}
    if kind == "reshape":
        r = _find(bs, "relax.reshape")[0]
        return (QParams(kind="reshape", x=x, y=y, key="reshape", integer_exact=same),
                [index(xin)], {"shape": _shape(r)})
    if kind == "maxpool":
        mp = _find(bs, "relax.nn.max_pool2d")[0]
        return (QParams(kind="maxpool", x=x, y=y, key="maxpool", integer_exact=same),
                [index(xin)], {"attrs": mp.attrs})
    raise Unsupported(f"unknown composite {kind}")


def to_graph(mod: tvm.IRModule) -> Graph:
    """The partitioned main function as a :class:`Graph` (nodes in the order of ``main``)."""
    main = mod["main"]
    g = Graph()
    g.functions = {gv: f for gv, f in mod.functions.items()
                   if isinstance(f, tvm.tirx.PrimFunc)}
    for p in main.params:
        if not _is_tensor(p):
            raise ModelError(f"input {p.name}: not a tensor of static shape")
        g.add(Node(name=p.name, op="input", inputs=[], shape=_shape(p), dtype=_dtype(p)))
        g.inputs.append(p.name)
    names: dict[Any, str] = {p: p.name for p in main.params}
    counter: dict[str, int] = {}
    outputs = [str(n) for n in mod.attrs["vtabench.composite_outputs"]] if mod.attrs and \
        "vtabench.composite_outputs" in mod.attrs else []
    calls = sum(1 for b in _calls(main) if isinstance(b.value, relax.Call)
                and isinstance(b.value.op, tvm.ir.GlobalVar))
    composite_outputs = iter(outputs if len(outputs) == calls else [])
    body = main.body
    for b in _calls(main):
        v, e = b.var, b.value
        name = v.name
        comp = None
        if isinstance(e, relax.Call) and isinstance(e.op, tvm.ir.GlobalVar):
            func = mod[e.op]
            if isinstance(func, relax.Function) and func.attrs and "Composite" in func.attrs:
                comp = str(func.attrs["Composite"]).split(".")[1]
                # operator nodes are numbered by kind in graph order: conv1, ..., dense1
                short = {"conv2d": "conv"}.get(comp, comp)
                counter[short] = counter.get(short, 0) + 1
                name = f"{short}{counter[short]}"
        k = 1
        base = name
        while name in g.nodes:
            name = f"{base}_{k}"
            k += 1
        names[v] = name
        shape = _shape(v) if _is_tensor(v) else ()
        dtype = _dtype(v) if _is_tensor(v) else ""
        if comp is not None:
            func = mod[e.op]
            try:
                qp, idx, extra = _composite_params(comp, func)
            except (Unsupported, IndexError, AttributeError, TypeError) as exc:
                # No integer form: the CPU runs the composite's own QDQ chain.
                qp = QParams(kind=comp, key=f"{comp}_{name}", unsupported=str(exc),
                             integer_exact=False)
                idx, extra = list(range(len(e.args))), {}
            g.add(Node(name=name, op=qp.kind, inputs=[names[e.args[i]] for i in idx],
                       shape=shape, dtype=dtype, q=qp, relax_func=func,
                       relax_args=[names[a] for a in e.args], attrs=extra,
                       onnx=next(composite_outputs, "")))
        else:
            fv = _free_vars(e, names)
            op = e.op.name if isinstance(e, relax.Call) and hasattr(e.op, "name") else (
                "call" if isinstance(e, relax.Call) else "expr")
            g.add(Node(name=name, op=op, inputs=[names[x] for x in fv], shape=shape,
                       dtype=dtype, expr=e, arg_vars=fv, onnx=_onnx_name(e)))
    out = body.body
    if isinstance(out, relax.Var):
        g.outputs = [names[out]]
    elif isinstance(out, relax.Tuple):
        g.outputs = [names[f] for f in out.fields]
    else:
        raise ModelError("the model's output is not a tensor or a tuple of tensors")
    if len(g.outputs) == 1 and isinstance(g.nodes[g.outputs[0]].expr, relax.Tuple):
        tup = g.nodes[g.outputs[0]]
        g.outputs = [names[f] for f in tup.expr.fields]
        g.remove(tup.name)
    for o in g.outputs:
        if not g.nodes[o].shape and g.nodes[o].op != "input":
            raise ModelError(f"output {g.nodes[o].onnx or o}: not a tensor of static shape")
    return g


def _onnx_name(e: Any) -> str:
    """The ONNX tensor a call computes (the importer puts it in the call's span)."""
    span = getattr(e, "span", None)
    return str(span.source_name.name) if span is not None else ""


def _free_vars(e: Any, names: dict[Any, str]) -> list[Any]:
    out: list[Any] = []
    for v in relax.analysis.free_vars(e):
        if v in names and not any(v.same_as(o) for o in out):
            out.append(v)
    return out
