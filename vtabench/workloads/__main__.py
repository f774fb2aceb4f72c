"""python -m vtabench.workloads NAME -o MODEL.onnx [--seed N] [--input X.npy]

Writes a generated QDQ model (small_resnet, resnet18, resnet50_block) and, with --input, a
seeded float input of the model's shape."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from vtabench.workloads import WORKLOADS, save


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vtabench.workloads", description=__doc__)
    ap.add_argument("name", choices=sorted(WORKLOADS))
    ap.add_argument("-o", "--output", required=True, help="MODEL.onnx")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--input", help="also write a seeded float input X.npy")
    args = ap.parse_args(argv)
    model = WORKLOADS[args.name](seed=args.seed)
    save(model, args.output)
    print(f"wrote {args.output}")
    if args.input:
        dims = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
        x = np.random.default_rng(args.seed + 1).normal(0, 1, dims).astype(np.float32)
        np.save(args.input, x)
        print(f"wrote {args.input} {tuple(dims)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
