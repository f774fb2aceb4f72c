"""Real models on VTA: the table of docs/graph.md ("Real models bench").

The three models of the ``rapidocr_onnxruntime`` wheel (vtabench.workloads.rapidocr: the
text-direction classifier, the text detector, the text recognizer, read from the installed
package, their dynamic dimensions fixed there) on labelled inputs this bench renders
(DejaVu fonts, several sizes): for the classifier lines turned by 0 or 180 degrees (label = the
turn), for the recognizer lines and their strings (the output decoded with the wheel's
dictionary, strings compared), for the detector pages and the boxes of their lines
(vtabench.workloads.ocr_labels). And the ``onnx`` package's light zoo networks
(vtabench.workloads.zoo_models, random weights: no accuracy) on random inputs.

Each model is quantized per quantization of ``--quant``: ``static`` is onnxruntime's
``quantize_static`` defaults (QDQ, int8 weights per tensor, asymmetric int8 activations),
``vtabench`` is ``vtabench quantize``'s (the same with symmetric activations), ``percentile``
the recognizer's own (``rapidocr.quantize_recognizer``: symmetric, per-channel weights,
percentile calibration); all calibrated on 16 rendered samples (seed 1; zoo: 8 random ones). Then compiled for ``--config`` and run on
every input on each target of ``--targets``. A row reports: nodes on VTA / CPU, the share of
the conv/Gemm MACs on VTA, syncs per inference, compile time, the wall time per inference per
target (median over the inputs after the first), accuracy of the float model, of onnxruntime's
int8 model and of VTA against the labels, VTA's agreement with onnxruntime's int8 model (top-1,
string, or box IoU), the largest difference in int8 steps of any tensor VTA wrote from
onnxruntime's (end to end over all inputs; layer by layer on the first: each VTA operator alone
on onnxruntime's inputs), and whether the targets' outputs are bit-identical (compared through
a digest of every input's outputs, so rows of one model from several JSON files join).

    python bench/bench_real_models.py                      # the classifier, fsim, 4 lines
    python bench/bench_real_models.py --models classifier --targets fsim,opencl,rtl \
        --inputs 24 --json results/real-models-classifier.json
    python bench/bench_real_models.py --models squeezenet,shufflenet --quant static \
        --targets fsim,opencl --inputs 2 --json results/real-models-zoo.json
    python bench/bench_real_models.py --table results/real-models-*.json   # markdown rows

Progress goes to stderr; every timed phase records the one-minute load average beside it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

#: ``--quant`` names: keyword arguments of vtabench.workloads.quantize.quantize. ``percentile``
#: is rapidocr.quantize_recognizer's choice (with the minmax ranges of the other two
#: onnxruntime's own int8 recognizer reads no line).
QUANT = {"static": {"symmetric": False}, "vtabench": {"symmetric": True},
         "percentile": {"symmetric": True, "per_channel": True, "calibration": "percentile"}}
OCR_MODELS = ("classifier", "detector", "recognizer")
#: The order of targets in the table; the first present runs the deviation figures.
TARGETS = ("fsim", "opencl", "rtl")
COMPARE_ORDER = ("opencl", "fsim", "rtl")
#: Zoo models and calibration samples; OCR models calibrate on 16 rendered ones.
ZOO_CALIB = 8
OCR_CALIB = 16


@dataclass
class Task:
    """How a model is fed and scored. ``inputs(n)``: n inputs (1, C, H, W) and their labels
    (None: no labels); ``predict``: a model output -> what is scored (a class, a string, a box
    list); ``correct(pred, label)``: (right, counted); ``agree(a, b)``: (agreement, counted)."""

    model: Callable[[], Any]
    calib: Callable[[Any], np.ndarray]
    inputs: Callable[[Any, int], tuple[list[np.ndarray], list[Any] | None]]
    predict: Callable[[np.ndarray], Any]
    correct: Callable[[Any, Any], tuple[float, int]]
    agree: Callable[[Any, Any], tuple[float, int]]
    agree_unit: str  # how the table writes the agreement: "top-1", "strings", "IoU"


def _same(a: Any, b: Any) -> tuple[float, int]:
    return float(a == b), 1


def _box_agreement(a: list, b: list) -> tuple[float, int]:
    """Both box sets' best IoUs with the other: their sum and count (no boxes: agree)."""
    from vtabench.workloads.ocr_labels import best_ious

    ious = best_ious(a, b) + best_ious(b, a)
    return (sum(ious), len(ious)) if ious else (1.0, 1)


