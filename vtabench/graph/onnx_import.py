"""ONNX (QDQ) -> partitioned Relax module.

``import_onnx`` reads and normalizes the model (:mod:`vtabench.graph.onnx_prep`: static input
shapes, QOperator nodes rewritten to QDQ, one DequantizeLinear per consumer), runs TVM's ONNX
frontend (``tvm.relax.frontend.onnx``; no constant folding, so integer weights stay integer
behind their ``dequantize``), then partitions it (:func:`vtabench.graph.patterns.partition`:
every QDQ chain with an integer form becomes a composite function).
"""

from __future__ import annotations

import contextlib
import gc
import io
import warnings
from typing import Any

import numpy as np
import tvm
from tvm import relax

from vtabench.graph import relax_exprs as rx
from vtabench.graph.onnx_prep import (
    ModelError,
    default_opset,
    load_model,
    node_label,
    normalize,
)
from vtabench.graph.patterns import partition
from vtabench.graph.tvm_errors import one_line, quiet_stderr


def import_onnx(model: Any, shapes: dict[str, list[int]] | None = None) -> tvm.IRModule:
    """ONNX model (ModelProto, bytes or path) -> Relax IRModule with the VTA composite
    functions. :class:`ModelError` (one line) for a model it cannot take."""
    m = normalize(load_model(model), shapes)
    return partition(_from_onnx(m))


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
        elif isinstance(b, tvm.ir.expr.Constant) and rx.const(b).size == 1:
            bounds.append(float(rx.const(b).reshape(-1)[0]))
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
