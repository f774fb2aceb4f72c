"""Real pretrained networks from a wheel: PaddleOCR's text-direction classifier, text
detector and text recognizer as the ``rapidocr_onnxruntime`` package (1.4.4, a test
dependency) ships them, and inputs for them.

The models are read from the installed package (``importlib``), never downloaded. Their inputs
are dynamic (batch, height, width); :func:`classifier_model` fixes the classifier's to the shape
the package's own code feeds (``Cls.cls_image_shape`` in its ``config.yaml``: 3 x 48 x 192, a
batch of 1), :func:`detector_model` the detector's to :data:`DETECTOR_SHAPE` (the package's
``DetPreProcess`` resizes an image to multiples of 32, at least 736 on its short side; a small
image of one text line keeps the tests and the simulator fast).
:func:`text_lines` renders text with the DejaVu fonts matplotlib ships, rotated by 0 or 180
degrees (the label), and normalizes it as the package's ``TextClassifier.resize_norm_img`` does
(height 48, width by the aspect ratio up to 192, ``(x / 255 - 0.5) / 0.5``, zero padding right).
:func:`text_scenes` pastes such lines onto a white page of the detector's shape and normalizes
it as ``DetPreProcess.normalize`` does (mean and std 0.5: the same formula).
:func:`recognizer_model` fixes the recognizer's input to ``Rec.rec_img_shape`` (3 x 48 x 320);
:func:`text_strings` renders strings for it (normalized as ``TextRecognizer.resize_norm_img``
does: the same formula as the classifier's, at the recognizer's shape) and
:func:`ctc_decode` reads its output with the dictionary the model carries in its metadata.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from typing import Any

import numpy as np

PACKAGE = "rapidocr_onnxruntime"
CLASSIFIER = "ch_ppocr_mobile_v2.0_cls_infer.onnx"
DETECTOR = "ch_PP-OCRv4_det_infer.onnx"
RECOGNIZER = "ch_PP-OCRv4_rec_infer.onnx"
#: The detector's input shape here: a batch of 1, RGB, a page of 64 x 256 pixels (multiples of
#: 32, as ``DetPreProcess.resize_image_type0`` makes them).
DETECTOR_SHAPE = (1, 3, 64, 256)
#: The classifier's labels, index = output position (``Cls.label_list``).
LABELS = (0, 180)


class MissingPackage(RuntimeError):
    """The wheel that ships the model is not installed."""


def _package_dir() -> Path:
    """The installed package's folder, found without importing it: its ``__init__`` imports
    OpenCV, whose wheel needs the system's libGL."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise MissingPackage(f"{PACKAGE} is not installed (pip install '.[test]')")
    return Path(next(iter(spec.submodule_search_locations)))


def _config() -> dict[str, Any]:
    import yaml  # PyYAML: a dependency of the package

    return yaml.safe_load((_package_dir() / "config.yaml").read_text())


def classifier_shape() -> tuple[int, int, int, int]:
    """(1, C, H, W): a batch of 1 of the package's own classifier input shape."""
    c, h, w = _config()["Cls"]["cls_image_shape"]
    return (1, int(c), int(h), int(w))


def recognizer_shape() -> tuple[int, int, int, int]:
    """(1, C, H, W): a batch of 1 of the package's own recognizer input shape
    (``Rec.rec_img_shape``, 3 x 48 x 320)."""
    c, h, w = _config()["Rec"]["rec_img_shape"]
    return (1, int(c), int(h), int(w))


def _fixed_model(file: str, shape: tuple[int, int, int, int]) -> Any:
    """A model of the package with its input shape fixed and its ``Constant`` nodes as
    initializers (Paddle's exporter writes the weights as ``Constant`` nodes, which
    onnxruntime's quantizer takes for activations: it would quantize them at run time instead
    of storing int8 weights)."""
    import onnx

    model = onnx.load(str(_package_dir() / "models" / file))
    consts = [n for n in model.graph.node if n.op_type == "Constant"]
    for n in consts:
        t = onnx.TensorProto()
        t.CopyFrom(n.attribute[0].t)
        t.name = n.output[0]
        model.graph.initializer.append(t)
    nodes = [n for n in model.graph.node if n.op_type != "Constant"]
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    inp = model.graph.input[0]
    for dim, value in zip(inp.type.tensor_type.shape.dim, shape):
        dim.Clear()
        dim.dim_value = value
    del model.graph.value_info[:]  # inferred again for the fixed shape
    return onnx.shape_inference.infer_shapes(model)


def classifier_model() -> Any:
    """The float classifier as a ModelProto, its input shape fixed (:func:`classifier_shape`)."""
    return _fixed_model(CLASSIFIER, classifier_shape())


def detector_model() -> Any:
    """The float text detector (PP-OCRv4's DBNet) as a ModelProto, its input shape fixed to
    :data:`DETECTOR_SHAPE`; its output is the text probability map of the input's size."""
    return _fixed_model(DETECTOR, DETECTOR_SHAPE)


