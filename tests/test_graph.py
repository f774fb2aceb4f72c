"""Graph compiler (vtabench.graph): int8 QDQ ONNX networks split between the CPU and VTA.

* The small residual network (vtabench.workloads.small_resnet) gives bit-identical outputs on
  fsim, opencl (PoCL) and rtl (one platform simulation, module-scoped), equal to the TVM-on-CPU
  reference of the same int8 graph (every operator on llvm).
* Against onnxruntime on the same QDQ model: within one quantization step. VTA requantizes with
  round-half-up ((x + 2^(s-1)) >> s) while ONNX QuantizeLinear rounds half to even, so the two
  differ by one step exactly where a value lies on a tie; everywhere else they are equal.
* Placement: ResNet-50's first residual block with the Add's arguments and the branches' order
  permuted gives the same devices, the same fusion and the same copies; a copy sits at every
  CPU/VTA boundary; the propagation rule is order independent on a hand-made graph.
* One sync per inference and weights uploaded once, counted through the driver.
* An operator VTA cannot run (Sigmoid) falls back to the CPU, with copies around it; so does a
  conv without an integer form (a weight zero point outside int8: its own QDQ chain, float, on
  llvm). A weight scale that is not a power of two runs on VTA (an integer multiplier).
* Package round trip and relocation, the CLI (compile + run), and the package as one Relax
  function on TVM's VM with the VTA wave as call_dps_packed.

Targets are the driver backends present (vtabench.runtime.available_targets);
``VTABENCH_GRAPH_TARGETS=fsim,opencl`` narrows the list (an unknown name is an error).
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

from vtabench.spec.config import load_config
from vtabench.graph import (
    compile_model,
    passes,
    prepare_graph,
    reference_package,
    run_package,
)
from vtabench.graph.ir import CPU, VTA, Graph, Node
from vtabench.workloads import resnet50_block, small_resnet

from targets_env import targets_from_env

pytestmark = pytest.mark.tvm

TARGETS = targets_from_env("VTABENCH_GRAPH_TARGETS")


@pytest.fixture(scope="module")
def cfg():
    return load_config("default")


@pytest.fixture(scope="module")
def small(cfg):
    model = small_resnet(logits=True)
    x = np.random.default_rng(1).normal(0, 1, (1, 3, 16, 16)).astype(np.float32)
    pkg = compile_model(model, cfg)
    ref = run_package(reference_package(model, cfg), "fsim", [x])[0].outputs
    return model, x, pkg, ref


@pytest.fixture(scope="module")
def small_runs(small):
    """Per target: 2 inferences + the per-layer profiling run (rtl: one simulation)."""
    _, x, pkg, _ = small
    cache: dict[str, list] = {}

    def get(target: str) -> list:
        if target not in cache:
            cache[target] = run_package(pkg, target, [x], runs=2, profile=True)
        return cache[target]
    return get


def test_small_partition(small):
    _, _, pkg, _ = small
    nodes = {n["name"]: n for n in pkg.manifest["nodes"]}
    vta = [n for n in nodes.values() if n["device"] == VTA and n["op"] != "copy"]
    # the stem (3 input channels x 9 taps folded into 27 channels, two blocks: im2col by the
    # host's copy), 2 convs of block 1 (one with the residual), 3 of block 2, GAP, dense: every
    # operator with MACs
    assert len(vta) == 8
    assert not [n for n in nodes.values() if n["op"] in ("conv2d", "dense", "avgpool")
                and n["device"] == CPU]
    assert pkg.manifest["layers"]["conv1"]["shape"] == "16x16 32->16 k1 s1 p0"
    assert sum(1 for n in vta if n.get("epilogue") and ["residual"] in n["epilogue"]) == 2
    assert len(pkg.programs) == 1


@pytest.mark.parametrize("target", TARGETS)
def test_small_bit_identical(small, small_runs, target):
    ref = small[3]
    res = small_runs(target)
    for r in res:
        for a, b in zip(r.outputs, ref, strict=True):
            assert np.array_equal(a, b), target
    prof = [r for r in res if r.layers]
    assert len(prof) == 1 and len(prof[0].layers) == 8
    if target == "rtl":
        assert all(row["cycles"] > 0 for row in prof[0].layers)
        assert res[0].per_inference["cycles"] > 0


@pytest.mark.parametrize("target", TARGETS)
def test_one_sync_weights_once(small, small_runs, target):
    _, _, pkg, _ = small
    res = small_runs(target)
    static = sum(d.size for _, d in pkg.image)
    programs = sum(16 * p.program.count for p in pkg.programs + pkg.profile)
    load = res[0].load
    assert load["syncs"] == 0
    assert load["bytes_written"] == static + programs  # weights, biases, uops, programs: once
    assert static > 0
    for r in res[:2]:
        p = r.per_inference
        assert p["syncs"] == 1
        assert p["copies"] == 2  # the plan's copies (in, out); the driver counts follow
        # only the packed input activation crosses per inference, in im2col form for the
        # folded stem (3 ch x 9 taps = 27, padded to 32 x 16 x 16 int8)
        assert p["bytes_written"] == 32 * 16 * 16 and p["writes"] == 1
        assert p["bytes_read"] == 16 and p["reads"] == 1  # the 16 int8 logits
        if target == "rtl":  # the platform model's DMA counters agree
            assert p["pcie_h2d_bytes"] == 32 * 16 * 16 and p["pcie_d2h_bytes"] == 16


def test_vs_onnxruntime(small, cfg):
    """The VTA package (on fsim) equals the TVM-on-CPU reference exactly and onnxruntime to
    within one quantization step (ties round half-up here, half-to-even in ONNX)."""
    import onnxruntime as ort
    model, x, pkg, _ = small
    session = ort.InferenceSession(model.SerializeToString())
    ref_pkg = reference_package(model, cfg)
    step = 2.0 ** -3  # the logits' scale
    for xi in [x] + [np.random.default_rng(100 + seed).normal(0, 1, x.shape).astype(np.float32)
                     for seed in range(3)]:
        ours = run_package(pkg, "fsim", [xi])[0].outputs
        ref = run_package(ref_pkg, "fsim", [xi])[0].outputs
        theirs = session.run(None, {"input": xi})
        for a, b in zip(ours, ref, strict=True):
            assert np.array_equal(a, b)
        assert (np.abs(ours[1] - theirs[1]) / step).max() <= 1.0 + 1e-6
        assert np.allclose(ours[0], theirs[0], atol=0.05)


def _placement(g: Graph) -> tuple[dict[str, str], set[tuple[str, str]], int]:
    def origin(name: str) -> str:
        while g.nodes[name].op == "copy":
            name = g.nodes[name].inputs[0]
        return g.nodes[name].key

    dev = {n.key: n.device for n in g.nodes.values() if n.q is not None}
    fused = {(n.key, origin(n.inputs[1])) for n in g.nodes.values()
             if n.q is not None and n.q.residual}
    copies = sum(1 for n in g.nodes.values() if n.op == "copy")
    return dev, fused, copies


def _copy_at_every_boundary(g: Graph) -> None:
    """Every edge between devices goes through a copy, and the graph's outputs are on the CPU."""
    assert all(g.nodes[o].device == CPU for o in g.outputs)
    for n in g.nodes.values():
        for i in n.inputs:
            p = g.nodes[i]
            if n.op == "copy":
                assert p.device != n.device
            else:
                assert p.device == n.device, (i, n.name)


