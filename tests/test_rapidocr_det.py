"""PaddleOCR's text detector (``ch_PP-OCRv4_det_infer.onnx``, a DBNet, as the
``rapidocr_onnxruntime`` wheel ships it: vtabench.workloads.rapidocr) quantized by
``quantize_static`` on rendered pages of text and compiled for the default configuration.

What runs where is checked node by node: every CPU node is one of the operators named in
:data:`CPU_OPS` and carries its reason, and the device programs (syncs per inference) are
counted. The model's float output is checked first to find the rendered text (so the pages
are inputs the detector reads as text, not noise).
"""

from __future__ import annotations

import numpy as np
import pytest

from vtabench.graph import compile_model
from vtabench.graph.ir import VTA
from vtabench.workloads import rapidocr
from vtabench.workloads.quantize import quantize

pytestmark = pytest.mark.tvm

CFG = "default"


def test_detector_shape_and_pages():
    """The fixed input shape reaches the output (the probability map of the page), and the
    float detector finds text on every rendered page: some pixels above DBNet's threshold 0.3
    (``Det.thresh`` in the package's config), most below."""
    import onnxruntime as ort

    model = rapidocr.detector_model()
    dims = [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]
    assert dims == [1, 1, *rapidocr.DETECTOR_SHAPE[2:]]
    pages = rapidocr.text_scenes(3, seed=2)
    assert pages.shape == (3, *rapidocr.DETECTOR_SHAPE[1:])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for x in pages:
        prob = sess.run(None, {model.graph.input[0].name: x[None]})[0]
        text = float((prob > 0.3).mean())
        assert 0.005 < text < 0.5, text


def test_cli_writes_the_detector_and_pages(tmp_path):
    """``python -m vtabench.workloads.rapidocr --detector``: the model with its fixed shape,
    the calibration pages and one file per page; ``--lines`` with it is refused (exit 2)."""
    import onnx

    out = tmp_path / "det.onnx"
    assert rapidocr.main(["--detector", "-o", str(out), "--calib", str(tmp_path / "c.npy"),
                          "--pages", str(tmp_path / "p.npy"), "--count", "2"]) == 0
    dims = [d.dim_value for d in onnx.load(str(out)).graph.input[0].type.tensor_type.shape.dim]
    assert tuple(dims) == rapidocr.DETECTOR_SHAPE
    assert np.load(tmp_path / "c.npy").shape == (16, *rapidocr.DETECTOR_SHAPE[1:])
    assert np.array_equal(np.load(tmp_path / "p-1.npy")[0], rapidocr.text_scenes(2, seed=2)[1])
    with pytest.raises(SystemExit) as exc:
        rapidocr.main(["--detector", "-o", str(out), "--lines", str(tmp_path / "x.npy")])
    assert exc.value.code == 2


@pytest.fixture(scope="module")
def detector():
    """(quantized model, package): symmetric int8 activations, calibrated on 16 pages."""
    q = quantize(rapidocr.detector_model(), rapidocr.text_scenes(16, seed=1))
    return q, compile_model(q, CFG)


#: Relax operators the detector leaves on the CPU: the input's quantize, the Sigmoid (no exact
#: integer form) with the dequantize before it and the quantize after it, the output's
#: dequantize.
CPU_OPS = {"relax.quantize", "relax.dequantize", "relax.sigmoid"}


@pytest.mark.slow
def test_detector_placement(detector):
    """The 62 convolutions (with the batch norms, hard-swishes and SE blocks around them), the
    6 nearest Resizes of the FPN (2x, 4x, 8x) and the head's 2 ConvTransposes run on VTA in one
    device program; every CPU node is one of :data:`CPU_OPS` and names its reason."""
    _, pkg = detector
    nodes = pkg.manifest["nodes"]
    cpu = [n for n in nodes if n["device"] != VTA and n["op"] not in ("input", "copy")]
    assert {n["op"] for n in cpu} <= CPU_OPS, sorted({n["op"] for n in cpu})
    assert all(n.get("reason") for n in cpu)
    ops = [n["op"] for n in nodes if n["device"] == VTA and n["op"] != "copy"]
    assert sum(op.split(" ")[0] == "conv2d" for op in ops) >= 64
    assert ops.count("conv2d (transpose)") == 2 and ops.count("resize") == 6
    assert {"mul", "avgpool"} <= {op.split(" ")[0] for op in ops}
    assert len(pkg.programs) == 1


@pytest.mark.slow
@pytest.mark.parametrize("target", ["fsim", "opencl"])
def test_detector_vs_onnxruntime(detector, target):
    """On a rendered page: each VTA operator within one step of onnxruntime's int8 model on
    its inputs (two where an Add is fused into the conv before it), and the text mask (the
    probability above 0.3) of VTA's output equal to onnxruntime's on at least 99% of the
    pixels (end to end, the one-step differences of the layers add up in the steep map)."""
    from test_real_models import _assert_within_one_step, _layerwise

    q, pkg = detector
    x = rapidocr.text_scenes(1, seed=2)
    outs, _, theirs, lw = _layerwise(pkg, q, [x], target=target)
    _assert_within_one_step(pkg, lw)
    ours, onnxruntime_out = outs[0][0], theirs[0][q.graph.output[0].name]
    assert float(((ours > 0.3) == (onnxruntime_out > 0.3)).mean()) > 0.99