def _lines_found(boxes: list, labels: list) -> tuple[float, int]:
    """Label lines some predicted box overlaps with an IoU of at least 0.5."""
    from vtabench.workloads.ocr_labels import best_ious

    return float(sum(v >= 0.5 for v in best_ious(labels, boxes))), len(labels)


def _split(xs: np.ndarray) -> list[np.ndarray]:
    return [x[None] for x in xs]


def _ocr_task(name: str) -> Task:
    from vtabench.workloads import ocr_labels, rapidocr

    if name == "classifier":
        def lines(_m: Any, n: int) -> tuple[list[np.ndarray], list[Any]]:
            xs, labels = rapidocr.text_lines(n, seed=3)
            return _split(xs), [int(v) for v in labels]
        return Task(rapidocr.classifier_model, lambda m: rapidocr.text_lines(OCR_CALIB, 1)[0],
                    lines, lambda y: int(np.argmax(y)), _same, _same, "top-1")
    if name == "recognizer":
        classes = rapidocr.dictionary()

        def strings(_m: Any, n: int) -> tuple[list[np.ndarray], list[Any]]:
            xs, labels = rapidocr.text_strings(n, seed=3)
            return _split(xs), list(labels)
        return Task(rapidocr.recognizer_model,
                    lambda m: rapidocr.text_strings(OCR_CALIB, 1)[0], strings,
                    lambda y: rapidocr.ctc_decode(y, classes), _same, _same, "strings")

    def pages(_m: Any, n: int) -> tuple[list[np.ndarray], list[Any]]:
        xs = rapidocr.text_scenes(n, seed=3)
        return _split(xs), [ocr_labels.line_boxes(x) for x in xs]
    return Task(rapidocr.detector_model, lambda m: rapidocr.text_scenes(OCR_CALIB, 1), pages,
                ocr_labels.text_boxes, _lines_found, _box_agreement, "IoU")


def _zoo_task(name: str) -> Task:
    from bench_quantized import _inputs  # bench/, the script's folder (it imports TVM)

    from vtabench.workloads.quantize import calibration_set
    from vtabench.workloads.zoo_models import zoo_model

    def random_inputs(m: Any, n: int) -> tuple[list[np.ndarray], None]:
        inits = {i.name for i in m.graph.initializer}
        inp = next(i for i in m.graph.input if i.name not in inits)
        shape = [d.dim_value for d in inp.type.tensor_type.shape.dim]
        return _inputs(shape, n, 100), None
    return Task(lambda: zoo_model(name), lambda m: calibration_set(m, ZOO_CALIB), random_inputs,
                lambda y: int(np.argmax(y)), _same, _same, "top-1")


def model_names() -> tuple[str, ...]:
    from vtabench.workloads.zoo_models import ZOO_NAMES

    return OCR_MODELS + ZOO_NAMES


def task(name: str) -> Task:
    if name in OCR_MODELS:
        return _ocr_task(name)
    if name in model_names():
        return _zoo_task(name)
    raise ValueError(f"--models {name}: one of {', '.join(model_names())}")


def _counted(n: dict[str, Any], device: str) -> bool:
    """A manifest node on ``device`` as ``vtabench compile`` counts them (no copies, no
    inputs)."""
    return n["device"] == device and n["op"] not in ("copy", "input")


def placement(manifest: dict[str, Any]) -> tuple[int, int]:
    """Nodes on VTA and on the CPU."""
    return tuple(sum(_counted(n, d) for n in manifest["nodes"]) for d in ("vta", "cpu"))