@pytest.mark.parametrize("force_proj_cpu", [False, True])
def test_placement_resnet50_block_permuted(cfg, force_proj_cpu):
    results = []
    proj_key = None
    for residual_first, reverse in itertools.product([False, True], [False, True]):
        model = resnet50_block(residual_first=residual_first, reverse_nodes=reverse, size=56)
        if proj_key is None:  # the 1x1 64->256 conv reading the block input
            proj_key = next(n.q.key for n in prepare_graph(model, cfg).nodes.values()
                            if n.op == "conv2d" and n.q.weight.shape == (256, 64, 1, 1)
                            and not n.q.residual)
        g = prepare_graph(model, cfg, force_cpu={proj_key} if force_proj_cpu else None)
        _copy_at_every_boundary(g)
        results.append(_placement(g))
    assert all(r == results[0] for r in results), results
    dev, fused, copies = results[0]
    assert len(fused) == 1  # the Add went into one conv, the same one in every variant
    if not force_proj_cpu:
        assert all(d == VTA for d in dev.values())
        assert copies == 2  # input in, output out
    else:
        assert dev[proj_key] == CPU
        assert sum(d == VTA for d in dev.values()) == 3
        assert copies == 3  # input in, projection result in, output out


def test_resnet50_block_permuted_outputs(cfg):
    x = np.random.default_rng(3).normal(0, 1, (1, 64, 16, 16)).astype(np.float32)
    outs = []
    for residual_first in (False, True):
        model = resnet50_block(residual_first=residual_first, size=16)
        pkg = compile_model(model, cfg, profile=False)
        assert len(pkg.programs) == 1
        r = run_package(pkg, "fsim", [x])[0]
        ref = run_package(reference_package(model, cfg), "fsim", [x])[0]
        assert np.array_equal(r.outputs[0], ref.outputs[0])
        outs.append(r.outputs[0])
    assert np.array_equal(outs[0], outs[1])


