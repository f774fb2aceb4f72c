"""Lower a scheduled PrimFunc and walk it into VTA instructions through the runtime.

Lowering is the subset of the s_tir pipeline that keeps the schedule's structure
(LowerInitBlock, PlanAndUpdateBufferAllocationLocation, ConvertBlocksToOpaque,
CompactBufferAllocation, LowerMatchBuffer, StmtSimplify). After it, every on-chip buffer is
allocated in the opaque block of the loop it was attached to, with its tile footprint as shape,
and every leaf block is one of:

* a copy from a global buffer into ``local.inp_buffer`` / ``local.wgt_buffer`` (LOAD INP / WGT),
  possibly through the padding stage's ``if_then_else`` (LOAD with pad fields), or into
  ``local.acc_buffer`` (LOAD ACC for int32, LOAD ACC_8BIT through an int8 -> int32 cast);
* a copy from ``local.acc_buffer`` to a global buffer (STORE of the out buffer);
* an elementwise update of ``local.acc_buffer`` (ALU: MIN/MAX/ADD/MUL/SHR with an immediate or
  a second accumulator operand);
* the tensorized ``tirx.vta.gemm`` call (GEMM, or its reset).

The walker unrolls the loops above the leaf nests (tile loops, reduction chunk loops) with
concrete values and turns each leaf nest into instructions: DMA nests into 2-D LOAD/STORE patterns
(strides from ``tvm.sym.detect_linear_equation`` on the flattened indices; padding from
``tvm.sym.detect_clip_bound`` on the padded copy's condition), GEMM and ALU nests into micro-op
kernels (the two largest loops become the instruction's hardware loops, their factors the linear
coefficients of the index expressions; the other loops are enumerated into micro-ops).
Dependency tokens come from the runtime's hazard tracking (:mod:`vtabench.runtime.hazards`).

On-chip memory: each buffer gets a fixed region of its SRAM, twice over when the schedule asks for
two virtual threads (``vta.virtual_threads`` = 2): successive allocations of a buffer alternate
between the two copies, which is what lets the load of the next chunk or tile overlap the compute
and store of the current one. Elementwise epilogue stages are computed in place (their output
buffer shares the region of their first operand).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import tvm
from tvm import s_tir, tirx

from vtabench.compiler.intrin import GEMM_OP
from vtabench.compiler.ops import IMM_MAX, IMM_MIN, PAD_MAX, CompileError
from vtabench.compiler.tiling import uop_count
from vtabench.spec.isa.layout import AluOp, MemType, mem_elem_bytes
from vtabench.runtime import DeviceBuffer, Runtime, UopKernelBuilder

if TYPE_CHECKING:
    from vtabench.spec.config import Config

SCOPES = {"local.inp_buffer": "inp", "local.wgt_buffer": "wgt", "local.acc_buffer": "acc"}


def lower(mod: tvm.IRModule) -> tirx.PrimFunc:
    seq = tvm.transform.Sequential([
        s_tir.transform.LowerInitBlock(),
        s_tir.transform.PlanAndUpdateBufferAllocationLocation(),
        s_tir.transform.ConvertBlocksToOpaque(),
        s_tir.transform.CompactBufferAllocation(),
        s_tir.transform.LowerMatchBuffer(),
        s_tir.transform.StmtSimplify(),
    ])
    return seq(mod)["main"]


# ---------------------------------------------------------------------------------------------
# Expression helpers
# ---------------------------------------------------------------------------------------------

def ev(e: Any, env: dict) -> int:
    """Evaluate an integer index expression with loop variables bound in ``env``."""
    if isinstance(e, int):
        return e
    t = type(e).__name__
    if t == "IntImm":
        return int(e.value)
    if t == "Var":
        try:
            return env[e]
        except KeyError:
            raise CompileError(f"unbound variable {e} in an index") from None
    if t == "Add":
        return ev(e.a, env) + ev(e.b, env)
    if t == "Sub":
        return ev(e.a, env) - ev(e.b, env)
    if t == "Mul":
        return ev(e.a, env) * ev(e.b, env)
    if t == "FloorDiv":
        return ev(e.a, env) // ev(e.b, env)
    if t == "FloorMod":
        return ev(e.a, env) % ev(e.b, env)
    if t == "Min":
        return min(ev(e.a, env), ev(e.b, env))
    if t == "Max":
        return max(ev(e.a, env), ev(e.b, env))
    if t == "Cast":
        return ev(e.value, env)
    raise CompileError(f"cannot evaluate index expression {e} ({t})")


def flat_index(buf: Any, indices: Any) -> Any:
    """Row-major flattened scalar index of a buffer access (a PrimExpr)."""
    shape = [int(s) for s in buf.shape]
    expr = tirx.const(0, "int32")
    stride = 1
    for dim, idx in reversed(list(zip(shape, indices))):
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
        if type(c).__name__ != "IntImm":
            raise CompileError(f"index {expr}: coefficient {c} is not a constant")
        coefs.append(int(c.value))
    return coefs, res[-1]


def _strip_cast(e: Any) -> Any:
    while type(e).__name__ == "Cast":
        e = e.value
    return e


def _is_load(e: Any) -> bool:
    return type(e).__name__ in ("TensorLoad", "BufferLoad")


def _load_buf(e: Any) -> Any:
    """The buffer a BufferLoad or a BufferRegion refers to."""
    return e.source if hasattr(e, "source") else e.buffer


def _scope(buf: Any) -> str:
    try:
        return buf.scope()
    except Exception:  # noqa: BLE001
        return "global"


# ---------------------------------------------------------------------------------------------
# Leaf nests, analysed once and evaluated per tile
# ---------------------------------------------------------------------------------------------

@dataclass
class Nest:
    kind: str  # load, store, alu, gemm
    loops: list[Any]  # For nodes with extent > 1, outer first
    extents: list[int]
    mem: MemType | None = None
    # element-level coefficients per loop and the constant part (scalar expression)
    dst_buf: Any = None
    src_buf: Any = None
    wgt_buf: Any = None
    dst_c: list[int] = field(default_factory=list)
    dst_k: Any = None
    src_c: list[int] = field(default_factory=list)
    src_k: Any = None
    wgt_c: list[int] = field(default_factory=list)
    wgt_k: Any = None
    elem_loops: list[int] = field(default_factory=list)
    cond: Any = None
    alu_op: AluOp | None = None
    imm: int | None = None
    reset: bool = False


class Emitter:
    """Walks one lowered operator into a runtime. ``bindings`` maps PrimFunc parameter names to
    device buffers."""

    def __init__(self, cfg: Config, func: tirx.PrimFunc):
        self.cfg = cfg
        self.func = func
        self.params = {p.name: p for p in func.params}
        self.nests: dict[str, Nest] = {}
        self.buffers: dict[str, Any] = {}  # on-chip buffer name -> buffer
        self.alias: dict[str, str] = {}
        self.vthreads: int | None = None  # from the tile loop's vta.virtual_threads
        self._analyze(func.body)
        if self.vthreads is None:
            self.vthreads = 2
        self._layout()

    # -- analysis -----------------------------------------------------------------------------
    def _elem_scalars(self, kind: str) -> int:
        c = self.cfg
        return {"inp": c.batch * c.block_in, "wgt": c.block_out * c.block_in,
                "acc": c.batch * c.block_out}[kind]

    def _analyze(self, stmt: Any) -> None:
        t = type(stmt).__name__
        if t == "For":
            vt = stmt.annotations.get("vta.virtual_threads") if stmt.annotations else None
            if vt is not None and self.vthreads is None:
                self.vthreads = int(vt)
            loops, leaf = self._perfect_nest(stmt)
            if leaf is not None:
                self._analyze_leaf(loops, leaf)
            else:
                self._analyze(stmt.body)
        elif t == "SBlockRealize":
            blk = stmt.block
            if self._is_leaf(blk):
                self._analyze_leaf([], blk)
                return
            for b in blk.alloc_buffers:
                sc = _scope(b)
                if sc not in SCOPES:
                    raise CompileError(f"buffer {b.name} in scope {sc!r}: only "
                                       f"{', '.join(SCOPES)} are on chip")
                self.buffers[b.name] = b
            self._analyze(blk.body)
        elif t == "SeqStmt":
            for s in stmt.seq:
                self._analyze(s)
        else:
            raise CompileError(f"unexpected statement {t} in the lowered operator")

    @staticmethod
    def _is_leaf(blk: Any) -> bool:
        return type(blk.body).__name__ in ("BufferStore", "Evaluate") and not blk.alloc_buffers

    def _perfect_nest(self, stmt: Any) -> tuple[list[Any], Any]:
        loops = []
        s = stmt
        while type(s).__name__ == "For":
            loops.append(s)
            s = s.body
        if type(s).__name__ == "SBlockRealize" and self._is_leaf(s.block):
            return loops, s.block
        return loops, None

    def _analyze_leaf(self, loops: list[Any], blk: Any) -> None:
        name = blk.name_hint
        if name in self.nests:
            return
        for lp in loops:
            if int(lp.min.value if hasattr(lp.min, "value") else lp.min) != 0:
                raise CompileError(f"loop {lp.loop_var} of {name} does not start at 0")
        loops = [lp for lp in loops if int(lp.extent) > 1]
        lvars = [lp.loop_var for lp in loops]
        ext = [int(lp.extent) for lp in loops]
        body = blk.body
        if type(body).__name__ == "Evaluate":
            self.nests[name] = self._analyze_gemm(name, blk, body.value, loops, lvars, ext)
            return
        dst = body.buffer
        dscope = _scope(dst)
        value = body.value
        if dscope in SCOPES:
            core = _strip_cast(value)
            cond = None
            if type(core).__name__ == "Call" and core.op.name in ("prim.if_then_else",
                                                                  "tirx.if_then_else"):
                cond, core = core.args[0], _strip_cast(core.args[1])
            if _is_load(core) and _scope(_load_buf(core)) == "global":
                self.nests[name] = self._analyze_load(name, dst, body.indices, core, cond, loops,
                                                      lvars, ext)
                return
            if dscope == "local.acc_buffer":
                self.nests[name] = self._analyze_alu(name, dst, body.indices, value, loops, lvars,
                                                     ext)
                return
            raise CompileError(f"block {name}: cannot map a write of {dst.name} to VTA")
        core = _strip_cast(value)
        if _is_load(core) and _scope(_load_buf(core)) == "local.acc_buffer":
            self.nests[name] = self._analyze_store(name, dst, body.indices, core, loops, lvars, ext)
            return
        raise CompileError(f"block {name}: a global write that is not a store of the "
                           f"accumulator ({value})")

    def _split_elem(self, name: str, coefs: list[int], ext: list[int], escal: int) -> list[int]:
        """Indices of the loops inside one tensor tile (coefficient below the tile size)."""
        inner = [i for i, c in enumerate(coefs) if 0 < c < escal]
        n = 1
        for i in inner:
            n *= ext[i]
        if n != escal:
            raise CompileError(f"block {name}: loops inside a tile cover {n} of {escal} lanes")
        return inner

    def _elem(self, name: str, coefs: list[int], escal: int, skip: list[int]) -> list[int]:
        out = []
        for i, c in enumerate(coefs):
            if i in skip:
                continue
            if c % escal:
                raise CompileError(f"block {name}: stride {c} is not a whole number of "
                                   f"{escal}-lane tiles")
            out.append(c // escal)
        return out

    def _analyze_load(self, name, dst, dind, src_load, cond, loops, lvars, ext) -> Nest:
        kind = SCOPES[_scope(dst)]
        src = _load_buf(src_load)
        if kind == "inp":
            mem = MemType.INP
        elif kind == "wgt":
            mem = MemType.WGT
        else:
            mem = MemType.ACC if str(src.dtype) == "int32" else MemType.ACC_8BIT
        escal = self._elem_scalars(kind)
        dc, dk = linear(flat_index(dst, dind), lvars)
        sc, sk = linear(flat_index(src, src_load.indices), lvars)
        inner = self._split_elem(name, dc, ext, escal)
        keep = [i for i in range(len(loops)) if i not in inner]
        return Nest("load", [loops[i] for i in keep], [ext[i] for i in keep], mem=mem,
                    dst_buf=dst, src_buf=src, dst_c=self._elem(name, dc, escal, inner),
                    dst_k=dk, src_c=self._elem(name, sc, escal, inner), src_k=sk, cond=cond)

    def _analyze_store(self, name, dst, dind, src_load, loops, lvars, ext) -> Nest:
        src = _load_buf(src_load)
        escal = self._elem_scalars("acc")
        dc, dk = linear(flat_index(dst, dind), lvars)
        sc, sk = linear(flat_index(src, src_load.indices), lvars)
        inner = self._split_elem(name, sc, ext, escal)
        keep = [i for i in range(len(loops)) if i not in inner]
        return Nest("store", [loops[i] for i in keep], [ext[i] for i in keep], mem=MemType.OUT,
                    dst_buf=dst, src_buf=src, dst_c=self._elem(name, dc, escal, inner), dst_k=dk,
                    src_c=self._elem(name, sc, escal, inner), src_k=sk)

    def _analyze_alu(self, name, dst, dind, value, loops, lvars, ext) -> Nest:
        t = type(value).__name__
        ops = {"Max": AluOp.MAX, "Min": AluOp.MIN, "Add": AluOp.ADD, "Mul": AluOp.MUL}
        imm = None
        if t in ops:
            op, a, b = ops[t], value.a, value.b
        elif t in ("RShift", "LShift"):
            op, a, b = AluOp.SHR, value.a, value.b
            if t == "LShift":
                if type(b).__name__ != "IntImm":
                    raise CompileError(f"block {name}: left shift by a tensor")
                b = tirx.const(-int(b.value), "int32")
        elif t == "Call" and value.op.name in ("tirx.shift_right", "tirx.shift_left"):
            op, a, b = AluOp.SHR, value.args[0], value.args[1]
            if value.op.name == "tirx.shift_left":
                if type(b).__name__ != "IntImm":
                    raise CompileError(f"block {name}: left shift by a tensor")
                b = tirx.const(-int(b.value), "int32")
        else:
            raise CompileError(f"block {name}: {value} is not an ALU operation")
        a, b = _strip_cast(a), _strip_cast(b)
        if not _is_load(a) and _is_load(b) and op != AluOp.SHR:
            a, b = b, a
        if not _is_load(a) or _scope(_load_buf(a)) != "local.acc_buffer":
            raise CompileError(f"block {name}: first operand of {value} is not an accumulator")
        if type(b).__name__ == "IntImm":
            imm = int(b.value)
            if not IMM_MIN <= imm <= IMM_MAX:
                raise CompileError(f"block {name}: immediate {imm} outside [{IMM_MIN}, "
                                   f"{IMM_MAX}]")
        elif not (_is_load(b) and _scope(_load_buf(b)) == "local.acc_buffer"):
            raise CompileError(f"block {name}: second operand of {value} is neither an "
                               f"immediate nor an accumulator")
        escal = self._elem_scalars("acc")
        dc, dk = linear(flat_index(dst, dind), lvars)
        ac, ak = linear(flat_index(_load_buf(a), a.indices), lvars)
        if ac != dc or not tvm.sym.Analyzer().can_prove_equal(ak, dk):
            raise CompileError(f"block {name}: not elementwise in place ({value})")
        # In place: the output shares the first operand's region.
        if dst.name != _load_buf(a).name:
            self.alias[dst.name] = _load_buf(a).name
        inner = self._split_elem(name, dc, ext, escal)
        keep = [i for i in range(len(loops)) if i not in inner]
        n = Nest("alu", [loops[i] for i in keep], [ext[i] for i in keep], dst_buf=dst,
                 dst_c=self._elem(name, dc, escal, inner), dst_k=dk, alu_op=op, imm=imm)
        if imm is None:
            bc, bk = linear(flat_index(_load_buf(b), b.indices), lvars)
            n.src_buf = _load_buf(b)
            n.src_c = self._elem(name, bc, escal, inner)
            n.src_k = bk
        else:
            n.src_c = [0] * len(n.dst_c)
        return n

    def _analyze_gemm(self, name, blk, call, loops, lvars, ext) -> Nest:
        if type(call).__name__ != "Call" or call.op.name != GEMM_OP:
            raise CompileError(f"block {name}: unknown call {call}")
        args = call.args
        reset = type(args[3]).__name__ == "IntImm" and int(args[3].value) < 0
        acc = _load_buf(blk.writes[0])
        bufs = {_scope(_load_buf(r)): _load_buf(r) for r in blk.reads}
        dc, dk = linear(args[1], lvars)
        n = Nest("gemm", loops, ext, dst_buf=acc, reset=reset,
                 dst_c=self._elem(name, dc, self._elem_scalars("acc"), []), dst_k=dk)
        if reset:
            n.src_c = [0] * len(loops)
            n.wgt_c = [0] * len(loops)
        else:
            n.src_buf = bufs["local.inp_buffer"]
            n.wgt_buf = bufs["local.wgt_buffer"]
            sc, sk = linear(args[3], lvars)
            wc, wk = linear(args[5], lvars)
            n.src_c = self._elem(name, sc, self._elem_scalars("inp"), [])
            n.src_k = sk
            n.wgt_c = self._elem(name, wc, self._elem_scalars("wgt"), [])
            n.wgt_k = wk
        return n

    # -- on-chip layout ---------------------------------------------------------------------
    def _root(self, name: str) -> str:
        while name in self.alias:
            name = self.alias[name]
        return name

    def _layout(self) -> None:
        depth = {"inp": self.cfg.inp_depth, "wgt": self.cfg.wgt_depth, "acc": self.cfg.acc_depth}
        used = {"inp": 0, "wgt": 0, "acc": 0}
        self.region: dict[str, tuple[int, int]] = {}  # root -> (offset, size in elements)
        parts: dict[str, list[str]] = {"inp": [], "wgt": [], "acc": []}
        for name, buf in self.buffers.items():
            if self._root(name) != name:
                continue
            kind = SCOPES[_scope(buf)]
            scal = 1
            for s in buf.shape:
                scal *= int(s)
            size = -(-scal // self._elem_scalars(kind))
            self.region[name] = (used[kind], size)
            used[kind] += size * self.vthreads
            parts[kind].append(f"{name} {size} x {self.vthreads}")
        for kind, n in used.items():
            if n > depth[kind]:
                raise CompileError(f"{kind} buffer overflow: {', '.join(parts[kind])} = "
                                   f"{n} elements, the buffer holds {depth[kind]}")

    def uop_bound(self) -> int:
        """Micro-ops one tile can add to the device pool: every GEMM / ALU kernel of the
        operator, once per virtual thread (kernels differ only by their buffer copy)."""
        total = sum(uop_count(n.extents) for n in self.nests.values()
                    if n.kind in ("gemm", "alu"))
        return total * self.vthreads

    # -- emission -----------------------------------------------------------------------------
    def emit(self, rt: Runtime, bindings: dict[str, DeviceBuffer]) -> None:
        missing = set(self.params) - set(bindings)
        if missing:
            raise CompileError(f"no device buffer bound to {', '.join(sorted(missing))}")
        self.rt = rt
        self.bind = bindings
        self.base: dict[str, int] = {}
        self.count: dict[str, int] = {}
        if not hasattr(self, "tile_insns"):
            self.tile_insns, self.tile_uops = self.measure()
        self._walk(self.func.body, {})
        rt.layer_end()

    def measure(self) -> tuple[int, int]:
        """Dry run over a counting stand-in for the runtime: the most instructions (plus one
        LOAD UOP per kernel and a few token no-ops) and micro-ops one tile can queue. The
        emitter checkpoints with these before each tile, so automatic syncs happen in time."""
        saved = (getattr(self, "rt", None), getattr(self, "bind", None),
                 getattr(self, "base", None), getattr(self, "count", None))
        counter = _CountingRuntime()
        self.rt = counter
        self.bind = {name: DeviceBuffer(0, 0) for name in self.params}
        self.base, self.count = {}, {}
        self.tile_insns, self.tile_uops = 0, 0
        self._walk(self.func.body, {})
        result = (max(self.tile_insns, counter.pending if not counter.tiles else 0) + 4,
                  max(self.tile_uops, self.uop_bound()))
        self.rt, self.bind, self.base, self.count = saved
        return result

    def _walk(self, stmt: Any, env: dict) -> None:
        t = type(stmt).__name__
        if t == "For":
            _, leaf = self._perfect_nest(stmt)
            if leaf is not None:
                self._emit_nest(self.nests[leaf.name_hint], env)
                return
            var = stmt.loop_var
            lo = ev(stmt.min, env)
            for v in range(lo, lo + ev(stmt.extent, env)):
                env[var] = v
                self._walk(stmt.body, env)
            del env[var]
        elif t == "SBlockRealize":
            blk = stmt.block
            if self._is_leaf(blk):
                self._emit_nest(self.nests[blk.name_hint], env)
                return
            tile = any(SCOPES[_scope(b)] == "acc" for b in blk.alloc_buffers)
            if tile:
                self.rt.checkpoint(self.tile_insns, self.tile_uops)
                start = (self.rt.stats.syncs, self.rt.pending, self.rt.uop_pool_used)
            for b in blk.alloc_buffers:
                root = self._root(b.name)
                if root == b.name:
                    k = self.count.get(root, 0)
                    self.count[root] = k + 1
                    off, size = self.region[root]
                    self.base[root] = off + (k % self.vthreads) * size
            for b in blk.alloc_buffers:
                self.base[b.name] = self.base[self._root(b.name)]
            self._walk(blk.body, env)
            if tile and self.rt.stats.syncs == start[0]:
                self.tile_insns = max(self.tile_insns, self.rt.pending - start[1])
                self.tile_uops = max(self.tile_uops, self.rt.uop_pool_used - start[2])
        elif t == "SeqStmt":
            for s in stmt.seq:
                self._walk(s, env)
        else:
            raise CompileError(f"unexpected statement {t}")

    def _sram(self, buf: Any, k: Any, env: dict, escal: int) -> int:
        off = ev(k, env)
        if off % escal:
            raise CompileError(f"{buf.name}: offset {off} is not tile aligned")
        return self.base[buf.name] + off // escal

    def _dram(self, buf: Any, k: Any, env: dict, mem: MemType) -> int:
        escal = self._escal(mem)
        off = ev(k, env)
        if off % escal:
            raise CompileError(f"{buf.name}: offset {off} is not tile aligned")
        return self.bind[buf.name].elem(mem_elem_bytes(self.cfg, mem)) + off // escal

    def _emit_nest(self, n: Nest, env: dict) -> None:
        if n.kind == "load":
            self._emit_load(n, env)
        elif n.kind == "store":
            self._emit_store(n, env)
        else:
            self._emit_uop_nest(n, env)

    @staticmethod
    def _iterate(n: Nest, idx: list[int], env: dict):
        """Yield env extended with every combination of the loops ``idx`` (others at 0)."""
        import itertools

        ranges = [range(n.extents[i]) for i in idx]
        for vals in itertools.product(*ranges):
            e = dict(env)
            for i, lp in enumerate(n.loops):
                e[lp.loop_var] = 0
            for i, v in zip(idx, vals):
                e[n.loops[i].loop_var] = v
            yield e

    def _dma_shape(self, n: Nest, sram_c: list[int],
                   dram_c: list[int]) -> tuple[int, int, int, list[int]]:
        """Pick the x loop (merging outer loops into it where contiguous) and the y loop (the
        same); returns (x_size, y_size, x_stride, remaining loop indices)."""
        order = list(range(len(n.loops)))  # outer first
        if not order:
            return 1, 1, 1, []
        xi = order[-1]
        rest = order[:-1]
        if sram_c[xi] != 1:
            return 1, 1, 1, order  # element by element (not expected)
        x_size = n.extents[xi]
        while rest:
            j = rest[-1]
            if sram_c[j] == x_size and dram_c[j] == x_size * dram_c[xi] and dram_c[xi] == 1:
                x_size *= n.extents[j]
                rest = rest[:-1]
            else:
                break
        if dram_c[xi] != 1:
            return 1, 1, 1, order
        if not rest:
            return x_size, 1, x_size, []
        yj = rest[-1]
        if sram_c[yj] != x_size:
            return x_size, 1, x_size, rest
        y_size = n.extents[yj]
        stride = dram_c[yj]
        rest = rest[:-1]
        while rest:
            j = rest[-1]
            if sram_c[j] == x_size * y_size and dram_c[j] == stride * y_size:
                y_size *= n.extents[j]
                rest = rest[:-1]
            else:
                break
        return x_size, y_size, stride, rest

    def _emit_load(self, n: Nest, env: dict) -> None:
        if n.cond is None:
            xs, ys, stride, rest = self._dma_shape(n, n.dst_c, n.src_c)
            for e in self._iterate(n, rest, env):
                self.rt.load(n.mem, self._sram(n.dst_buf, n.dst_k, e, self._escal(n.mem)) +
                             sum(n.dst_c[i] * e[n.loops[i].loop_var] for i in range(len(n.loops))),
                             self._dram(n.src_buf, n.src_k, e, n.mem) +
                             sum(n.src_c[i] * e[n.loops[i].loop_var] for i in range(len(n.loops))),
                             ys, xs, stride)
            return
        # Padded copy: x = innermost loop, y = the next; pads from the copy's condition.
        L = len(n.loops)
        if L == 0:
            raise CompileError("padded copy without loops")
        xi = L - 1
        yi = L - 2 if L >= 2 else None
        if n.dst_c[xi] != 1 or (yi is not None and n.dst_c[yi] != n.extents[xi]):
            raise CompileError("padded copy whose on-chip rows are not contiguous")
        rest = list(range(L - 2 if yi is not None else L - 1))
        xv = n.loops[xi].loop_var
        yv = n.loops[yi].loop_var if yi is not None else None
        for e in self._iterate(n, rest, env):
            (ylo, yhi), (xlo, xhi) = self._clip(n, e, yi, xi)
            nx = n.extents[xi]
            ny = n.extents[yi] if yi is not None else 1
            e2 = dict(e)
            e2[xv] = xlo
            if yv is not None:
                e2[yv] = ylo
            sram0 = self._sram(n.dst_buf, n.dst_k, e, self._escal(n.mem)) + sum(
                n.dst_c[i] * e[n.loops[i].loop_var] for i in rest)
            dram0 = self._dram(n.src_buf, n.src_k, e2, n.mem) + sum(
                n.src_c[i] * e2[n.loops[i].loop_var] for i in range(L))
            ypad0, ypad1 = ylo, ny - 1 - yhi
            xpad0, xpad1 = xlo, nx - 1 - xhi
            ys, xs = yhi - ylo + 1, xhi - xlo + 1
            if ys <= 0 or xs <= 0:
                raise CompileError("a tile of the padded copy lies entirely in the padding")
            if max(ypad0, ypad1, xpad0, xpad1) > PAD_MAX:
                raise CompileError(f"padding {ypad0, ypad1, xpad0, xpad1} exceeds the pad "
                                   f"fields (at most {PAD_MAX})")
            stride = n.src_c[yi] if yi is not None else xs
            self.rt.load(n.mem, sram0, dram0, ys, xs, stride, ypad0, ypad1, xpad0, xpad1)

    def _clip(self, n: Nest, env: dict, yi: int | None, xi: int) -> tuple[tuple[int, int],
                                                                          tuple[int, int]]:
        """Valid [lo, hi] of the y and x loops under the padded copy's condition."""
        key = ("clip", id(n))
        if not hasattr(self, "_clip_cache"):
            self._clip_cache = {}
        vars_ = [n.loops[i].loop_var for i in ([yi] if yi is not None else []) + [xi]]
        if key not in self._clip_cache:
            self._clip_cache[key] = tvm.sym.detect_clip_bound(n.cond, vars_)
        b = self._clip_cache[key]
        out = []
        idxs = ([yi] if yi is not None else []) + [xi]
        for k, i in enumerate(idxs):
            ext = n.extents[i]
            if len(b) == 2 * len(idxs):
                lo_e, hi_e = b[2 * k], b[2 * k + 1]
                lo = 0 if lo_e is None else max(0, ev(lo_e, env))
                hi = ext - 1 if hi_e is None else min(ext - 1, ev(hi_e, env))
            else:  # no bound found: scan the condition numerically
                lo, hi = self._scan(n, env, i)
            out.append((lo, hi))
        if yi is None:
            out.insert(0, (0, 0))
        return out[0], out[1]

    def _scan(self, n: Nest, env: dict, i: int) -> tuple[int, int]:
        good = []
        for v in range(n.extents[i]):
            e = dict(env)
            e[n.loops[i].loop_var] = v
            if self._cond_true(n.cond, e):
                good.append(v)
        if not good:
            return 0, -1
        return good[0], good[-1]

    def _cond_true(self, c: Any, env: dict) -> bool:
        t = type(c).__name__
        if t == "And":
            return self._cond_true(c.a, env) and self._cond_true(c.b, env)
        if t == "Or":
            return self._cond_true(c.a, env) or self._cond_true(c.b, env)
        if t == "LT":
            return ev(c.a, env) < ev(c.b, env)
        if t == "LE":
            return ev(c.a, env) <= ev(c.b, env)
        if t == "GT":
            return ev(c.a, env) > ev(c.b, env)
        if t == "GE":
            return ev(c.a, env) >= ev(c.b, env)
        if t == "EQ":
            return ev(c.a, env) == ev(c.b, env)
        if t == "NE":
            return ev(c.a, env) != ev(c.b, env)
        if t == "IntImm":
            return bool(c.value)
        raise CompileError(f"cannot evaluate condition {c}")

    def _escal(self, mem: MemType) -> int:
        return self._elem_scalars({MemType.INP: "inp", MemType.WGT: "wgt"}.get(mem, "acc"))

    def _emit_store(self, n: Nest, env: dict) -> None:
        xs, ys, stride, rest = self._dma_shape(n, n.src_c, n.dst_c)
        for e in self._iterate(n, rest, env):
            sram = self._sram(n.src_buf, n.src_k, e, self._escal(MemType.OUT)) + sum(
                n.src_c[i] * e[n.loops[i].loop_var] for i in range(len(n.loops)))
            dram = self._dram(n.dst_buf, n.dst_k, e, MemType.OUT) + sum(
                n.dst_c[i] * e[n.loops[i].loop_var] for i in range(len(n.loops)))
            self.rt.store(sram, dram, ys, xs, stride)

    def _emit_uop_nest(self, n: Nest, env: dict) -> None:
        """GEMM / ALU: the two largest loops become the hardware loops, the rest micro-ops."""
        import itertools

        L = len(n.loops)
        order = sorted(range(L), key=lambda i: -n.extents[i])
        hw = sorted(order[:2])  # keep their relative order (outer first)
        sw = [i for i in range(L) if i not in hw]
        e0 = dict(env)
        for lp in n.loops:
            e0[lp.loop_var] = 0
        acc_s = self._escal(MemType.ACC)
        dst0 = self._sram(n.dst_buf, n.dst_k, e0, acc_s)
        if n.kind == "gemm" and not n.reset:
            src0 = self._sram(n.src_buf, n.src_k, e0, self._escal(MemType.INP))
            wgt0 = self._sram(n.wgt_buf, n.wgt_k, e0, self._escal(MemType.WGT))
        elif n.kind == "alu" and n.imm is None:
            src0 = self._sram(n.src_buf, n.src_k, e0, acc_s)
            wgt0 = 0
        else:
            src0 = wgt0 = 0
        wc = n.wgt_c if n.wgt_c else [0] * L
        kb = UopKernelBuilder()
        for i in hw:
            kb.loop_begin(n.extents[i], n.dst_c[i], n.src_c[i], wc[i])
        for vals in itertools.product(*[range(n.extents[i]) for i in sw]):
            d, s, w = dst0, src0, wgt0
            for i, v in zip(sw, vals):
                d += n.dst_c[i] * v
                s += n.src_c[i] * v
                w += wc[i] * v
            kb.push(d, s, w)
        for _ in hw:
            kb.loop_end()
        kernel = kb.build()
        if n.kind == "gemm":
            self.rt.gemm(kernel, reset=n.reset)
        else:
            self.rt.alu(kernel, n.alu_op, n.imm)


class _CountingRuntime:
    """Counts what an emission would queue (see :meth:`Emitter.measure`)."""

    insn_capacity = 1 << 30

    def __init__(self) -> None:
        self.pending = 0
        self.uop_pool_used = 0
        self.tiles = 0
        self.stats = type("S", (), {"syncs": 0})()

    def checkpoint(self, *_: Any) -> None:
        self.tiles += 1  # the emitter checkpoints once before each tile

    def layer_end(self) -> None:
        pass

    def load(self, *_: Any, **__: Any) -> None:
        self.pending += 1

    def store(self, *_: Any, **__: Any) -> None:
        self.pending += 1

    def gemm(self, kernel: Any, reset: bool = False) -> None:
        self.pending += 2  # the GEMM and, at most, its LOAD UOP
        self.uop_pool_used += len(kernel)

    def alu(self, kernel: Any, op: Any, imm: Any = None) -> None:
        self.pending += 2
        self.uop_pool_used += len(kernel)
