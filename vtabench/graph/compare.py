"""A compiled package against onnxruntime, tensor by tensor (the deviation figures of
docs/graph.md).

* End to end: after an inference, :func:`device_tensors` reads back every integer tensor a VTA
  operator wrote (by the ONNX name of the tensor it stands for); :func:`onnxruntime_tensors`
  runs the ONNX model in onnxruntime with those tensors as extra outputs; :func:`deviation`
  counts, over all of them, the elements that are equal and the largest difference in
  quantization steps. A difference in one layer moves the inputs of the next, so these grow
  with depth.
* Layer by layer: :func:`layerwise` writes onnxruntime's values of each VTA operator's inputs
  into the device, runs that operator's own program (the package's per-layer profiling
  program) and compares its output with onnxruntime's: the requantization arithmetic alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vtabench.graph.execute import Executor
from vtabench.graph.onnx_affine import quantize_before_maxpool
from vtabench.graph.onnx_concat import concat_to_convs
from vtabench.graph.onnx_prep import fold_constants
from vtabench.graph.onnx_reduce import reduce_mean_to_pool
from vtabench.graph.onnx_tokens import tokens_to_nchw
from vtabench.graph.pack import unpack_act


def _vta_layers(ex: Executor) -> list[dict[str, Any]]:
    return [n for n in ex.pkg.manifest["nodes"] if n["name"] in ex.pkg.manifest["layers"]
            and n.get("onnx")]


def _read(ex: Executor, n: dict[str, Any]) -> np.ndarray:
    t = ex.tensors[n["name"]]
    v = unpack_act(ex.dev.read(ex.base + t["addr"], t["nbytes"]), tuple(n["shape"]), ex.cfg)
    if n.get("offset"):
        v = (v.astype(np.int16) + n["offset"]).astype(np.uint8)
    return v


def _onnx_order(n: dict[str, Any], v: np.ndarray) -> np.ndarray:
    """A node's tensor in its ONNX tensor's channel order (a node a channel shuffle was folded
    into holds channel ``onnx_channels[c]`` of it in channel ``c``)."""
    perm = n.get("onnx_channels")
    if perm is None:
        return v
    out = np.empty_like(v)
    out[:, perm] = v
    return out


def _node_order(n: dict[str, Any], v: np.ndarray) -> np.ndarray:
    """The inverse of :func:`_onnx_order`: an ONNX tensor in the node's channel order."""
    perm = n.get("onnx_channels")
    return v if perm is None else np.ascontiguousarray(v[:, perm])


def device_tensors(ex: Executor) -> dict[str, np.ndarray]:
    """Every tensor a VTA operator of ``ex``'s package wrote in the last run, by ONNX name, in
    its ONNX type (uint8 tensors shifted back from their stored form) and channel order."""
    return {n["onnx"]: _onnx_order(n, _read(ex, n)) for n in _vta_layers(ex)}


def _source(ex: Executor, name: str) -> dict[str, Any]:
    """The node whose ONNX tensor a device tensor holds (through copies and conversions)."""
    n = ex.nodes[name]
    while n["op"] in ("copy", "to_stored") or (n["op"] in ("reshape", "relax.reshape")
                                               and not n.get("onnx")):
        n = ex.nodes[n["inputs"][0]]
    return n


def layerwise(ex: Executor, theirs: dict[str, np.ndarray],
              into: Deviation | None = None) -> Deviation:
    """Each VTA operator run alone on onnxruntime's values of its inputs (``theirs``, from
    :func:`onnxruntime_tensors` with :func:`layer_inputs` among the names), compared with
    onnxruntime's value of its output."""
    dev = into or Deviation()
    progs = {p.layers[0]: a for a, p in zip(ex.prof, ex.pkg.profile, strict=True)}
    for n in _vta_layers(ex):
        for i in n["inputs"]:
            src = _source(ex, i)
            v = _node_order(src, np.asarray(theirs[src["onnx"]]))
            if v.dtype == np.uint8:
                v = (v.astype(np.int16) - 128).astype(np.int8)
            ex.copy_in(i, v.astype(np.int8))  # in the tensor's device form (im2col...)
        addr, count = progs[n["name"]]
        ex.dev.run(addr, count, timeout_s=3600)
        dev.add(n["onnx"], _onnx_order(n, _read(ex, n)), np.asarray(theirs[n["onnx"]]))
    return dev


