"""Write the DRAM image that matvec.s reads, or check the image a run left.

    python examples/make_dram.py dram.bin          # the input image (seed 0 data)
    python examples/make_dram.py --check out.bin   # y as expected? (exit 0) or not (exit 1)

The layout is the one matvec.s's comment gives; the data are seeded, so the expected y is
computed here from the same numbers.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

BLOCK = 16  # configuration "default": BATCH 1, BLOCK_IN = BLOCK_OUT = 16
INP_AT, WGT_AT, OUT_AT, SIZE = 256, 512, 1024, 1024 + 2 * BLOCK
SHIFT = 2


def data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.integers(-6, 7, (2, BLOCK), dtype=np.int8)
    w = rng.integers(-4, 5, (BLOCK, BLOCK), dtype=np.int8)
    return x, w


def image(seed: int = 0) -> np.ndarray:
    x, w = data(seed)
    dram = np.zeros(SIZE, np.uint8)  # byte 0: the micro-op word 0 (dst 0, src 0, wgt 0)
    dram[INP_AT:INP_AT + x.size] = x.view(np.uint8).reshape(-1)
    dram[WGT_AT:WGT_AT + w.size] = w.view(np.uint8).reshape(-1)
    return dram


def expected(seed: int = 0) -> np.ndarray:
    """y[i] = max((x[i] . W^T) >> 2, 0) as int8, what the program stores (|acc| <= 16 * 6 * 4
    = 384, so y <= 96 fits)."""
    x, w = data(seed)
    acc = x.astype(np.int32) @ w.astype(np.int32).T
    return np.maximum(acc >> SHIFT, 0).astype(np.int8)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("path", type=Path, help="image to write (or, with --check, to check)")
    p.add_argument("--check", action="store_true", help="check y in an image a run left")
    p.add_argument("--seed", type=int, default=0, help="data seed (default 0)")
    args = p.parse_args(argv)
    if not args.check:
        image(args.seed).tofile(args.path)
        print(f"wrote {args.path} ({SIZE} bytes; expected y: {expected(args.seed).tolist()})")
        return 0
    if not args.path.is_file():
        print(f"{args.path}: no such file", file=sys.stderr)
        return 1
    out = np.fromfile(args.path, np.uint8)
    if out.size < SIZE:
        print(f"{args.path}: {out.size} bytes, not the {SIZE} of the example", file=sys.stderr)
        return 1
    y = out[OUT_AT:SIZE].view(np.int8).reshape(2, BLOCK)
    if not np.array_equal(y, expected(args.seed)):
        print(f"{args.path}: y differs from the expected {expected(args.seed).tolist()}: "
              f"{y.tolist()}", file=sys.stderr)
        return 1
    print(f"{args.path}: y as expected: {y.tolist()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
