"""Float ONNX networks built in the project (``onnx.helper``, seeded weights, nothing
downloaded), for quantizing with onnxruntime (:mod:`vtabench.workloads.quantize`).

Convolutions carry a bias (batch normalization folded, as an exported eval-mode network has it);
weights are He-normal, so activations keep about unit scale through the depth.

* :func:`small_resnet_float` - CI network: 16x16 input, stem 3->16, a residual block, a
  stride-2 block with a 1x1 projection, global average pool, Gemm 32->10.
* :func:`resnet18_float`, :func:`resnet50_float` - torchvision's topologies at 224x224, 1000
  classes (basic blocks 2-2-2-2; bottlenecks 3-4-6-3 with expansion 4).
* :func:`mobilenetv2_float` - MobileNetV2 (inverted residuals, expansion 6, ReLU6 as Clip,
  depthwise 3x3 convolutions), 224x224, 1000 classes.
* :func:`yolo_tiny_float` - a YOLOv3-tiny-like detector: 3x3 convs with LeakyReLU(0.1) and
  max pools down to 1/32, a detection head there, a 2x nearest upsample concatenated with the
  1/16 features and a second head (3 x (5 + classes) channels each).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


class FloatBuilder:
    """Builds a float NCHW network node by node; tracks every tensor's channel count."""

    def __init__(self, name: str, seed: int = 0) -> None:
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.channels: dict[str, int] = {}
        self.n = 0

    def _name(self, base: str) -> str:
        self.n += 1
        return f"{base}{self.n}"

    def const(self, arr: np.ndarray, base: str) -> str:
        name = self._name(base)
        self.inits.append(numpy_helper.from_array(arr, name))
        return name

    def node(self, op: str, inputs: list[str], base: str, channels: int | None = None,
             **attrs) -> str:
        out = self._name(base)
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        self.channels[out] = channels if channels is not None else self.channels[inputs[0]]
        return out

    def input(self, name: str, channels: int) -> str:
        self.channels[name] = channels
        return name

    def act(self, x: str, kind: str | None) -> str:
        if kind == "relu":
            return self.node("Relu", [x], "relu")
        if kind == "relu6":
            lo = self.const(np.array(0, np.float32), "zero")
            hi = self.const(np.array(6, np.float32), "six")
            return self.node("Clip", [x, lo, hi], "relu6")
        if kind == "leaky":
            return self.node("LeakyRelu", [x], "leaky", alpha=0.1)
        return x

    def conv(self, x: str, cout: int, k: int, stride: int = 1, act: str | None = "relu",
             groups: int = 1, gain: float = 2.0) -> str:
        cin = self.channels[x]
        fan_in = cin // groups * k * k
        w = self.rng.normal(0, np.sqrt(gain / fan_in), (cout, cin // groups, k, k))
        b = self.rng.normal(0, 0.05, cout)
        y = self.node("Conv", [x, self.const(w.astype(np.float32), "w"),
                               self.const(b.astype(np.float32), "b")], "conv", cout,
                      kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4,
                      group=groups)
        return self.act(y, act)

    def add(self, a: str, b: str, act: str | None = "relu") -> str:
        return self.act(self.node("Add", [a, b], "add"), act)

    def maxpool(self, x: str, k: int, stride: int, pad: int) -> str:
        return self.node("MaxPool", [x], "maxpool", kernel_shape=[k, k],
                         strides=[stride, stride], pads=[pad] * 4)

    def upsample(self, x: str, factor: int = 2) -> str:
        scales = self.const(np.array([1, 1, factor, factor], np.float32), "scales")
        return self.node("Resize", [x, "", scales], "upsample", mode="nearest")

    def concat(self, xs: list[str]) -> str:
        return self.node("Concat", xs, "concat", sum(self.channels[x] for x in xs), axis=1)

    def head(self, x: str, classes: int) -> str:
        """GlobalAveragePool -> Flatten -> Gemm (logits)."""
        c = self.channels[x]
        g = self.node("GlobalAveragePool", [x], "gap")
        f = self.node("Flatten", [g], "flatten", axis=1)
        w = self.rng.normal(0, np.sqrt(1.0 / c), (classes, c)).astype(np.float32)
        b = self.rng.normal(0, 0.05, classes).astype(np.float32)
        return self.node("Gemm", [f, self.const(w, "fc_w"), self.const(b, "fc_b")], "fc",
                         classes, transB=1)

    def build(self, inputs: list[tuple[str, list[int]]], outputs: list[str]) -> onnx.ModelProto:
        g = helper.make_graph(
            self.nodes, self.name,
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
            self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="vtabench.workloads")
        m.ir_version = 8
        m = onnx.shape_inference.infer_shapes(m)
        onnx.checker.check_model(m)
        return m


def _basic_block(b: FloatBuilder, x: str, cout: int, stride: int) -> str:
    y = b.conv(x, cout, 3, stride)
    y = b.conv(y, cout, 3, 1, act=None, gain=1.0)
    sc = x if stride == 1 and b.channels[x] == cout else b.conv(x, cout, 1, stride, act=None,
                                                                gain=1.0)
    return b.add(y, sc)


def _bottleneck(b: FloatBuilder, x: str, width: int, stride: int) -> str:
    cout = 4 * width
    y = b.conv(x, width, 1)
    y = b.conv(y, width, 3, stride)
    y = b.conv(y, cout, 1, act=None, gain=1.0)
    sc = x if stride == 1 and b.channels[x] == cout else b.conv(x, cout, 1, stride, act=None,
                                                                gain=1.0)
    return b.add(y, sc)


def small_resnet_float(seed: int = 0, size: int = 16, channels: int = 16,
                       classes: int = 10) -> onnx.ModelProto:
    b = FloatBuilder("small_resnet_float", seed)
    x = b.input("input", 3)
    x = b.conv(x, channels, 3)
    x = _basic_block(b, x, channels, 1)
    x = _basic_block(b, x, 2 * channels, 2)
    return b.build([("input", [1, 3, size, size])], [b.head(x, classes)])


def resnet18_float(seed: int = 0, classes: int = 1000, size: int = 224) -> onnx.ModelProto:
    b = FloatBuilder("resnet18_float", seed)
    x = b.input("input", 3)
    x = b.maxpool(b.conv(x, 64, 7, 2), 3, 2, 1)
    for i, c in enumerate((64, 128, 256, 512)):
        for j in range(2):
            x = _basic_block(b, x, c, 2 if i > 0 and j == 0 else 1)
    return b.build([("input", [1, 3, size, size])], [b.head(x, classes)])


def resnet50_float(seed: int = 0, classes: int = 1000, size: int = 224) -> onnx.ModelProto:
    b = FloatBuilder("resnet50_float", seed)
    x = b.input("input", 3)
    x = b.maxpool(b.conv(x, 64, 7, 2), 3, 2, 1)
    for i, (width, blocks) in enumerate(((64, 3), (128, 4), (256, 6), (512, 3))):
        for j in range(blocks):
            x = _bottleneck(b, x, width, 2 if i > 0 and j == 0 else 1)
    return b.build([("input", [1, 3, size, size])], [b.head(x, classes)])


def mobilenetv2_float(seed: int = 0, classes: int = 1000, size: int = 224) -> onnx.ModelProto:
    b = FloatBuilder("mobilenetv2_float", seed)
    x = b.input("input", 3)
    x = b.conv(x, 32, 3, 2, act="relu6")
    # (expansion t, channels c, repeats n, first stride s), as in Sandler et al.
    for t, c, n, s in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)):
        for i in range(n):
            stride = s if i == 0 else 1
            cin = b.channels[x]
            y = x if t == 1 else b.conv(x, cin * t, 1, act="relu6")
            y = b.conv(y, cin * t, 3, stride, act="relu6", groups=cin * t)
            y = b.conv(y, c, 1, act=None, gain=1.0)
            x = b.add(y, x, act=None) if stride == 1 and cin == c else y
    x = b.conv(x, 1280, 1, act="relu6")
    return b.build([("input", [1, 3, size, size])], [b.head(x, classes)])


