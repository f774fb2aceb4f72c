"""Compile an ONNX model into a :class:`~vtabench.graph.package.Package`: import, partition,
the graph passes (:func:`graph_pipeline`), then CPU functions (Relax, llvm) and VTA device
programs (instructions + micro-ops + packed weights + a memory plan).

VTA programs are produced by emitting every operator of a wave through one
:class:`vtabench.runtime.Runtime` (``sync="batch"``) over a
:class:`~vtabench.graph.record.RecordingDevice`: the runtime's allocations give the memory plan,
its writes of weights, biases and micro-op kernels give the static image (uploaded once per
model), and each ``sync`` gives one program (instruction bytes). A second runtime, synced after
every layer, records one program per layer for profiling (per-layer cycles on the RTL).
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from vtabench.compiler import CompiledOp, Conv2dSpec, compile_op
from vtabench.compiler.ops import POOL_ONES, pool_ones
from vtabench.graph import passes
from vtabench.graph import relax_exprs as rx
from vtabench.graph.cpu_functions import build_cpu_module
from vtabench.graph.im2col import IM2COL, fold_kernel_taps, im2col_args
from vtabench.graph.ir import CPU, VTA, Graph, Node
from vtabench.graph.ir_text import spec_text
from vtabench.graph.onnx_import import import_onnx
from vtabench.graph.onnx_prep import ModelError
from vtabench.graph.pack import (
    expand_groups,
    pack_act,
    pack_bias,
    pack_blockwise_weight,
    pack_conv_weight,
    pack_dense_weight,
    pack_grouped_blockwise_weight,
    phys_shape,
)
from vtabench.graph.package import Package, WaveProgram, wave_program
from vtabench.graph.pipeline import Pipeline, in_place
from vtabench.graph.record import RecordingDevice
from vtabench.graph.relax_to_graph import to_graph
from vtabench.graph.shuffle import fold_channel_shuffles
from vtabench.runtime import DeviceBuffer, Runtime
from vtabench.spec.config import Config, load_config

#: Instructions one device program may hold (the runtime's instruction buffer: 16 bytes each,
#: 4 MiB). A wave longer than this is split into two programs, a host sync with no CPU
#: operator between them; INSN_COUNT is 32 bits wide, so only device memory bounds it. At 2^16
#: DenseNet-121 (about 138 k instructions after its stem) and the recognizer with asymmetric
#: activations (72,499 in its backbone) paid such syncs.
PROGRAM_INSNS = 1 << 18


def graph_pipeline(cfg: Config, force_cpu: set[str] | None = None,
                   all_cpu: bool = False) -> Pipeline:
    """The graph passes in order: fold activations, fuse residual Adds, fold activations again,
    fold channel shuffles into convolution weights, lower to integer forms, insert the uint8 conversions, annotate what VTA can run
    (``all_cpu``: nothing, for the reference), place, insert copies, fold the kernel taps of
    small-channel convolutions fed by the host into their channels (im2col), check the device
    boundaries."""
    def legal(g: Graph) -> None:
        passes.check_legal(g, cfg, force_cpu)

    def taps(g: Graph) -> None:
        fold_kernel_taps(g, cfg)

    def reference(g: Graph) -> None:
        for n in g.nodes.values():
            if n.is_candidate:
                n.reason = "reference: everything on the CPU"

    return Pipeline((
        in_place("fold_activations", passes.fold_activations),
        in_place("fuse_residuals", passes.fuse_residuals),
        in_place("fold_activations", passes.fold_activations),
        in_place("fold_channel_shuffles", fold_channel_shuffles),
        in_place("lower_integer", passes.lower_integer),
        in_place("insert_conversions", passes.insert_conversions),
        in_place("all_on_cpu", reference) if all_cpu else in_place("check_legal", legal),
        in_place("place", passes.place),
        in_place("insert_copies", passes.insert_copies),
        in_place("fold_kernel_taps", taps),
        in_place("check_boundaries", passes.check_boundaries),
    ))


def prepare_graph(model: Any, cfg: Any, force_cpu: set[str] | None = None,
                  all_cpu: bool = False, shapes: dict[str, list[int]] | None = None,
                  dump_dir: Path | None = None) -> Graph:
    """Import and partition the model, then run :func:`graph_pipeline` on its graph
    (``dump_dir``: the graph's text form before the passes and after each, numbered)."""
    g = to_graph(import_onnx(model, shapes))
    return graph_pipeline(cfg, force_cpu, all_cpu).run(g, dump_dir=dump_dir)


def execution_order(g: Graph, wave: dict[str, int]) -> list[str]:
    """Every node but the inputs in execution order: by wave, then copies to the CPU, CPU
    nodes, copies to VTA, VTA nodes, then topological order."""
    order = g.topo()

    def phase(n: Node) -> int:
        if n.op == "copy":
            return 0 if n.device == CPU else 2
        return 1 if n.device == CPU else 3

    units = sorted(order, key=lambda x: (wave[x], phase(g.nodes[x]), order.index(x)))
    return [u for u in units if g.nodes[u].op != "input"]


def compile_graph(g: Graph, cfg: Config, profile: bool = True,
                  log: Callable[[str], None] | None = None,
                  double_buffer: bool = True, check_cpu: bool = True) -> Package:
    """A prepared graph (:func:`prepare_graph`) -> Package (``check_cpu``: build the CPU
    functions once for llvm, so that a package that would not load is a
    :class:`~vtabench.graph.onnx_prep.ModelError` now)."""
    t0 = time.perf_counter()
    wave = passes.waves(g)
    units = execution_order(g, wave)
    cpu_mod, cpu_funcs = build_cpu_module(g, units, wave)
    if check_cpu and cpu_funcs:
        _check_cpu_build(cpu_mod)

    # VTA: memory plan + programs
    dev = RecordingDevice(cfg)
    vta_nodes = [u for u in units if g.nodes[u].device == VTA and g.nodes[u].spec is not None]
    tensors: dict[str, dict[str, Any]] = {
        u: {"addr": None, "nbytes": int(np.prod(phys_shape(g.nodes[u].shape, cfg))),
            "shape": list(g.nodes[u].shape)}
        for u in units if g.nodes[u].device == VTA}
    rt = Runtime(dev, sync="batch", insn_capacity=PROGRAM_INSNS)
    for u in g.topo():  # a layout-neutral reshape on VTA is its input's bytes
        if u in tensors:
            n = g.nodes[u]
            alias = n.op in passes.NEUTRAL_OPS and n.op != "copy"
            tensors[u]["addr"] = (tensors[n.inputs[0]]["addr"] if alias
                                  else rt.alloc(tensors[u]["nbytes"]).addr)
    ops: dict[str, CompiledOp] = {}
    # node -> the operator's buffers, one set per group of a conv split by groups
    binds: dict[str, list[dict[str, DeviceBuffer]]] = {}
    layers: dict[str, dict[str, Any]] = {}
    # nodes of one operator spec (up to the name) share its compiled operator: DenseNet-121's
    # batch-norm, scale and shift convs repeat a few shapes hundreds of times
    compiled: dict[Any, CompiledOp] = {}
    for u in vta_nodes:
        n = g.nodes[u]
        tc = time.perf_counter()
        same = dataclasses.replace(n.spec, name="")
        if same not in compiled:
            compiled[same] = compile_op(n.spec, cfg, double_buffer=double_buffer)
        ops[u] = compiled[same]
        split = n.attrs.get(passes.GROUP_SPLIT, 1)
        binds[u] = [_bind_operands(rt, n, ops[u], tensors, cfg, (gi, split))
                    for gi in range(split)]
        layers[u] = {"op": n.op, "macs": int(n.spec.macs) * split, "model_macs": model_macs(n),
                     "key": n.key,
                     "shape": spec_text(n.spec) + (f" x {split} groups" if split > 1 else ""),
                     "tiling": str(ops[u].tiling), "wave": wave[u],
                     "compile_s": round(time.perf_counter() - tc, 3)}
        if log:
            log(f"compiled {u}: {layers[u]['shape']} in {layers[u]['compile_s']} s")

    programs: list[WaveProgram] = []
    for w in sorted({wave[u] for u in vta_nodes}):
        nodes = [u for u in vta_nodes if wave[u] == w]
        r0 = len(dev.runs)
        for u in nodes:
            for b in binds[u]:
                ops[u].emit(rt, b)
        rt.sync()
        programs += [wave_program(w, insns, nodes) for insns in dev.runs[r0:]]
    prof: list[WaveProgram] = []
    if profile and vta_nodes:
        # one program per layer: queued in batch mode and synced after each layer (a conv
        # split by groups emits once per group, one program for all of them)
        rt_layer = Runtime(dev, sync="batch", insn_capacity=PROGRAM_INSNS)
        for u in vta_nodes:
            r0 = len(dev.runs)
            for b in binds[u]:
                ops[u].emit(rt_layer, b)
            rt_layer.sync()
            prof += [wave_program(wave[u], insns, [u]) for insns in dev.runs[r0:]]
    image = dev.static_ranges()
    mem = dev.high + sum(16 * p.program.count for p in programs + prof) + (1 << 20)
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
        "stats": {"insns": sum(p.program.count for p in programs), "syncs_per_inference":
                  len(programs), "uop_uploads": rt.stats.uop_uploads,
                  # conv / Gemm multiply-accumulates of the model, and those VTA runs (not
                  # the convs that stand for an average pool or a Concat: labelled)
                  "macs_conv_gemm": sum(model_macs(g.nodes[u]) for u in units
                                        if _model_conv(g.nodes[u])),
                  "macs_conv_gemm_vta": sum(model_macs(g.nodes[u]) for u in vta_nodes
                                            if _model_conv(g.nodes[u]))},
    }
    pkg = Package(cfg.name, manifest, cpu_mod, image, programs, prof, mem_bytes,
                  compile_s=time.perf_counter() - t0)
    pkg.manifest["compile_s"] = round(pkg.compile_s, 2)
    return pkg