class _Spec:  # stands for a legal VTA operator
    pass


def test_propagation_order_independent():
    """A layout-neutral node between devices follows all of its neighbours, for every
    permutation of its producers' order (not the first argument's device)."""
    def graph(order: list[str], consumer_dev: str) -> Graph:
        g = Graph()
        g.add(Node("x", "input", [], (1, 16, 4, 4), "int8"))
        g.inputs.append("x")
        g.add(Node("a", "conv2d", ["x"], (1, 16, 4, 4), "int8")).spec = _Spec()  # VTA
        g.add(Node("b", "relax.nn.relu", ["x"], (1, 16, 4, 4), "int8"))  # CPU
        g.add(Node("r", "relax.reshape", list(order), (1, 256), "int8"))
        if consumer_dev == VTA:
            g.add(Node("c", "dense", ["r"], (1, 16), "int8")).spec = _Spec()
        else:
            g.add(Node("c", "relax.nn.relu", ["r"], (1, 256), "int8"))
        g.outputs = ["c"]
        return g

    for consumer in (VTA, CPU):
        for order in itertools.permutations(["a", "b"]):
            g = graph(list(order), consumer)
            passes.place(g)
            dev = {k: n.device for k, n in g.nodes.items()}
            assert (dev["a"], dev["b"], dev["c"]) == (VTA, CPU, consumer), (order, dev)
            assert dev["r"] == CPU, (order, consumer)  # a CPU neighbour on any side: CPU
    # all neighbours on VTA -> VTA, whichever order, if the reshape keeps VTA's layout
    # ((1, C, 1, 1) <-> (1, C) are the same bytes; flattening a 4x4 map is not)
    for hw, where in ((1, VTA), (4, CPU)):
        g = Graph()
        g.add(Node("x", "input", [], (1, 16, hw, hw), "int8"))
        cv = Node("cv", "conv2d", ["x"], (1, 16, hw, hw), "int8")
        g.add(cv)
        g.add(Node("r", "relax.reshape", ["cv"], (1, 16 * hw * hw), "int8"))
        dn = Node("dn", "dense", ["r"], (1, 16), "int8")
        g.add(dn)
        g.outputs = ["dn"]
        cv.spec = dn.spec = _Spec()
        passes.place(g)
        assert g.nodes["r"].device == where, hw
        passes.insert_copies(g)
        _copy_at_every_boundary(g)
        assert sum(1 for n in g.nodes.values() if n.op == "copy") == (2 if hw == 1 else 4)


