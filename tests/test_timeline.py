"""The RTL pipeline trace (docs/visualize.md): the event log read back, the Chrome trace built from
it, and its busy cycles against the core's own counters."""

from __future__ import annotations

import json

import numpy as np
import pytest

from vtabench.report.breakdown import PARTS, run_breakdown
from vtabench.report.timeline import chrome_trace, write_timeline
from vtabench.report.trace import HEADER, TraceError, read_trace
from vtabench.spec.config import load_config
from vtabench.spec.contracts.stages import Stage
from vtabench.spec.isa.asm import format_insn
from vtabench.spec.isa.insn import encode_insn
from vtabench.spec.isa.layout import Opcode

CFG = load_config("default")


@pytest.mark.parametrize("body, needle", [
    ("", "not a vtabench pipeline trace"),
    (f"{HEADER}\nR 0 0 1 2 0 0 0\n", ":2: a 'R' record before the first run"),
    (f"{HEADER}\nL 1\nR 0 0 1 2 0 0 0\n", ":3: instruction 0 retired by stage 0 was never"),
    (f"{HEADER}\nL 1\nD 1 0 0 zz\n", ":3: the instruction is not hexadecimal"),
    (f"{HEADER}\nL 1\nE 1 2\n", ":3: expected 8 fields"),
    (f"{HEADER}\nL x\n", ":2: a field is not an integer"),
    (f"{HEADER}\nL 1\nQ 1\n", ":3: unknown record type 'Q'"),
])
def test_malformed_trace_names_file_and_line(tmp_path, body, needle):
    path = tmp_path / "t.trace"
    path.write_text(body)
    with pytest.raises(TraceError) as err:
        read_trace(path)
    assert str(path) in str(err.value) and needle in str(err.value)


