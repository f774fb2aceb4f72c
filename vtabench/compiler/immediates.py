"""Operators that differ only in their epilogue's immediates share one compile.

An epilogue's immediates (a requantization shift and its rounding constant, a multiplier, a
zero point, clip bounds) reach the program only as the ``imm`` field of ALU instructions: the
schedule, the lowered function, the SRAM layout and every other instruction of the walk are
the same for any values of the same class (TVM's simplifier folds ``x + 0`` or ``x * 1`` away,
so 0, 1 and -1 stay part of the key, and so does the sign, except for an added immediate:
``x + (-c)``, written ``x - c``, is read back as ADD -c).
:func:`structure_key` names what must agree; :func:`stage_immediates` reads each epilogue
stage's immediate off the TE definition, which the compiler checks against the ALU nests that
the lowering produced (``Emitter.immediates_match``) before it lets a second operator reuse the
walk with its own immediates.

DenseNet-121's 604 VTA layers have 533 distinct operator specs and 379 structures.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import tvm
from tvm import te, tirx

from vtabench.compiler.ops import Conv2dSpec, DenseSpec, OpTE


def stage_immediates(op: OpTE) -> dict[str, int] | None:
    """The integer immediate of each epilogue stage that has one (``x + 5``, ``max(x, -128)``,
    ``x >> 7``), by stage name; None when a stage has more than one."""
    stages = set(op.alu_stages)
    out: dict[str, int] = {}
    seen: set[str] = set()
    todo = [op.output]
    while todo:
        t = todo.pop()
        if t.op.name in seen or not isinstance(t.op, te.ComputeOp):
            continue
        seen.add(t.op.name)
        todo.extend(t.op.input_tensors)
        if t.op.name not in stages:
            continue
        imms = [int(a.value) for a in _operands(t.op.body[0]) if isinstance(a, tirx.IntImm)]
        if len(imms) > 1:
            return None
        if imms:
            out[t.op.name] = imms[0]
    return out


def _operands(e: Any) -> list[Any]:
    while isinstance(e, tirx.Cast):
        e = e.value
    if isinstance(e, tvm.ir.Call):
        return [_strip(a) for a in e.args]
    if hasattr(e, "a") and hasattr(e, "b"):
        return [_strip(e.a), _strip(e.b)]
    return []


def _strip(e: Any) -> Any:
    while isinstance(e, tirx.Cast):
        e = e.value
    return e


def _value_class(stage: str, v: int) -> int | str:
    """What of an immediate the structure depends on: 0, 1 and -1 themselves, else its sign,
    except for an added immediate (TVM's ``x - c`` for ``x + (-c)`` is read back as ADD -c)."""
    if -1 <= v <= 1:
        return v
    if stage.endswith("_add_imm"):
        return "added"
    return "+" if v > 0 else "-"


def structure_key(spec: Any, op: OpTE, imms: dict[str, int]) -> tuple[Any, ...] | None:
    """What two operators that may share a compile must agree on: the spec without its name
    and its epilogue's values (the epilogue's kinds stay), the TE's stages in order (a shift's
    steps depend on its amount) and the class of each stage's immediate; None for specs
    without an epilogue."""
    if not isinstance(spec, (Conv2dSpec, DenseSpec)):
        return None
    kinds = tuple(e[0] for e in spec.epilogue)
    return (dataclasses.replace(spec, name="", epilogue=kinds), tuple(op.alu_stages),
            tuple(sorted((k, _value_class(k, v)) for k, v in imms.items())))