def _check_cpu_build(mod: Any) -> None:
    import gc
    import warnings

    import tvm

    from vtabench.graph.tvm_errors import one_line, quiet_stderr

    # TVM's warnings (Python and C++) of this trial build stay quiet: the package is built
    # again when it is loaded, and a failure here is one line
    with quiet_stderr(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tvm.compile(mod, target="llvm")
            return
        except Exception as exc:  # noqa: BLE001 - any failure of TVM's build of the CPU part
            message = f"the CPU part does not build with TVM's llvm target: {one_line(exc)}"
        gc.collect()
    raise ModelError(message)


def _bind_operands(rt: Runtime, n: Node, op: CompiledOp, tensors: dict[str, dict[str, Any]],
                   cfg: Config, group: tuple[int, int] = (0, 1)) -> dict[str, DeviceBuffer]:
    """Write node ``n``'s packed weight and epilogue tensors through ``rt`` (into the static
    image) and name the device buffer of every operand of its compiled operator. ``group``:
    (index, count) of a conv split by groups (:data:`~vtabench.graph.passes.GROUP_SPLIT`): its slice of the weight,
    the per-channel operands and the channel blocks of its input, output and residual (whole
    blocks, so each slice is a contiguous range of the packed tensor)."""
    conv = isinstance(n.spec, Conv2dSpec)
    gi, split = group

    def tensor(name: str) -> DeviceBuffer:
        part = tensors[name]["nbytes"] // split
        return DeviceBuffer(tensors[name]["addr"] + gi * part, part)

    def rows(a: np.ndarray) -> np.ndarray:
        """The output channels of this group (axis 0)."""
        part = a.shape[0] // split
        return a[gi * part:(gi + 1) * part]

    def static(a: np.ndarray) -> DeviceBuffer:
        buf = rt.alloc(a.nbytes)
        rt.write(buf, a)
        return buf

    bind = {"out": tensor(n.name), "data": tensor(n.inputs[0])}
    for name in op.input_names:
        if name == "weight":
            bind[name] = static(pack_conv_weight(rows(n.q.weight), cfg) if split > 1
                                else _packed_weight(n, cfg))
        elif name.startswith("mul"):  # the second operand of a product, an activation
            bind[name] = tensor(n.inputs[1])
        elif name.startswith("residual"):  # the last input (a product's: its x again)
            bind[name] = tensor(n.inputs[-1])
        elif name == POOL_ONES:  # a signed padded max pool's interior marker
            bind[name] = static(pool_ones(op.input_shapes()[name]))
        elif name != "data":
            t = rows(n.iform.operands[int(re.search(r"\d+$", name).group())])
            bind[name] = static(pack_act(t[None], cfg) if t.ndim == 3 else
                                pack_bias(t, cfg, conv))
    return bind


def _packed_weight(n: Node, cfg: Config) -> np.ndarray:
    grouped = n.op == "conv2d" and n.q.groups > 1
    if isinstance(n.spec, Conv2dSpec) and n.spec.blockwise:
        if grouped and n.q.weight.shape[1] > 1:  # groups inside the blocks
            return pack_grouped_blockwise_weight(n.q.weight, n.q.groups, cfg)
        # a depthwise conv's kernels; a global average pool's are ones over the whole map,
        # a LeakyReLU's a single one (the identity)
        w = n.q.weight if n.op == "conv2d" else np.ones((n.q.bias.size, 1, n.spec.k,
                                                         n.spec.k_w), np.int8)
        return pack_blockwise_weight(w, cfg)
    if grouped:  # the dense conv of the block-diagonal weight
        return pack_conv_weight(expand_groups(n.q.weight, n.q.groups), cfg)
    if n.op == "conv2d":
        return pack_conv_weight(n.q.weight, cfg)
    return pack_dense_weight(n.q.weight, cfg)


def _model_conv(n: Node) -> bool:
    """A conv or Gemm of the model (not a conv standing for an average pool or a Concat)."""
    return n.op in ("conv2d", "dense") and not (n.q is not None and n.q.label in (
        "average pool", "concat"))


def model_macs(n: Node) -> int:
    """Multiply-accumulates of a conv / dense / average pool as the model states it (the
    channels before padding; a depthwise conv one input channel per output; a pool one add per
    tap; a Concat's placement conv one per value it moves)."""
    if n.op == "conv2d" and n.q is not None and n.q.label == "concat":
        return int(n.q.weight.shape[1] * np.prod(n.shape[2:]))
    if n.op == "conv2d" and n.q is not None and n.q.transposed:  # one tap per output pixel
        o, ci = n.q.weight.shape[:2]
        return int(o * ci * np.prod(n.shape[2:]))
    if n.op == "conv2d" and n.q is not None and n.q.weight is not None:
        o, ci, kh, kw = n.q.weight.shape
        return int(o * ci * kh * kw * np.prod(n.shape[2:])) // n.q.expanded_groups
    if n.op == "dense" and n.q is not None and n.q.weight is not None:
        return int(np.prod(n.q.weight.shape))
    if n.op in ("conv2d", "dense") and n.relax_func is not None:  # no integer form: the CPU
        return _composite_macs(n)
    if n.op == "avgpool" and n.relax_func is not None:
        return int(n.shape[1] * np.prod(n.attrs.get("hw", (1, 1))))
    return 0


def _composite_macs(n: Node) -> int:
    """Multiply-accumulates of a conv / dense composite read from its Relax call (one without
    an integer form, e.g. a weight zero point outside int8, still counts in the model's total):
    per output value, the weight's values per output channel (a conv: C / groups x kh x kw),
    or the reduced length (a dense)."""
    op = "relax.nn.conv2d" if n.op == "conv2d" else "relax.matmul"
    calls = rx.find_calls(rx.bindings(n.relax_func), op)
    if not calls:
        return 0
    w = rx.shape(calls[0].args[1])
    per_output = int(np.prod(w[1:])) if n.op == "conv2d" else int(rx.shape(calls[0].args[0])[-1])
    return per_output * int(np.prod(rx.shape(calls[0])))


def _node_info(n: Node) -> dict[str, Any]:
    d = {"name": n.name, "op": n.op if not (n.q and n.q.label) else f"{n.op} ({n.q.label})",
         "device": n.device, "inputs": n.inputs, "shape": list(n.shape), "dtype": n.dtype,
         "key": n.key}
    if n.onnx:
        d["onnx"] = n.onnx
    if n.onnx_perm is not None:
        d["onnx_channels"] = [int(c) for c in n.onnx_perm]
    if n.integer and n.q.out is not None and n.q.out.offset:
        d["offset"] = n.q.out.offset  # stored int8 = q - offset (a uint8 tensor)
    if n.reason:
        d["reason"] = n.reason
    if im2col_args(n.attrs):
        d[IM2COL] = im2col_args(n.attrs)
    if n.iform is not None:
        d["epilogue"] = [list(e) for e in n.iform.epilogue]
    return d


def compile_model(model: Any, cfg: Config | str, *, force_cpu: set[str] | None = None,
                  profile: bool = True, log: Callable[[str], None] | None = None,
                  double_buffer: bool = True,
                  shapes: dict[str, list[int]] | None = None,
                  dump_dir: Path | None = None) -> Package:
    """ONNX model (ModelProto, bytes or path) -> Package for configuration ``cfg``
    (``double_buffer``: the operator compiler's two virtual threads, default on; ``shapes``:
    static shapes for inputs with dynamic dimensions; ``dump_dir``: write the graph's text form
    after every pass there, :func:`prepare_graph`). A model it cannot take raises
    :class:`~vtabench.graph.onnx_prep.ModelError` (one line)."""
    cfg = load_config(cfg) if isinstance(cfg, str) else cfg
    g = prepare_graph(model, cfg, force_cpu, shapes=shapes, dump_dir=dump_dir)
    return compile_graph(g, cfg, profile=profile, log=log, double_buffer=double_buffer)


def reference_package(model: Any, cfg: Config | str,
                      shapes: dict[str, list[int]] | None = None) -> Package:
    """The same integer graph with every operator on the CPU (TVM llvm): the reference."""
    cfg = load_config(cfg) if isinstance(cfg, str) else cfg
    g = prepare_graph(model, cfg, all_cpu=True, shapes=shapes)
    return compile_graph(g, cfg, profile=False, check_cpu=False)
