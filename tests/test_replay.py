"""A saved regression failure replays as it failed (issue #31 item 5): vtabench regress --replay."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from vtabench.cli import main
from vtabench.spec.config import load_config
from vtabench.verify.regress.campaign import generate, save_failure
from vtabench.verify.regress.diff import compare, golden_image, run_on_target
from vtabench.verify.regress.replay import load_failure, replay

CFG = load_config("default")
SEED = 11


def broken_case() -> tuple[str, object]:
    """A generated fault.read case whose expectation is dropped: the rtl bench reports the
    injected AXI read error, which a clean run does not allow (a broken setup)."""
    for k in range(400):
        prog = generate(CFG, SEED, k)
        if prog.kind == "fault.read" and prog.knobs.get("rd_latency"):
            return prog.name, replace(prog, expect={})
    raise AssertionError("no fault.read case with memory timing in 400 programs")


def test_saved_failure_holds_the_bench_setup_and_replays_the_same(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    name, prog = broken_case()
    _, (problem,) = run_on_target(CFG, "rtl", [prog], seed=SEED + 3)
    assert problem and "AXI" in problem
    save_failure(CFG, prog, tmp_path, SEED + 3, ["fsim", "rtl"])
    rec = json.loads((tmp_path / f"{name}.json").read_text())
    assert rec["knobs"] == prog.knobs and rec["knobs"]["fault_lo"] > 0
    assert rec["placement"] == {"dram_base": prog.placement.dram_base,
                                "insn_pad": prog.placement.insn_pad,
                                "dram_size": prog.placement.dram_size}
    assert rec["origin"] == {"kind": "fault.read", "seed": SEED, "index": prog.origin.index}
    assert rec["seed"] == SEED + 3 and rec["config"] == "default" and rec["commit"]
    saved = load_failure(tmp_path)
    assert saved.program.code == prog.encoded(CFG)
    assert np.array_equal(saved.program.dram, prog.dram)
    assert replay(saved) == {"rtl": problem}
    assert main(["regress", "--replay", str(tmp_path / f"{name}.json")]) == 1
    out = capsys.readouterr().out
    assert f"rtl: {problem}" in out and f"bench seed {SEED + 3}" in out


def test_replay_writes_waves_and_a_save_file(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """--waves runs the cocotb bench: the same verdict as the fast harness that failed."""
    _, prog = broken_case()
    _, (problem,) = run_on_target(CFG, "rtl", [prog], seed=5)
    save_failure(CFG, prog, tmp_path, 5, ["fsim", "rtl"])
    assert main(["regress", "--replay", str(tmp_path), "--waves"]) == 1
    assert f"rtl: {problem}" in capsys.readouterr().out
    waves = [p for p in tmp_path.iterdir() if p.suffix in (".fst", ".vcd")]
    assert len(waves) == 1 and waves[0].stat().st_size > 0
    assert "[dumpfile]" in waves[0].with_suffix(".gtkw").read_text()


def test_replay_of_a_folder_without_one_failure_is_one_line(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]
                                                             ) -> None:
    assert main(["regress", "--replay", str(tmp_path)]) != 0
    assert "expected one saved failure" in capsys.readouterr().err


@pytest.mark.rtl
@pytest.mark.slow
def test_a_mutant_failure_replays_on_the_mutant(tmp_path: Path) -> None:
    """The saved record holds the mutant (target options): replay builds it and fails the same
    way, on a program the original RTL passes."""
    from vtabench.rtl.verilator import Mutation
    from vtabench.verify.mutation import load_catalogue

    m = next(x for x in load_catalogue("rtl") if x.id == "compute-imm-alu-src-checked")
    opts = {"mutation": Mutation(m.file, m.old, m.new)}
    prog = generate(CFG, 1, 0)
    expected = golden_image(CFG, prog)

    def verdict(target_opts: dict[str, object]) -> str | None:
        (image,), (problem,) = run_on_target(CFG, "rtl", [prog], seed=1, target_opts=target_opts)
        diff = compare(CFG, "rtl", prog, expected, image)
        return problem or (diff.describe() if diff is not None else None)

    assert verdict({}) is None
    failed = verdict(opts)
    assert failed is not None
    save_failure(CFG, prog, tmp_path, 1, ["fsim", "rtl"], {"rtl": opts})
    assert replay(load_failure(tmp_path)) == {"rtl": failed}


def test_waves_on_fail_writes_waves_of_an_rtl_failure(tmp_path: Path, monkeypatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """regress --waves-on-fail: a failure the regression saved gets its waves and a GTKWave save
    file, rerun on the cocotb bench, before the command ends (the regression itself stands in:
    it saves the broken case and reports its rtl verdict, as a chunk does)."""
    import vtabench.verify.regress.campaign as campaign
    from vtabench.verify.regress.coverage import FunctionalCoverage

    name, prog = broken_case()
    _, (problem,) = run_on_target(CFG, "rtl", [prog], seed=7)

    def regress(config, count, seed, targets, *, save_dir, **_):  # type: ignore[no-untyped-def]
        save_failure(CFG, prog, save_dir, 7, ["fsim", *targets])
        return campaign.RegressResult(config, seed, targets,
                                      [campaign.ProgramVerdict(0, name, 1.0, error=problem)],
                                      FunctionalCoverage(CFG), 1.0)

    monkeypatch.setattr(campaign, "regress", regress)
    assert main(["regress", "--count", "1", "--seed", "7", "--targets", "fsim,rtl",
                 "--save-dir", str(tmp_path), "--waves-on-fail", "--no-shrink"]) == 1
    out = capsys.readouterr().out
    waves = [p for p in tmp_path.iterdir() if p.suffix in (".fst", ".vcd")]
    assert [p.stem for p in waves] == [name] and waves[0].stat().st_size > 0
    assert "[dumpfile]" in waves[0].with_suffix(".gtkw").read_text()
    assert f"{name}: {waves[0]} and {waves[0].with_suffix('.gtkw')} (failed again)" in out
