"""Networks quantized by onnxruntime on VTA: the table of docs/graph.md ("Quantized networks").

For a network of vtabench.workloads.float_models and each weight-scale form (per-tensor,
per-channel; int8 symmetric activations): quantize with onnxruntime's quantize_static on 8
seeded calibration samples, compile, and report the share of the conv/Gemm MACs on VTA, syncs
per inference, compile time, wall time per inference on each target, bit-identity of every
target's outputs to the integer reference (every operator on the CPU), and the deviation from
onnxruntime: every int8 tensor a VTA operator computes, end to end and layer by layer (each
operator alone on onnxruntime's inputs), as max steps and fraction exactly equal, and the top-1
agreement of the outputs. For scale, how far onnxruntime moves from itself on the same tensors
when 0.02% of the quantized input's elements move by one step ("sensitivity").

    python bench/bench_quantized.py resnet18 --targets fsim,opencl,rtl --json results/q18.json
    python bench/bench_quantized.py mobilenetv2 --forms tensor --top1-inputs 20
    python bench/bench_quantized.py resnet50 --targets fsim,opencl --loop-target opencl
    python bench/bench_quantized.py --table results/q18.json results/q50.json   # markdown rows
    python bench/bench_quantized.py resnet50 --forms tensor --targets rtl --deviation-inputs 0 \
        --top1-inputs 0 --json results/q50-rtl.json      # one more target (--table joins it)

Every timed phase records the machine's one-minute load average (``load``) beside its time.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from vtabench.drivers import open_device
from vtabench.graph import compile_model, reference_package
from vtabench.graph.compare import (Deviation, device_tensors, deviation, layer_inputs,
                                    layerwise, onnxruntime_tensors)
from vtabench.graph.execute import Executor
from vtabench.workloads.float_models import FLOAT_MODELS
from vtabench.workloads.quantize import calibration_set, quantize

FORMS = {"tensor": {"per_channel": False}, "channel": {"per_channel": True}}


def _inputs(shape: list[int], n: int, seed: int) -> list[np.ndarray]:
    return [np.random.default_rng([seed, i]).standard_normal(shape).astype(np.float32)
            for i in range(n)]


def measure(name: str, form: str, targets: list[str], dev_inputs: int, top1_inputs: int,
            cfg: str, log, loop_target: str = "fsim") -> dict:
    fm = FLOAT_MODELS[f"{name}_float"]()
    t0 = time.perf_counter()
    q = quantize(fm, calibration_set(fm, 8), **FORMS[form])
    row: dict = {"network": name, "form": form, "quantize_s": time.perf_counter() - t0}
    t0 = time.perf_counter()
    pkg = compile_model(q, cfg)
    row["compile_s"] = time.perf_counter() - t0
    row["compile_load"] = os.getloadavg()[0]
    st = pkg.manifest["stats"]
    row.update(syncs=st["syncs_per_inference"], insns=st["insns"],
               macs=st["macs_conv_gemm"], macs_vta=st["macs_conv_gemm_vta"],
               vta_share=st["macs_conv_gemm_vta"] / max(st["macs_conv_gemm"], 1),
               vta_layers=len(pkg.manifest["layers"]),
               cpu_fallbacks=[(n["name"], n["op"], n.get("reason", ""))
                              for n in pkg.manifest["nodes"] if n["device"] == "cpu"
                              and n["op"].split(" ")[0] in ("conv2d", "dense", "avgpool",
                                                            "maxpool")])
    log(f"{name}/{form}: compiled in {row['compile_s']:.1f} s, {row['vta_share']:.1%} of "
        f"{row['macs'] / 1e9:.2f} GMAC on VTA, {row['syncs']} sync(s)")
    ref = reference_package(q, cfg)
    shape = pkg.manifest["inputs"][0]["shape"]
    iname = q.graph.input[0].name
    [x0] = _inputs(shape, 1, 1)
    with open_device("fsim", cfg, ref.mem_bytes) as dev:
        want = Executor(ref, dev).run([x0]).outputs
    row["targets"] = {}
    for target in targets:
        with open_device(target, cfg, pkg.mem_bytes) as dev:
            ex = Executor(pkg, dev)
            runs = [ex.run([x0]) for _ in range(1 if target == "rtl" else 2)]
        r = runs[-1]
        same = all(np.array_equal(a, b) for a, b in zip(r.outputs, want, strict=True))
        row["targets"][target] = {"wall_s": r.wall_s, "bit_identical": same,
                                  "cycles": r.per_inference.get("cycles"),
                                  "syncs": r.per_inference["syncs"],
                                  "load": os.getloadavg()[0]}
        log(f"{name}/{form}: {target} {r.wall_s:.2f} s per inference, bit-identical: {same}")
    e2e, lw, sens, agree = Deviation(), Deviation(), Deviation(), 0
    classes: set[int] = set()  # onnxruntime's top-1 classes: how telling the agreement is
    out_name = q.graph.output[0].name
    in_scale = _input_scale(q)
    row["loop_target"] = loop_target
    t0 = time.perf_counter()
    with open_device(loop_target, cfg, pkg.mem_bytes) as dev:
        ex = Executor(pkg, dev)
        for k, x in enumerate(_inputs(shape, max(dev_inputs, top1_inputs), 100)):
            r = ex.run([x])
            if k < dev_inputs:
                ours = device_tensors(ex)
                theirs = onnxruntime_tensors(q, list(ours) + layer_inputs(ex), {iname: x})
                deviation(ours, theirs, e2e)
                layerwise(ex, theirs, lw)
                rng = np.random.default_rng([k, 3])
                nudge = (rng.random(x.shape) < 2e-4) * rng.choice([-1.0, 1.0], x.shape)
                moved = onnxruntime_tensors(q, list(ours), {iname: (x + nudge * in_scale)
                                                            .astype(np.float32)})
                deviation({n: theirs[n] for n in ours}, moved, sens)
            else:
                theirs = onnxruntime_tensors(q, [], {iname: x})
            if k < top1_inputs:
                agree += int(np.argmax(r.outputs[0]) == np.argmax(theirs[out_name]))
                classes.add(int(np.argmax(theirs[out_name])))
    for key, d in (("end_to_end", e2e), ("layerwise", lw), ("sensitivity", sens)):
        row[key] = {"tensors": d.tensors, "elements": d.elements, "max_steps": d.max_steps,
                    "fraction_exact": d.fraction_exact, "worst": d.worst}
    row["top1"] = [agree, top1_inputs]
    row["top1_classes"] = len(classes)
    row["loop_s"], row["loop_load"] = time.perf_counter() - t0, os.getloadavg()[0]
    log(f"{name}/{form}: vs onnxruntime end to end max {e2e.max_steps} steps, "
        f"{e2e.fraction_exact:.4%} exact; layer by layer max {lw.max_steps}, "
        f"{lw.fraction_exact:.4%} exact; top-1 {agree}/{top1_inputs} ({len(classes)} classes); "
        f"onnxruntime vs itself "
        f"with 0.02% of the input moved one step: max {sens.max_steps}, "
        f"{sens.fraction_exact:.4%} exact ({loop_target}, {row['loop_s']:.0f} s)")
    return row


def _input_scale(q) -> float:
    """The scale of the QuantizeLinear that reads the graph input."""
    from onnx import numpy_helper

    inits = {i.name: i for i in q.graph.initializer}
    node = next(n for n in q.graph.node
                if n.op_type == "QuantizeLinear" and n.input[0] == q.graph.input[0].name)
    return float(numpy_helper.to_array(inits[node.input[1]]))


TABLE_HEAD = ("| network | weights | MACs on VTA | syncs | compile | fsim | opencl | rtl "
              "| bit-identical | layer by layer: max, exact | end to end: max, exact "
              "| onnxruntime vs itself: max, exact | top-1 |\n" + "|---" * 13 + "|")


def _dev(d: dict) -> str:
    return f"{d['max_steps']}, {d['fraction_exact']:.3%}" if d["tensors"] else "-"


def table_row(row: dict) -> str:
    """One markdown row of docs/graph.md's table ("Quantized networks") from a measured row."""
    t = dict(sorted(row["targets"].items()))  # fsim, opencl, rtl

    def wall(name: str) -> str:
        if name not in t:
            return "-"
        cyc = f" ({t[name]['cycles'] / 1e6:.2f} M cycles)" if t[name].get("cycles") else ""
        return f"{t[name]['wall_s']:.2f} s{cyc}"

    same = ", ".join(f"{k} {'yes' if v['bit_identical'] else 'NO'}" for k, v in t.items())
    agree, n = row["top1"]
    classes = f" ({row['top1_classes']} classes)" if "top1_classes" in row else ""
    return (f"| {row['network']} | per-{row['form']} | {row['vta_share']:.1%} of "
            f"{row['macs'] / 1e9:.2f} G | {row['syncs']} | {row['compile_s']:.1f} s | "
            f"{wall('fsim')} | {wall('opencl')} | {wall('rtl')} | {same} | "
            f"{_dev(row['layerwise'])} | {_dev(row['end_to_end'])} | {_dev(row['sensitivity'])} "
            f"| {agree}/{n}{classes} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("network", nargs="?",
                    choices=sorted(k[:-len("_float")] for k in FLOAT_MODELS))
    ap.add_argument("--table", type=Path, nargs="+", metavar="JSON",
                    help="print the markdown table of measured rows instead of measuring")
    ap.add_argument("--forms", default="tensor,channel")
    ap.add_argument("--targets", default="fsim")
    ap.add_argument("--config", default="default")
    ap.add_argument("--deviation-inputs", type=int, default=5)
    ap.add_argument("--top1-inputs", type=int, default=100)
    ap.add_argument("--loop-target", default="fsim",
                    help="the target that runs the deviation and top-1 inputs (its outputs "
                         "are checked bit-identical to the reference like every target's)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    if args.table:  # rows of one network and form join: the measured inputs of the row with
        merged: dict[tuple[str, str], dict] = {}  # the most, the targets of all of them
        for f in args.table:
            for row in json.loads(f.read_text()):
                key = (row["network"], row["form"])
                old = merged.setdefault(key, row)
                if old is not row:
                    base, extra = sorted((old, row), key=lambda r: -r["end_to_end"]["tensors"]
                                         - r["top1"][1])
                    base["targets"] = {**extra["targets"], **base["targets"]}
                    merged[key] = base
        print(TABLE_HEAD)
        for key in sorted(merged, key=lambda k: (k[0], list(FORMS).index(k[1]))):
            print(table_row(merged[key]))
        return 0
    if not args.network:
        ap.error("a network to measure, or --table")
    rows = []
    ok = True
    for form in args.forms.split(","):
        row = measure(args.network, form, args.targets.split(","), args.deviation_inputs,
                      args.top1_inputs, args.config, lambda s: print(s, flush=True),
                      args.loop_target)
        ok &= all(t["bit_identical"] for t in row["targets"].values())
        rows.append(row)
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(rows, indent=1, default=float))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
