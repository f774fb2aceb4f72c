"""Static quantization of a float ONNX model by onnxruntime (``quantize_static``), as a user
would run it before ``vtabench compile``: QDQ format, int8 weights, per-tensor or per-channel
weight scales, int8 activations (symmetric by default; ``symmetric=False`` gives onnxruntime's
asymmetric zero points, ``activation="uint8"`` uint8 activations).

    q = quantize(model, calib)        # calib: (N, C, H, W) float32 samples, one per batch of 1
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import Any

import numpy as np


def quantize(model: Any, calib: np.ndarray, *, per_channel: bool = False,
             symmetric: bool = True, activation: str = "int8",
             calibration: str = "minmax") -> Any:
    """``model``: ModelProto or path; ``calib``: calibration inputs, shape (N, *input shape
    without the batch) or (N, 1, ...); ``calibration``: onnxruntime's ``CalibrationMethod``
    (``minmax``, its default; ``percentile`` clips the 0.001% outliers of each range, which
    PaddleOCR's recognizer needs to read text in int8). Returns the quantized ModelProto."""
    import onnx
    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod,
                                          QuantFormat, QuantType, quantize_static)

    if not isinstance(model, onnx.ModelProto):
        model = onnx.load(str(model))
    inits = {i.name for i in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in inits]
    if len(inputs) != 1:
        raise ValueError(f"quantize: the model has {len(inputs)} inputs; one is supported")
    dims = [d.dim_value for d in inputs[0].type.tensor_type.shape.dim]
    calib = np.asarray(calib, np.float32)
    if calib.ndim == len(dims) + 1 and calib.shape[1] == 1:
        calib = calib[:, 0]
    if tuple(calib.shape[1:]) != tuple(dims[1:]):
        raise ValueError(f"quantize: calibration samples of shape {calib.shape[1:]}, the "
                         f"input {inputs[0].name!r} takes {tuple(dims[1:])}")
    if activation not in ("int8", "uint8"):
        raise ValueError(f"quantize: activation type {activation!r} (int8 or uint8)")
    methods = {"minmax": CalibrationMethod.MinMax, "percentile": CalibrationMethod.Percentile,
               "entropy": CalibrationMethod.Entropy}
    if calibration not in methods:
        raise ValueError(f"quantize: calibration {calibration!r} ({', '.join(methods)})")

    class Reader(CalibrationDataReader):
        """The samples of the one input, each a batch of 1."""

        def __init__(self) -> None:
            self.items = iter([{inputs[0].name: s[None]} for s in calib])

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.items, None)

    with tempfile.TemporaryDirectory(prefix="vtabench-quant-") as tmp:
        src, dst = Path(tmp) / "float.onnx", Path(tmp) / "quant.onnx"
        onnx.save(model, str(src))
        level = logging.getLogger().level
        logging.getLogger().setLevel(logging.ERROR)  # onnxruntime's pre-processing advice
        try:
            quantize_static(
                str(src), str(dst), Reader(),
                quant_format=QuantFormat.QDQ, per_channel=per_channel,
                calibrate_method=methods[calibration],
                activation_type=QuantType.QInt8 if activation == "int8" else QuantType.QUInt8,
                weight_type=QuantType.QInt8,
                extra_options={"ActivationSymmetric": symmetric, "WeightSymmetric": True})
        finally:
            logging.getLogger().setLevel(level)
        return onnx.load(str(dst))


def calibration_set(model: Any, count: int = 8, seed: int = 0) -> np.ndarray:
    """``count`` seeded standard-normal samples of the model's input (without the batch)."""
    inits = {i.name for i in model.graph.initializer}
    inp = next(i for i in model.graph.input if i.name not in inits)
    dims = [d.dim_value for d in inp.type.tensor_type.shape.dim]
    return np.random.default_rng([seed, 7]).standard_normal((count, *dims[1:])).astype(
        np.float32)
