"""The partition: :mod:`relax.dpl` patterns of every QDQ chain with an integer form, and
``relax.transform.FuseOpsByPattern`` turning each match into a composite function
(``vta.conv2d``, ``vta.dense``, ... : the table in docs/graph.md)."""

from __future__ import annotations

from typing import Any

import tvm
from tvm import relax
from tvm.relax.dpl import is_const, is_op, wildcard

from vtabench.graph import relax_exprs as rx


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


def _conv_pattern(bias: bool, act: str, op: str = "relax.nn.conv2d") -> Any:
    y = is_op(op)(_dq(wildcard()), _dq(is_const()))
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
            pats.append(("vta.conv2d_transpose",
                         _conv_pattern(bias, act, "relax.nn.conv2d_transpose")))
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
    # PReLU (one slope, or one per channel) as TVM's converter writes it: a reshaped constant
    for slope in (is_const(), is_op("relax.reshape")(is_const(), wildcard())):
        pats.append(("vta.leaky", _q(is_op("relax.nn.prelu")(_dq(wildcard()), slope))))
    # ONNX HardSwish as TVM's converter writes it: x * (clip(x + 3, 0, 6) / 6)
    x = _dq(wildcard())
    pats.append(("vta.hardswish", _q(is_op("relax.multiply")(x, is_op("relax.divide")(
        is_op("relax.clip")(is_op("relax.add")(x, is_const()), wildcard(), wildcard()),
        is_const())))))
    for act in ACTS:
        pats.append(("vta.mul", _q(_act(is_op("relax.multiply")(_dq(wildcard()),
                                                                 _dq(wildcard())), act))))
    pats.append(("vta.reshape", _q(is_op("relax.reshape")(_dq(wildcard()), wildcard()))))
    pats.append(("vta.avgpool2d", _q(is_op("relax.nn.avg_pool2d")(_dq(wildcard())))))
    pats.append(("vta.maxpool", _q(is_op("relax.nn.max_pool2d")(_dq(wildcard())))))
    pats.append(("vta.resize", _q(is_op("relax.image.resize2d")(_dq(wildcard()), wildcard()))))
    return pats


PATTERNS = _patterns()


def _quantize_names(func: relax.Function) -> list[str]:
    """The ONNX names of the quantize calls of ``func``, in binding order."""
    return [rx.onnx_name(b.value) for b in rx.bindings(func) if isinstance(b.value, relax.Call)
            and getattr(b.value.op, "name", "") == "relax.quantize"]


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
