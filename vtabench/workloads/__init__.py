"""Workloads the project generates itself: int8 QDQ ONNX models with power-of-two scales.

Everything is deterministic (seeded numpy weights) and built with ``onnx.helper``; nothing is
downloaded. The models follow the QDQ form of onnxruntime's static quantization:
``QuantizeLinear`` on the float input, ``DequantizeLinear`` in front of every float operator
(one per consumer), int8 weights and int32 biases behind ``DequantizeLinear`` with power-of-two
scales, activation functions before the ``QuantizeLinear`` that ends each layer.

* :func:`small_resnet` - CI network: conv3x3 stem on 3 channels, a residual block, a stride-2
  block with a 1x1 projection, global average pool, dense classifier, softmax.
* :func:`resnet18` - ResNet-18 (ImageNet topology, 224x224 input, 1000 classes).
* :func:`resnet50_block` - ResNet-50's first residual block (bottleneck + projection), with the
  residual Add's argument order selectable (placement tests).
"""

from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ACT_LOG2 = 4  # activation scale 2^-4 everywhere inside the network (residual adds need equal)
IN_LOG2 = 5  # the float input's scale 2^-5
OPSET = 17


class QDQBuilder:
    """Builds a QDQ ONNX graph layer by layer. Tensors passed between layers are int8 (the
    output of a QuantizeLinear); every consumer dequantizes its own copy."""

    def __init__(self, name: str, seed: int = 0):
        self.name = name
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.n = 0
        self.scale_log2: dict[str, int] = {}  # int8 tensor -> log2 of 1/scale
        self._consts: dict[tuple, str] = {}

    def _name(self, base: str) -> str:
        self.n += 1
        return f"{base}_{self.n}"

    def const(self, arr: np.ndarray, base: str) -> str:
        name = self._name(base)
        self.inits.append(numpy_helper.from_array(arr, name))
        return name

    def scale(self, log2inv: int) -> str:
        key = ("s", log2inv)
        if key not in self._consts:
            self._consts[key] = self.const(np.array(2.0 ** -log2inv, np.float32),
                                           f"scale_2m{log2inv}".replace("-", "n"))
        return self._consts[key]

    def zero(self, dtype) -> str:
        key = ("z", np.dtype(dtype).name)
        if key not in self._consts:
            self._consts[key] = self.const(np.array(0, dtype), f"zp_{np.dtype(dtype).name}")
        return self._consts[key]

    def node(self, op: str, inputs: list[str], base: str | None = None, **attrs) -> str:
        out = self._name(base or op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def quantize(self, x: str, log2inv: int) -> str:
        q = self.node("QuantizeLinear", [x, self.scale(log2inv), self.zero(np.int8)], "q")
        self.scale_log2[q] = log2inv
        return q

    def dequantize(self, q: str) -> str:
        return self.node("DequantizeLinear", [q, self.scale(self.scale_log2[q]),
                                              self.zero(np.int8)], "dq")

    def _weights(self, shape: tuple[int, ...], fan_in: int, in_log2: int, out_log2: int
                 ) -> tuple[str, str, int]:
        """int8 weights (dequantized) and the weight scale's log2: chosen so the layer's
        requantization shift keeps activations in range (about 1/sqrt(fan_in))."""
        shift = max(1, round(math.log2(math.sqrt(fan_in) * 40.0 / 24.0)) + 4)
        w_log2 = shift + out_log2 - in_log2  # s_x * s_w = s_y * 2^-shift
        w = self.rng.integers(-70, 71, shape).astype(np.int8)
        wq = self.const(w, "w")
        wd = self.node("DequantizeLinear", [wq, self.scale(w_log2), self.zero(np.int8)], "dqw")
        return wd, wq, w_log2

    def _bias(self, n: int, in_log2: int, w_log2: int, mag: int) -> str:
        b = self.rng.integers(-mag, mag + 1, (n,)).astype(np.int32)
        bq = self.const(b, "b")
        return self.node("DequantizeLinear", [bq, self.scale(in_log2 + w_log2),
                                              self.zero(np.int32)], "dqb")

    def conv(self, x: str, cout: int, k: int, stride: int = 1, relu: bool = True,
             out_log2: int = ACT_LOG2, tag: int | None = None) -> str:
        """dq -> Conv(+bias) -> [Relu] -> q; returns the int8 output. ``tag``: draw this layer's
        weights from its own stream (the same tensors whatever the order layers are added)."""
        if tag is not None:
            self.rng = np.random.default_rng([self.seed, tag])
        cin = self.channels[x]
        in_log2 = self.scale_log2[x]
        wd, _, w_log2 = self._weights((cout, cin, k, k), cin * k * k, in_log2, out_log2)
        shift = in_log2 + w_log2 - out_log2
        bd = self._bias(cout, in_log2, w_log2, 1 << (shift + 3))
        p = k // 2
        y = self.node("Conv", [self.dequantize(x), wd, bd], "conv", kernel_shape=[k, k],
                      strides=[stride, stride], pads=[p, p, p, p])
        if relu:
            y = self.node("Relu", [y], "relu")
        q = self.quantize(y, out_log2)
        self.channels[q] = cout
        return q

    def add(self, a: str, b: str, relu: bool = True, out_log2: int = ACT_LOG2) -> str:
        y = self.node("Add", [self.dequantize(a), self.dequantize(b)], "add")
        if relu:
            y = self.node("Relu", [y], "relu")
        q = self.quantize(y, out_log2)
        self.channels[q] = self.channels[a]
        return q

    def build(self, inputs: list[tuple[str, list[int]]], outputs: list[tuple[str, list[int]]]
              ) -> onnx.ModelProto:
        g = helper.make_graph(
            self.nodes, self.name,
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs],
            self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="vtabench.workloads")
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m

    # -- common pieces --------------------------------------------------------------------------
    def input(self, name: str, channels: int) -> str:
        q = self.quantize(name, IN_LOG2)
        self.channels = {q: channels}
        return q

    def basic_block(self, x: str, cout: int, stride: int, residual_first: bool = False) -> str:
        cin = self.channels[x]
        y = self.conv(x, cout, 3, stride)
        y = self.conv(y, cout, 3, 1, relu=False)
        sc = self.conv(x, cout, 1, stride, relu=False) if (stride != 1 or cin != cout) else x
        return self.add(sc, y) if residual_first else self.add(y, sc)

    def unary(self, x: str, op: str, out_log2: int = ACT_LOG2) -> str:
        """dq -> op -> q (an elementwise float operator, e.g. Sigmoid)."""
        q = self.quantize(self.node(op, [self.dequantize(x)], op.lower()), out_log2)
        self.channels[q] = self.channels[x]
        return q

    def head(self, x: str, classes: int, out_log2: int = 3) -> str:
        """GlobalAveragePool -> q -> Flatten -> Gemm(+bias) -> q -> dq -> Softmax."""
        c = self.channels[x]
        g = self.quantize(self.node("GlobalAveragePool", [self.dequantize(x)], "gap"), ACT_LOG2)
        self.channels[g] = c
        f = self.node("Flatten", [self.dequantize(g)], "flatten", axis=1)
        wd, _, w_log2 = self._weights((classes, c), c, ACT_LOG2, out_log2)
        bd = self._bias(classes, ACT_LOG2, w_log2, 1 << (ACT_LOG2 + w_log2 - out_log2 + 3))
        y = self.node("Gemm", [f, wd, bd], "fc", transB=1)
        yq = self.quantize(y, out_log2)
        self.logits = self.dequantize(yq)
        return self.node("Softmax", [self.logits], "softmax", axis=1)


