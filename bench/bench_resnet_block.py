"""ResNet-18 basic blocks (conv3x3 + ReLU, then conv3x3 + residual add + ReLU) compiled by
vtabench.compiler and run as one network through the runtime, synchronizing once per layer
(upstream) and once per inference (the cloud RFC's batching). Prints syncs, instructions, device
cycles (rtl), run time and, on rtl, the modeled host time of the whole inference (PCIe DMA, MMIO,
interrupts); checks the outputs against the llvm build of the same layers.

    python bench/bench_resnet_block.py                  # fsim
    python bench/bench_resnet_block.py --target rtl --stages 4
"""

from __future__ import annotations

import argparse
import sys

import numpy as np


from vtabench.compiler import Conv2dSpec, compile_op
from vtabench.verify.operators import NetLayer, network_reference, run_network
from vtabench.spec.config import load_config
from vtabench.runtime import available_targets
from vtabench.runtime.utilization import mac_utilization

STAGES = {1: (56, 64), 2: (28, 128), 3: (14, 256), 4: (7, 512)}  # stage -> (H/W, channels)


def block(stage: int, batch: int) -> list[NetLayer]:
    hw, c = STAGES[stage]
    a = Conv2dSpec(batch, c, hw, hw, c, 3, 1, 1, epilogue=(("shift", 9), ("relu",)),
                   name=f"stage{stage}_conv_a")
    b = Conv2dSpec(batch, c, hw, hw, c, 3, 1, 1, epilogue=(
        ("shift", 9), ("residual",), ("clip", 0, 127)), name=f"stage{stage}_conv_b")
    return [NetLayer(a, {"data": f"x{stage}", "weight": f"w{stage}a"}, f"h{stage}"),
            NetLayer(b, {"data": f"h{stage}", "weight": f"w{stage}b", "residual1": f"x{stage}"},
                     f"y{stage}")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--target", default="fsim", choices=available_targets())
    ap.add_argument("--config", default="default")
    ap.add_argument("--stages", default="4", help="ResNet stages (1-4), comma separated")
    args = ap.parse_args(argv)
    cfg = load_config(args.config)
    rng = np.random.default_rng(0)
    layers: list[NetLayer] = []
    tensors: dict[str, np.ndarray] = {}
    for st in (int(s) for s in args.stages.split(",")):
        blk = block(st, cfg.batch)
        layers += blk
        for layer in blk:
            shapes = compile_op(layer.spec, cfg).input_shapes()
            for k, name in layer.inputs.items():
                if name not in tensors and not any(x.out == name for x in layers):
                    tensors[name] = rng.integers(-64, 64, shapes[k], dtype=np.int8)
    res = run_network(args.target, cfg, layers, tensors)
    ref = network_reference(cfg, layers, tensors)
    macs = sum(layer.spec.macs for layer in layers)
    print(f"# ResNet-18 basic block(s), stages {args.stages}, on {args.target}, config "
          f"{cfg.name}: {len(layers)} conv layers, {macs} MACs")
    print(f"{'sync':<7}{'syncs':>6}{'insns':>7}{'cycles':>11}{'util':>8}{'run_us':>10}"
          f"{'host_us':>10}  check")
    bad = False
    for mode, (outs, st) in res.items():
        ok = all(np.array_equal(outs[k], ref[k]) for k in ref)
        bad |= not ok
        cyc = st.get("cycles")
        util = f"{100 * mac_utilization(macs, cfg.macs_per_cycle, cyc):.1f}%" if cyc else "-"
        run_us = f"{st['run_ns'] / 1000:.1f}" if "run_ns" in st else "-"
        host_us = f"{st['host_ns'] / 1000:.1f}" if "host_ns" in st else "-"
        print(f"{mode:<7}{st['syncs']:>6}{st['insns']:>7}{cyc if cyc else '-':>11}{util:>8}"
              f"{run_us:>10}{host_us:>10}  {'ok' if ok else 'MISMATCH'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
