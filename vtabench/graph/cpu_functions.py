"""The CPU side of a package: one Relax function per wave of CPU nodes (built for llvm at load).

A CPU node is either a Relax call copied from the imported model (its arguments substituted), a
composite the partitioner matched but placement kept on the CPU (its body inlined), or such a
composite in its integer form (exactly what VTA would compute), so a reference package with every
operator on the CPU gives the bit-exact results VTA must match.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tvm import relax

from vtabench.graph.ir import CPU, Graph, Node


def build_cpu_module(g: Graph, units: list[str], wave: dict[str, int]
                     ) -> tuple[Any, list[dict[str, Any]]]:
    """The Relax IRModule with one function ``cpu<w>`` per wave ``w`` that has CPU nodes
    (``units`` in execution order), and the manifest entry of each function (name, wave, nodes,
    params: values it takes from outside, outputs: values used outside or graph outputs)."""
    bb = relax.BlockBuilder()
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
    if n.is_candidate and n.q.integer_exact:
        return _integer_op(bb, n, [val[i] for i in n.inputs])
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
    """The integer form of a conv2d / dense chain (exactly what VTA computes)."""
    q = n.q
    R = relax.op
    x = args[0]
    if n.op == "conv2d":
        acc = bb.emit(R.nn.conv2d(x, relax.const(q.weight), strides=q.stride, padding=q.pad,
                                  out_dtype="int32"))
        acc = bb.emit(R.add(acc, relax.const(q.bias.reshape(1, -1, 1, 1))))
    else:
        k = q.weight.shape[1]
        x = bb.emit(R.reshape(x, (1, k)))
        acc = bb.emit(R.matmul(x, relax.const(np.ascontiguousarray(q.weight.T)),
                               out_dtype="int32"))
        acc = bb.emit(R.add(acc, relax.const(q.bias)))
    if q.shift > 0:
        acc = bb.emit(R.right_shift(R.add(acc, _int32(1 << (q.shift - 1))), _int32(q.shift)))
    acc = bb.emit(R.minimum(R.maximum(acc, _int32(0 if q.relu else -128)), _int32(127)))
    if q.residual:
        acc = bb.emit(R.add(acc, R.astype(args[1], "int32")))
        acc = bb.emit(R.minimum(R.maximum(acc, _int32(0 if q.res_relu else -128)), _int32(127)))
    return bb.emit(R.astype(acc, "int8"))
