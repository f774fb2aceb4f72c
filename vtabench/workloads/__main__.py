"""python -m vtabench.workloads NAME -o MODEL.onnx [--seed N] [--input X.npy] [--calib C.npy]

Writes a generated model: one of the project's QDQ networks (small_resnet, resnet18,
resnet50_block), ready for ``vtabench compile``, or one of the float networks (small_resnet_float,
resnet18_float, resnet50_float, mobilenetv2_float, yolo_tiny_float, and the onnx package's light
zoo networks with seeded random weights: zoo_bvlc_alexnet, zoo_densenet121, zoo_inception_v1,
zoo_inception_v2, zoo_resnet50, zoo_shufflenet, zoo_squeezenet, zoo_vgg19, zoo_zfnet512) for
``vtabench quantize``.
--input also writes a seeded float input of the model's shape (a batch of 1); --calib the
seeded calibration samples (N, C, H, W) that ``vtabench quantize --calib`` reads (8 unless
--count, as the tests and the bench use)."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx

from vtabench.workloads import WORKLOADS
from vtabench.workloads.float_models import FLOAT_MODELS
from vtabench.workloads.quantize import calibration_set
from vtabench.workloads.zoo_models import ZOO_MODELS

PROG = "python -m vtabench.workloads"
#: Every model this command writes, by name: the QDQ networks, then the float ones.
MODELS: dict[str, Callable[..., onnx.ModelProto]] = {**WORKLOADS, **FLOAT_MODELS, **ZOO_MODELS}


class _Terminated(BaseException):
    """SIGTERM, unwinding like KeyboardInterrupt."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise _Terminated


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("name", choices=list(MODELS), metavar="NAME",
                    help=f"one of: {', '.join(MODELS)}")
    ap.add_argument("-o", "--output", required=True, type=Path, metavar="MODEL.onnx")
    ap.add_argument("--seed", type=int, default=0, metavar="N",
                    help="seed of the weights, the input and the samples (default 0)")
    ap.add_argument("--input", type=Path, metavar="X.npy",
                    help="also write a seeded float input")
    ap.add_argument("--calib", type=Path, metavar="C.npy",
                    help="also write seeded calibration samples (for vtabench quantize)")
    ap.add_argument("--count", type=int, default=8, metavar="N",
                    help="calibration samples --calib writes (default 8)")
    return ap


def _write(path: Path, write: Callable[[Path], None]) -> None:
    """Write through a temporary file beside ``path``, so that an interrupted run leaves no
    partial file under the name asked for."""
    part = path.with_name(path.name + ".part")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write(part)
        os.replace(part, path)
    except OSError as exc:  # named by the path asked for, not the temporary one
        name = str(path) if exc.filename in (None, str(part)) else exc.filename
        raise OSError(exc.errno, exc.strerror or str(exc), name) from None
    finally:
        if part.exists():
            part.unlink()


def _save_npy(path: Path, a: np.ndarray) -> None:
    with path.open("wb") as f:  # a file object: np.save would add .npy to the name
        np.save(f, a)


def _input_dims(model: onnx.ModelProto) -> list[int]:
    return [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]


def generate(args: argparse.Namespace) -> None:
    model = MODELS[args.name](seed=args.seed)
    _write(args.output, lambda p: onnx.save(model, str(p)))
    print(f"wrote {args.output}")
    if args.input:
        dims = _input_dims(model)
        x = np.random.default_rng(args.seed + 1).normal(0, 1, dims).astype(np.float32)
        _write(args.input, lambda p: _save_npy(p, x))
        print(f"wrote {args.input} {tuple(dims)}")
    if args.calib:
        c = calibration_set(model, count=args.count, seed=args.seed)
        _write(args.calib, lambda p: _save_npy(p, c))
        print(f"wrote {args.calib} {c.shape}")


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.count < 1:
        print(f"{PROG}: error: --count {args.count}: at least one sample", file=sys.stderr)
        return 2
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        generate(args)
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"{PROG}: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted (SIGINT)", file=sys.stderr)
        return 130
    except _Terminated:
        print(f"{PROG}: terminated (SIGTERM)", file=sys.stderr)
        return 143
    finally:
        signal.signal(signal.SIGTERM, previous)
    return 0


if __name__ == "__main__":
    sys.exit(main())
