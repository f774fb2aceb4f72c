"""`vtabench quantize`: a float ONNX model -> the QDQ model onnxruntime's static quantization
writes (``quantize_static``: int8 weights, int8 activations, symmetric unless
``--asymmetric``), calibrated on the samples of a .npy file. Then ``vtabench compile``.

    vtabench quantize MODEL.onnx --calib X.npy [--per-channel] -o MODEL_q.onnx
"""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("quantize", help="quantize a float ONNX model with onnxruntime (QDQ)")
    p.add_argument("model", type=Path, help="MODEL.onnx (float)")
    p.add_argument("--calib", type=Path, required=True,
                   help="X.npy: calibration inputs, (N, C, H, W) or (N, 1, C, H, W)")
    p.add_argument("--per-channel", action="store_true", help="per-channel weight scales")
    p.add_argument("--asymmetric", action="store_true",
                   help="activation zero points from the calibrated ranges (default: symmetric)")
    p.add_argument("--uint8", action="store_true", help="uint8 activations (default int8)")
    p.add_argument("-o", "--output", type=Path, help="output (default MODEL_q.onnx)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import numpy as np
    import onnx

    from vtabench.cli import CliError
    from vtabench.cli.options import check_output, make_parent
    from vtabench.graph.onnx_prep import load_model
    from vtabench.workloads.quantize import quantize

    for path in (args.model, args.calib):
        if not path.exists():
            raise CliError(f"{path}: no such file")
    out = args.output or args.model.with_name(args.model.stem + "_q.onnx")
    check_output("--output", out)
    model = load_model(args.model)
    try:
        calib = np.load(args.calib)
    except (ValueError, OSError) as exc:
        raise CliError(f"{args.calib}: not a .npy array ({exc})") from None
    q = quantize(model, calib, per_channel=args.per_channel, symmetric=not args.asymmetric,
                 activation="uint8" if args.uint8 else "int8")
    onnx.save(q, str(make_parent(out)))
    nq = sum(1 for n in q.graph.node if n.op_type == "QuantizeLinear")
    print(f"quantized {args.model} on {len(calib)} calibration samples "
          f"({'per-channel' if args.per_channel else 'per-tensor'} weights, "
          f"{'asymmetric' if args.asymmetric else 'symmetric'} "
          f"{'uint8' if args.uint8 else 'int8'} activations): {nq} QuantizeLinear nodes")
    print(f"wrote {out}")
    return 0