def layer_inputs(ex: Executor) -> list[str]:
    """The ONNX tensors :func:`layerwise` needs from onnxruntime."""
    names = {n["onnx"] for n in _vta_layers(ex)}
    for n in _vta_layers(ex):
        names.update(_source(ex, i)["onnx"] for i in n["inputs"])
    return sorted(names)


def onnxruntime_tensors(model: Any, names: list[str], inputs: dict[str, np.ndarray]
                        ) -> dict[str, np.ndarray]:
    """onnxruntime's values of the graph outputs and of the tensors ``names`` (made extra
    outputs of a copy of ``model``). The copy gets the tensors the compiler adds to a model,
    the quantized input of a max pool that follows a float operator
    (:func:`~vtabench.graph.onnx_affine.quantize_before_maxpool`: the same outputs, since
    rounding is monotone) and a Concat's placed operands
    (:func:`~vtabench.graph.onnx_concat.concat_to_convs`: the same outputs, its identity convs
    are exact) and a spatial ReduceMean's pool
    (:func:`~vtabench.graph.onnx_reduce.reduce_mean_to_pool`), so that each node can be
    compared on its own, and a token sequence in its map's layout (constants folded first:
    :func:`~vtabench.graph.onnx_tokens.tokens_to_nchw`, the same values moved), so that the
    tensors the compiler names hold what the compiled nodes compute."""
    import copy

    import onnx
    import onnxruntime as ort

    m = copy.deepcopy(model)
    fold_constants(m)
    tokens_to_nchw(m)
    m = onnx.shape_inference.infer_shapes(m)
    if quantize_before_maxpool(m) + concat_to_convs(m) + reduce_mean_to_pool(m):
        m = onnx.shape_inference.infer_shapes(m)
    types = {v.name: v.type.tensor_type.elem_type for v in
             list(m.graph.value_info) + list(m.graph.output)}
    have = {o.name for o in m.graph.output}
    for name in names:
        if name not in have:
            m.graph.output.append(onnx.helper.make_tensor_value_info(name, types[name], None))
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    outs = [o.name for o in sess.get_outputs()]
    return dict(zip(outs, sess.run(outs, inputs), strict=True))


@dataclass
class Deviation:
    """Differences of integer tensors in quantization steps."""

    tensors: int = 0
    elements: int = 0
    exact: int = 0
    max_steps: int = 0
    worst: str = ""  # the tensor with the largest difference
    per_tensor: dict[str, list[int]] = field(default_factory=dict)  # [max steps, exact, size]

    @property
    def fraction_exact(self) -> float:
        return self.exact / max(self.elements, 1)

    def add(self, name: str, ours: np.ndarray, theirs: np.ndarray) -> None:
        if ours.shape != theirs.shape:
            raise ValueError(f"{name}: shape {ours.shape}, onnxruntime's {theirs.shape}")
        d = np.abs(ours.astype(np.int32) - theirs.astype(np.int32))
        self.tensors += 1
        self.elements += d.size
        self.exact += int((d == 0).sum())
        m = int(d.max(initial=0))
        if m > self.max_steps or not self.worst:
            self.max_steps, self.worst = max(m, self.max_steps), name
        t = self.per_tensor.setdefault(name, [0, 0, 0])
        t[0], t[1], t[2] = max(t[0], m), t[1] + int((d == 0).sum()), t[2] + d.size


def deviation(ours: dict[str, np.ndarray], theirs: dict[str, np.ndarray],
              into: Deviation | None = None) -> Deviation:
    dev = into or Deviation()
    for name, v in ours.items():
        dev.add(name, v, theirs[name])
    return dev
