"""The CPU side of a package: one Relax function per wave of CPU nodes (built for llvm at load).

A CPU node is either a Relax call copied from the imported model (its arguments substituted), a
composite without an integer form (its QDQ body inlined), or an integer operator in its integer
form: a conv2d / dense / average pool with the epilogue of its
:class:`~vtabench.graph.integer.IntegerForm` applied op by op exactly as the operator compiler's
TE definition does (what VTA computes), a ReLU / Clip as a clip, a reshape or a max pool on the
int8 tensor. A reference package with every operator on the CPU therefore gives the bit-exact
results VTA must match.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tvm
from tvm import relax

from vtabench.compiler.ops import IMM_MAX

from vtabench.graph.ir import CPU, Graph, Node


def build_cpu_module(g: Graph, units: list[str], wave: dict[str, int]
                     ) -> tuple[Any, list[dict[str, Any]]]:
    """The Relax IRModule with one function ``cpu<w>`` per wave ``w`` that has CPU nodes
    (``units`` in execution order), and the manifest entry of each function (name, wave, nodes,
    params: values it takes from outside, outputs: values used outside or graph outputs)."""
    bb = relax.BlockBuilder(tvm.IRModule(g.functions))
    entries = []
    nwaves = max(wave.values()) + 1 if wave else 1
    for w in range(nwaves):
        nodes = [u for u in units if wave[u] == w and g.nodes[u].device == CPU
                 and g.nodes[u].op != "copy"]
        if not nodes:
            continue
        inside = set(nodes)
        params: list[str] = []
        for u in nodes:
            for i in g.nodes[u].inputs:
                if i not in inside and i not in params:
                    params.append(i)
        outs = [u for u in nodes
                if u in g.outputs or any(c not in inside for c in g.consumers(u))]
        fname = f"cpu{w}"
        build_cpu_function(bb, g, fname, nodes, params, outs)
        entries.append({"name": fname, "wave": w, "nodes": nodes, "params": params,
                        "outputs": outs})
    return bb.get(), entries


def build_cpu_function(bb: relax.BlockBuilder, g: Graph, fname: str, nodes: list[str],
                       params: list[str], outputs: list[str]) -> None:
    """Emit function ``fname`` computing ``nodes`` (in order) from ``params`` into ``bb``."""
    pvars = [relax.Var(f"p_{p}", relax.TensorType(g.nodes[p].shape, g.nodes[p].dtype))
             for p in params]
    with bb.function(fname, pvars):
        val: dict[str, Any] = dict(zip(params, pvars, strict=True))
        with bb.dataflow():
            for name in nodes:
                n = g.nodes[name]
                if n.op == "copy":  # host-side copy of a host tensor (never: copies cross)
                    val[name] = val[n.inputs[0]]
                    continue
                val[name] = _emit_node(bb, n, val)
            outs = [bb.emit_output(val[o]) for o in outputs]
        bb.emit_func_output(relax.Tuple(outs) if len(outs) != 1 else outs[0])


def _emit_node(bb: relax.BlockBuilder, n: Node, val: dict[str, Any]) -> Any:
    args = [val[i] for i in n.inputs]
    R = relax.op
    if n.op in ("to_stored", "from_stored"):  # uint8 q <-> int8 q - 128
        d = -128 if n.op == "to_stored" else 128
        return bb.emit(R.astype(R.add(R.astype(args[0], "int32"), _int32(d)), n.dtype))
    if n.integer and n.is_candidate:
        return _integer_op(bb, n, args)
    if n.integer and n.op == "act":
        off = n.q.y.offset
        return bb.emit(R.astype(R.minimum(R.maximum(R.astype(args[0], "int32"),
                                                    _int32(n.q.lo - off)),
                                          _int32(n.q.hi - off)), "int8"))
    if n.integer and n.op == "reshape":
        return bb.emit(R.reshape(args[0], n.attrs["shape"]))
    if n.integer and n.op == "resize":  # nearest, integer factors: each pixel repeated
        sh, sw = n.attrs["scales"]
        return bb.emit(R.repeat(R.repeat(args[0], sh, axis=2), sw, axis=3))
    if n.integer and n.op == "maxpool":
        a = n.attrs["attrs"]
        return bb.emit(R.nn.max_pool2d(
            args[0], pool_size=list(a.pool_size), strides=list(a.strides),
            padding=list(a.padding), dilation=list(a.dilation), ceil_mode=bool(a.ceil_mode),
            count_include_pad=bool(a.count_include_pad), layout=str(a.layout),
            out_layout=str(a.out_layout)))
    if n.relax_func is not None:
        func = n.relax_func
        vmap = {p: val[a] for p, a in zip(func.params, n.relax_args, strict=True)}
        res = None
        for blk in func.body.blocks:
            for b in blk.bindings:
                res = bb.emit(_substitute(b.value, vmap))
                vmap[b.var] = res
        return res
    vmap = {v: val[i] for v, i in zip(n.arg_vars, n.inputs, strict=True)}
    return bb.emit(_substitute(n.expr, vmap))


def _substitute(e: Any, vmap: dict[Any, Any]) -> Any:
    """``e`` with every Relax variable replaced by its value in ``vmap``."""
    if isinstance(e, relax.Var):
        return vmap[e]
    if isinstance(e, relax.Call):
        return relax.Call(e.op, [_substitute(a, vmap) for a in e.args], e.attrs, e.ty_args)
    if isinstance(e, relax.Tuple):
        return relax.Tuple([_substitute(a, vmap) for a in e.fields])
    if isinstance(e, relax.TupleGetItem):
        return relax.TupleGetItem(_substitute(e.tuple_value, vmap), e.index)
    return e


def _int32(v: int) -> Any:
    return relax.const(int(v), "int32")


def _integer_op(bb: relax.BlockBuilder, n: Node, args: list[Any]) -> Any:
    """The integer form of a conv2d / dense / average pool: int8 x int8 -> int32, then the
    epilogue ops in order (vtabench.compiler.ops: the same arithmetic as the TE stages)."""
    q = n.q
    R = relax.op
    x = args[0]
    if n.op == "conv2d" and q.transposed:  # ONNX's (C, O, s, s) weight again
        acc = bb.emit(R.nn.conv2d_transpose(
            x, relax.const(np.ascontiguousarray(q.weight.transpose(1, 0, 2, 3))),
            strides=(q.stride, q.stride), out_dtype="int32"))
    elif n.op == "conv2d":
        acc = bb.emit(R.nn.conv2d(x, relax.const(q.weight),
                                  strides=(q.stride, q.stride_w or q.stride), padding=q.pad,
                                  groups=q.groups, out_dtype="int32"))
    elif n.op == "avgpool":
        acc = bb.emit(R.sum(R.astype(x, "int32"), axis=[2, 3], keepdims=True))
    elif n.op in ("leaky", "mul", "hardswish", "eltwise_add"):  # the identity conv
        acc = bb.emit(R.astype(x, "int32"))
    else:
        k = q.weight.shape[1]
        x = bb.emit(R.reshape(x, (1, k)))
        acc = bb.emit(R.matmul(x, relax.const(np.ascontiguousarray(q.weight.T)),
                               out_dtype="int32"))
    conv = n.op != "dense"
    for k, op in enumerate(n.iform.epilogue):
        kind = op[0]
        if kind in ("bias", "chan_mul", "chan_max", "chan_min"):
            t = n.iform.operands[k]
            t = relax.const(t.reshape(1, -1, 1, 1) if conv else t.reshape(1, -1))
            f = {"bias": R.add, "chan_mul": R.multiply, "chan_max": R.maximum,
                 "chan_min": R.minimum}[kind]
            acc = bb.emit(f(acc, t))
        elif kind in ("bias_map", "map_mul"):
            f = R.add if kind == "bias_map" else R.multiply
            acc = bb.emit(f(acc, relax.const(n.iform.operands[k][None])))
        elif kind == "shift":
            s = op[1]
            if s and (1 << (s - 1)) <= IMM_MAX:
                acc = bb.emit(R.right_shift(R.add(acc, _int32(1 << (s - 1))), _int32(s)))
            elif s:
                acc = bb.emit(R.right_shift(R.add(R.right_shift(acc, _int32(s - 1)),
                                                  _int32(1)), _int32(1)))
        elif kind == "mul_imm":
            acc = bb.emit(R.multiply(acc, _int32(op[1])))
        elif kind == "add_imm":
            acc = bb.emit(R.add(acc, _int32(op[1])))
        elif kind == "relu":
            acc = bb.emit(R.maximum(acc, _int32(0)))
        elif kind == "clip":
            acc = bb.emit(R.minimum(R.maximum(acc, _int32(op[1])), _int32(op[2])))
        elif kind == "residual":
            acc = bb.emit(R.add(acc, R.astype(args[1], "int32")))
        elif kind in ("mul", "mul_chan"):  # the second operand (broadcast per channel)
            acc = bb.emit(R.multiply(acc, R.astype(args[1], "int32")))
        elif kind in ("residual_mul", "residual_max"):
            m = n.iform.operands[k]
            m = relax.const(m.reshape(1, -1, 1, 1) if conv else m.reshape(1, -1))
            scaled = R.multiply(R.astype(args[-1], "int32"), m)  # a mul's third input
            acc = bb.emit(R.add(acc, scaled) if kind == "residual_mul"
                          else R.maximum(acc, scaled))
        else:
            raise ValueError(f"{n.name}: epilogue op {op} has no CPU form")
    return bb.emit(R.astype(acc, "int8"))
