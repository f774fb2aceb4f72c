"""Compile a partitioned, placed graph into a :class:`Package`: CPU functions (Relax, llvm) and
VTA device programs (instructions + micro-ops + packed weights + a memory plan).

VTA programs are produced by emitting every operator of a wave through one
:class:`vtabench.runtime.Runtime` (``sync="batch"``) over a *recording device*: the runtime's
allocations give the memory plan, its writes of weights, biases and micro-op kernels give the
static image (uploaded once per model), and each ``sync`` gives one program (instruction bytes).
A second runtime with ``sync="layer"`` records one program per layer for profiling (per-layer
cycles on the RTL).
"""

from __future__ import annotations

import io
import json
import time
import zipfile
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import tvm
from tvm import relax

from vtabench.graph import passes
from vtabench.graph.frontend import import_onnx, to_graph
from vtabench.graph.ir import CPU, VTA, Graph, Node
from vtabench.spec.isa.insn import INSN_BYTES

FORMAT = "vtabench-vtapkg-1"


# -- packing -----------------------------------------------------------------------------------

def pack_act(x: np.ndarray, cfg: Any) -> np.ndarray:
    """NCHW (or NK) int8 -> VTA layout (N/B, C/BI, H, W, B, BI) (or (N/B, K/BI, B, BI))."""
    B, BI = cfg.batch, cfg.block_in
    if x.ndim == 2:
        x = x.reshape(*x.shape, 1, 1)
    n, c, h, w = x.shape
    return np.ascontiguousarray(
        x.reshape(n // B, B, c // BI, BI, h, w).transpose(0, 2, 4, 5, 1, 3))


def unpack_act(buf: np.ndarray, shape: tuple[int, ...], cfg: Any) -> np.ndarray:
    B, BI = cfg.batch, cfg.block_in
    s4 = tuple(shape) + (1,) * (4 - len(shape))
    n, c, h, w = s4
    x = buf.view(np.int8).reshape(n // B, c // BI, h, w, B, BI).transpose(0, 4, 1, 5, 2, 3)
    return np.ascontiguousarray(x.reshape(shape))


def pack_conv_weight(w: np.ndarray, cfg: Any) -> np.ndarray:
    BI, BO = cfg.block_in, cfg.block_out
    o, c, kh, kw = w.shape
    return np.ascontiguousarray(w.reshape(o // BO, BO, c // BI, BI, kh, kw)
                                .transpose(0, 2, 4, 5, 1, 3))


def pack_dense_weight(w: np.ndarray, cfg: Any) -> np.ndarray:
    BI, BO = cfg.block_in, cfg.block_out
    m, k = w.shape
    return np.ascontiguousarray(w.reshape(m // BO, BO, k // BI, BI).transpose(0, 2, 1, 3))


def pack_bias(b: np.ndarray, cfg: Any, conv: bool) -> np.ndarray:
    B, BO = cfg.batch, cfg.block_out
    o = b.shape[0]
    t = np.broadcast_to(b.reshape(o // BO, 1, BO), (o // BO, B, BO)).astype(np.int32)
    shape = (1, o // BO, 1, 1, B, BO) if conv else (1, o // BO, B, BO)
    return np.ascontiguousarray(t.reshape(shape))


# -- the recording device ------------------------------------------------------------------------

class RecordingDevice:
    """Stands in for a device while compiling: keeps allocations (the memory plan), the writes
    (the static image) and the programs that ``run`` is asked to start."""

    target = "record"

    def __init__(self, cfg: Any, mem_bytes: int = 1 << 33) -> None:
        from vtabench.drivers.alloc import Allocator

        self.cfg = cfg
        self.allocator = Allocator(mem_bytes)
        self.writes: list[tuple[int, np.ndarray]] = []
        self.runs: list[bytes] = []
        self.high = 0

    def alloc(self, nbytes: int, align: int = 64) -> int:
        a = self.allocator.alloc(nbytes, align)
        self.high = max(self.high, a + nbytes)
        return a

    def free(self, addr: int) -> None:
        self.allocator.free(addr)

    def write(self, addr: int, data: Any) -> None:
        arr = np.ascontiguousarray(data).reshape(-1).view(np.uint8).copy() if isinstance(
            data, np.ndarray) else np.frombuffer(bytes(data), np.uint8).copy()
        self.writes.append((int(addr), arr))

    def read(self, addr: int, nbytes: int) -> np.ndarray:
        raise RuntimeError("the recording device cannot be read (compile time)")

    def run(self, insn_addr: int, insn_count: int, timeout_s: float | None = None) -> Any:
        from vtabench.drivers.api import RunResult

        for i in range(len(self.writes) - 1, -1, -1):
            a, d = self.writes[i]
            if a == insn_addr and d.size == insn_count * INSN_BYTES:
                self.runs.append(d.tobytes())
                del self.writes[i]
                break
        else:
            raise RuntimeError("run of a program that was not written")
        return RunResult(insn_count, 0.0, {})

    def static_ranges(self) -> list[tuple[int, np.ndarray]]:
        """The writes merged into non-overlapping ranges (later writes win)."""
        if not self.writes:
            return []
        lo = min(a for a, _ in self.writes)
        hi = max(a + d.size for a, d in self.writes)
        img = np.zeros(hi - lo, np.uint8)
        mask = np.zeros(hi - lo, bool)
        for a, d in self.writes:
            img[a - lo:a - lo + d.size] = d
            mask[a - lo:a - lo + d.size] = True
        out = []
        idx = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(np.int8), [0]])))
        for s, e in zip(idx[::2], idx[1::2]):
            out.append((lo + int(s), img[s:e].copy()))
        return out


# -- the package --------------------------------------------------------------------------------

@dataclass
class Program:
    wave: int
    insns: bytes
    layers: list[str]  # nodes it covers

    @property
    def count(self) -> int:
        return len(self.insns) // INSN_BYTES


@dataclass
class Package:
    cfg_name: str
    manifest: dict[str, Any]
    cpu_mod: Any  # tvm IRModule with one function per CPU wave
    image: list[tuple[int, np.ndarray]]
    programs: list[Program]
    profile: list[Program]
    mem_bytes: int
    compile_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    # -- (de)serialization ----------------------------------------------------------------
    def to_bytes(self) -> bytes:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            man = dict(self.manifest)
            man["format"] = FORMAT
            man["config"] = self.cfg_name
            man["mem_bytes"] = self.mem_bytes
            man["image"] = [{"addr": a, "nbytes": int(d.size), "file": f"image/{i}.bin"}
                            for i, (a, d) in enumerate(self.image)]
            man["programs"] = [{"wave": p.wave, "layers": p.layers, "count": p.count,
                                "file": f"programs/{i}.bin"} for i, p in enumerate(self.programs)]
            man["profile"] = [{"wave": p.wave, "layers": p.layers, "count": p.count,
                               "file": f"profile/{i}.bin"} for i, p in enumerate(self.profile)]
            z.writestr("manifest.json", json.dumps(man, indent=1))
            for i, (_, d) in enumerate(self.image):
                z.writestr(f"image/{i}.bin", d.tobytes())
            for i, p in enumerate(self.programs):
                z.writestr(f"programs/{i}.bin", p.insns)
            for i, p in enumerate(self.profile):
                z.writestr(f"profile/{i}.bin", p.insns)
            z.writestr("cpu.json", tvm.ir.save_json(self.cpu_mod))
        return buf.getvalue()

    def save(self, path: Any) -> None:
        with open(path, "wb") as f:
            f.write(self.to_bytes())

    @classmethod
    def from_bytes(cls, data: bytes) -> Package:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            man = json.loads(z.read("manifest.json"))
            if man.get("format") != FORMAT:
                raise ValueError(f"not a {FORMAT} package (format {man.get('format')!r})")
            image = [(e["addr"], np.frombuffer(z.read(e["file"]), np.uint8).copy())
                     for e in man["image"]]
            progs = [Program(e["wave"], z.read(e["file"]), e["layers"]) for e in man["programs"]]
            prof = [Program(e["wave"], z.read(e["file"]), e["layers"]) for e in man["profile"]]
            cpu = tvm.ir.load_json(z.read("cpu.json").decode())
        return cls(man["config"], man, cpu, image, progs, prof, man["mem_bytes"])

    @classmethod
    def load(cls, path: Any) -> Package:
        with open(path, "rb") as f:
            return cls.from_bytes(f.read())


# -- CPU functions --------------------------------------------------------------------------------

def _sub(e: Any, vmap: dict[Any, Any]) -> Any:
    if isinstance(e, relax.Var):
        return vmap[e]
    if isinstance(e, relax.Call):
        return relax.Call(e.op, [_sub(a, vmap) for a in e.args], e.attrs, e.ty_args)
    if isinstance(e, relax.Tuple):
        return relax.Tuple([_sub(a, vmap) for a in e.fields])
    if isinstance(e, relax.TupleGetItem):
        return relax.TupleGetItem(_sub(e.tuple_value, vmap), e.index)
    return e


def _c(v: int) -> Any:
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
        acc = bb.emit(R.right_shift(R.add(acc, _c(1 << (q.shift - 1))), _c(q.shift)))
    acc = bb.emit(R.minimum(R.maximum(acc, _c(0 if q.relu else -128)), _c(127)))
    if q.residual:
        acc = bb.emit(R.add(acc, R.astype(args[1], "int32")))
        acc = bb.emit(R.minimum(R.maximum(acc, _c(0 if q.res_relu else -128)), _c(127)))
    return bb.emit(R.astype(acc, "int8"))


def _emit_cpu_node(bb: relax.BlockBuilder, g: Graph, n: Node, val: dict[str, Any]) -> Any:
    if n.is_candidate and n.q.integer_exact:
        return _integer_op(bb, n, [val[i] for i in n.inputs])
    if n.relax_func is not None:
        func = n.relax_func
        vmap = {p: val[a] for p, a in zip(func.params, n.relax_args)}
        res = None
        for blk in func.body.blocks:
            for b in blk.bindings:
                res = bb.emit(_sub(b.value, vmap))
                vmap[b.var] = res
        return res
    vmap = {v: val[i] for v, i in zip(n.arg_vars, n.inputs)}
    return bb.emit(_sub(n.expr, vmap))


def build_cpu_function(bb: relax.BlockBuilder, g: Graph, fname: str, nodes: list[str],
                       params: list[str], outputs: list[str]) -> None:
    pvars = [relax.Var(f"p_{p}", relax.TensorType(g.nodes[p].shape, g.nodes[p].dtype))
             for p in params]
    with bb.function(fname, pvars):
        val: dict[str, Any] = dict(zip(params, pvars))
        with bb.dataflow():
            for name in nodes:
                n = g.nodes[name]
                if n.op == "copy":  # host-side copy of a host tensor (never: copies cross)
                    val[name] = val[n.inputs[0]]
                    continue
                val[name] = _emit_cpu_node(bb, g, n, val)
            outs = [bb.emit_output(val[o]) for o in outputs]
        bb.emit_func_output(relax.Tuple(outs) if len(outs) != 1 else outs[0])


# -- compile --------------------------------------------------------------------------------------

def prepare_graph(model: Any, cfg: Any, force_cpu: set[str] | None = None,
                  all_cpu: bool = False) -> Graph:
    """Import, partition, fuse, annotate, place, insert copies."""
    g = to_graph(import_onnx(model))
    passes.fuse_residuals(g)
    if all_cpu:
        for n in g.nodes.values():
            if n.is_candidate:
                n.reason = "reference: everything on the CPU"
    else:
        passes.check_legal(g, cfg, force_cpu)
    passes.place(g)
    passes.insert_copies(g)
    passes.check_boundaries(g)
    return g


def compile_graph(g: Graph, cfg: Any, profile: bool = True, log: Any = None,
                  double_buffer: bool = True) -> Package:
    from vtabench.compiler import compile_op
    from vtabench.runtime import Runtime

    t0 = time.perf_counter()
    wave = passes.waves(g)
    order = g.topo()
    for name in order:
        g.nodes[name].wave = wave[name]  # type: ignore[attr-defined]

    # units in execution order
    def phase(n: Node) -> int:
        if n.op == "copy":
            return 0 if n.device == CPU else 2
        return 1 if n.device == CPU else 3

    units = sorted(order, key=lambda x: (wave[x], phase(g.nodes[x]), order.index(x)))
    units = [u for u in units if g.nodes[u].op != "input"]

    # CPU functions, one per wave
    bb = relax.BlockBuilder()
    cpu_funcs = []
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
        outs = []
        for u in nodes:
            cons = g.consumers(u)
            if u in g.outputs or any(c not in inside for c in cons):
                outs.append(u)
        fname = f"cpu{w}"
        build_cpu_function(bb, g, fname, nodes, params, outs)
        cpu_funcs.append({"name": fname, "wave": w, "nodes": nodes, "params": params,
                          "outputs": outs})
    cpu_mod = bb.get()

    # VTA: memory plan + programs
    dev = RecordingDevice(cfg)
    vta_nodes = [u for u in units if g.nodes[u].device == VTA and g.nodes[u].op != "copy"]
    tensors: dict[str, dict[str, Any]] = {}
    for u in units:
        n = g.nodes[u]
        if n.device == VTA:
            nbytes = int(np.prod(n.shape))
            tensors[u] = {"addr": None, "nbytes": nbytes, "shape": list(n.shape)}
    rt = Runtime(dev, sync="batch", insn_capacity=1 << 16)
    for t in tensors.values():
        t["addr"] = rt.alloc(t["nbytes"]).addr
    ops: dict[str, Any] = {}
    layers: dict[str, dict[str, Any]] = {}
    from vtabench.runtime.stream import DeviceBuffer

    for u in vta_nodes:
        n = g.nodes[u]
        tc = time.perf_counter()
        op = compile_op(n.spec, cfg, double_buffer=double_buffer)
        ops[u] = op
        conv = n.op == "conv2d"
        w = pack_conv_weight(n.q.weight, cfg) if conv else pack_dense_weight(n.q.weight, cfg)
        b = pack_bias(n.q.bias, cfg, conv)
        wb, bbuf = rt.alloc(w.nbytes), rt.alloc(b.nbytes)
        rt.write(wb, w)
        rt.write(bbuf, b)
        bind = {"weight": wb, "out": DeviceBuffer(tensors[u]["addr"], tensors[u]["nbytes"])}
        for name in op.input_names:
            if name == "data":
                src = n.inputs[0]
                bind["data"] = DeviceBuffer(tensors[src]["addr"], tensors[src]["nbytes"])
            elif name.startswith("bias"):
                bind[name] = bbuf
            elif name.startswith("residual"):
                src = n.inputs[1]
                bind[name] = DeviceBuffer(tensors[src]["addr"], tensors[src]["nbytes"])
        n.bind = bind  # type: ignore[attr-defined]
        t = op.tiling
        layers[u] = {"op": n.op, "macs": int(n.spec.macs), "key": n.key,
                     "shape": _spec_str(n.spec), "tiling": str(t), "wave": wave[u],
                     "compile_s": round(time.perf_counter() - tc, 3)}
        if log:
            log(f"compiled {u}: {layers[u]['shape']} in {layers[u]['compile_s']} s")

    programs: list[Program] = []
    for w in range(nwaves):
        nodes = [u for u in vta_nodes if wave[u] == w]
        if not nodes:
            continue
        r0 = len(dev.runs)
        for u in nodes:
            ops[u].emit(rt, g.nodes[u].bind)
        rt.sync()
        for k in range(r0, len(dev.runs)):
            programs.append(Program(w, dev.runs[k], nodes))
    prof: list[Program] = []
    if profile and vta_nodes:
        rtl = Runtime(dev, sync="layer", insn_capacity=1 << 16)
        for u in vta_nodes:
            r0 = len(dev.runs)
            ops[u].emit(rtl, g.nodes[u].bind)
            rtl.sync()
            for k in range(r0, len(dev.runs)):
                prof.append(Program(wave[u], dev.runs[k], [u]))
    image = dev.static_ranges()
    mem = dev.high + sum(len(p.insns) for p in programs + prof) + (1 << 20)
    mem_bytes = 1 << max(24, (mem - 1).bit_length())
    manifest = {
        "nodes": [_node_info(g.nodes[u]) for u in g.topo()],
        "units": units,
        "cpu_functions": cpu_funcs,
        "tensors": tensors,
        "layers": layers,
        "inputs": [{"name": i, "shape": list(g.nodes[i].shape), "dtype": g.nodes[i].dtype}
                   for i in g.inputs],
        "outputs": [{"name": o, "shape": list(g.nodes[o].shape), "dtype": g.nodes[o].dtype}
                    for o in g.outputs],
        "plan_bytes": dev.high,
        "static_bytes": int(sum(d.size for _, d in image)),
        "stats": {"insns": sum(p.count for p in programs), "syncs_per_inference":
                  len(programs), "uop_uploads": rt.stats.uop_uploads},
    }
    pkg = Package(cfg.name, manifest, cpu_mod, image, programs, prof, mem_bytes,
                  compile_s=time.perf_counter() - t0)
    pkg.manifest["compile_s"] = round(pkg.compile_s, 2)
    return pkg


def _spec_str(s: Any) -> str:
    from vtabench.compiler import Conv2dSpec

    if isinstance(s, Conv2dSpec):
        return f"{s.h}x{s.w} {s.c}->{s.o} k{s.k} s{s.stride} p{s.pad}"
    return f"{s.k}->{s.m}"


def _node_info(n: Node) -> dict[str, Any]:
    d = {"name": n.name, "op": n.op if not (n.q and n.q.label) else f"{n.op} ({n.q.label})", "device": n.device, "inputs": n.inputs,
         "shape": list(n.shape), "dtype": n.dtype, "key": n.key}
    if n.reason:
        d["reason"] = n.reason
    if n.q is not None and n.q.kind in ("conv2d", "dense"):
        d["epilogue"] = [list(e) for e in n.q.epilogue()]
    return d


def compile_model(model: Any, cfg: Any, *, force_cpu: set[str] | None = None,
                  profile: bool = True, log: Any = None, double_buffer: bool = True) -> Package:
    """ONNX model (ModelProto or path) -> Package for configuration ``cfg``
    (``double_buffer``: the operator compiler's two virtual threads, default on)."""
    if isinstance(cfg, str):
        from vtabench.spec.config import load_config

        cfg = load_config(cfg)
    g = prepare_graph(model, cfg, force_cpu)
    return compile_graph(g, cfg, profile=profile, log=log, double_buffer=double_buffer)


def reference_package(model: Any, cfg: Any) -> Package:
    """The same int8 graph with every operator on the CPU (TVM llvm): the reference."""
    if isinstance(cfg, str):
        from vtabench.spec.config import load_config

        cfg = load_config(cfg)
    g = prepare_graph(model, cfg, all_cpu=True)
    return compile_graph(g, cfg, profile=False)
