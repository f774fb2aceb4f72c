"""Integer index expressions of a lowered operator: evaluation under loop bindings, flattening,
and the split into per-loop coefficients.

Node classes are those of TVM 0.27: loads are ``tvm.ir.TensorLoad`` (``source``, ``indices``),
block read/write regions ``tvm.ir.TensorRegion``, arithmetic the ``tvm.tirx`` expression nodes.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import tvm
from tvm import tirx

from vtabench.compiler.ops import CompileError

#: Variable -> value bindings of the loops around an expression.
Env = dict[Any, int]

_ARITH: tuple[tuple[type, Callable[[int, int], int]], ...] = (
    (tirx.Add, operator.add), (tirx.Sub, operator.sub), (tirx.Mul, operator.mul),
    (tirx.FloorDiv, operator.floordiv), (tirx.FloorMod, operator.mod), (tirx.Min, min),
    (tirx.Max, max))

_COMPARE: tuple[tuple[type, Callable[[int, int], bool]], ...] = (
    (tirx.LT, operator.lt), (tirx.LE, operator.le), (tirx.GT, operator.gt),
    (tirx.GE, operator.ge), (tirx.EQ, operator.eq), (tirx.NE, operator.ne))


def evaluate(e: Any, env: Env) -> int:
    """Value of an integer index expression with loop variables bound in ``env``."""
    if isinstance(e, int):
        return e
    if isinstance(e, tirx.IntImm):
        return int(e.value)
    if isinstance(e, tirx.Var):
        try:
            return env[e]
        except KeyError:
            raise CompileError(f"unbound variable {e} in an index") from None
    if isinstance(e, tirx.Cast):
        return evaluate(e.value, env)
    for cls, fn in _ARITH:
        if isinstance(e, cls):
            return fn(evaluate(e.a, env), evaluate(e.b, env))
    raise CompileError(f"cannot evaluate index expression {e} ({type(e).__name__})")


def compile_index(e: Any) -> Callable[[Env], int]:
    """:func:`evaluate` of ``e`` as a Python function of the bindings: the expression's TVM
    nodes are read once, not at every evaluation (the walker evaluates the same addresses and
    loop bounds at every iteration of the loops around them). The same values and errors."""
    if isinstance(e, int):
        return lambda env: e
    if isinstance(e, tirx.IntImm):
        v = int(e.value)
        return lambda env: v
    if isinstance(e, tirx.Var):
        def var(env: Env) -> int:
            try:
                return env[e]
            except KeyError:
                raise CompileError(f"unbound variable {e} in an index") from None
        return var
    if isinstance(e, tirx.Cast):
        return compile_index(e.value)
    for cls, fn in _ARITH:
        if isinstance(e, cls):
            a, b = compile_index(e.a), compile_index(e.b)
            return lambda env: fn(a(env), b(env))
    raise CompileError(f"cannot evaluate index expression {e} ({type(e).__name__})")


def holds(c: Any, env: Env) -> bool:
    """Truth of a condition over index expressions (a padded copy's bounds) under ``env``."""
    if isinstance(c, tirx.And):
        return holds(c.a, env) and holds(c.b, env)
    if isinstance(c, tirx.Or):
        return holds(c.a, env) or holds(c.b, env)
    if isinstance(c, tirx.IntImm):
        return bool(c.value)
    for cls, fn in _COMPARE:
        if isinstance(c, cls):
            return fn(evaluate(c.a, env), evaluate(c.b, env))
    raise CompileError(f"cannot evaluate condition {c}")


def is_int_imm(e: Any) -> bool:
    return isinstance(e, tirx.IntImm)


def strip_cast(e: Any) -> Any:
    while isinstance(e, tirx.Cast):
        e = e.value
    return e


def is_load(e: Any) -> bool:
    return isinstance(e, tvm.ir.TensorLoad)


def flat_index(buf: Any, indices: Any) -> Any:
    """Row-major flattened scalar index of a buffer access (a PrimExpr)."""
    shape = [int(s) for s in buf.shape]
    expr = tirx.const(0, "int32")
    stride = 1
    for dim, idx in reversed(list(zip(shape, indices, strict=True))):
        expr = expr + idx * stride
        stride *= dim
    return tvm.sym.Analyzer().simplify(expr)


def linear(expr: Any, loop_vars: list) -> tuple[list[int], Any]:
    """Coefficients of ``expr`` in ``loop_vars`` (integers) and the rest (an expression in the
    outer loop variables), via detect_linear_equation."""
    if not loop_vars:
        return [], expr
    res = tvm.sym.detect_linear_equation(expr, loop_vars)
    if len(res) != len(loop_vars) + 1:
        raise CompileError(f"index {expr} is not linear in {list(loop_vars)}")
    coefs = []
    for c in res[:-1]:
        if not is_int_imm(c):
            raise CompileError(f"index {expr}: coefficient {c} is not a constant")
        coefs.append(int(c.value))
    return coefs, res[-1]
