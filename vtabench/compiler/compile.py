"""Compile operators for a configuration and run them through the runtime; the CPU reference.

    from vtabench.compiler import Conv2dSpec, compile_op
    op = compile_op(Conv2dSpec(1, 64, 14, 14, 64, 3, 1, 1, epilogue=(("shift", 8), ("relu",))),
                    cfg)
    out = op.run(rt, {"data": x, "weight": w})            # packed int8 arrays in, int8 out
    ref = op.reference({"data": x, "weight": w})           # the same TE built for llvm
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import tvm
from tvm import te

from vtabench.compiler.immediates import stage_immediates, structure_key
from vtabench.compiler.lowering import lower
from vtabench.compiler.ops import Conv2dSpec, DenseSpec, OpTE, op_te
from vtabench.compiler.program_count import program_instructions
from vtabench.compiler.ragged import domain_guards
from vtabench.compiler.tiling import (Tiling, check_tiling, is_ragged, schedule_op,
                                      tiling_options)
from vtabench.compiler.walker import Emitter

if TYPE_CHECKING:
    from vtabench.spec.config import Config
    from vtabench.runtime import DeviceBuffer, Runtime


@dataclass
class CompiledOp:
    spec: Conv2dSpec | DenseSpec
    cfg: Config
    te: OpTE
    tiling: Tiling
    double_buffer: bool
    schedule: Any  # s_tir.Schedule
    lowered: Any  # PrimFunc
    emitter: Emitter

    @property
    def input_names(self) -> list[str]:
        return [t.op.name for t in self.te.inputs]

    def input_shapes(self) -> dict[str, tuple[int, ...]]:
        return {t.op.name: tuple(int(s) for s in t.shape) for t in self.te.inputs}

    @property
    def output_shape(self) -> tuple[int, ...]:
        return tuple(int(s) for s in self.te.output.shape)

    def random_inputs(self, rng: np.random.Generator, small: bool = False) -> dict[str, np.ndarray]:
        out = {}
        for t in self.te.inputs:
            shape = tuple(int(s) for s in t.shape)
            if str(t.dtype) == "int32":
                out[t.op.name] = rng.integers(-(1 << 12), 1 << 12, shape, dtype=np.int32)
            else:
                lim = 8 if small else 128
                out[t.op.name] = rng.integers(-lim, lim, shape, dtype=np.int8)
        return out

    def emit(self, rt: Runtime, buffers: dict[str, DeviceBuffer]) -> None:
        """Queue this operator's instructions on ``rt`` for the given device buffers (inputs by
        name and ``out``)."""
        self.emitter.emit(rt, buffers)

    def run(self, rt: Runtime, inputs: dict[str, np.ndarray], sync: bool = True) -> np.ndarray:
        """Allocate, copy in, emit, sync, copy out, free."""
        bufs = {}
        for name in self.input_names:
            arr = np.ascontiguousarray(inputs[name])
            bufs[name] = rt.alloc(arr.nbytes)
            rt.write(bufs[name], arr)
        nout = int(np.prod(self.output_shape))
        bufs["out"] = rt.alloc(nout)
        self.emit(rt, bufs)
        if sync:
            rt.sync()
        out = rt.read(bufs["out"]).view(np.int8).reshape(self.output_shape)
        for b in bufs.values():
            rt.free(b)
        return out

    def reference(self, inputs: dict[str, np.ndarray]) -> np.ndarray:
        return llvm_reference(self.te, inputs)


_ref_cache: dict[Any, Any] = {}


def llvm_reference(op: OpTE, inputs: dict[str, np.ndarray]) -> np.ndarray:
    """Build the same TE definition for the CPU (target llvm) and run it."""
    key = id(op)
    if key not in _ref_cache:
        _ref_cache[key] = (op, tvm.compile(te.create_prim_func(op.func_args), target="llvm"))
    f = _ref_cache[key][1]
    args = [tvm.runtime.tensor(np.ascontiguousarray(inputs[t.op.name])) for t in op.inputs]
    out = tvm.runtime.tensor(np.zeros([int(s) for s in op.output.shape], np.int8))
    f(*args, out)
    return out.numpy()


def compile_op(spec: Conv2dSpec | DenseSpec, cfg: Config, *, double_buffer: bool = True,
               tiling: Tiling | None = None) -> CompiledOp:
    """Compile ``spec`` with ``tiling`` or the chosen one. A chosen tiling with a ragged last
    tile is kept only if its program has at most as many instructions as the best tiling that
    divides (the cost model's choice checked on the real program); else the latter. Without a
    given tiling, an operator that differs from one compiled before only in its epilogue's
    immediates reuses that compile with its own immediates
    (:mod:`vtabench.compiler.immediates`)."""
    op = op_te(spec, cfg)
    if tiling is not None:
        check_tiling(spec, tiling)
        return _compile(spec, cfg, op, tiling, double_buffer)
    imms = stage_immediates(op)
    shape = structure_key(spec, op, imms) if imms is not None else None
    key = (shape, cfg, double_buffer)
    if shape is not None and key in _same_structure:
        base = _same_structure[key]
        return CompiledOp(spec, cfg, op, base.tiling, double_buffer, base.schedule, base.lowered,
                          base.emitter.with_immediates(imms))
    compiled = _compile_chosen(spec, cfg, op, double_buffer)
    if shape is not None and compiled.emitter.immediates_match(imms):
        _same_structure[key] = compiled
    return compiled


#: (structure_key, configuration, double buffering) -> the first operator compiled with it
#: whose ALU immediates were checked to be its epilogue's.
_same_structure: dict[tuple[Any, ...], CompiledOp] = {}


def _compile_chosen(spec: Conv2dSpec | DenseSpec, cfg: Config, op: OpTE,
                    double_buffer: bool) -> CompiledOp:
    key = (spec, cfg, double_buffer)
    if key in _ragged_checked:  # a layer of the same shape was checked before
        return _compile(spec, cfg, op, _ragged_checked[key], double_buffer)
    t, even_t = tiling_options(spec, cfg, double_buffer)
    compiled = _compile(spec, cfg, op, t, double_buffer)
    if t == even_t:
        return compiled
    even = _compile(spec, cfg, op, even_t, double_buffer)
    if program_instructions(compiled) > program_instructions(even):
        compiled = even
    _ragged_checked[key] = compiled.tiling
    return compiled


#: (spec, configuration, double buffering) -> the tiling compile_op's instruction check kept,
#: for specs whose cost-model choice is ragged.
_ragged_checked: dict[tuple[Any, ...], Tiling] = {}


def _compile(spec: Conv2dSpec | DenseSpec, cfg: Config, op: OpTE, t: Tiling,
             double_buffer: bool) -> CompiledOp:
    sch = schedule_op(op, spec, cfg, t, double_buffer)
    guards = domain_guards(sch.mod) if is_ragged(spec, t) else None
    em = Emitter(cfg, lower(sch.mod), guards)
    return CompiledOp(spec, cfg, op, t, double_buffer, sch, em.func, em)
