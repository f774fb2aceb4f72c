"""The partitioned Relax ``main`` as the graph IR: :func:`to_graph` reads it into
:class:`vtabench.graph.ir.Graph`. Composite calls become integer operator nodes
(:func:`vtabench.graph.qdq_params.composite_params`), every other binding stays a Relax call
that only the CPU runs; a composite whose integer form does not exist keeps the reason and runs
its own QDQ chain on the CPU.
"""

from __future__ import annotations

from typing import Any

import tvm
from tvm import relax

from vtabench.graph import relax_exprs as rx
from vtabench.graph.ir import Graph, Node, QParams
from vtabench.graph.onnx_concat import is_placement
from vtabench.graph.onnx_prep import ModelError
from vtabench.graph.qdq_params import Unsupported, composite_params


def to_graph(mod: tvm.IRModule) -> Graph:
    """The partitioned main function as a :class:`Graph` (nodes in the order of ``main``)."""
    main = mod["main"]
    g = Graph()
    g.functions = {gv: f for gv, f in mod.functions.items()
                   if isinstance(f, tvm.tirx.PrimFunc)}
    for p in main.params:
        if not rx.is_tensor(p):
            raise ModelError(f"input {p.name}: not a tensor of static shape")
        g.add(Node(name=p.name, op="input", inputs=[], shape=rx.shape(p), dtype=rx.dtype(p)))
        g.inputs.append(p.name)
    names: dict[Any, str] = {p: p.name for p in main.params}
    counter: dict[str, int] = {}
    outputs = [str(n) for n in mod.attrs["vtabench.composite_outputs"]] if mod.attrs and \
        "vtabench.composite_outputs" in mod.attrs else []
    calls = sum(1 for b in rx.bindings(main) if isinstance(b.value, relax.Call)
                and isinstance(b.value.op, tvm.ir.GlobalVar))
    composite_outputs = iter(outputs if len(outputs) == calls else [])
    body = main.body
    for b in rx.bindings(main):
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
        shape = rx.shape(v) if rx.is_tensor(v) else ()
        dtype = rx.dtype(v) if rx.is_tensor(v) else ""
        if comp is not None:
            func = mod[e.op]
            onnx = next(composite_outputs, "")
            try:
                qp, idx, extra = composite_params(comp, func)
            except (Unsupported, IndexError, AttributeError, TypeError) as exc:
                # No integer form: the CPU runs the composite's own QDQ chain.
                qp = QParams(kind=comp, key=f"{comp}_{name}", unsupported=str(exc),
                             integer_exact=False)
                idx, extra = list(range(len(e.args))), {}
            if qp.kind == "conv2d" and is_placement(onnx):
                qp.label = "concat"
            g.add(Node(name=name, op=qp.kind, inputs=[names[e.args[i]] for i in idx],
                       shape=shape, dtype=dtype, q=qp, relax_func=func,
                       relax_args=[names[a] for a in e.args], attrs=extra, onnx=onnx))
        else:
            fv = _free_vars(e, names)
            op = e.op.name if isinstance(e, relax.Call) and hasattr(e.op, "name") else (
                "call" if isinstance(e, relax.Call) else "expr")
            g.add(Node(name=name, op=op, inputs=[names[x] for x in fv], shape=shape,
                       dtype=dtype, expr=e, arg_vars=fv, onnx=rx.onnx_name(e)))
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


def _free_vars(e: Any, names: dict[Any, str]) -> list[Any]:
    out: list[Any] = []
    for v in relax.analysis.free_vars(e):
        if v in names and not any(v.same_as(o) for o in out):
            out.append(v)
    return out
