"""Job folders of simulator runs (vtabench/rtl/simjob.py) go on every path.

A failing simulator, an exception, an interrupt (SIGINT, the CLI's SIGTERM) unwind SimJob's
``with`` block, which removes the folder; a log that cannot be kept no longer keeps the folder;
a process killed with SIGKILL while its simulator runs has the core bench remove the folder and
end; one killed at any other moment has its folder reaped by the next job of any process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from vtabench.rtl import simjob
from vtabench.rtl.simjob import SimJob, reap_orphaned_jobs


#: What simulate reads of a build.
BUILD = SimpleNamespace(toplevel="vta_tb_top", build_dir="/nonexistent")


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_reaps_only_folders_of_dead_owners(tmp_path: Path) -> None:
    dead = tmp_path / f"vtabench-rtl-default-pid{_dead_pid()}-abc_12"
    live = tmp_path / f"vtabench-rtl-default-pid{os.getpid()}-def_34"
    other = tmp_path / f"vtabench-device-pid{_dead_pid()}-ghi_56"  # not a SimJob folder
    for folder in (dead, live, other):
        (folder / "dram.bin").parent.mkdir()
        (folder / "dram.bin").write_bytes(b"\0" * 64)
    assert reap_orphaned_jobs(tmp_path) == [dead]
    assert not dead.exists() and live.exists() and other.exists()


class Stop(BaseException):
    """Stands for the CLI's Terminated: a BaseException that is not the simulator's."""


def test_an_interrupt_passes_and_the_folder_goes(monkeypatch: pytest.MonkeyPatch) -> None:
    class Runner:
        def test(self, **_: object) -> None:
            raise Stop

    monkeypatch.delenv("VTABENCH_KEEP_JOBS", raising=False)
    monkeypatch.setattr("cocotb_tools.runner.get_runner", lambda _: Runner())
    with pytest.raises(Stop), SimJob("vtabench-rtl-test-") as job:
        folder = job.dir
        (folder / "job.json").write_text("{}")
        job.simulate(BUILD, "x", seed=1, plusargs=[])  # type: ignore[arg-type]
    assert not folder.exists()


def test_a_failing_simulator_is_no_exception_and_the_folder_goes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    class Runner:
        def test(self, **_: object) -> None:
            raise SystemExit(3)

    monkeypatch.delenv("VTABENCH_KEEP_JOBS", raising=False)
    monkeypatch.setattr("cocotb_tools.runner.get_runner", lambda _: Runner())
    with SimJob("vtabench-rtl-test-") as job:
        job.simulate(BUILD, "x", seed=1, plusargs=[])  # type: ignore[arg-type]
        assert job.exit_status == 3
    assert not job.dir.exists()


def test_a_log_that_cannot_be_kept_keeps_no_folder(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("VTABENCH_BUILD_DIR", str(blocker))  # logs/ would go under a file
    monkeypatch.delenv("VTABENCH_KEEP_JOBS", raising=False)
    with SimJob("vtabench-rtl-test-") as job:
        job.log.write_text("%Error: vta_fetch.sv:1: Assertion failed in x\n")
        line = job.failure()
    assert line.startswith("%Error: vta_fetch.sv:1: Assertion failed in x; the log could not")
    assert not job.dir.exists()


@pytest.mark.rtl
def test_sigkill_while_the_simulator_runs_leaves_nothing(tmp_path: Path) -> None:
    """A process killed with SIGKILL while the core bench runs a program that never ends: the
    bench notices (between chunks of cycles), removes the job folder and ends."""
    script = textwrap.dedent("""
        import numpy as np
        from vtabench.rtl.simjob import run_batch
        from vtabench.spec.config import load_config
        from vtabench.spec.isa.insn import Insn, encode_program
        from vtabench.spec.isa.layout import Opcode
        from vtabench.spec.program import Program
        cfg = load_config("default")
        stuck = encode_program(cfg, [Insn(Opcode.GEMM, pop_prev_dep=1, uop_bgn=0, uop_end=1,
                                          iter_out=1, iter_in=1), Insn(Opcode.FINISH)])
        run_batch(cfg, [Program("stuck", [], np.zeros(4096, np.uint8), stuck,
                                max_cycles=10**12)], seed=1, validate=False, quiet=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    pattern = f"vtabench-rtl-default-pid{proc.pid}-*"
    deadline = time.monotonic() + 300  # the build, when it is not there yet
    while time.monotonic() < deadline and proc.poll() is None:
        folders = list(simjob.SHM_DIR.glob(pattern))
        if folders and (folders[0] / "results.jsonl").exists():  # the bench is running
            break
        time.sleep(0.2)
    assert proc.poll() is None and folders, "the bench never started"
    time.sleep(1.0)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and folders[0].exists():
        time.sleep(0.2)
    assert not folders[0].exists(), f"{folders[0]} left behind"
