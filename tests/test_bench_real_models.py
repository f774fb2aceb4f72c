"""bench/bench_real_models.py: its pure parts (the labels and scores of
vtabench.workloads.ocr_labels, the CTC strings it compares, the table and the joining of rows)
and, slow, the classifier's row measured on fsim and opencl."""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from vtabench.workloads.ocr_labels import (best_ious, box_iou, edit_distance, line_boxes,
                                           text_boxes)

BENCH = Path(__file__).resolve().parents[1] / "bench"


@cache
def _bench() -> Any:
    """The bench script as a module (it imports bench_quantized from its own folder)."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location("bench_real_models",
                                                  BENCH / "bench_real_models.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclass looks its module up
    spec.loader.exec_module(mod)
    return mod


# -- labels and scores ----------------------------------------------------------------------------

def test_box_iou() -> None:
    assert box_iou((0, 0, 10, 10), (0, 0, 10, 10)) == 1.0
    assert box_iou((0, 0, 10, 10), (0, 5, 10, 15)) == pytest.approx(50 / 150)
    assert box_iou((0, 0, 10, 10), (10, 10, 20, 20)) == 0.0
    assert best_ious([(0, 0, 10, 10), (20, 20, 30, 30)], [(0, 0, 10, 20)]) == [0.5, 0.0]
    assert best_ious([(0, 0, 4, 4)], []) == [0.0]


def test_line_boxes_are_the_ink_of_each_line() -> None:
    page = np.ones((3, 20, 40), np.float32)  # white, normalized
    page[:, 2:6, 5:30] = -1.0  # a line
    page[:, 3, 32] = -0.2  # darker than mid-grey: ink of the same rows
    page[:, 12:15, 1:9] = 0.2  # lighter than mid-grey: not ink
    page[:, 12:16, 10:20] = -0.8  # a second line
    assert line_boxes(page) == [(2, 5, 6, 33), (12, 10, 16, 20)]
    assert line_boxes(page[None]) == line_boxes(page)
    with pytest.raises(ValueError, match="line_boxes: a page of shape"):
        line_boxes(page[0])


def test_text_boxes_post_processing() -> None:
    """DBNet's settings: the region above 0.3, dilated by 2 x 2 (one more row and column at
    the far side), kept at a mean probability of 0.5 in its box, unclipped by area * 1.6 /
    perimeter; a faint or thin region goes."""
    prob = np.zeros((40, 80), np.float32)
    prob[10:20, 10:50] = 0.9  # 10 x 40, dilated to 11 x 41
    prob[30:35, 60:70] = 0.35  # above the threshold, mean probability below 0.5: dropped
    prob[2:4, 60:79] = 0.9  # 2 rows, dilated to 3: kept, unclipped to 3 + 2 * 1.9 >= 5
    prob[37, 2:30] = 0.9  # one row, dilated to 2 < 3: dropped
    d = 11 * 41 * 1.6 / (2 * (11 + 41))
    assert text_boxes(prob[None, None]) == [(0, 58, 7, 80), (
        round(10 - d), round(10 - d), round(21 + d), round(51 + d))]
    with pytest.raises(ValueError, match="text_boxes: a probability map"):
        text_boxes(np.zeros((2, 1, 4, 4)))


def test_detector_scores() -> None:
    bench = _bench()
    boxes = [(0, 0, 10, 10), (20, 0, 30, 10)]
    assert bench._lines_found(boxes[:1], boxes) == (1.0, 2)
    assert bench._box_agreement(boxes, boxes) == (4.0, 4)
    assert bench._box_agreement([], []) == (1.0, 1)  # nothing found on both sides: agree
    got, n = bench._box_agreement(boxes[:1], [(0, 0, 10, 20)])
    assert (got, n) == (1.0, 2)  # each side's one box at IoU 0.5


def test_ctc_strings_compared() -> None:
    """A CTC output decoded as the package does (repeats merged, blanks dropped) and compared
    with the label: equal strings agree, a one-letter change does not."""
    from vtabench.workloads.rapidocr import ctc_decode

    classes = ("", "h", "e", "l", "o", " ")
    path = [1, 1, 0, 2, 3, 0, 3, 3, 4, 5, 0]  # h h - e l - l l o ' ' -
    probs = np.eye(len(classes), dtype=np.float32)[path]
    got = ctc_decode(probs[None], classes)
    assert got == "hello "
    assert _bench()._same(got, "hello ") == (1.0, 1)
    assert _bench()._same(got, "hell ") == (0.0, 1)
    assert edit_distance(got, "hell ") == 1
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance("", "abc") == 3


# -- the table ------------------------------------------------------------------------------------

def _row(**over: Any) -> dict[str, Any]:
    row = {"model": "classifier", "quant": "vtabench", "inputs": 4, "compile_s": 26.9,
           "nodes_vta": 191, "nodes_cpu": 8, "syncs": 1, "macs": 17_800_000,
           "macs_vta": 17_800_000,
           "targets": {"opencl": {"wall_s": 0.28, "digests": ["a", "b", "c", "d"]},
                       "fsim": {"wall_s": 1.43, "digests": ["a", "b", "c", "d"]}},
           "end_to_end": {"max_steps": 37, "fraction_exact": 0.8},
           "layerwise": {"max_steps": 1, "fraction_exact": 0.99664},
           "agree": [4.0, 4], "agree_unit": "top-1",
           "accuracy": {"float": [4.0, 4], "int8": [3.0, 4], "vta": [3.0, 4]}}
    row.update(over)
    return row


def test_table_row() -> None:
    bench = _bench()
    assert bench.table_row(_row()) == (
        "| classifier | vtabench | 191 / 8 | 100.0% of 17.8 M | 1 | 26.9 s | 1.43 s | 0.28 s "
        "| - | 4/4 / 3/4 / 3/4 | top-1 4/4 | 37 (80.00% exact), 1 (99.66% exact) | fsim = opencl on 4 inputs |")
    head = bench.TABLE_HEAD.split("\n")[0]
    assert head.count("|") == bench.table_row(_row()).count("|") == 14


def test_bit_identity_and_merge() -> None:
    bench = _bench()
    rtl = {"wall_s": 20.0, "digests": ["a", "x"]}
    merged = bench.merge([_row(), _row(inputs=2, targets={"rtl": rtl})])
    assert len(merged) == 1 and merged[0]["inputs"] == 4
    assert sorted(merged[0]["targets"]) == ["fsim", "opencl", "rtl"]
    assert bench.bit_identity(merged[0]["targets"]) == "NO: rtl differ from fsim (2 inputs)"
    rtl["digests"] = ["a", "b"]
    assert bench.bit_identity(merged[0]["targets"]) == "fsim = opencl = rtl on 2 inputs"
    assert bench.bit_identity({"fsim": rtl}) == "-"
    det = _row(model="detector", agree=[7.5, 8], agree_unit="IoU", accuracy=None)
    assert "| - | mean box IoU 0.938 |" in bench.table_row(det)
    err = {"model": "recognizer", "quant": "static", "inputs": 8, "error": "compile: no"}
    assert bench.table_row(err).startswith("| recognizer | static | compile: no |")
    assert bench.table_row(err).count("|") == bench.TABLE_HEAD.split("\n")[0].count("|")
    order = [(r["model"], r["quant"]) for r in bench.merge([det, _row(quant="static"), _row()])]
    assert order == [("classifier", "static"), ("classifier", "vtabench"),
                     ("detector", "vtabench")]


def test_placement_counts_as_vtabench_compile() -> None:
    """Copies and inputs are no nodes of either side; CPU nodes are named with their reason."""
    bench = _bench()
    man = {"nodes": [{"device": "vta", "op": "conv2d"}, {"device": "vta", "op": "copy"},
                     {"device": "cpu", "op": "input"}, {"device": "cpu", "op": "copy"},
                     {"device": "cpu", "op": "relax.nn.softmax"},
                     {"device": "cpu", "op": "conv2d", "reason": "groups"},
                     {"device": "cpu", "op": "conv2d", "reason": "groups"}]}
    assert bench.placement(man) == (1, 3)
    assert bench.cpu_ops(man) == {"conv2d: groups": 2, "relax.nn.softmax: no VTA pattern": 1}


def test_bad_arguments_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    bench = _bench()
    for argv, what in ((["--models", "lenet"], "--models lenet: one of classifier"),
                       (["--targets", "gpu"], "--targets gpu: one of fsim"),
                       (["--quant", "dynamic"], "--quant dynamic: one of static"),
                       (["--inputs", "0"], "--inputs 0: at least 1"),
                       (["--table", "/nonexistent.json"], "--table /nonexistent.json")):
        with pytest.raises(SystemExit) as exc:
            bench.main(argv)
        assert exc.value.code == 2
        assert what in capsys.readouterr().err


# -- the classifier's row -------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.tvm
@pytest.mark.opencl
def test_classifier_row() -> None:
    """Two rendered lines, vtabench's quantization, fsim and opencl: the row's figures hold
    together (bit-identical targets, VTA right where onnxruntime's int8 model is and agreeing
    with it, one step layer by layer)."""
    pytest.importorskip("rapidocr_onnxruntime")
    bench = _bench()
    row = bench.measure("classifier", "vtabench", ["fsim", "opencl"], 2, "default",
                        lambda s: None)
    assert row["nodes_vta"] > 100 and row["syncs"] == 1
    assert row["macs_vta"] == row["macs"] > 0
    assert bench.bit_identity(row["targets"]) == "fsim = opencl on 2 inputs"
    assert row["agree"] == [2.0, 2]
    assert row["accuracy"]["vta"] == row["accuracy"]["int8"] == [2.0, 2]
    assert row["layerwise"]["max_steps"] <= 2 and row["layerwise"]["tensors"] > 100
    assert row["end_to_end"]["tensors"] == 2 * row["layerwise"]["tensors"]
    assert "| classifier | vtabench | " in bench.table_row(row)