def small_resnet(seed: int = 0, size: int = 16, channels: int = 16, classes: int = 16,
                 logits: bool = False, unsupported: str | None = None) -> onnx.ModelProto:
    """CI network: stem conv3x3 3->C (CPU fallback: 3 input channels), a residual block C->C,
    a stride-2 block C->2C with a 1x1 projection, GAP (a power-of-two average: VTA), dense
    2C->classes, softmax. ``logits``: also output the dequantized logits (second output).
    ``unsupported``: insert that elementwise ONNX operator (e.g. "Sigmoid") between the two
    blocks (a CPU fallback in the middle of the network)."""
    b = QDQBuilder("small_resnet", seed)
    x = b.input("input", 3)
    x = b.conv(x, channels, 3, 1)
    x = b.basic_block(x, channels, 1)
    if unsupported:
        x = b.unary(x, unsupported, out_log2=7)
    x = b.basic_block(x, 2 * channels, 2)
    out = b.head(x, classes)
    outs = [(out, [1, classes])]
    if logits:
        outs.append((b.logits, [1, classes]))
    return b.build([("input", [1, 3, size, size])], outs)


def resnet18(seed: int = 0, classes: int = 1000, size: int = 224) -> onnx.ModelProto:
    """ResNet-18 (He et al.; torchvision's topology): conv7x7/2 3->64, maxpool 3x3/2, four stages
    of two basic blocks (64, 128, 256, 512; stride 2 and a 1x1 projection at the start of stages
    2-4), global average pool, fc 512->classes, softmax."""
    b = QDQBuilder("resnet18", seed)
    x = b.input("input", 3)
    x = b.conv(x, 64, 7, 2)
    mp = b.node("MaxPool", [b.dequantize(x)], "maxpool", kernel_shape=[3, 3], strides=[2, 2],
                pads=[1, 1, 1, 1])
    q = b.quantize(mp, ACT_LOG2)
    b.channels[q] = 64
    x = q
    for i, c in enumerate((64, 128, 256, 512)):
        for j in range(2):
            x = b.basic_block(x, c, 2 if (i > 0 and j == 0) else 1)
    out = b.head(x, classes)
    return b.build([("input", [1, 3, size, size])], [(out, [1, classes])])


def resnet50_block(seed: int = 0, residual_first: bool = False, size: int = 56,
                   reverse_nodes: bool = False) -> onnx.ModelProto:
    """ResNet-50's first residual block (input 64 x 56 x 56 after the stem): 1x1 64->64, 3x3
    64->64, 1x1 64->256 and the 1x1 64->256 projection, Add, ReLU. ``residual_first`` swaps the
    Add's arguments; ``reverse_nodes`` lists the two branches in the other order."""
    b = QDQBuilder("resnet50_block1", seed)
    x = b.input("input", 64)
    # Weights are drawn in a fixed order so that both variants have the same tensors.
    if reverse_nodes:
        sc = b.conv(x, 256, 1, 1, relu=False, tag=4)
        y = b.conv(x, 64, 1, tag=1)
        y = b.conv(y, 64, 3, tag=2)
        y = b.conv(y, 256, 1, relu=False, tag=3)
    else:
        y = b.conv(x, 64, 1, tag=1)
        y = b.conv(y, 64, 3, tag=2)
        y = b.conv(y, 256, 1, relu=False, tag=3)
        sc = b.conv(x, 256, 1, 1, relu=False, tag=4)
    out = b.add(sc, y) if residual_first else b.add(y, sc)
    o = b.dequantize(out)
    return b.build([("input", [1, 64, size, size])], [(o, [1, 256, size, size])])


def save(model: onnx.ModelProto, path) -> None:
    onnx.save(model, str(path))


WORKLOADS = {"small_resnet": small_resnet, "resnet18": resnet18, "resnet50_block": resnet50_block}