def cpu_ops(manifest: dict[str, Any]) -> dict[str, int]:
    """The CPU nodes by operator and reason ("op: reason"), how many of each."""
    counts: dict[str, int] = {}
    for n in manifest["nodes"]:
        if _counted(n, "cpu"):
            key = f"{n['op']}: {n.get('reason') or 'no VTA pattern'}"
            counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


def digest(outputs: list[np.ndarray]) -> str:
    """A digest of one inference's outputs (dtype, shape and bytes of each)."""
    h = hashlib.sha256()
    for y in outputs:
        y = np.ascontiguousarray(y)
        h.update(f"{y.dtype}{y.shape}".encode())
        h.update(y.tobytes())
    return h.hexdigest()[:16]


def _tally(pairs: list[tuple[float, int]]) -> list[float]:
    return [sum(p[0] for p in pairs), sum(p[1] for p in pairs)]


def _deviation_dict(d: Any) -> dict[str, Any]:
    return {"tensors": d.tensors, "elements": d.elements, "max_steps": d.max_steps,
            "fraction_exact": d.fraction_exact, "worst": d.worst}


def measure(name: str, quant: str, targets: list[str], count: int, cfg: str,
            log: Callable[[str], None]) -> dict[str, Any]:
    """One row: ``name`` quantized by ``quant``, on ``count`` inputs on each of ``targets``."""
    import onnxruntime as ort

    from vtabench.drivers import open_device
    from vtabench.graph import compile_model
    from vtabench.graph.compare import (Deviation, device_tensors, deviation, layer_inputs,
                                        layerwise, onnxruntime_tensors)
    from vtabench.graph.execute import Executor
    from vtabench.graph.onnx_prep import ModelError
    from vtabench.workloads.quantize import quantize

    t = task(name)
    row: dict[str, Any] = {"model": name, "quant": quant, "inputs": count, "config": cfg}
    fm = t.model()
    t0 = time.perf_counter()
    q = quantize(fm, t.calib(fm), **QUANT[quant])
    row["quantize_s"] = time.perf_counter() - t0
    xs, labels = t.inputs(fm, count)
    iname = q.graph.input[0].name
    log(f"{name}/{quant}: quantized in {row['quantize_s']:.1f} s; compiling")
    t0 = time.perf_counter()
    try:
        pkg = compile_model(q, cfg)
    except ModelError as exc:
        row["error"] = f"compile: {exc}"
        log(f"{name}/{quant}: {row['error']}")
        return row
    row["compile_s"], row["compile_load"] = time.perf_counter() - t0, os.getloadavg()[0]
    st = pkg.manifest["stats"]
    vta, cpu = placement(pkg.manifest)
    row.update(nodes_vta=vta, nodes_cpu=cpu, syncs=st["syncs_per_inference"], insns=st["insns"],
               macs=st["macs_conv_gemm"], macs_vta=st["macs_conv_gemm_vta"],
               cpu_ops=cpu_ops(pkg.manifest))
    log(f"{name}/{quant}: compiled in {row['compile_s']:.1f} s: {vta} nodes on VTA, {cpu} on "
        f"the CPU, {st['macs_conv_gemm_vta'] / max(st['macs_conv_gemm'], 1):.1%} of "
        f"{st['macs_conv_gemm'] / 1e9:.3f} GMAC on VTA, {row['syncs']} sync(s)")

    out_name = q.graph.output[0].name
    fsess = ort.InferenceSession(fm.SerializeToString(), providers=["CPUExecutionProvider"])
    float_preds = [t.predict(fsess.run(None, {fsess.get_inputs()[0].name: x})[0]) for x in xs]

    row["targets"] = {}
    compare = next(c for c in COMPARE_ORDER if c in targets)
    e2e, lw = Deviation(), Deviation()
    int8_preds: list[Any] = []
    vta_preds: list[Any] = []
    for target in targets:
        walls, digests = [], []
        t0 = time.perf_counter()
        with open_device(target, cfg, pkg.mem_bytes) as dev:
            ex = Executor(pkg, dev)
            for k, x in enumerate(xs):
                r = ex.run([x])
                walls.append(r.wall_s)
                digests.append(digest(r.outputs))
                log(f"{name}/{quant}: {target} input {k + 1}/{count}: {r.wall_s:.2f} s")
                if target != compare:
                    continue
                vta_preds.append(t.predict(r.outputs[0]))
                ours = device_tensors(ex)
                extra = list(ours) + (layer_inputs(ex) if k == 0 else [])
                theirs = onnxruntime_tensors(q, extra, {iname: x})
                int8_preds.append(t.predict(theirs[out_name]))
                deviation(ours, theirs, e2e)
                if k == 0:
                    layerwise(ex, theirs, lw)  # last: it overwrites the device's tensors
        timed = walls[1:] or walls
        row["targets"][target] = {"wall_s": statistics.median(timed), "walls": walls,
                                  "cycles": r.per_inference.get("cycles"),
                                  "digests": digests, "load": os.getloadavg()[0],
                                  "total_s": time.perf_counter() - t0}
        log(f"{name}/{quant}: {target} {row['targets'][target]['wall_s']:.2f} s per inference")
    row["compare_target"] = compare
    row["end_to_end"], row["layerwise"] = _deviation_dict(e2e), _deviation_dict(lw)
    row["agree"] = _tally([t.agree(a, b) for a, b in zip(vta_preds, int8_preds, strict=True)])
    row["agree_unit"] = t.agree_unit
    if labels is not None:
        row["accuracy"] = {who: _tally([t.correct(p, lab) for p, lab in
                                        zip(preds, labels, strict=True)])
                           for who, preds in (("float", float_preds), ("int8", int8_preds),
                                              ("vta", vta_preds))}
    if name == "detector":  # how close the boxes come, below the IoU 0.5 a line is found at
        from vtabench.workloads.ocr_labels import best_ious

        row["label_iou"] = {who: float(np.mean([v for p, lab in zip(preds, labels, strict=True)
                                                for v in best_ious(lab, p)]))
                            for who, preds in (("float", float_preds), ("int8", int8_preds),
                                               ("vta", vta_preds))}
    if name == "recognizer":  # the strings themselves: what a reader checks a miss against
        row["strings"] = {"labels": labels, "float": float_preds, "int8": int8_preds,
                          "vta": vta_preds}
    log(f"{name}/{quant}: vs onnxruntime int8: {t.agree_unit} {row['agree'][0]:.2f}/"
        f"{row['agree'][1]}, largest step end to end {e2e.max_steps}, layer by layer "
        f"{lw.max_steps}; accuracy {row.get('accuracy', '-')}")
    return row


