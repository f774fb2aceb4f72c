"""The formal flow (vtabench.verify.formal, `vtabench formal`): the quick proofs hold, a
catalogue mutant makes one fail with a counterexample trace, the CLI's table and exit status."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from vtabench.processes import descendants
from vtabench.rtl.verilator import Mutation
from vtabench.verify import formal
from vtabench.verify.mutation import load_catalogue


def _job(name: str) -> formal.Job:
    return next(j for j in formal.JOBS if j.name == name)


@pytest.mark.parametrize("name", [j.name for j in formal.JOBS if j.quick])
def test_quick_proof_holds_and_every_cover_is_reached(name: str, tmp_path: Path) -> None:
    result = formal.run_job(_job(name), tmp_path, tag="test")
    asserts = [p for p in result.properties if p.kind == "assert"]
    covers = [p for p in result.properties if p.kind == "cover"]
    assert asserts and covers
    assert all(p.ok for p in result.properties), formal.table([result])


def test_mutant_fails_a_proof_with_a_counterexample(tmp_path: Path) -> None:
    mutant = next(m for m in load_catalogue("rtl") if m.id == "fifo-full-early")
    hdl = Mutation(mutant.file, mutant.old, mutant.new).apply(tmp_path / "hdl")
    result = formal.run_job(_job("fifo-4"), tmp_path / "cex", hdl_dir=hdl, tag="mut")
    failed = [p for p in result.properties if p.status == "failed"]
    assert not result.ok and failed
    trace = failed[0].trace
    assert trace is not None and trace.suffix == ".vcd" and trace.parent == tmp_path / "cex"
    assert "wready" in trace.with_suffix(".gtkw").read_text()


def test_cli_table_and_unknown_module(tmp_path: Path) -> None:
    exe = Path(sys.executable).parent / "vtabench"
    r = subprocess.run([str(exe), "formal", "--module", "token_queue-4", "--out",
                        str(tmp_path)], capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr
    assert "proven (k-induction, k=3)" in r.stdout and "count_step" in r.stdout
    r = subprocess.run([str(exe), "formal", "--module", "nosuch"], capture_output=True,
                       text=True, timeout=60, check=False)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--module nosuch" in r.stderr


def test_sigterm_ends_the_run_and_its_solvers(tmp_path: Path) -> None:
    exe = Path(sys.executable).parent / "vtabench"
    proc = subprocess.Popen([str(exe), "formal", "--module", "span_mask-64", "--out",
                             str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not descendants(proc.pid):
        time.sleep(0.2)
    time.sleep(3)  # the engines (smtbmc, yices) start
    under = descendants(proc.pid)
    assert under
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=10)
    assert time.monotonic() - t0 < 2.5
    assert proc.returncode == 143 and err.strip().splitlines()[-1].endswith(
        "terminated (SIGTERM); children stopped, temporary files removed")
    time.sleep(0.3)
    alive = [p for p in under if os.path.exists(f"/proc/{p}")
             and Path(f"/proc/{p}/stat").read_text().split(") ")[1][0] != "Z"]
    assert not alive


def test_mutate_formal_kills_a_token_queue_mutant(tmp_path: Path) -> None:
    exe = Path(sys.executable).parent / "vtabench"
    env = {**os.environ, "VTABENCH_RESULTS_DIR": str(tmp_path)}
    r = subprocess.run([str(exe), "mutate", "--formal", "--only", "tokq-full-early"],
                       capture_output=True, text=True, timeout=120, check=False, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    row = next(line for line in r.stdout.splitlines() if "`tokq-full-early`" in line)
    assert "| killed |" in row and "token_queue-4: full_flag failed at step" in row
    assert (tmp_path / "formal-mutants").is_dir()
    r = subprocess.run([str(exe), "mutate", "--formal", "--kind", "opencl"],
                       capture_output=True, text=True, timeout=60, check=False, env=env)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--formal" in r.stderr


def test_register_map_parameters_follow_the_generated_view() -> None:
    """vta_regs_props takes the map from vtabench.spec.contracts.regs: every parameter the
    flow sets is declared there (chparam would stop the job), every register has its offset,
    and the masks classify every register once."""
    from vtabench.spec.contracts import regs

    params = formal.regmap_params()
    text = (formal.FORMAL_DIR / "vta_regs_props.sv").read_text()
    declared = set(re.findall(r"\b([A-Z]\w*)\s*=\s*(?:'0|0)\b", text))
    assert set(params) <= declared, sorted(set(params) - declared)
    for name, off in regs.REGISTERS.items():
        camel = "".join(p.capitalize() for p in name.split("_"))
        assert params[f"Addr{camel}"] == off
    assert params["MappedWords"] == sum(1 << (off // 4) for off in regs.REGISTERS.values())
    assert params["RwWords"] & params["RoWords"] == 0
    assert params["VersionValue"] != 0


@pytest.mark.slow
def test_dma_rd_reference_catches_a_misplaced_beat(tmp_path: Path) -> None:
    """The DMA read path's reference (formal/vta_dma_rd_props.sv) sees a row's first beat
    written as if the row were aligned (catalogue mutant dma-beat-offset): a write of the
    first data beat fails, with a trace from reset (bmc to depth 8: the job itself is a
    k-induction of k = 1, whose base case is the reset state alone). Slow: 32-53 s here."""
    mutant = next(m for m in load_catalogue("rtl") if m.id == "dma-beat-offset")
    hdl = Mutation(mutant.file, mutant.old, mutant.new).apply(tmp_path / "hdl")
    job = replace(_job("dma_rd-edge8"), mode="bmc", depth=8)
    result = formal.run_job(job, tmp_path / "cex", hdl_dir=hdl, tag="mut", tasks=("check",))
    failed = [p for p in result.properties if p.status == "failed"]
    assert failed and {p.name for p in failed} & {"write_addr", "write_mask"}, \
        formal.table([result])
    assert all(p.step is not None and p.step >= 6 for p in failed)
