"""The ``onnx`` package's light model-zoo networks with weights.

The ``onnx`` wheel ships nine classic ImageNet networks (AlexNet, ZFNet-512, VGG-19, SqueezeNet,
ResNet-50, Inception v1/v2, DenseNet-121, ShuffleNet) in ``onnx/backend/test/data/light/``, with
every weight replaced by a ``ConstantOfShape`` of its shape (the files stay small). Quantizing
such a model gives constant tensors and degenerate scales, so here each of those nodes becomes a
seeded random initializer scaled by its role: He-normal convolution and dense weights (the
activations keep their spread through ReLU layers), small biases, batch-norm scales near one. A
batch norm's mean and variance are then measured on seeded random images, layer by layer, as a
trained network's would have been: without that, residual sums and layers without ReLU double the
spread at every block and the logits of ResNet-50 or ShuffleNet saturate their softmax. The
topologies are the zoo's; the weights are random (say so beside any accuracy).

    model = zoo_model("zfnet512", seed=0)     # float ModelProto, ready for ``quantize``
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

#: The zoo's networks, by the name after ``light_``.
ZOO_NAMES = ("bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50",
             "shufflenet", "squeezenet", "vgg19", "zfnet512")

#: Ops a constant passes through unchanged in role on its way to the op that uses it.
_PASS_THROUGH = ("Unsqueeze", "Reshape", "Squeeze", "Identity")
#: Ops whose input 1 is a weight (a reshape chain to it is folded into the initializer).
_WEIGHT_OPS = ("Conv", "Gemm", "MatMul")


def zoo_path(name: str) -> Path:
    """The light model file inside the installed ``onnx`` package."""
    if name not in ZOO_NAMES:
        raise ValueError(f"zoo model {name!r}: one of {', '.join(ZOO_NAMES)}")
    return Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / f"light_{name}.onnx"


def _consumers(graph: onnx.GraphProto) -> dict[str, list[tuple[onnx.NodeProto, int]]]:
    uses: dict[str, list[tuple[onnx.NodeProto, int]]] = {}
    for node in graph.node:
        for k, name in enumerate(node.input):
            uses.setdefault(name, []).append((node, k))
    return uses


def _role(tensor: str, uses: dict[str, list[tuple[onnx.NodeProto, int]]]) -> tuple[str, int, onnx.NodeProto | None]:
    """The op and input index that finally use ``tensor`` (through reshapes)."""
    seen = 0
    while seen < 8:
        users = uses.get(tensor, [])
        if not users:
            return "", -1, None
        node, k = users[0]
        if node.op_type in _PASS_THROUGH and k == 0:
            tensor, seen = node.output[0], seen + 1
            continue
        return node.op_type, k, node
    return "", -1, None


def _fan_in(shape: tuple[int, ...], op: str, node: onnx.NodeProto | None) -> int:
    if op == "Gemm" and len(shape) == 2:
        trans_b = any(a.name == "transB" and a.i for a in node.attribute) if node else False
        return shape[1] if trans_b else shape[0]
    return int(np.prod(shape[1:])) if len(shape) > 1 else int(shape[0])


def _value(shape: tuple[int, ...], op: str, k: int, node: onnx.NodeProto | None,
           rng: np.random.Generator) -> np.ndarray:
    """Random values for a weight of ``shape`` used as input ``k`` of ``op``."""
    if op in ("Conv", "Gemm", "MatMul") and k == 1:
        return rng.normal(0.0, np.sqrt(2.0 / max(_fan_in(shape, op, node), 1)), shape)
    if op == "BatchNormalization":
        if k == 1:  # scale
            return rng.uniform(0.8, 1.2, shape)
        if k == 4:  # variance
            return rng.uniform(0.5, 1.5, shape)
        return rng.normal(0.0, 0.1, shape)  # bias, mean
    if op == "Mul":
        return rng.uniform(0.8, 1.2, shape)
    return rng.normal(0.0, 0.05, shape)  # biases and shifts


def _fold_reshapes(name: str, value: np.ndarray,
                   uses: dict[str, list[tuple[onnx.NodeProto, int]]],
                   inits: dict[str, onnx.TensorProto], folded: set[int]) -> tuple[str, np.ndarray]:
    """A weight's ``Reshape`` / ``Identity`` chain (the one consumer each, constant shapes)
    applied to ``value``: the tensor name and value the weight's operator reads. The nodes
    folded are added to ``folded`` (by ``id``). The zoo writes Inception v1's classifier weight
    as ``Reshape(placeholder)``; left as a node, ``quantize_static`` takes the reshaped weight
    for an activation (uint8 with a zero point, 119 at seed 0), which leaves values outside
    int8 once the zero point is taken off, and its Gemm on the CPU."""
    while len(uses.get(name, [])) == 1:
        node, k = uses[name][0]
        if k != 0 or node.op_type not in ("Reshape", "Identity"):
            break
        if node.op_type == "Reshape":
            if len(node.input) < 2 or node.input[1] not in inits:
                break
            dims = [int(d) for d in numpy_helper.to_array(inits[node.input[1]])]
            value = value.reshape([value.shape[i] if d == 0 else d for i, d in enumerate(dims)])
        folded.add(id(node))
        name = node.output[0]
    return name, value


def materialize(model: onnx.ModelProto, seed: int = 0) -> onnx.ModelProto:
    """``model`` with every ``ConstantOfShape`` of a constant shape replaced by a seeded random
    initializer of that shape; unused initializers and initializer-inputs dropped."""
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    uses = _consumers(graph)
    rng = np.random.default_rng(seed)
    kept, made, folded = [], [], set()
    for node in graph.node:
        if id(node) in folded:
            continue
        if node.op_type != "ConstantOfShape" or node.input[0] not in inits:
            kept.append(node)
            continue
        shape = tuple(int(d) for d in numpy_helper.to_array(inits[node.input[0]]))
        op, k, user = _role(node.output[0], uses)
        value = _value(shape, op, k, user, rng).astype(np.float32)
        name = node.output[0]
        if op in _WEIGHT_OPS and k == 1:
            name, value = _fold_reshapes(name, value, uses, inits, folded)
        made.append(numpy_helper.from_array(value, name))
    del graph.node[:]
    graph.node.extend(kept)
    used = {name for node in graph.node for name in node.input}
    init_names = set(inits)
    keep_inits = [i for i in graph.initializer if i.name in used] + made
    del graph.initializer[:]
    graph.initializer.extend(keep_inits)
    inputs = [i for i in graph.input if i.name not in init_names]
    del graph.input[:]
    graph.input.extend(inputs)
    model.ir_version = max(model.ir_version, 4)  # IR 4 lets initializers be no inputs
    onnx.checker.check_model(model)
    _calibrate_batch_norms(model, rng)
    return model


def _calibrate_batch_norms(model: onnx.ModelProto, rng: np.random.Generator) -> None:
    """Each batch norm's mean and variance set to the per-channel statistics of its input on a
    few random images, the earlier ones already calibrated. One onnxruntime session with the
    statistics as inputs and every batch norm's input as an output; each round fixes the batch
    norms one level deeper, so it stops when a round changes nothing."""
    import onnxruntime as ort

    graph = model.graph
    norms = [n for n in graph.node if n.op_type == "BatchNormalization"]
    if not norms:
        return
    stats = {n.input[k] for n in norms for k in (3, 4)}
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    inits = [i for i in probe.graph.initializer if i.name not in stats]
    del probe.graph.initializer[:]
    probe.graph.initializer.extend(inits)
    values = {i.name: numpy_helper.to_array(i) for i in graph.initializer if i.name in stats}
    probe.graph.input.extend(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT,
                                                                list(v.shape))
                             for name, v in values.items())
    del probe.graph.output[:]
    probe.graph.output.extend(onnx.helper.make_empty_tensor_value_info(n.input[0]) for n in norms)
    sess = ort.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"])
    image = graph.input[0]
    dims = [d.dim_value or 1 for d in image.type.tensor_type.shape.dim]
    images = rng.normal(0.0, 1.0, [2, *dims]).astype(np.float32)
    for _ in norms:
        runs = [sess.run(None, {image.name: x, **values}) for x in images]
        changed = False
        for k, norm in enumerate(norms):
            act = np.concatenate([r[k] for r in runs]).astype(np.float64)
            axes = (0, *range(2, act.ndim))
            with np.errstate(all="ignore"):  # deeper, not yet calibrated norms overflow
                mean = act.mean(axis=axes).astype(np.float32)
                var = (act.var(axis=axes) + 1e-3).astype(np.float32)
            changed |= not (np.allclose(mean, values[norm.input[3]], rtol=1e-4, atol=1e-6)
                            and np.allclose(var, values[norm.input[4]], rtol=1e-4))
            values[norm.input[3]], values[norm.input[4]] = mean, var
        if not changed:
            break
    for init in graph.initializer:
        if init.name in values:
            init.CopyFrom(numpy_helper.from_array(values[init.name], init.name))


def zoo_model(name: str, seed: int = 0) -> onnx.ModelProto:
    """The light zoo network ``name`` with seeded random weights (float)."""
    return materialize(onnx.load(str(zoo_path(name))), seed)


def _maker(name: str) -> Callable[..., onnx.ModelProto]:
    def make(seed: int = 0) -> onnx.ModelProto:
        return zoo_model(name, seed)
    make.__doc__ = f"The onnx package's light {name} with seeded random weights (float)."
    return make


#: ``python -m vtabench.workloads`` names: ``zoo_<name>``.
ZOO_MODELS: dict[str, Callable[..., onnx.ModelProto]] = {f"zoo_{n}": _maker(n) for n in ZOO_NAMES}