# -- the table ------------------------------------------------------------------------------------

TABLE_HEAD = ("| model | quantization | nodes VTA / CPU | MACs on VTA | syncs | compile | fsim "
              "| opencl | rtl | accuracy: float / onnxruntime int8 / VTA | VTA vs onnxruntime "
              "int8 | largest step: end to end, layer by layer | bit-identical |\n"
              + "|---" * 13 + "|")


def _count(v: list[float]) -> str:
    return f"{v[0]:g}/{v[1]:g}"


def _agreement(row: dict[str, Any]) -> str:
    got, n = row["agree"]
    if row["agree_unit"] == "IoU":
        return f"mean box IoU {got / max(n, 1):.3f}"
    return f"{row['agree_unit']} {_count(row['agree'])}"


def bit_identity(targets: dict[str, dict[str, Any]]) -> str:
    """'fsim = opencl = rtl on N inputs', or which target differs; '-' with one target."""
    names = [n for n in TARGETS if n in targets]
    if len(names) < 2:
        return "-"
    n = min(len(targets[k]["digests"]) for k in names)
    first = targets[names[0]]["digests"][:n]
    differ = [k for k in names[1:] if targets[k]["digests"][:n] != first]
    if differ:
        return f"NO: {', '.join(differ)} differ from {names[0]} ({n} inputs)"
    return f"{' = '.join(names)} on {n} input{'s' * (n != 1)}"