def test_fallback_unsupported_operator(cfg):
    model = small_resnet(unsupported="Sigmoid", logits=True)
    pkg = compile_model(model, cfg, profile=False)
    nodes = pkg.manifest["nodes"]
    sig = [n for n in nodes if n["op"] == "relax.sigmoid"]
    assert len(sig) == 1 and sig[0]["device"] == CPU and "no VTA pattern" in sig[0]["reason"]
    copies = [n for n in nodes if n["op"] == "copy"]
    assert len(copies) == 4  # in, around the Sigmoid (out and back), out
    assert len(pkg.programs) == 2  # the Sigmoid splits the device work in two syncs
    x = np.random.default_rng(5).normal(0, 1, (1, 3, 16, 16)).astype(np.float32)
    r = run_package(pkg, "fsim", [x])[0]
    ref = run_package(reference_package(model, cfg), "fsim", [x])[0]
    for a, b in zip(r.outputs, ref.outputs, strict=True):
        assert np.array_equal(a, b)
    assert r.per_inference["syncs"] == 2


def test_package_roundtrip_and_relocation(small, cfg):
    from vtabench.graph import Package
    from vtabench.graph.execute import Executor
    from vtabench.drivers import open_device

    _, x, pkg, ref = small
    pkg2 = Package.from_bytes(pkg.to_bytes())
    with open_device("fsim", cfg, pkg.mem_bytes * 2) as dev:
        dev.alloc(1 << 20)  # the plan lands at a nonzero base: programs are relocated
        ex = Executor(pkg2, dev)
        assert ex.base >= 1 << 20
        out = ex.run([x]).outputs
    for a, b in zip(out, ref, strict=True):
        assert np.array_equal(a, b)


def test_cli_compile_run(tmp_path, small):
    import onnx

    from vtabench.cli import main

    model, x, _, ref = small
    onnx.save(model, tmp_path / "m.onnx")
    np.save(tmp_path / "x.npy", x)
    assert main(["compile", str(tmp_path / "m.onnx"), "--config", "default", "-o",
                 str(tmp_path / "m.vtapkg")]) == 0
    assert main(["run", str(tmp_path / "m.vtapkg"), "--input", str(tmp_path / "x.npy"),
                 "--output", str(tmp_path / "y.npy"), "--target", "fsim", "--no-progress"]) == 0
    assert np.array_equal(np.load(tmp_path / "y.npy"), ref[0])
    assert main(["run", str(tmp_path / "m.onnx"), "--input", str(tmp_path / "x.npy"),
                 "--output", str(tmp_path / "y2.npy"), "--target", "fsim",
                 "--no-progress"]) == 0
    assert np.array_equal(np.load(tmp_path / "y2.npy"), ref[0])


def _odd_weight_scale(model, conv_index: int, factor: float):
    """``model`` with the weight scale of its conv ``conv_index`` multiplied by ``factor``."""
    import onnx
    from onnx import numpy_helper

    g = model.graph
    inits = {i.name: i for i in g.initializer}
    conv = [n for n in g.node if n.op_type == "Conv"][conv_index]
    dqw = next(n for n in g.node if n.output[0] == conv.input[1])
    s = float(numpy_helper.to_array(inits[dqw.input[1]])) * factor
    g.initializer.append(numpy_helper.from_array(np.array(s, np.float32), "odd_scale"))
    dqw.input[1] = "odd_scale"
    onnx.checker.check_model(model)
    return model


