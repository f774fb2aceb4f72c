"""MAC utilization has one definition (vtabench.runtime.utilization): every view of one run shows
the same figure, and each says what it is over."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from vtabench.report.breakdown import Segment, merged, segment_breakdowns
from vtabench.report.trace import Counters, Run, Span
from vtabench.runtime.utilization import (ISSUED_MACS, LAYER_MACS, gemm_iterations,
                                          mac_utilization, utilization_text)
from vtabench.spec.config import load_config
from vtabench.spec.contracts.stages import Stage
from vtabench.spec.isa import Insn, Opcode
from vtabench.spec.isa.insn import encode_insn

CFG = load_config("default")


def test_definition():
    assert mac_utilization(2 * 256 * 10, 256, 40) == 0.5
    assert mac_utilization(5, 256, 0) == 0.0
    gemm = Insn(Opcode.GEMM, iter_out=3, iter_in=4, uop_bgn=2, uop_end=7)
    assert gemm_iterations(gemm) == 3 * 4 * 5
    assert gemm_iterations(Insn(Opcode.GEMM, iter_out=3, iter_in=4, uop_end=7,
                                reset_reg=1)) == 0
    text = utilization_text(CFG, 2_689_536, 22_026, "one inference")
    assert text == ("47.7% (one inference: 2,689,536 layer MACs / (256 lanes x 22,026 core "
                    "cycles))")


def _run() -> Run:
    """Two compute instructions of 10 iterations each (cycles 0-9 and 10-29), FINISH after."""
    gemm = Insn(Opcode.GEMM, iter_out=10, iter_in=1, uop_end=1)
    spans = [Span(Stage.COMPUTE, k, encode_insn(CFG, i), 0, take, retire, 0, 0, 0)
             for k, (i, take, retire) in enumerate([(gemm, -1, 9), (gemm, 9, 29),
                                                    (Insn(Opcode.FINISH), 29, 30)])]
    return Run(3, spans, Counters(31, 0, dict.fromkeys(Stage, 0), dict.fromkeys(Stage, 0)))


def test_windows_count_layer_macs_when_given():
    run = _run()
    layer, raw = segment_breakdowns(CFG, run, [Segment("a", 0, 0, 1000), Segment("b", 1, 2)])
    assert (layer.cycles, raw.cycles) == (10, 21)
    assert layer.macs == 1000 and layer.macs_source == LAYER_MACS
    assert layer.utilization == mac_utilization(1000, 256, 10)
    assert raw.macs == 10 * 256 and raw.macs_source == ISSUED_MACS
    assert raw.utilization == mac_utilization(10 * 256, 256, 21)
    both = merged("a+a", [layer, layer])
    assert (both.macs, both.cycles, both.utilization) == (2000, 20, layer.utilization)
    with pytest.raises(ValueError, match="what their MACs are"):
        merged("a+b", [layer, raw])


def test_plots_does_not_import_the_timeline():
    """report.plots and report.timeline: no import circle (timeline draws with plots)."""
    code = ("import sys, vtabench.report.plots; "
            "print('vtabench.report.timeline' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "False", out.stderr


@pytest.fixture(scope="module")
def package(tmp_path_factory) -> tuple[Path, Path]:
    from vtabench.graph import compile_model
    from vtabench.workloads import small_resnet

    d = tmp_path_factory.mktemp("net")
    compile_model(small_resnet(), CFG).save(d / "net.vtapkg")
    np.save(d / "x.npy", np.random.default_rng(0).standard_normal((1, 3, 16, 16))
            .astype(np.float32))
    return d / "net.vtapkg", d / "x.npy"


def _percent(util: float) -> str:
    return f"{100 * util:.1f}%"


@pytest.mark.tvm
@pytest.mark.rtl
def test_every_view_of_one_run_shows_the_same_figure(package, tmp_path, monkeypatch, capsys):
    """`vtabench run --target rtl`: the inference's figure is the same in its text line, the JSON,
    the timeline's title and its runs lane; the profiling run's in the table's total, the JSON
    and the --plot title. Each title says what it is over."""
    import vtabench.report.plots as plots
    from vtabench.cli import main

    titles: dict[str, str] = {}

    def keep_title(name, draw):
        def wrapper(*args, **kwargs):
            fig = draw(*args, **kwargs)
            titles[name] = " ".join(fig.get_suptitle().split())  # as one line
            return fig
        return wrapper

    monkeypatch.setattr(plots, "timeline_figure", keep_title("timeline", plots.timeline_figure))
    monkeypatch.setattr(plots, "breakdown_figure", keep_title("plot", plots.breakdown_figure))
    pkg, x = package
    common = ["run", str(pkg), "--input", str(x), "--target", "rtl", "--seed", "5",
              "--no-progress"]
    assert main([*common, "--timeline", str(tmp_path / "t.png"), "--plot",
                 str(tmp_path / "p.png"), "--json"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    text = captured.err
    inference = result["inferences"][0]["mac_utilization"]
    total = result["profile"]["total"]["mac_utilization"]
    assert 0.1 < inference < 1 and 0.1 < total < 1
    assert result["mac_utilization_definition"] == f"{LAYER_MACS} / (256 lanes x core cycles)"
    assert f"MAC utilization {_percent(inference)} (inference 1: " in text
    assert f"MAC utilization {_percent(inference)} (the traced run: " in titles["timeline"]
    assert f"MAC utilization {_percent(total)} (profiling run, one launch per layer: " in \
        titles["plot"]
    table_total = next(line for line in text.splitlines() if line.strip().startswith("total"))
    assert table_total.split()[-1] == _percent(total)
    assert f"{LAYER_MACS} / (256 lanes x" in titles["timeline"] and "core cycles" in \
        titles["plot"]

    assert main([*common, "--timeline", str(tmp_path / "t.json"), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["inferences"][0]["cycles"] == result["inferences"][0]["cycles"]
    events = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    [run_slice] = [e for e in events if e.get("cat") == "run"]
    assert run_slice["args"]["mac_utilization"] == round(inference, 4)
    assert run_slice["args"]["cycles"] == result["inferences"][0]["cycles"]
    layers = [e for e in events if e.get("cat") == "segment"]
    assert sum(e["args"][LAYER_MACS] for e in layers) == result["profile"]["total"]["macs"]


@pytest.mark.rtl
def test_exec_figure_equals_its_timeline(tmp_path, capsys):
    """A raw program: `vtabench exec --target rtl` counts the MACs its GEMMs issue, and so does
    its timeline."""
    from vtabench.cli import main
    from vtabench.spec.isa import encode_program
    from vtabench.verify.perf import gemm_program

    prog = gemm_program(CFG, 2)[0]
    (tmp_path / "p.bin").write_bytes(encode_program(CFG, prog.insns))
    prog.dram.tofile(tmp_path / "d.bin")
    assert main(["exec", "--target", "rtl", "--insns", str(tmp_path / "p.bin"), "--dram",
                 str(tmp_path / "d.bin"), "--out", str(tmp_path / "o.bin"), "--seed", "2",
                 "--timeline", str(tmp_path / "t.json"), "--json"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    util = result["mac_utilization"]
    issued = sum(gemm_iterations(i) for i in prog.insns) * CFG.macs_per_cycle
    assert util == mac_utilization(issued, CFG.macs_per_cycle, result["stats"]["cycles"]) > 0.1
    assert f"MAC utilization {_percent(util)} (the run: {issued:,} {ISSUED_MACS}" in captured.err
    [run_slice] = [e for e in json.loads((tmp_path / "t.json").read_text())["traceEvents"]
                   if e.get("cat") == "run"]
    assert run_slice["args"]["mac_utilization"] == round(util, 4)
