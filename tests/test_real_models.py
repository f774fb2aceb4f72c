"""A real pretrained network on VTA: PaddleOCR's text-direction classifier as the
``rapidocr_onnxruntime`` wheel ships it (vtabench.workloads.rapidocr), and each lowering it
needs against onnxruntime, operator by operator.

The classifier (MobileNetV3-like: BatchNormalization after every conv, hard-swish written as
Add/Clip/Mul/Div, squeeze-and-excitation blocks with HardSigmoid, (2, 1) strides, global average
pools over 12 x 96 maps) is quantized by ``quantize_static`` (the project's defaults: QDQ, int8)
on rendered text lines and compiled for the default configuration:

* everything between the input's quantize and the classifier's bias Add runs on VTA in one
  device program: one sync per inference, each CPU node with its reason;
* on fsim and opencl (PoCL), on rendered lines turned by 0 and 180 degrees, the predicted
  direction equals onnxruntime's int8 model's (and the label), the outputs are bit-identical
  across targets and to the integer reference (every operator on the CPU; slow), and each VTA
  operator run alone on onnxruntime's inputs is within one quantization step of onnxruntime's
  output (two where a residual Add is fused into the conv before it, whose own output is not
  exposed).

The per-operator tests build small float models with odd shapes (channels not a multiple of the
block, rectangular maps and strides, per-channel and scalar constants, broadcasting) and check
the same: on VTA in one program, within one step of onnxruntime layer by layer, bit-identical to
the integer reference.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from vtabench.graph import compile_model, reference_package
from vtabench.graph.ir import VTA
from vtabench.workloads import rapidocr
from vtabench.workloads.quantize import calibration_set, quantize

pytestmark = pytest.mark.tvm

CFG = "default"
#: ONNX ops the classifier leaves on the CPU after its last VTA operator (or before the first).
CPU_TAIL = {"relax.quantize", "relax.dequantize", "relax.reshape", "relax.nn.softmax", "add"}


def _layerwise(pkg, q, inputs, target="fsim", ref=None):
    """Per input: outputs; and the layer-by-layer deviation from onnxruntime (and the
    reference package's outputs when ``ref``)."""
    from vtabench.drivers import open_device

    from vtabench.graph.compare import (
        Deviation,
        device_tensors,
        layer_inputs,
        layerwise,
        onnxruntime_tensors,
    )
    from vtabench.graph.execute import Executor
    from vtabench.spec.config import load_config

    name = q.graph.input[0].name
    outs, refs, theirs_all, lw = [], [], [], Deviation()
    size = max(pkg.mem_bytes, ref.mem_bytes if ref else 0)
    with open_device(target, load_config(CFG), size) as dev:
        ex = Executor(pkg, dev)
        ex_ref = Executor(ref, dev) if ref else None
        for x in inputs:
            outs.append(ex.run([x]).outputs)
            theirs = onnxruntime_tensors(q, list(device_tensors(ex)) + layer_inputs(ex),
                                         {name: x})
            layerwise(ex, theirs, lw)
            theirs_all.append(theirs)
            if ex_ref:
                refs.append(ex_ref.run([x]).outputs)
    return outs, refs, theirs_all, lw


def _fused_residuals(pkg) -> set[str]:
    return {n["onnx"] for n in pkg.manifest["nodes"]
            if any(e[0].startswith("residual") for e in n.get("epilogue") or [])}


def _assert_within_one_step(pkg, lw) -> None:
    fused = _fused_residuals(pkg)
    over = {k: v for k, v in lw.per_tensor.items() if v[0] > (2 if k in fused else 1)}
    assert not over, over
    assert lw.fraction_exact > 0.99


# -- the per-operator models ---------------------------------------------------------------------

def _model(nodes, inits, in_shape, out_name, out_shape, opset: int = 13):
    g = helper.make_graph(
        nodes, "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(in_shape))],
        [helper.make_tensor_value_info(out_name, TensorProto.FLOAT, list(out_shape))],
        [numpy_helper.from_array(v if v.dtype == np.int64 else v.astype(np.float32), k)
         for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


class _Builder:
    """Float ONNX nodes with seeded weights."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list = []
        self.inits: dict[str, np.ndarray] = {}
        self.n = 0

    def name(self, base: str) -> str:
        self.n += 1
        return f"{base}{self.n}"

    def const(self, v) -> str:
        k = self.name("c")
        self.inits[k] = np.asarray(v, np.float32)
        return k

    def op(self, op: str, ins: list[str], **attrs) -> str:
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, ins, [out], name=out, **attrs))
        return out

    def conv(self, x: str, cin: int, cout: int, k: int = 1, stride=(1, 1), pad: int = 0,
             bias: bool = True) -> str:
        w = self.const(self.rng.standard_normal((cout, cin, k, k)) * (2.0 / (cin * k * k)) ** .5)
        ins = [x, w] + ([self.const(self.rng.standard_normal(cout) * 0.1)] if bias else [])
        return self.op("Conv", ins, kernel_shape=[k, k], strides=list(stride), pads=[pad] * 4)

    def bn(self, x: str, c: int) -> str:
        r = self.rng
        return self.op("BatchNormalization", [
            x, self.const(r.uniform(0.5, 1.5, c)), self.const(r.standard_normal(c) * 0.2),
            self.const(r.standard_normal(c) * 0.1), self.const(r.uniform(0.5, 2, c))])

    def hardswish_chain(self, x: str) -> str:
        t = self.op("Add", [x, self.const(3.0)])
        t = self.op("Clip", [t, self.const(0.0), self.const(6.0)])
        t = self.op("Mul", [x, t])
        return self.op("Div", [t, self.const(6.0)])


def _bn_hardswish():
    """Conv (stride (2, 1), 20 channels) -> BatchNormalization -> hard-swish as Add/Clip/Mul/Div
    -> HardSigmoid (onnxruntime leaves the Div unquantized before it: one affine chain) -> conv.
    (16 input channels: the per-operator models leave the small-channel stem to the
    classifier.)"""
    b = _Builder(1)
    y = b.conv("x", 16, 20, 3, stride=(2, 1), pad=1, bias=False)
    y = b.hardswish_chain(b.bn(y, 20))
    y = b.op("HardSigmoid", [y], alpha=0.2, beta=0.5)
    y = b.conv(y, 20, 8)
    return _model(b.nodes, b.inits, (1, 16, 12, 20), y, (1, 8, 6, 20))


def _se_block():
    """Squeeze-and-excitation over a 9 x 14 map with 24 channels: GlobalAveragePool, 1x1 conv
    without bias + Add of a reshaped bias vector, Relu, 1x1 conv + Add, HardSigmoid, the
    channel-wise Mul broadcast over the map."""
    b = _Builder(2)
    x = b.op("Relu", [b.conv("x", 16, 24, 3, pad=1)])
    s = b.op("GlobalAveragePool", [x])
    shape = b.name("shape")
    b.inits[shape] = np.array([1, -1, 1, 1], np.int64)
    s = b.conv(s, 24, 6, bias=False)
    s = b.op("Add", [s, b.op("Reshape", [b.const(b.rng.standard_normal(6) * 0.1), shape])])
    s = b.op("Relu", [s])
    s = b.conv(s, 6, 24, bias=False)
    s = b.op("Add", [s, b.op("Reshape", [b.const(b.rng.standard_normal(24) * 0.1), shape])])
    s = b.op("HardSigmoid", [s], alpha=0.2, beta=0.5)
    y = b.op("Mul", [x, s])
    y = b.conv(y, 24, 8)
    return _model(b.nodes, b.inits, (1, 16, 9, 14), y, (1, 8, 9, 14)), b


def _elementwise():
    """Per-channel and scalar constants in every form (Add (1, C, 1, 1), Sub (C, 1, 1), Mul by a
    scalar, Div by a vector), Relu6 as Clip, the elementwise Mul of two activations, an Add of
    two activations that no conv takes (the Mul and the first conv, which feeds two nodes), a
    Div followed by a MaxPool that onnxruntime leaves unquantized (18 channels, 6 x 10 map)."""
    b = _Builder(3)
    c = 18
    a = b.conv("x", 16, c, 3, pad=1)
    y = b.op("Add", [a, b.const(b.rng.standard_normal((1, c, 1, 1)))])
    y = b.op("Sub", [y, b.const(b.rng.standard_normal((c, 1, 1)))])
    y = b.op("Mul", [y, b.const(0.75)])
    y = b.op("Div", [y, b.const(b.rng.uniform(0.5, 2, (1, c, 1, 1)))])
    y = b.op("Clip", [y, b.const(0.0), b.const(6.0)])
    y = b.op("Mul", [y, b.conv("x", 16, c, 1)])
    y = b.op("Add", [y, a])  # two activations, a has another consumer: no conv takes it
    y = b.op("Div", [y, b.const(6.0)])
    y = b.op("MaxPool", [y], kernel_shape=[2, 2], strides=[2, 2])
    y = b.conv(y, c, 8)
    return _model(b.nodes, b.inits, (1, 16, 6, 10), y, (1, 8, 3, 5))


def _hardswish_op():
    """The ONNX HardSwish operator (opset 14) after a conv of 20 channels on a 5 x 7 map."""
    b = _Builder(4)
    y = b.op("HardSwish", [b.conv("x", 16, 20, 3, pad=1)])
    y = b.conv(y, 20, 8)
    return _model(b.nodes, b.inits, (1, 16, 5, 7), y, (1, 8, 5, 7), opset=14)


def _grouped_shuffle():
    """A ShuffleNet unit and more on a 10 x 12 map: a channel shuffle (Reshape-Transpose-
    Reshape) of a tensor that also feeds the residual, folded forward into the grouped conv
    after it (its input channels permuted); grouped 1x1 convs of 6 input channels per group
    (not a divisor of the block: the dense conv of the block-diagonal weight), each followed by
    BatchNormalization; a shuffle folded backward into that conv and its batch norm (their
    output channels permuted), a depthwise 3x3, the residual as a two-input ``Sum``; a grouped
    conv of 2 groups (24 -> 32: dense); a grouped 3x3 of 2 groups of whole blocks (32 -> 64: one
    conv per group on its channel blocks); a grouped 3x3 of 4 channels per group (inside the
    blocks: blockwise); an ``AveragePool`` over the whole map (a global one)."""
    b = _Builder(6)

    def grouped(x, cin, cout, groups, k=1, pad=0):
        w = b.const(b.rng.standard_normal((cout, cin // groups, k, k))
                    * (2.0 / (cin // groups * k * k)) ** .5)
        return b.op("Conv", [x, w, b.const(b.rng.standard_normal(cout) * 0.1)],
                    kernel_shape=[k, k], pads=[pad] * 4, group=groups)

    def shuffle(x, groups, c, h, w):
        s1, s2 = b.name("shape"), b.name("shape")
        b.inits[s1] = np.array([1, groups, c // groups, h, w], np.int64)
        b.inits[s2] = np.array([1, c, h, w], np.int64)
        t = b.op("Transpose", [b.op("Reshape", [x, s1])], perm=[0, 2, 1, 3, 4])
        return b.op("Reshape", [t, s2])

    a = b.op("Relu", [b.conv("x", 16, 24)])
    y = shuffle(a, 2, 24, 10, 12)
    y = b.op("Relu", [b.bn(grouped(y, 24, 24, 4), 24)])
    y = shuffle(y, 4, 24, 10, 12)
    y = b.bn(grouped(y, 24, 24, 24, k=3, pad=1), 24)
    y = b.bn(grouped(y, 24, 24, 4), 24)
    y = b.op("Relu", [b.op("Sum", [y, a])])
    y = b.op("Relu", [grouped(y, 24, 32, 2)])
    y = b.op("Relu", [grouped(y, 32, 64, 2, k=3, pad=1)])
    y = b.op("Relu", [grouped(y, 64, 64, 16, k=3, pad=1)])
    y = b.op("AveragePool", [y], kernel_shape=[10, 12])
    return _model(b.nodes, b.inits, (1, 16, 10, 12), y, (1, 64, 1, 1))


OP_MODELS = {
    "grouped_shuffle": (_grouped_shuffle, {"conv2d": 10, "avgpool": 1}),
    "bn_hardswish": (_bn_hardswish, {"conv2d": 5, "mul": 1}),
    "se_block": (lambda: _se_block()[0], {"conv2d": 7, "avgpool": 1, "mul": 1}),
    "elementwise": (_elementwise, {"conv2d": 8, "mul": 1, "eltwise_add": 1, "maxpool": 1}),
    "hardswish_op": (_hardswish_op, {"conv2d": 2, "hardswish": 1}),
}


def vta_op_counts(pkg) -> dict[str, int]:
    """How many nodes of each operator a compiled package runs on VTA (copies left out)."""
    got: dict[str, int] = {}
    for n in pkg.manifest["nodes"]:
        if n["device"] == VTA and n["op"] != "copy":
            got[n["op"]] = got.get(n["op"], 0) + 1
    return got


def assert_exact_and_within_a_step(pkg, outs, refs, lw) -> None:
    """The package's outputs equal the integer reference's, and each VTA operator is within one
    step of onnxruntime layer by layer (two where a residual Add is fused into it: two
    roundings)."""
    for o, r in zip(outs, refs, strict=True):
        assert all(np.array_equal(a, b) for a, b in zip(o, r, strict=True))
    fused = {n["onnx"] for n in pkg.manifest["nodes"]
             if any(e[0].startswith("residual") for e in n.get("epilogue") or [])}
    over = {k: v for k, v in lw.per_tensor.items() if v[0] > (2 if k in fused else 1)}
    assert not over, over


def cpu_nodes(pkg) -> list[tuple[str, str, str | None]]:
    """The package's nodes on the CPU: name, operator, the compiler's reason."""
    return [(n["name"], n["op"], n.get("reason")) for n in pkg.manifest["nodes"]
            if n["device"] != VTA]


@pytest.mark.parametrize("symmetric", [True, False], ids=["sym", "asym"])
@pytest.mark.parametrize("case", list(OP_MODELS))
def test_lowering_vs_onnxruntime(case, symmetric):
    """The model's lowerings run on VTA in one program, within one step of onnxruntime layer by
    layer, bit-identical to the integer reference; with symmetric int8 activations and with
    onnxruntime's asymmetric ones (zero points in both operands of a product)."""
    make, want = OP_MODELS[case]
    if case == "hardswish_op" and not symmetric:
        # the input's zero point: t * (v - z) needs the gate t twice; the CPU runs it
        want = {"conv2d": 2, "hardswish": 0}
    programs = 2 if want.get("hardswish") == 0 else 1
    model = make()
    q = quantize(model, calibration_set(model, 8), symmetric=symmetric)
    pkg = compile_model(q, CFG)
    got: dict[str, int] = {}
    for op, count in vta_op_counts(pkg).items():  # "conv2d (concat)" counts as a conv2d
        got[op.split(" ")[0]] = got.get(op.split(" ")[0], 0) + count
    for op, count in want.items():
        assert got.get(op, 0) == count, (op, got, cpu_nodes(pkg))
    assert len(pkg.programs) == programs
    ref = reference_package(q, CFG)
    rng = np.random.default_rng(5)
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    inputs = [rng.standard_normal(shape).astype(np.float32) for _ in range(2)]
    outs, refs, _, lw = _layerwise(pkg, q, inputs, ref=ref)
    for o, r in zip(outs, refs, strict=True):
        assert all(np.array_equal(a, b) for a, b in zip(o, r, strict=True))
    _assert_within_one_step(pkg, lw)


def test_affine_rewrite_keeps_names():
    """The rewritten affine nodes keep the ONNX names of their outputs (the comparison with
    onnxruntime goes by name), and a constant operand's dequantize is gone with them."""
    from vtabench.graph.onnx_prep import normalize

    model, _ = _se_block()
    q = quantize(model, calibration_set(model, 8))
    m = normalize(q)
    ops = [n.op_type for n in m.graph.node]
    assert "HardSigmoid" not in ops and "Reshape" not in ops
    names = {o for n in m.graph.node for o in n.output}
    hs = next(n for n in q.graph.node if n.op_type == "HardSigmoid")
    assert hs.output[0] in names
    assert sum(op == "Conv" for op in ops) == 7  # 4 convs, 2 bias Adds, the HardSigmoid


def test_affine_add_of_a_coarse_input_matches_onnxruntime_on_every_level():
    """The recognizer's hard-swish ``+ 3`` (input step 0.2855, output step 0.0472: the input is
    six times coarser) on all 256 int8 input levels: VTA's output equals onnxruntime's on every
    one. With the weight fixed at 127 the int32 bias is 1335 for 1334.70, and the levels -1
    (57.486 steps: 58 instead of 57) and -23 are one step off; on a rendered line that is 7% of
    the layer's values (:func:`~vtabench.graph.onnx_affine._weight_and_bias` picks the weight
    106, bias 1114)."""
    from vtabench.drivers import open_device
    from vtabench.graph.compare import device_tensors, onnxruntime_tensors
    from vtabench.graph.execute import Executor
    from vtabench.graph.onnx_affine import _weight_and_bias
    from vtabench.spec.config import load_config

    sx, sy, shape = 0.28545752, 0.04722103, (1, 16, 16, 16)
    f32 = np.float32
    nodes = [helper.make_node("QuantizeLinear", ["x", "sx", "z"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "sx", "z"], ["xd"]),
             helper.make_node("Add", ["xd", "three"], ["a"]),
             helper.make_node("QuantizeLinear", ["a", "sy", "z"], ["aq"]),
             helper.make_node("DequantizeLinear", ["aq", "sy", "z"], ["ad"]),
             helper.make_node("DequantizeLinear", ["wq", "sw", "z"], ["w"]),
             helper.make_node("Conv", ["ad", "w"], ["c"], kernel_shape=[1, 1]),
             helper.make_node("QuantizeLinear", ["c", "sy", "z"], ["cq"]),
             helper.make_node("DequantizeLinear", ["cq", "sy", "z"], ["y"])]
    inits = {"sx": np.array(sx, f32), "sy": np.array(sy, f32), "z": np.array(0, np.int8),
             "three": np.array(3.0, f32), "sw": np.array(1 / 64, f32),
             "wq": (np.eye(16) * 64).astype(np.int8).reshape(16, 16, 1, 1)}
    g = helper.make_graph(
        nodes, "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    q = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    q.ir_version = 8
    levels = (np.arange(np.prod(shape)) % 256 - 128).astype(f32)
    x = (levels * f32(sx)).reshape(shape)
    pkg = compile_model(q, CFG)
    assert [n["device"] for n in pkg.manifest["nodes"] if n["op"] == "conv2d"] == [VTA] * 2
    with open_device("fsim", load_config(CFG), pkg.mem_bytes) as dev:
        ex = Executor(pkg, dev)
        ex.run([x])
        ours = device_tensors(ex)["aq"]
    theirs = onnxruntime_tensors(q, ["aq"], {"x": x})["aq"]
    assert np.array_equal(ours, theirs), np.unique(levels[(ours != theirs).reshape(-1)])
    w, _, bscale, bq = _weight_and_bias(np.ones(1), np.full(1, 3.0), sx, None)
    assert abs(bq[0] * float(bscale[0]) - 3.0) < abs(np.rint(3.0 / (sx / 127)) * sx / 127 - 3.0)
    assert np.rint((-127 + np.rint(3.0 / (sx / 127))) * (sx / 127) / sy) == 58  # W = 127's miss


# -- the classifier ------------------------------------------------------------------------------

def _classifier(symmetric: bool):
    """(quantized model, package): calibrated on 16 rendered lines (seed 1)."""
    calib, _ = rapidocr.text_lines(16, seed=1)
    q = quantize(rapidocr.classifier_model(), calib, symmetric=symmetric)
    return q, compile_model(q, CFG)


@pytest.fixture(scope="module")
def classifier():
    return _classifier(True)


@pytest.fixture(scope="module")
def lines():
    """4 rendered lines (seed 2) and their labels, 0 and 180 degrees alternating."""
    xs, labels = rapidocr.text_lines(4, seed=2)
    return [x[None] for x in xs], labels


def test_classifier_one_sync(classifier):
    """Everything from the input's quantize to the classifier's bias Add is on VTA, in one
    device program; each CPU node is one of the ends and says why."""
    _, pkg = classifier
    nodes = pkg.manifest["nodes"]
    assert len(pkg.programs) == 1
    assert sum(n["op"] == "copy" for n in nodes) == 2
    vta = [n for n in nodes if n["device"] == VTA and n["op"] != "copy"]
    ops = {n["op"].split(" ")[0] for n in vta}
    assert {"conv2d", "mul", "avgpool", "maxpool", "dense"} <= ops
    assert len(vta) >= 190
    cpu = [n for n in nodes if n["device"] != VTA and n["op"] not in ("input", "copy")]
    assert {n["op"] for n in cpu} <= CPU_TAIL, [(n["name"], n["op"]) for n in cpu]
    assert all(n.get("reason") for n in cpu)


@pytest.mark.parametrize("target", ["fsim", "opencl"])
def test_classifier_vs_onnxruntime(classifier, lines, target):
    """The direction VTA predicts is onnxruntime's int8 model's and the label, on every line;
    each VTA operator is within one step of onnxruntime on its inputs."""
    q, pkg = classifier
    xs, labels = lines
    outs, _, theirs, lw = _layerwise(pkg, q, xs, target=target)
    out_name = q.graph.output[0].name
    for o, t, label in zip(outs, theirs, labels, strict=True):
        assert int(np.argmax(o[0])) == int(np.argmax(t[out_name])) == int(label)
    _assert_within_one_step(pkg, lw)


@pytest.mark.slow
def test_classifier_bit_identical(classifier, lines):
    """fsim and opencl equal the integer reference (every operator on the CPU) bit for bit."""
    from vtabench.graph import run_package

    q, pkg = classifier
    xs, _ = lines
    ref = reference_package(q, CFG)
    for x in xs[:2]:
        want = run_package(ref, "fsim", [x])[0].outputs
        for target in ("fsim", "opencl"):
            got = run_package(pkg, target, [x])[0].outputs
            assert all(np.array_equal(a, b) for a, b in zip(got, want, strict=True)), target


@pytest.mark.slow
def test_classifier_asymmetric(lines):
    """onnxruntime's own default, asymmetric int8 activations: still one sync (a product whose
    second operand has a zero point loads its first operand again to take off z * x), the same
    directions as onnxruntime's int8 model, within one step layer by layer."""
    q, pkg = _classifier(False)
    assert len(pkg.programs) == 1
    xs, labels = lines
    outs, _, theirs, lw = _layerwise(pkg, q, xs[:2])
    out_name = q.graph.output[0].name
    for o, t, label in zip(outs, theirs, labels[:2], strict=True):
        assert int(np.argmax(o[0])) == int(np.argmax(t[out_name])) == int(label)
    _assert_within_one_step(pkg, lw)