def recognizer_model() -> Any:
    """The float text recognizer (PP-OCRv4's SVTR-style CRNN with a CTC head) as a ModelProto,
    its input shape fixed (:func:`recognizer_shape`) and its opset raised from 12 to 13 (the
    version converter: the same operators, and ``DequantizeLinear`` gets the ``axis`` that
    per-channel weight scales need; with per-tensor scales the int8 model reads none of the
    rendered lines); its output is (1, T, classes), the per-column class probabilities
    (T = W / 8 = 40 columns at width 320)."""
    from onnx import version_converter

    return version_converter.convert_version(_fixed_model(RECOGNIZER, recognizer_shape()), 13)


def quantize_recognizer() -> Any:
    """The recognizer quantized as the tests and docs use it: onnxruntime's ``quantize_static``
    on 16 rendered lines (:func:`text_strings`, seed 1), per-channel int8 weights, symmetric
    int8 activations, percentile calibration (minmax, onnxruntime's default, leaves the int8
    model reading a stray character at the end of most lines; per-tensor weights, none)."""
    from vtabench.workloads.quantize import quantize

    return quantize(recognizer_model(), text_strings(16, seed=1)[0], per_channel=True,
                    calibration="percentile")


def dictionary() -> tuple[str, ...]:
    """The recognizer's classes, index = output position, as the package's ``CTCLabelDecode``
    builds them: the CTC blank (index 0), the characters of the model's ``character`` metadata
    (one a line, 6623), then the space."""
    import onnx

    model = onnx.load(str(_package_dir() / "models" / RECOGNIZER), load_external_data=False)
    chars = [p.value for p in model.metadata_props if p.key == "character"]
    if not chars:
        raise MissingPackage(f"{RECOGNIZER} has no 'character' metadata (the dictionary)")
    return ("", *chars[0].splitlines(), " ")


def ctc_decode(probs: np.ndarray, classes: tuple[str, ...] | None = None) -> str:
    """CTC greedy decoding of one line, as ``CTCLabelDecode`` does: the most probable class per
    column, repeats merged, blanks (index 0) dropped. ``probs``: (T, classes) or (1, T,
    classes), float or int8 (the argmax is the same for any increasing map);
    ``classes``: :func:`dictionary` unless given."""
    probs = np.asarray(probs)
    if probs.ndim == 3 and probs.shape[0] == 1:
        probs = probs[0]
    classes = dictionary() if classes is None else classes
    if probs.ndim != 2 or probs.shape[1] != len(classes):
        raise ValueError(f"ctc_decode: probabilities of shape {probs.shape}, expected "
                         f"(T, {len(classes)}) or (1, T, {len(classes)})")
    best = probs.argmax(axis=1)
    keep = np.ones(len(best), bool)
    keep[1:] = best[1:] != best[:-1]
    keep &= best != 0
    return "".join(classes[i] for i in best[keep])


WORDS = ("VTA accelerator", "hello world", "Quantized int8", "OpenCL kernel", "text 2026",
         "PaddleOCR", "The quick brown fox", "Verilator", "direction", "ONNX runtime",
         "jumps over 13 dogs", "co-simulation")
FONTS = ("DejaVuSans.ttf", "DejaVuSerif.ttf", "DejaVuSansMono.ttf", "DejaVuSans-Bold.ttf")