def test_non_power_of_two_scale_on_vta(cfg):
    """A conv whose weight scale is not a power of two requantizes with an integer multiplier
    (ALU MUL) on VTA: bit-identical to the integer reference, within one step of
    onnxruntime."""
    model = _odd_weight_scale(small_resnet(logits=True), 2, 1.5)  # block 1's second conv
    pkg = compile_model(model, cfg, profile=False)
    odd = [n for n in pkg.manifest["nodes"] if n["op"] == "conv2d"
           and any(e[0] in ("mul_imm", "chan_mul") for e in n["epilogue"])]
    assert len(odd) == 1 and odd[0]["device"] == VTA
    assert all(n["device"] == VTA for n in pkg.manifest["nodes"] if n["op"] == "conv2d")
    x = np.random.default_rng(7).normal(0, 1, (1, 3, 16, 16)).astype(np.float32)
    r = run_package(pkg, "fsim", [x])[0]
    ref = run_package(reference_package(model, cfg), "fsim", [x])[0]
    for a, b in zip(r.outputs, ref.outputs, strict=True):
        assert np.array_equal(a, b)
    import onnxruntime as ort
    o = ort.InferenceSession(model.SerializeToString()).run(None, {"input": x})
    assert (np.abs(r.outputs[1] - o[1]) / 2.0 ** -3).max() <= 1.0 + 1e-6


def test_fallback_no_integer_form(cfg):
    """A weight zero point that leaves the int8 range has no integer form: that conv runs its
    own QDQ chain on the CPU (float, llvm), with the reason; the rest stays on VTA."""
    import onnx
    from onnx import numpy_helper

    model = small_resnet(logits=True)
    g = model.graph
    conv = [n for n in g.node if n.op_type == "Conv"][2]
    dqw = next(n for n in g.node if n.output[0] == conv.input[1])
    g.initializer.append(numpy_helper.from_array(np.array(100, np.int8), "odd_zero"))
    dqw.input[2] = "odd_zero"
    onnx.checker.check_model(model)
    pkg = compile_model(model, cfg, profile=False)
    cpu = [n for n in pkg.manifest["nodes"] if n["op"] == "conv2d" and n["device"] == CPU]
    assert len(cpu) == 1 and "zero point" in cpu[0]["reason"]
    x = np.random.default_rng(7).normal(0, 1, (1, 3, 16, 16)).astype(np.float32)
    r = run_package(pkg, "fsim", [x])[0]
    ref = run_package(reference_package(model, cfg), "fsim", [x])[0]
    for a, b in zip(r.outputs, ref.outputs, strict=True):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("target", TARGETS)
def test_relax_vm_call_dps_packed(small, cfg, target):
    """The package as one Relax function: CPU waves as Relax functions, each VTA wave a
    call_dps_packed to a registered global function; same outputs and device traffic on every
    target."""
    from vtabench.graph.relax_vm import RelaxVMRunner
    from vtabench.drivers import open_device

    _, x, pkg, ref = small
    with open_device(target, cfg, pkg.mem_bytes) as dev:
        vm = RelaxVMRunner(pkg, dev)
        assert "call_dps_packed" in vm.mod["main"].script()
        c0 = vm.ex.dev.counts.snapshot()
        out = vm(x)
        d = vm.ex.dev.counts.minus(c0)
    for a, b in zip(out, ref, strict=True):
        assert np.array_equal(a, b)
    assert d["syncs"] == 1 and d["bytes_written"] == 8192 and d["bytes_read"] == 16


# -- the pass pipeline -----------------------------------------------------------------------

PIPELINE = ["fold_activations", "fuse_residuals", "fold_activations", "fold_channel_shuffles",
            "lower_integer",
            "insert_conversions", "check_legal", "place", "insert_copies", "fold_kernel_taps",
            "check_boundaries"]


def test_pipeline_pass_names(cfg):
    from vtabench.graph.compile import graph_pipeline

    assert graph_pipeline(cfg).names == PIPELINE
    # the reference annotates nothing for VTA in check_legal's place
    assert graph_pipeline(cfg, all_cpu=True).names == [
        "all_on_cpu" if p == "check_legal" else p for p in PIPELINE]


def _chain() -> Graph:
    """input -> relu -> dense (VTA candidate), a valid graph before placement."""
    g = Graph()
    g.add(Node("x", "input", [], (1, 16), "int8"))
    g.inputs.append("x")
    g.add(Node("r", "relax.nn.relu", ["x"], (1, 16), "int8"))
    g.add(Node("d", "relax.matmul", ["r"], (1, 16), "int8"))
    g.outputs = ["d"]
    return g


