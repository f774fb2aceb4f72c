"""Small readers of Relax expressions the frontend modules share: a value's static shape and
dtype, a constant's array, a function's bindings, the calls of one operator, and the ONNX
tensor name the importer put into a call's span."""

from __future__ import annotations

from typing import Any

import numpy as np
import tvm
from tvm import relax


def _ty(v: Any) -> Any:
    return v.ty if hasattr(v, "ty") else v.struct_info


def is_tensor(v: Any) -> bool:
    """A tensor of static shape."""
    t = _ty(v)
    return isinstance(t, relax.TensorType) and t.shape is not None and all(
        isinstance(s, tvm.tirx.IntImm) for s in t.shape)


def shape(v: Any) -> tuple[int, ...]:
    return tuple(int(s) for s in _ty(v).shape)


def dtype(v: Any) -> str:
    return str(_ty(v).dtype)


def const(e: Any) -> np.ndarray:
    return e.value.numpy()


def bindings(func: relax.Function) -> list[Any]:
    """Every binding of ``func``'s body, in order."""
    return [b for blk in func.body.blocks for b in blk.bindings]


def find_calls(bs: list[Any], op: str) -> list[Any]:
    """The calls of operator ``op`` among the bindings ``bs``."""
    return [b.value for b in bs if isinstance(b.value, relax.Call)
            and hasattr(b.value.op, "name") and b.value.op.name == op]


def onnx_name(e: Any) -> str:
    """The ONNX tensor a call computes (the importer puts it in the call's span)."""
    span = getattr(e, "span", None)
    return str(span.source_name.name) if span is not None else ""
