"""The onnx package's light zoo networks with seeded random weights (vtabench.workloads.zoo_models)."""

from __future__ import annotations

import time

import numpy as np
import onnx
import pytest

from vtabench.workloads.zoo_models import ZOO_NAMES, zoo_model, zoo_path


def _run(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {sess.get_inputs()[0].name: x})[0]


def test_every_zoo_file_ships_with_onnx() -> None:
    for name in ZOO_NAMES:
        assert zoo_path(name).is_file(), name


def test_weights_are_random_and_seeded() -> None:
    """No ConstantOfShape left; the network computes something that depends on its input and
    on the seed (constant weights would give one output for every input)."""
    name = "squeezenet"
    a, b = zoo_model(name, seed=0), zoo_model(name, seed=1)
    assert not [n for n in a.graph.node if n.op_type == "ConstantOfShape"]
    assert [i.name for i in a.graph.input] == [a.graph.input[0].name]  # the image only
    rng = np.random.default_rng(0)
    x0, x1 = (rng.normal(0, 1, (1, 3, 224, 224)).astype(np.float32) for _ in range(2))
    y00, y01, y10 = _run(a, x0), _run(a, x1), _run(b, x0)
    assert np.isfinite(y00).all()
    assert not np.array_equal(y00, y01)
    assert not np.array_equal(y00, y10)
    assert np.array_equal(y00, _run(zoo_model(name, seed=0), x0))


def test_unknown_name_is_named() -> None:
    with pytest.raises(ValueError, match="zoo model 'lenet'"):
        zoo_path("lenet")


def test_batch_norms_are_calibrated() -> None:
    """ShuffleNet's 48 batch norms take the statistics of their inputs: the logits keep their
    spread, so the softmax is not saturated (uncalibrated, every output is one-hot)."""
    model = zoo_model("shufflenet", seed=0)
    rng = np.random.default_rng(5)
    outs = [_run(model, rng.normal(0, 1, (1, 3, 224, 224)).astype(np.float32)) for _ in range(2)]
    for y in outs:
        assert np.isfinite(y).all() and 0 < y.max() < 0.5
    assert not np.array_equal(outs[0], outs[1])


@pytest.mark.slow
@pytest.mark.tvm
def test_shufflenet_on_vta():
    """The zoo's ShuffleNet (seed 0) quantized by quantize_static with the project's defaults
    (8 seeded calibration samples): its grouped convolutions and channel shuffles stay on VTA,
    so at least 95% of the conv / Gemm MACs run there (every conv and the Gemm), and so do the
    downsampling units' average-pool shortcuts (3 x 3, stride 2, padding not counted) and their
    Concats (two placement convs each); the one CPU part between device programs is the float
    tail that onnxruntime leaves unquantized (the last Add, ReLU and global pool), so 2 syncs.
    On one input, fsim is bit-identical to the integer reference and every VTA operator run
    alone on onnxruntime's inputs is within one step of onnxruntime (two at a fused residual
    Add)."""
    from test_real_models import _assert_within_one_step, _layerwise

    from vtabench.graph import compile_model, reference_package
    from vtabench.graph.ir import VTA
    from vtabench.workloads.quantize import calibration_set, quantize

    model = zoo_model("shufflenet", seed=0)
    q = quantize(model, calibration_set(model, 8))
    t0 = time.perf_counter()
    pkg = compile_model(q, "default")
    compile_s = time.perf_counter() - t0
    stats, nodes = pkg.manifest["stats"], pkg.manifest["nodes"]
    share = stats["macs_conv_gemm_vta"] / stats["macs_conv_gemm"]
    convs = [n for n in nodes if n["op"].split(" ")[0] in ("conv2d", "dense")]
    assert share >= 0.95 and all(n["device"] == VTA for n in convs), [
        (n["name"], n.get("reason")) for n in convs if n["device"] != VTA]
    pools = [n for n in nodes if n["op"] == "conv2d (average pool)"]
    assert len(pools) == 3 and all(n["device"] == VTA for n in pools)
    concats = {n.output[0] for n in q.graph.node if n.op_type == "Concat"}
    assert len(concats) == 3 and not [n for n in nodes if n["device"] != VTA and any(
        n.get("onnx", "").startswith(c) for c in concats)]
    assert len(pkg.programs) == 2
    ref = reference_package(q, "default")
    x = np.random.default_rng(5).standard_normal((1, 3, 224, 224)).astype(np.float32)
    outs, refs, _, lw = _layerwise(pkg, q, [x], ref=ref)
    assert all(np.array_equal(a, b) for a, b in zip(outs[0], refs[0], strict=True))
    _assert_within_one_step(pkg, lw)
    print(f"shufflenet: {share:.1%} of {stats['macs_conv_gemm']} MACs on VTA, "
          f"{len(pkg.programs)} syncs, {stats['insns']} instructions, compile "
          f"{compile_s:.1f} s; layer by layer max {max(v[0] for v in lw.per_tensor.values())} "
          f"steps, {lw.fraction_exact:.4%} exact over {len(lw.per_tensor)} tensors")