def yolo_tiny_float(seed: int = 0, classes: int = 80, size: int = 256) -> onnx.ModelProto:
    b = FloatBuilder("yolo_tiny_float", seed)
    x = b.input("input", 3)
    for c in (16, 32, 64, 128):
        x = b.maxpool(b.conv(x, c, 3, act="leaky"), 2, 2, 0)
    route = b.conv(x, 256, 3, act="leaky")  # 1/16
    x = b.maxpool(route, 2, 2, 0)
    x = b.conv(x, 512, 3, act="leaky")  # 1/32
    x = b.conv(x, 1024, 3, act="leaky")
    x = b.conv(x, 256, 1, act="leaky")
    outs = 3 * (5 + classes)
    y1 = b.conv(b.conv(x, 512, 3, act="leaky"), outs, 1, act=None, gain=1.0)
    u = b.upsample(b.conv(x, 128, 1, act="leaky"))
    x2 = b.conv(b.concat([u, route]), 256, 3, act="leaky")
    y2 = b.conv(x2, outs, 1, act=None, gain=1.0)
    return b.build([("input", [1, 3, size, size])], [y1, y2])


FLOAT_MODELS = {"small_resnet_float": small_resnet_float, "resnet18_float": resnet18_float,
                "resnet50_float": resnet50_float, "mobilenetv2_float": mobilenetv2_float,
                "yolo_tiny_float": yolo_tiny_float}