def _check_chrome(doc: dict, runs, programs) -> None:
    """Structure of the Chrome trace: lanes, one slice per instruction named by its disassembly,
    slices of a lane disjoint and adding up to the core's busy counter, token waits inside their
    instruction, queue counters back to 0."""
    json.loads(json.dumps(doc))  # plain JSON
    events = doc["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    assert names == {0: "load", 1: "compute", 2: "store", 3: "runs"}
    slices = [e for e in events if e["ph"] == "X"]
    assert all(isinstance(e["ts"], int) and e["dur"] >= 0 for e in slices)
    runs_lane = [e for e in slices if e["cat"] == "run"]
    assert [e["dur"] for e in runs_lane] == [r.cycles for r in runs]
    offsets = [e["ts"] for e in runs_lane]
    waits = [e for e in slices if e["cat"] == "token wait"]
    for k, (run, prog) in enumerate(zip(runs, programs, strict=True)):
        lo, hi = offsets[k], offsets[k] + run.cycles
        for stage in Stage:
            insn_slices = sorted((e for e in slices if e["tid"] == stage.value
                                  and e["cat"] not in ("token wait",) and lo <= e["ts"] < hi),
                                 key=lambda e: e["ts"])
            assert len(insn_slices) == run.counters.insns[stage]
            assert sum(e["dur"] for e in insn_slices) == run.counters.busy[stage]
            for a, b in zip(insn_slices, insn_slices[1:]):
                assert a["ts"] + a["dur"] <= b["ts"]
            for e in insn_slices:
                assert e["name"] == format_insn(CFG, prog.insns[e["args"]["index"]])
                assert e["args"]["dispatch"] <= e["args"]["take"] < e["args"]["retire"]
                inner = [w for w in waits if w["tid"] == stage.value
                         and e["ts"] <= w["ts"] < e["ts"] + e["dur"]]
                assert sum(w["dur"] for w in inner) == (e["args"]["pop_wait"]
                                                        + e["args"]["push_wait"])
                assert all(w["ts"] + w["dur"] <= e["ts"] + e["dur"] for w in inner)
    for stage in Stage:
        levels = [e["args"]["instructions"] for e in events
                  if e["ph"] == "C" and e["name"] == f"{stage.name.lower()} queue"]
        assert min(levels, default=0) >= 0 and (not levels or levels[-1] == 0)


@pytest.mark.rtl
def test_trace_adds_up_to_the_core_counters(tmp_path):
    """Directed, throughput and random programs under memory back-pressure, traced in one core
    bench process: per stage, the spans' busy cycles and count equal the core's busy and retired
    counters (as cocotb read them), in the JSON too; the breakdown parts add up to the cycles."""
    from vtabench.verify.perf import gemm_program
    from vtabench.rtl.simjob import run_batch
    from vtabench.spec.program import Program
    from vtabench.verify.directed import directed_programs
    from vtabench.verify.random_program import random_program

    programs = [gemm_program(CFG, 2)[0], *list(directed_programs(CFG))[:3]]
    programs += [random_program(CFG, np.random.default_rng([19, k])) for k in range(2)]
    raw = [Program(f"p{k}", p.insns, p.dram.copy(), knobs={"stall": 60, "rd_latency": 40})
           for k, p in enumerate(programs)]
    trace = tmp_path / "batch.trace"
    stats = run_batch(CFG, raw, seed=19, trace=trace)
    runs = read_trace(trace)
    assert len(runs) == len(programs)
    for run, st, prog in zip(runs, stats, programs, strict=True):
        assert st["state"] == "done"
        c = run.counters
        assert c is not None and c.error == 0 and c.cycles == st["cycles"]
        for stage in Stage:
            key = stage.name.lower()
            spans = run.stage_spans(stage)
            assert c.busy[stage] == st[f"{key}_busy"] == sum(s.busy for s in spans)
            assert c.insns[stage] == st[f"{key}_insns"] == len(spans)
            assert all(0 <= s.mem_wait <= s.busy - s.pop_wait - s.push_wait for s in spans)
        assert {s.index for s in run.spans} == set(range(len(prog.insns)))
        assert all(encode_insn(CFG, prog.insns[s.index]) == s.word for s in run.spans)
        b = run_breakdown(CFG, run, "x")
        assert sum(b.parts.values()) == run.cycles and set(b.parts) == set(PARTS)
        assert all(v >= 0 for v in b.parts.values())
    # the GEMM-bound program: most of its cycles are the GEMM, and the utilization says so
    gemm = run_breakdown(CFG, runs[0], "gemm")
    assert gemm.mac_iterations == sum(i.iter_out * i.iter_in * (i.uop_end - i.uop_bgn)
                                      for i in programs[0].insns
                                      if i.opcode == Opcode.GEMM and not i.reset_reg)
    _check_chrome(chrome_trace(CFG, runs), runs, programs)
    png = write_timeline(tmp_path / "t.png", CFG, runs)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.rtl
def test_exec_timeline_on_the_platform(tmp_path, capsys):
    """`vtabench exec --target rtl --timeline t.json` (the program behind the PCIe platform):
    every instruction is one slice of its stage's lane, named by its disassembly."""
    from vtabench.cli import main
    from vtabench.spec.isa import encode_program
    from vtabench.verify.directed import directed_programs

    prog = list(directed_programs(CFG))[1]
    (tmp_path / "p.bin").write_bytes(encode_program(CFG, prog.insns))
    prog.dram.tofile(tmp_path / "d.bin")
    out = tmp_path / "t.json"
    assert main(["exec", "--target", "rtl", "--insns", str(tmp_path / "p.bin"), "--dram",
                 str(tmp_path / "d.bin"), "--out", str(tmp_path / "o.bin"), "--seed", "1",
                 "--timeline", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    events = json.loads(out.read_text())["traceEvents"]
    insn = [e for e in events if e["ph"] == "X" and e["tid"] < len(Stage)
            and e["cat"] != "token wait"]
    assert sorted(e["args"]["index"] for e in insn) == list(range(len(prog.insns)))
    assert all(e["name"] == format_insn(CFG, prog.insns[e["args"]["index"]]) for e in insn)


def test_timeline_needs_rtl_and_a_known_suffix(tmp_path, capsys):
    from vtabench.cli import main

    from vtabench.spec.isa import encode_program
    from vtabench.verify.directed import directed_programs

    args = ["exec", "--insns", str(tmp_path / "p.bin"), "--dram", str(tmp_path / "d.bin"),
            "--out", str(tmp_path / "o.bin")]
    prog = list(directed_programs(CFG))[0]
    (tmp_path / "p.bin").write_bytes(encode_program(CFG, prog.insns))
    prog.dram.tofile(tmp_path / "d.bin")
    assert main([*args, "--target", "fsim", "--timeline", str(tmp_path / "t.png")]) != 0
    assert "only target rtl records a pipeline trace" in capsys.readouterr().err
    assert main([*args, "--target", "rtl", "--timeline", str(tmp_path / "t.svg")]) != 0
    assert "must end in .json or .png" in capsys.readouterr().err
    assert not (tmp_path / "o.bin").exists()