def table_row(row: dict[str, Any]) -> str:
    """One markdown row of docs/graph.md's "Real models bench" table from a measured row."""
    if "error" in row:
        return (f"| {row['model']} | {row['quant']} | {row['error']} |" + " - |" * 10)
    t = row["targets"]
    wall = {k: f"{t[k]['wall_s']:.2f} s" if k in t else "-" for k in TARGETS}
    acc = row.get("accuracy")
    accuracy = " / ".join(_count(acc[k]) for k in ("float", "int8", "vta")) if acc else "-"
    steps = ", ".join(f"{row[k]['max_steps']} ({row[k]['fraction_exact']:.2%} exact)"
                      for k in ("end_to_end", "layerwise"))
    share = row["macs_vta"] / max(row["macs"], 1)
    return (f"| {row['model']} | {row['quant']} | {row['nodes_vta']} / {row['nodes_cpu']} | "
            f"{share:.1%} of {row['macs'] / 1e6:.1f} M | {row['syncs']} | "
            f"{row['compile_s']:.1f} s | {wall['fsim']} | {wall['opencl']} | {wall['rtl']} | "
            f"{accuracy} | {_agreement(row)} | {steps} | {bit_identity(t)} |")


def merge(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of one model and quantization joined: the figures of the row measured on the most
    inputs (then the first), the targets of all of them (the first measured of each target)."""
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        key = (row["model"], row["quant"])
        old = merged.get(key)
        if old is None or "error" in old and "error" not in row:
            merged[key] = row
            continue
        if "error" in row:
            continue
        base, extra = (row, old) if row["inputs"] > old["inputs"] else (old, row)
        merged[key] = {**base, "targets": {**extra["targets"], **base["targets"]}}
    order = model_names()
    return [merged[k] for k in sorted(merged, key=lambda k: (order.index(k[0]),
                                                             list(QUANT).index(k[1])))]


def table(rows: list[dict[str, Any]]) -> str:
    return "\n".join([TABLE_HEAD, *(table_row(r) for r in merge(rows))])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="classifier",
                    help=f"comma-separated, of: {', '.join(model_names())}")
    ap.add_argument("--quant", default=None,
                    help="comma-separated, of: static (quantize_static's defaults), vtabench "
                         "(vtabench quantize's), percentile (per-channel weights, percentile "
                         "calibration); default the first two for the OCR models, static for "
                         "the zoo's")
    ap.add_argument("--targets", default="fsim", help="comma-separated, of: fsim, opencl, rtl")
    ap.add_argument("--inputs", type=int, default=4, metavar="N",
                    help="labelled (zoo: random) inputs per row, each run on every target")
    ap.add_argument("--config", default="default")
    ap.add_argument("--json", type=Path, help="write the measured rows (after each row)")
    ap.add_argument("--table", type=Path, nargs="+", metavar="JSON",
                    help="print the markdown table of measured rows instead of measuring")
    args = ap.parse_args(argv)
    if args.table:
        rows = []
        for f in args.table:
            try:
                rows += json.loads(f.read_text())
            except (OSError, ValueError) as exc:
                ap.error(f"--table {f}: not a JSON file of rows ({exc})")
        print(table(rows))
        return 0
    models = args.models.split(",")
    for m in models:
        if m not in model_names():
            ap.error(f"--models {m}: one of {', '.join(model_names())}")
    targets = args.targets.split(",")
    for tg in targets:
        if tg not in TARGETS:
            ap.error(f"--targets {tg}: one of {', '.join(TARGETS)}")
    quants = args.quant.split(",") if args.quant else None
    for qn in quants or []:
        if qn not in QUANT:
            ap.error(f"--quant {qn}: one of {', '.join(QUANT)}")
    if args.inputs < 1:
        ap.error(f"--inputs {args.inputs}: at least 1")

    def log(s: str) -> None:
        print(s, file=sys.stderr, flush=True)

    rows: list[dict[str, Any]] = []
    for m in models:
        for qn in quants or (["static", "vtabench"] if m in OCR_MODELS else ["static"]):
            rows.append(measure(m, qn, targets, args.inputs, args.config, log))
            if args.json:
                args.json.parent.mkdir(parents=True, exist_ok=True)
                args.json.write_text(json.dumps(rows, indent=1, default=float))
    print(table(rows))
    return 0 if all("error" not in r and "NO" not in bit_identity(r["targets"])
                    for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
