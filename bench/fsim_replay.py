"""Time the device programs of a .vtapkg on fsim alone (numpy only: no TVM, no CPU parts).

Loads the package's static image and programs through the fsim driver, writes a random int8
activation into every tensor copied to VTA, and times each device program (the batched
inference's VTA part), best of ``--runs``.

    python bench/fsim_replay.py results/resnet18.vtapkg --runs 3
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import zipfile
from pathlib import Path

import numpy as np



def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("package", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    from vtabench.drivers import open_device

    z = zipfile.ZipFile(args.package)
    man = json.loads(z.read("manifest.json"))
    rng = np.random.default_rng(0)
    with open_device("fsim", man["config"], man["mem_bytes"]) as dev:
        base = dev.alloc(man["plan_bytes"], align=4096)
        assert base == 0, "fresh device: the plan starts at 0"
        for e in man["image"]:
            dev.write(e["addr"], np.frombuffer(z.read(e["file"]), np.uint8))
        progs = []
        for e in man["programs"]:
            code = np.frombuffer(z.read(e["file"]), np.uint8)
            a = dev.alloc(code.size, align=64)
            dev.write(a, code)
            progs.append((a, e["count"]))
        nodes = {n["name"]: n for n in man["nodes"]}
        for name, t in man["tensors"].items():
            if nodes[name]["op"] == "copy":
                dev.write(t["addr"], rng.integers(0, 64, t["nbytes"], dtype=np.int8))
        best = None
        for i in range(args.runs):
            t0 = time.perf_counter()
            for a, n in progs:
                dev.run(a, n)
            dt = time.perf_counter() - t0
            best = dt if best is None else min(best, dt)
            print(f"run {i + 1}: {dt:.3f} s ({sum(n for _, n in progs)} instructions)")
        print(f"best {best:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
