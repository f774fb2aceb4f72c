"""ResNet-18 conv layers (upstream VTA's benchmark table) compiled by vtabench.compiler and run
through the runtime and driver, with double buffering (two virtual threads) on and off.

Prints per layer: MACs, instructions, the tiling, and where the target counts cycles (rtl) the
device cycles and MAC utilization = MACs / (BATCH x BLOCK_IN x BLOCK_OUT x cycles)
(vtabench.runtime.utilization). Variants
(``--db``): ``on`` double buffering with the tiling chosen for two buffers, ``off`` single
buffering with the (larger) tiling chosen for one, ``same`` single buffering with ``on``'s tiling
(isolates the effect of latency hiding). On fsim
(no cycle model) it prints MACs and instructions, and checks every output against the llvm build
of the same TE definition (``--check``, on by default for fsim).

    python bench/bench_resnet_layers.py                       # fsim, default config, all layers
    python bench/bench_resnet_layers.py --target rtl --layers 1,4,7,10
    python bench/bench_resnet_layers.py --config cloud32 --json results/resnet.json
    python bench/bench_resnet_layers.py --target rtl --db on --plot results/resnet-layers.png

``--plot PATH`` (rtl) records the RTL's pipeline trace of every run and draws each layer's cycles
split into parts (compute, load stall, store stall, token wait; vtabench.report.breakdown) with
its MAC utilization.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import numpy as np


from vtabench.compiler import Conv2dSpec, choose_tiling, compile_op
from vtabench.verify.operators import OpJob, run_ops
from vtabench.spec.config import load_config
from vtabench.runtime import available_targets
from vtabench.runtime.utilization import mac_utilization

# (H/W, Cin, Cout, kernel, pad, stride): upstream's ResNet-18 conv table.
RESNET18 = [
    (56, 64, 64, 3, 1, 1), (56, 64, 128, 3, 1, 2), (56, 64, 128, 1, 0, 2),
    (28, 128, 128, 3, 1, 1), (28, 128, 256, 3, 1, 2), (28, 128, 256, 1, 0, 2),
    (14, 256, 256, 3, 1, 1), (14, 256, 512, 3, 1, 2), (14, 256, 512, 1, 0, 2),
    (7, 512, 512, 3, 1, 1),
]


def layer_spec(i: int, batch: int) -> Conv2dSpec:
    hw, cin, cout, k, pad, stride = RESNET18[i]
    # A realistic epilogue: requantize (rounding shift) and ReLU.
    return Conv2dSpec(batch, cin, hw, hw, cout, k, stride, pad,
                      epilogue=(("shift", 8), ("relu",)), name=f"resnet18_conv{i + 1}")


def plot(cfg: Any, rec: Any, results: list[Any], labels: list[str], macs: list[int],
         path: Path) -> None:
    """One window per job: the runs of its syncs, in order, with the layer's MACs."""
    from dataclasses import replace

    from vtabench.report.breakdown import merged, run_breakdown
    from vtabench.report.plots import breakdown_figure

    runs = rec.runs()
    if len(runs) != sum(r.syncs for r in results):
        raise SystemExit(f"--plot: the trace holds {len(runs)} runs, the jobs made "
                         f"{sum(r.syncs for r in results)} syncs")
    wins, k = [], 0
    for label, res, layer_macs in zip(labels, results, macs, strict=True):
        job = merged(label, [run_breakdown(cfg, r, label) for r in runs[k:k + res.syncs]])
        wins.append(replace(job, layer_macs=layer_macs))
        k += res.syncs
    path.parent.mkdir(parents=True, exist_ok=True)
    breakdown_figure(cfg, wins, f"ResNet-18 conv layers on rtl ({cfg.name})",
                     "every layer's launches").savefig(path)
    print(f"wrote {path}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--target", default="fsim", choices=available_targets())
    ap.add_argument("--config", default="default")
    ap.add_argument("--layers", default="", help="1-based layer numbers, comma separated")
    ap.add_argument("--check", action=argparse.BooleanOptionalAction, default=None,
                    help="compare outputs with the llvm build (default: on for fsim)")
    ap.add_argument("--db", default="on,off,same",
                    help="variants: on (double buffering, its tiling), off (single buffering, "
                         "the tiling chosen for it), same (single buffering, the tiling of on)")
    ap.add_argument("--json", help="write the rows to this file")
    ap.add_argument("--plot", type=Path, help="rtl: per-layer cycle breakdown and MAC "
                    "utilization, a PNG")
    args = ap.parse_args(argv)
    cfg = load_config(args.config)
    layers = [int(x) - 1 for x in args.layers.split(",") if x] or list(range(len(RESNET18)))
    variants = [v.strip() for v in args.db.split(",") if v.strip()]
    for v in variants:
        if v not in ("on", "off", "same"):
            ap.error(f"unknown --db variant {v!r}")
    check = args.check if args.check is not None else args.target == "fsim"
    rng = np.random.default_rng(0)
    jobs, meta = [], []
    for i in layers:
        spec = layer_spec(i, cfg.batch)
        x = compile_op(spec, cfg).random_inputs(rng, small=True)
        for v in variants:
            tiling = choose_tiling(spec, cfg, True) if v == "same" else None
            jobs.append(OpJob(spec, x, tiling, v == "on"))
            meta.append((i, spec, v))
    rec = None
    if args.plot is not None:
        from vtabench.report.timeline import Recorder

        try:
            rec = Recorder(args.target, option="--plot")
        except ValueError as exc:
            ap.error(str(exc))
    t0 = time.perf_counter()
    with rec or nullcontext():
        results = run_ops(args.target, cfg, jobs)
    wall = time.perf_counter() - t0
    peak = cfg.macs_per_cycle
    rows = []
    hdr = (f"{'layer':<8}{'HW':>4}{'Cin':>5}{'Cout':>5}{'k':>2}{'s':>2} {'db':<4}{'MACs':>12}"
           f"{'insns':>7}  {'tiling (oc,ic,h,w)':<20}{'cycles':>11}{'util':>8}  check")
    print(f"# ResNet-18 conv layers on {args.target}, config {cfg.name} ({peak} MAC/cycle); "
          f"{wall:.1f} s")
    print(hdr)
    refs: dict[int, np.ndarray] = {}
    for (i, spec, db), res in zip(meta, results, strict=True):
        ok = ""
        if check:
            if i not in refs:
                op = compile_op(spec, cfg)
                refs[i] = op.reference(jobs[[m[0] for m in meta].index(i)].inputs)
            ok = "ok" if np.array_equal(res.out, refs[i]) else "MISMATCH"
        t = res.tiling
        util = mac_utilization(spec.macs, peak, res.cycles) if res.cycles else None
        hw, cin, cout, k, pad, stride = RESNET18[i]
        print(f"conv{i + 1:<4}{hw:>4}{cin:>5}{cout:>5}{k:>2}{stride:>2} {db:<4}"
              f"{spec.macs:>12}{res.insns:>7}  {f'{t.oc},{t.ic},{t.h},{t.w}':<20}"
              f"{res.cycles if res.cycles is not None else '-':>11}"
              f"{f'{100 * util:.1f}%' if util else '-':>8}  {ok}")
        rows.append({"layer": i + 1, "hw": hw, "cin": cin, "cout": cout, "k": k, "pad": pad,
                     "stride": stride, "variant": db, "macs": spec.macs,
                     "insns": res.insns, "cycles": res.cycles, "utilization": util,
                     "tiling": [t.oc, t.ic, t.h, t.w], "check": ok, "target": args.target,
                     "config": cfg.name})
    if rec is not None:
        plot(cfg, rec, results, [f"conv{i + 1} {v}" for i, _, v in meta],
             [spec.macs for _, spec, _ in meta], args.plot)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 1 if any(r["check"] == "MISMATCH" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