def _render(text: str, font_file: str, size: int) -> np.ndarray:
    """Black text on white, RGB uint8, cropped to the text with a small margin."""
    import matplotlib
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(str(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / font_file),
                              size)
    left, top, right, bottom = font.getbbox(text)
    pad = max(2, size // 6)
    img = Image.new("RGB", (right - left + 2 * pad, bottom - top + 2 * pad), (255, 255, 255))
    ImageDraw.Draw(img).text((pad - left, pad - top), text, font=font, fill=(0, 0, 0))
    return np.asarray(img)


def normalize(img: np.ndarray, shape: tuple[int, int, int, int]) -> np.ndarray:
    """``TextClassifier.resize_norm_img``: (H, W, 3) uint8 -> (C, H, W) float32 (bilinear
    resize by PIL instead of OpenCV)."""
    from PIL import Image

    _, c, h, w = shape
    rw = min(w, math.ceil(h * img.shape[1] / img.shape[0]))
    small = np.asarray(Image.fromarray(img).resize((rw, h), Image.BILINEAR), np.float32)
    out = np.zeros((c, h, w), np.float32)
    out[:, :, :rw] = (small.transpose(2, 0, 1) / 255 - 0.5) / 0.5
    return out


def text_lines(count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``count`` rendered lines (N, C, H, W) float32 and their labels (index into
    :data:`LABELS`): word, font and size drawn from ``seed``, every other line turned 180
    degrees."""
    rng = np.random.default_rng([seed, 27])
    shape = classifier_shape()
    xs, labels = [], []
    for i in range(count):
        img = _render(str(WORDS[rng.integers(len(WORDS))]), str(FONTS[rng.integers(len(FONTS))]),
                      int(rng.integers(18, 40)))
        label = i % 2
        if label:
            img = img[::-1, ::-1]
        xs.append(normalize(np.ascontiguousarray(img), shape))
        labels.append(label)
    return np.stack(xs), np.asarray(labels)


#: Characters of random strings for the recognizer: ASCII letters and digits, all in its
#: dictionary (no shipped font renders its Chinese characters: DejaVu has no CJK glyphs).
ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def text_strings(count: int, seed: int = 0) -> tuple[np.ndarray, list[str]]:
    """``count`` rendered text lines (N, C, H, W) float32 normalized as the package's
    ``TextRecognizer.resize_norm_img`` does for the shape of :func:`recognizer_shape` (the
    formula of :func:`normalize`), and their strings: every other line one of :data:`WORDS`,
    the others random strings of 3 to 10 :data:`ALPHANUMERIC` characters; font and size drawn
    from ``seed``."""
    rng = np.random.default_rng([seed, 29])
    shape = recognizer_shape()
    xs, labels = [], []
    for i in range(count):
        if i % 2:
            text = "".join(rng.choice(list(ALPHANUMERIC), int(rng.integers(3, 11))))
        else:
            text = str(WORDS[rng.integers(len(WORDS))])
        img = _render(text, str(FONTS[rng.integers(len(FONTS))]), int(rng.integers(18, 40)))
        xs.append(normalize(img, shape))
        labels.append(text)
    return np.stack(xs), labels


def text_scenes(count: int, seed: int = 0) -> np.ndarray:
    """``count`` pages of :data:`DETECTOR_SHAPE` (N, C, H, W) float32, each with one or two
    rendered lines (word, font, size and place drawn from ``seed``) on white, normalized as
    ``DetPreProcess.normalize`` does: ``(x / 255 - 0.5) / 0.5``."""
    from PIL import Image

    rng = np.random.default_rng([seed, 28])
    _, _, h, w = DETECTOR_SHAPE
    pages = []
    for _ in range(count):
        page = Image.new("RGB", (w, h), (255, 255, 255))
        lines = int(rng.integers(1, 3))
        for k in range(lines):
            img = Image.fromarray(_render(str(WORDS[rng.integers(len(WORDS))]),
                                          str(FONTS[rng.integers(len(FONTS))]),
                                          int(rng.integers(12, 22))))
            band = h // lines  # each line in its own horizontal band
            scale = min(1.0, (w - 8) / img.width, (band - 2) / img.height)
            img = img.resize((max(1, int(img.width * scale)), max(1, int(img.height * scale))),
                             Image.BILINEAR)
            page.paste(img, (int(rng.integers(0, w - img.width + 1)),
                             k * band + int(rng.integers(0, band - img.height + 1))))
        pages.append((np.asarray(page, np.float32).transpose(2, 0, 1) / 255 - 0.5) / 0.5)
    return np.stack(pages).astype(np.float32)


def main(argv: list[str] | None = None) -> int:
    """``python -m vtabench.workloads.rapidocr -o CLS.onnx [--calib C.npy] [--lines X.npy]``:
    the float classifier (shape fixed) and rendered lines to calibrate and test it with;
    ``--detector -o DET.onnx [--calib C.npy] [--pages X.npy]``: the text detector and rendered
    pages."""
    import argparse

    import onnx

    ap = argparse.ArgumentParser(prog="python -m vtabench.workloads.rapidocr",
                                 description=main.__doc__)
    ap.add_argument("-o", "--output", required=True, metavar="CLS.onnx")
    ap.add_argument("--calib", metavar="C.npy", help="16 rendered lines (seed 1), (N, C, H, W)")
    ap.add_argument("--lines", metavar="X.npy",
                    help="--count rendered lines (seed 2), one file per line: X-0.npy, ... "
                         "(1, C, H, W) each, labels in X-labels.npy (0: 0 degrees, 1: 180)")
    ap.add_argument("--count", type=int, default=4, metavar="N")
    ap.add_argument("--detector", action="store_true",
                    help=f"the text detector ({DETECTOR}, input {DETECTOR_SHAPE}) instead; "
                         f"--calib then writes 16 rendered pages (seed 1)")
    ap.add_argument("--pages", metavar="X.npy",
                    help="with --detector: --count rendered pages (seed 2), one file per page: "
                         "X-0.npy, ... (1, C, H, W) each")
    args = ap.parse_args(argv)
    if args.detector and args.lines or args.pages and not args.detector:
        ap.error("--lines goes with the classifier, --pages with --detector")
    try:
        onnx.save(detector_model() if args.detector else classifier_model(), args.output)
    except MissingPackage as e:
        ap.exit(2, f"{ap.prog}: error: {e}\n")
    if args.calib:
        np.save(args.calib, text_scenes(16, seed=1) if args.detector
                else text_lines(16, seed=1)[0])
    if args.pages:
        stem = args.pages.removesuffix(".npy")
        for k, x in enumerate(text_scenes(args.count, seed=2)):
            np.save(f"{stem}-{k}.npy", x[None])
    if args.lines:
        xs, labels = text_lines(args.count, seed=2)
        stem = args.lines.removesuffix(".npy")
        for k, x in enumerate(xs):
            np.save(f"{stem}-{k}.npy", x[None])
        np.save(f"{stem}-labels.npy", labels)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
