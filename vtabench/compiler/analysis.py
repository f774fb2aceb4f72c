"""Analysis of a lowered operator: every leaf nest classified and its accesses made affine.

Every leaf nest (see :mod:`vtabench.compiler.tir_visitor`) is one of:

* a copy from a global buffer into ``local.inp_buffer`` / ``local.wgt_buffer`` (LOAD INP / WGT),
  possibly through the padding stage's ``if_then_else`` (LOAD with pad fields), or into
  ``local.acc_buffer`` (LOAD ACC for int32, LOAD ACC_8BIT through an int8 -> int32 cast):
  :class:`LoadNest`;
* a copy from ``local.acc_buffer`` to a global buffer (STORE of the out buffer):
  :class:`StoreNest`;
* an elementwise update of ``local.acc_buffer`` (ALU: MIN/MAX/ADD/MUL/SHR with an immediate or
  a second accumulator operand): :class:`AluNest`;
* the tensorized ``tirx.vta.gemm`` call (GEMM, or its reset): :class:`GemmNest`.

Each access is split (``tvm.sym.detect_linear_equation`` on the flattened index) into whole-tile
coefficients of the nest's loops and an offset expression in the outer loop variables; the loops
that run inside one tile (the lanes of a DMA copy or an ALU operation) are dropped. The analysis
also collects the on-chip buffers, the in-place aliases of the epilogue stages (an elementwise
stage's output shares its first operand's buffer) and the number of virtual threads
(``vta.virtual_threads`` on the tile loop, 2 when absent).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import tvm
from tvm import s_tir, tirx

from vtabench.compiler.intrin import GEMM_OP
from vtabench.compiler.onchip import ACC_SCOPE, SCOPES, scope, tile_scalars
from vtabench.compiler.ops import IMM_MAX, IMM_MIN, CompileError
from vtabench.compiler.ragged import loop_upper_bounds
from vtabench.compiler.tir_expr import flat_index, is_int_imm, is_load, linear, strip_cast
from vtabench.compiler.tir_visitor import OperatorVisitor
from vtabench.spec.isa.layout import AluOp, MemType

if TYPE_CHECKING:
    from vtabench.spec.config import Config

_IF_THEN_ELSE = ("prim.if_then_else", "tirx.if_then_else")
_ALU_BINARY = ((tirx.Max, AluOp.MAX), (tirx.Min, AluOp.MIN), (tirx.Add, AluOp.ADD),
               (tirx.Mul, AluOp.MUL))


@dataclass
class Access:
    """``buf[offset + sum(coefs[i] * tile * loop_i)]``: per-loop coefficients in whole tiles,
    the offset in scalars (an expression of the loops outside the nest)."""

    buf: Any
    coefs: list[int]
    offset: Any


@dataclass
class Nest:
    """A leaf nest: its block's name and the loops (extent > 1, outer first) it keeps; in an
    operator with ragged tiles, ``upper``: each loop's inclusive upper bound (an expression in
    the tile loops, None where unbounded; empty when the nest is never cut,
    :mod:`vtabench.compiler.ragged`)."""

    name: str
    loops: list[tirx.For]
    extents: list[int]
    upper: list[Any] = field(default_factory=list, kw_only=True)


@dataclass
class PadBounds:
    """A padded copy's y and x loops (indices into the nest's loops; y None for one loop) and
    ``tvm.sym.detect_clip_bound`` of its condition over them (empty when none was found)."""

    y: int | None
    x: int
    bounds: list[Any]


@dataclass
class LoadNest(Nest):
    mem: MemType
    dst: Access  # on chip
    src: Access  # device memory
    cond: Any = None  # the padding condition, or None
    pad: PadBounds | None = None


@dataclass
class StoreNest(Nest):
    dst: Access  # device memory
    src: Access  # accumulator


@dataclass
class GemmNest(Nest):
    dst: Access
    inp: Access | None  # None (with wgt) for a reset
    wgt: Access | None


@dataclass
class AluNest(Nest):
    op: AluOp
    dst: Access
    src: Access | None  # the second accumulator operand, or None with an immediate
    imm: int | None
    # ADD / MAX / MIN of src * src_scale (an immediate or a second accumulator tile): src is
    # multiplied in place first
    src_scale: int | Access | None = None


@dataclass
class OperatorAnalysis:
    nests: dict[str, Nest] = field(default_factory=dict)  # by leaf block name
    buffers: dict[str, Any] = field(default_factory=dict)  # on-chip buffers by name
    alias: dict[str, str] = field(default_factory=dict)  # in-place output -> operand buffer
    vthreads: int = 2

    def root(self, name: str) -> str:
        """The buffer whose storage ``name`` uses (itself unless it is computed in place)."""
        while name in self.alias:
            name = self.alias[name]
        return name


def analyze(cfg: Config, func: tirx.PrimFunc,
            guards: dict[str, Any] | None = None) -> OperatorAnalysis:
    """``guards``: block name -> the condition under which it writes inside its buffers
    (:func:`vtabench.compiler.ragged.domain_guards`; absent for operators whose tiles divide)."""
    return _Analyzer(cfg, guards or {}).run(func)


class _Analyzer(OperatorVisitor):
    def __init__(self, cfg: Config, guards: dict[str, Any]) -> None:
        self.cfg = cfg
        self.guards = guards
        self.result = OperatorAnalysis()
        self._vthreads: int | None = None

    def run(self, func: tirx.PrimFunc) -> OperatorAnalysis:
        self.visit(func.body)
        if self._vthreads is not None:
            self.result.vthreads = self._vthreads
        return self.result

    def _note_vthreads(self, loop: tirx.For) -> None:
        vt = loop.annotations.get("vta.virtual_threads") if loop.annotations else None
        if vt is not None and self._vthreads is None:
            self._vthreads = int(vt)

    # -- structure ----------------------------------------------------------------------------
    def visit_for(self, loop: tirx.For) -> None:
        self._note_vthreads(loop)
        self.visit(loop.body)

    def visit_block(self, blk: s_tir.SBlock) -> None:
        for b in blk.alloc_buffers:
            sc = scope(b)
            if sc not in SCOPES:
                raise CompileError(f"buffer {b.name} in scope {sc!r}: only "
                                   f"{', '.join(SCOPES)} are on chip")
            self.result.buffers[b.name] = b
        self.visit(blk.body)

    def visit_leaf(self, loops: list[tirx.For], blk: s_tir.SBlock) -> None:
        if loops:
            self._note_vthreads(loops[0])
        name = blk.name_hint
        if name in self.result.nests:
            return
        for lp in loops:
            if not (is_int_imm(lp.min) and int(lp.min.value) == 0):
                raise CompileError(f"loop {lp.loop_var} of {name} does not start at 0")
        kept = [lp for lp in loops if int(lp.extent) > 1]
        nest = self._classify(name, kept, blk)
        if name in self.guards:
            nest.upper = loop_upper_bounds(name, self.guards[name], nest.loops,
                                           [lp for lp in loops if int(lp.extent) == 1])
        self.result.nests[name] = nest

    def _classify(self, name: str, loops: list[tirx.For], blk: s_tir.SBlock) -> Nest:
        body = blk.body
        if isinstance(body, tirx.Evaluate):
            return self._gemm(name, blk, body.value, loops)
        dst = body.buffer
        dscope = scope(dst)
        value = body.value
        core = strip_cast(value)
        if dscope in SCOPES:
            cond = None
            if isinstance(core, tvm.ir.Call) and core.op.name in _IF_THEN_ELSE:
                pad = strip_cast(core.args[2])
                value = pad.value if isinstance(pad, tirx.IntImm | tirx.FloatImm) else pad
                if not isinstance(value, int | float) or value != 0:
                    raise CompileError(f"block {name}: a padded copy of {dst.name} pads with "
                                       f"{value}; VTA's LOAD pads with zeros only")
                cond, core = core.args[0], strip_cast(core.args[1])
            if is_load(core) and scope(core.source) == "global":
                return self._load(name, dst, body.indices, core, cond, loops)
            if dscope == ACC_SCOPE:
                return self._alu(name, dst, body.indices, value, loops)
            raise CompileError(f"block {name}: cannot map a write of {dst.name} to VTA")
        if is_load(core) and scope(core.source) == ACC_SCOPE:
            return self._store(name, dst, body.indices, core, loops)
        raise CompileError(f"block {name}: a global write that is not a store of the "
                           f"accumulator ({value})")

    # -- access helpers -----------------------------------------------------------------------
    @staticmethod
    def _lanes(name: str, coefs: list[int], ext: list[int], escal: int) -> list[int]:
        """Indices of the loops inside one tile (coefficient below the tile size)."""
        inner = [i for i, c in enumerate(coefs) if 0 < c < escal]
        n = 1
        for i in inner:
            n *= ext[i]
        if n != escal:
            raise CompileError(f"block {name}: loops inside a tile cover {n} of {escal} lanes")
        return inner

    @staticmethod
    def _tiles(name: str, coefs: list[int], escal: int, skip: list[int]) -> list[int]:
        """Coefficients in whole tiles of the loops not in ``skip``."""
        out = []
        for i, c in enumerate(coefs):
            if i in skip:
                continue
            if c % escal:
                raise CompileError(f"block {name}: stride {c} is not a whole number of "
                                   f"{escal}-lane tiles")
            out.append(c // escal)
        return out

    def _access(self, name: str, buf: Any, lin: tuple[list[int], Any], escal: int,
                lanes: list[int]) -> Access:
        """The access of ``buf`` whose index is ``lin`` (coefficients per loop, offset)."""
        coefs, offset = lin
        return Access(buf, self._tiles(name, coefs, escal, lanes), offset)

    # -- the four nests -----------------------------------------------------------------------
    def _load(self, name: str, dst: Any, dind: Any, src_load: Any, cond: Any,
              loops: list[tirx.For]) -> LoadNest:
        kind = SCOPES[scope(dst)]
        src = src_load.source
        if kind == "inp":
            mem = MemType.INP
        elif kind == "wgt":
            mem = MemType.WGT
        else:
            mem = MemType.ACC if str(src.dtype) == "int32" else MemType.ACC_8BIT
        escal = tile_scalars(self.cfg, kind)
        lvars = [lp.loop_var for lp in loops]
        ext = [int(lp.extent) for lp in loops]
        dlin = linear(flat_index(dst, dind), lvars)
        slin = linear(flat_index(src, src_load.indices), lvars)
        lanes = self._lanes(name, dlin[0], ext, escal)
        keep = [i for i in range(len(loops)) if i not in lanes]
        nest = LoadNest(name, [loops[i] for i in keep], [ext[i] for i in keep], mem=mem,
                        dst=self._access(name, dst, dlin, escal, lanes),
                        src=self._access(name, src, slin, escal, lanes), cond=cond)
        if cond is not None:
            nest.pad = self._pad_bounds(nest)
        return nest

    @staticmethod
    def _pad_bounds(n: LoadNest) -> PadBounds:
        """Padded copy: x = innermost loop, y = the next; their bounds from the condition."""
        L = len(n.loops)
        if L == 0:
            raise CompileError(f"block {n.name}: padded copy without loops")
        xi = L - 1
        yi = L - 2 if L >= 2 else None
        if n.dst.coefs[xi] != 1 or (yi is not None and n.dst.coefs[yi] != n.extents[xi]):
            raise CompileError(f"block {n.name}: padded copy whose on-chip rows are not "
                               f"contiguous")
        idx = ([yi] if yi is not None else []) + [xi]
        bounds = tvm.sym.detect_clip_bound(n.cond, [n.loops[i].loop_var for i in idx])
        return PadBounds(yi, xi, list(bounds))

    def _store(self, name: str, dst: Any, dind: Any, src_load: Any,
               loops: list[tirx.For]) -> StoreNest:
        src = src_load.source
        escal = tile_scalars(self.cfg, "acc")
        lvars = [lp.loop_var for lp in loops]
        ext = [int(lp.extent) for lp in loops]
        dlin = linear(flat_index(dst, dind), lvars)
        slin = linear(flat_index(src, src_load.indices), lvars)
        lanes = self._lanes(name, slin[0], ext, escal)
        keep = [i for i in range(len(loops)) if i not in lanes]
        return StoreNest(name, [loops[i] for i in keep], [ext[i] for i in keep],
                         dst=self._access(name, dst, dlin, escal, lanes),
                         src=self._access(name, src, slin, escal, lanes))

    @staticmethod
    def _alu_operands(name: str, value: Any) -> tuple[AluOp, Any, Any]:
        for cls, op in _ALU_BINARY:
            if isinstance(value, cls):
                return op, value.a, value.b
        if isinstance(value, tirx.Sub) and is_int_imm(value.b):  # x + (-c), simplified
            return AluOp.ADD, value.a, tirx.const(-int(value.b.value), "int32")
        if isinstance(value, (tirx.RShift, tirx.LShift)):
            left, a, b = isinstance(value, tirx.LShift), value.a, value.b
        elif isinstance(value, tvm.ir.Call) and value.op.name in ("tirx.shift_right",
                                                                   "tirx.shift_left"):
            left, a, b = value.op.name == "tirx.shift_left", value.args[0], value.args[1]
        else:
            raise CompileError(f"block {name}: {value} is not an ALU operation")
        if left:  # a left shift is SHR by the negated amount
            if not is_int_imm(b):
                raise CompileError(f"block {name}: left shift by a tensor")
            b = tirx.const(-int(b.value), "int32")
        return AluOp.SHR, a, b

    @staticmethod
    def _scaled_operand(e: Any) -> tuple[Any, Any] | None:
        """``int8 tile * (imm or int32 tile)`` (either order, casts stripped) -> (the int8 load,
        the scale), else None."""
        e = strip_cast(e)
        if not isinstance(e, tirx.Mul):
            return None
        for x, c in ((e.a, e.b), (e.b, e.a)):
            x, c = strip_cast(x), strip_cast(c)
            if is_load(x) and str(x.source.dtype) == "int8" and (is_int_imm(c) or is_load(c)):
                return x, c
        return None

    def _alu(self, name: str, dst: Any, dind: Any, value: Any,
             loops: list[tirx.For]) -> AluNest:
        op, a, b = self._alu_operands(name, value)
        scale = None
        if op in (AluOp.ADD, AluOp.MAX, AluOp.MIN):
            for x, y in ((a, b), (b, a)):
                scaled = self._scaled_operand(y)
                if scaled is not None and is_load(strip_cast(x)):
                    a, (b, scale) = x, scaled
                    break
        a, b = strip_cast(a), strip_cast(b)
        if not is_load(a) and is_load(b) and op != AluOp.SHR and scale is None:
            a, b = b, a
        if not is_load(a) or scope(a.source) != ACC_SCOPE:
            raise CompileError(f"block {name}: first operand of {value} is not an accumulator")
        imm = None
        if is_int_imm(b):
            imm = int(b.value)
            if not IMM_MIN <= imm <= IMM_MAX:
                raise CompileError(f"block {name}: immediate {imm} outside [{IMM_MIN}, "
                                   f"{IMM_MAX}]")
        elif not (is_load(b) and scope(b.source) == ACC_SCOPE):
            raise CompileError(f"block {name}: second operand of {value} is neither an "
                               f"immediate nor an accumulator")
        escal = tile_scalars(self.cfg, "acc")
        lvars = [lp.loop_var for lp in loops]
        ext = [int(lp.extent) for lp in loops]
        dlin = linear(flat_index(dst, dind), lvars)
        ac, ak = linear(flat_index(a.source, a.indices), lvars)
        if ac != dlin[0] or not tvm.sym.Analyzer().can_prove_equal(ak, dlin[1]):
            raise CompileError(f"block {name}: not elementwise in place ({value})")
        # In place: the output shares the first operand's region.
        if dst.name != a.source.name:
            self.result.alias[dst.name] = a.source.name
        lanes = self._lanes(name, dlin[0], ext, escal)
        keep = [i for i in range(len(loops)) if i not in lanes]
        dst_access = self._access(name, dst, dlin, escal, lanes)
        src = None
        if imm is None:
            src = self._access(name, b.source, linear(flat_index(b.source, b.indices), lvars),
                               escal, lanes)
        src_scale: int | Access | None = None
        if scale is not None:
            if src is None or src.buf.name == dst_access.buf.name:
                raise CompileError(f"block {name}: a scaled operand must be a second "
                                   f"accumulator tile ({value})")
            if is_int_imm(scale):
                src_scale = int(scale.value)
                if not IMM_MIN <= src_scale <= IMM_MAX:
                    raise CompileError(f"block {name}: immediate {src_scale} outside "
                                       f"[{IMM_MIN}, {IMM_MAX}]")
            elif scope(scale.source) == ACC_SCOPE:
                src_scale = self._access(name, scale.source, linear(
                    flat_index(scale.source, scale.indices), lvars), escal, lanes)
            else:
                raise CompileError(f"block {name}: scale {scale} is not an accumulator tile")
        return AluNest(name, [loops[i] for i in keep], [ext[i] for i in keep], op=op,
                       dst=dst_access, src=src, imm=imm, src_scale=src_scale)

    def _gemm(self, name: str, blk: s_tir.SBlock, call: Any, loops: list[tirx.For]) -> GemmNest:
        if not isinstance(call, tvm.ir.Call) or call.op.name != GEMM_OP:
            raise CompileError(f"block {name}: unknown call {call}")
        args = call.args
        reset = is_int_imm(args[3]) and int(args[3].value) < 0
        lvars = [lp.loop_var for lp in loops]
        ext = [int(lp.extent) for lp in loops]
        acc = blk.writes[0].source
        dst = self._access(name, acc, linear(args[1], lvars), tile_scalars(self.cfg, "acc"), [])
        if reset:
            return GemmNest(name, loops, ext, dst=dst, inp=None, wgt=None)
        bufs = {scope(r.source): r.source for r in blk.reads}
        return GemmNest(name, loops, ext, dst=dst,
                        inp=self._access(name, bufs["local.inp_buffer"], linear(args[3], lvars),
                                         tile_scalars(self.cfg, "inp"), []),
                        wgt=self._access(name, bufs["local.wgt_buffer"], linear(args[5], lvars),
                                         tile_scalars(self.cfg, "wgt"), []))