def test_reshaped_weight_is_an_initializer() -> None:
    """Inception v1's classifier weight, written by the zoo as a Reshape of its placeholder,
    is an initializer of the Gemm's shape (left a Reshape, quantize_static quantizes it as a
    uint8 activation and the Gemm has no integer form); the network computes the same as with
    the Reshape."""
    import onnx

    model = zoo_model("inception_v1", seed=0)
    gemm = next(n for n in model.graph.node if n.op_type == "Gemm")
    inits = {i.name: i for i in model.graph.initializer}
    assert gemm.input[1] in inits and list(inits[gemm.input[1]].dims) == [1000, 1024]
    assert not [n for n in model.graph.node if n.op_type == "Reshape" and n.output[0] == gemm.input[1]]
    raw = onnx.load(str(zoo_path("inception_v1")))
    reshape = next(n for n in raw.graph.node if n.output[0] == gemm.input[1])
    assert reshape.op_type == "Reshape"


@pytest.mark.tvm
def test_macs_count_a_conv_without_integer_form() -> None:
    """A conv the CPU runs because it has no integer form (a weight zero point outside int8)
    still counts in the model's conv / Gemm MACs, so the share on VTA drops by its MACs."""
    from onnx import numpy_helper

    from vtabench.graph import compile_model
    from vtabench.workloads import small_resnet

    def stats(odd: bool) -> dict:
        model = small_resnet(logits=True)
        if odd:
            conv = [n for n in model.graph.node if n.op_type == "Conv"][2]
            dqw = next(n for n in model.graph.node if n.output[0] == conv.input[1])
            model.graph.initializer.append(numpy_helper.from_array(np.array(100, np.int8),
                                                                   "odd_zero"))
            dqw.input[2] = "odd_zero"
        return compile_model(model, "default", profile=False).manifest["stats"]

    plain, odd = stats(False), stats(True)
    assert plain["macs_conv_gemm"] == plain["macs_conv_gemm_vta"] > 0
    assert odd["macs_conv_gemm"] == plain["macs_conv_gemm"]
    assert 0 < odd["macs_conv_gemm_vta"] < odd["macs_conv_gemm"]


def test_sweep_refuses_an_unknown_name(capsys: pytest.CaptureFixture[str]) -> None:
    from vtabench.workloads.zoo_sweep import main

    with pytest.raises(SystemExit) as exc:
        main(["squeezenet", "lenet"])
    assert exc.value.code == 2
    assert "unknown zoo network 'lenet'" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.tvm
@pytest.mark.opencl
@pytest.mark.parametrize("name", ZOO_NAMES)
def test_zoo_model_with_onnxruntime_defaults(name: str) -> None:
    """Issue #27's light models, quantized with onnxruntime's quantize_static defaults
    (asymmetric uint8 activations): at least 95% of the conv / Gemm MACs on VTA; on one seeded
    input the package on the opencl target (bit-identical to fsim) equals the integer reference,
    and every VTA operator run alone on onnxruntime's inputs is within one step of onnxruntime
    (two at a fused residual Add). docs/graph.md, "The onnx package's light models", has the
    figures; ZFNet-512's compile takes minutes (its conv1 tiles)."""
    from test_real_models import _layerwise, assert_exact_and_within_a_step

    from vtabench.graph import compile_model, reference_package
    from vtabench.workloads.zoo_sweep import package_row, quantized_zoo_model

    q = quantized_zoo_model(name)
    t0 = time.perf_counter()
    pkg = compile_model(q, "default")  # with the per-layer programs the comparison runs
    row = package_row(name, pkg, time.perf_counter() - t0)
    assert row.share >= 0.95, row.text()
    dims = [d.dim_value for d in q.graph.input[0].type.tensor_type.shape.dim]
    x = np.random.default_rng(5).standard_normal(dims).astype(np.float32)
    outs, refs, _, lw = _layerwise(pkg, q, [x], target="opencl",
                                   ref=reference_package(q, "default"))
    assert_exact_and_within_a_step(pkg, outs, refs, lw)
    print(f"{row.text()}\n  layer by layer max {lw.max_steps} steps, "
          f"{lw.fraction_exact:.4%} exact over {len(lw.per_tensor)} tensors")
