"""Large networks quantized by onnxruntime, on VTA (all marked slow).

ResNet-18 and ResNet-50 (per-tensor and per-channel weight scales, int8 symmetric activations)
compile with every conv/Gemm MAC on VTA in one device program, run bit-identical to the integer
reference, and each VTA operator run alone on onnxruntime's inputs is within one quantization
step of onnxruntime (layer by layer; end-to-end figures are in docs/graph.md, from
bench/bench_quantized.py). ResNet-18 also on every other target (opencl, rtl). The
MobileNetV2-like network (depthwise convolutions as blockwise GEMMs) and the detector
(LeakyReLU, max pools, the concat and the nearest upsample on VTA) compile and run with what
is legal on VTA.
"""

from __future__ import annotations

import numpy as np
import pytest

from vtabench.drivers import open_device
from vtabench.graph import compile_model, reference_package
from vtabench.graph.compare import Deviation, device_tensors, layer_inputs, layerwise
from vtabench.graph.compare import onnxruntime_tensors
from vtabench.graph.execute import Executor
from vtabench.workloads.float_models import FLOAT_MODELS
from vtabench.workloads.quantize import calibration_set, quantize

from targets_env import targets_from_env

pytestmark = [pytest.mark.tvm, pytest.mark.slow]

TARGETS = targets_from_env("VTABENCH_GRAPH_TARGETS")
CFG = "default"
FORMS = {"tensor": False, "channel": True}


@pytest.fixture(scope="module")
def compiled():
    cache: dict[tuple[str, str], tuple] = {}

    def get(net: str, form: str) -> tuple:
        if (net, form) not in cache:
            fm = FLOAT_MODELS[f"{net}_float"]()
            q = quantize(fm, calibration_set(fm, 8), per_channel=FORMS[form])
            cache[(net, form)] = (q, compile_model(q, CFG),  # profile: layerwise runs them
                                  reference_package(q, CFG))
        return cache[(net, form)]
    return get


def _input(pkg) -> np.ndarray:
    shape = pkg.manifest["inputs"][0]["shape"]
    return np.random.default_rng(11).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("net", ["resnet18", "resnet50"])
def test_resnet(compiled, net, form):
    q, pkg, ref = compiled(net, form)
    st = pkg.manifest["stats"]
    assert st["macs_conv_gemm_vta"] >= 0.95 * st["macs_conv_gemm"] > 0
    assert st["syncs_per_inference"] == 1
    x = _input(pkg)
    with open_device("fsim", CFG, max(pkg.mem_bytes, ref.mem_bytes)) as dev:
        ex = Executor(pkg, dev)
        out = ex.run([x]).outputs
        for a, b in zip(out, Executor(ref, dev).run([x]).outputs, strict=True):
            assert np.array_equal(a, b)
        ours = device_tensors(ex)
        theirs = onnxruntime_tensors(q, list(ours) + layer_inputs(ex),
                                     {q.graph.input[0].name: x})
        lw = layerwise(ex, theirs, Deviation())
    assert lw.tensors == len(pkg.manifest["layers"])  # every VTA layer, the max pool too
    assert lw.max_steps <= 1 and lw.fraction_exact >= 0.999, (lw.max_steps, lw.fraction_exact)


@pytest.mark.parametrize("target", [t for t in TARGETS if t != "fsim"])
def test_resnet18_targets(compiled, target):
    _, pkg, ref = compiled("resnet18", "channel")
    x = _input(pkg)
    with open_device("fsim", CFG, ref.mem_bytes) as dev:
        want = Executor(ref, dev).run([x]).outputs
    with open_device(target, CFG, pkg.mem_bytes) as dev:
        got = Executor(pkg, dev).run([x])
    for a, b in zip(got.outputs, want, strict=True):
        assert np.array_equal(a, b), target
    assert got.per_inference["syncs"] == 1


@pytest.mark.parametrize("net", ["mobilenetv2", "yolo_tiny"])
def test_other_networks(compiled, net):
    _, pkg, ref = compiled(net, "channel")
    nodes = pkg.manifest["nodes"]
    # each node names the ONNX tensor it computes, a different one each (MobileNetV2's ReLU6
    # chains share one composite function: the names come from the calls' order)
    names = [n["onnx"] for n in nodes if n.get("onnx")]
    assert len(names) == len(set(names)) > 20
    convs = [n for n in nodes if n["op"].split(" ")[0] == "conv2d"]
    assert convs and all(n["device"] == "vta" for n in convs), [
        (n["name"], n.get("reason")) for n in convs if n["device"] != "vta"]
    if net == "mobilenetv2":  # depthwise convs as blockwise GEMMs: one program
        assert pkg.manifest["stats"]["syncs_per_inference"] == 1
        assert any("blockwise" in layer["shape"] for layer in pkg.manifest["layers"].values())
    else:  # LeakyReLUs, max pools, the concat and the upsample on VTA
        cpu_ops = {n["op"] for n in nodes if n["device"] == "cpu"}
        assert "relax.image.resize2d" not in cpu_ops and "relax.concat" not in cpu_ops
        assert all(n["device"] == "vta" for n in nodes
                   if n["op"] in ("leaky", "maxpool", "resize"))
        assert pkg.manifest["stats"]["syncs_per_inference"] == 1
    x = _input(pkg)
    with open_device("fsim", CFG, max(pkg.mem_bytes, ref.mem_bytes)) as dev:
        a = Executor(pkg, dev).run([x]).outputs
        b = Executor(ref, dev).run([x]).outputs
    for u, v in zip(a, b, strict=True):
        assert np.array_equal(u, v)