@pytest.mark.parametrize("break_it, message", [
    (lambda g: g.nodes["d"].inputs.append("ghost"), "node d: input 'ghost' is not defined"),
    (lambda g: g.order.reverse(), "node d: input 'r' is defined after its use"),
    (lambda g: setattr(g.nodes["r"], "dtype", ""), "node r: tensor of shape (1, 16) without"),
    (lambda g: g.outputs.append("nowhere"), "graph output 'nowhere' is not defined"),
    (lambda g: g.order.remove("r"), "order and nodes differ: only in order [], only in nodes"),
    (lambda g: [setattr(n, "device", CPU) for n in g.nodes.values()]
     and setattr(g.nodes["d"], "device", VTA), "node d: relax.matmul on VTA without"),
    (lambda g: setattr(g.nodes["x"], "device", VTA), "nodes without a device beside placed"),
])
def test_verifier_catches_broken_graph(break_it, message):
    from vtabench.graph.ir_verify import IRError, verify_graph

    g = _chain()
    verify_graph(g)  # the intact graph passes
    break_it(g)
    with pytest.raises(IRError, match="^after bad: .*" + re.escape(message)):
        verify_graph(g, after="bad")


def test_pipeline_verifies_after_each_pass(cfg):
    """The driver loop names the pass that broke the graph; the passes before it ran."""
    from vtabench.graph.ir_verify import IRError
    from vtabench.graph.pipeline import Pipeline, in_place

    ran = []
    good = in_place("good", lambda g: ran.append("good"))
    bad = in_place("dangling", lambda g: g.add(Node("y", "relax.nn.relu", ["ghost"], (1, 16),
                                                    "int8")))
    never = in_place("never", lambda g: ran.append("never"))
    with pytest.raises(IRError, match="^after dangling: node y: input 'ghost' is not defined"):
        Pipeline((good, bad, never)).run(_chain())
    assert ran == ["good"]


def test_dump_passes(tmp_path, cfg, capsys):
    """One text file per pass (and the imported graph first), numbered in pipeline order; the
    CLI writes the same files; a file in the folder's place is one line, status 2."""
    import onnx

    from vtabench.cli import main

    g = prepare_graph(small_resnet(), cfg, dump_dir=tmp_path / "api")
    names = [f"{i:02d}-{p}.txt" for i, p in enumerate(["to_graph", *PIPELINE])]
    assert sorted(p.name for p in (tmp_path / "api").iterdir()) == names
    texts = [(tmp_path / "api" / n).read_text() for n in names]
    assert all(t.startswith(f"# after {n[3:-4]}: ") for t, n in zip(texts, names, strict=True))
    assert "@vta" not in texts[7] and "@vta" in texts[8]  # placed by `place`
    assert "copy(" not in texts[8] and "copy(" in texts[9]  # copies by insert_copies
    assert "im2col" not in texts[9] and "im2col" in texts[10]  # the stem's taps folded
    assert f"# after check_boundaries: {len(g.nodes)} nodes" in texts[11]
    assert all(f"\n{name} = " in texts[11] for name in g.order)

    onnx.save(small_resnet(), tmp_path / "m.onnx")
    assert main(["compile", str(tmp_path / "m.onnx"), "-o", str(tmp_path / "m.vtapkg"),
                 "--no-profile", "--dump-passes", str(tmp_path / "cli")]) == 0
    assert [(tmp_path / "cli" / n).read_text() for n in names] == texts
    capsys.readouterr()
    assert main(["compile", str(tmp_path / "m.onnx"), "-o", str(tmp_path / "m2.vtapkg"),
                 "--dump-passes", str(tmp_path / "m.onnx")]) == 2
    assert capsys.readouterr().err == (f"vtabench compile: error: --dump-passes "
                                       f"{tmp_path / 'm.onnx'}: is a file, not a folder\n")
