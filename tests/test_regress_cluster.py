"""The regression on Dask distributed: the same results as the local pool, worker loss, networks.

Every cluster here is on this machine and listens on 127.0.0.1 only; every process a test starts
is killed by the test, and every wait is bounded.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from test_regress_mutation import PAD_OFF_BY_ONE
from vtabench.cli import main
from vtabench.verify.regress.campaign import chunk_size, regress
from vtabench.verify.regress.cluster import (BatchOptions, ClusterSpec, batch_cluster,
                                             cluster_executor, parse_cluster)

DASK = Path(sys.executable).with_name("dask")
#: Upper bound on any one test's cluster work; past it the test's processes are killed.
WATCHDOG_S = 240


def verdicts(junit: Path) -> list[tuple[str, str]]:
    """(test case, pass/failure/error) in file order."""
    out = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        kinds = [c.tag for c in case if c.tag in ("failure", "error")]
        out.append((case.get("name", ""), kinds[0] if kinds else "pass"))
    return out


def test_cluster_spec_parsing():
    assert parse_cluster("local:3") == ClusterSpec("local", workers=3)
    assert parse_cluster("tcp://127.0.0.1:8786") == ClusterSpec("tcp", address="tcp://127.0.0.1:8786")
    assert parse_cluster("SLURM").kind == "slurm"
    for bad in ("local:0", "local", "tcp://host", "kubernetes"):
        with pytest.raises(ValueError, match="--cluster"):
            parse_cluster(bad)


@pytest.mark.parametrize("kind, directives", [
    ("slurm", ["#SBATCH -p long", "#SBATCH --cpus-per-task=8", "#SBATCH -t 02:00:00"]),
    ("lsf", ["#BSUB -q long", "#BSUB -n 8", "#BSUB -W 02:00"])])
def test_batch_job_script(kind, directives):
    """The job a farm gets: the queue, cores and wall time asked for, one single-threaded worker
    process per core (nothing is submitted: no jobs are asked for)."""
    import dask
    import dask_jobqueue  # noqa: F401 - loads its configuration defaults, set below

    walltime = "02:00:00" if kind == "slurm" else "02:00"
    with dask.config.set({f"jobqueue.{kind}.scheduler-options": {"host": "127.0.0.1"}}):
        cluster = batch_cluster(kind, BatchOptions(queue="long", cores=8, memory="16GB",
                                                   walltime=walltime, jobs=0))
    with cluster:
        script = cluster.job_script()
    for line in directives:
        assert line in script.splitlines(), script
    assert "--nworkers 8" in script and "--nthreads 1" in script and "tcp://127.0.0.1:" in script


def test_cli_rejects_options_of_other_clusters(capsys):
    assert main(["regress", "--cluster", "local:2", "--jobs", "3"]) == 2
    assert main(["regress", "--queue", "long"]) == 2
    assert main(["regress", "--configs", "default,cloud32"]) == 2
    err = capsys.readouterr().err
    assert "--jobs: not with --cluster local:2" in err
    assert "--queue: only with --cluster slurm|lsf|pbs|sge" in err
    assert "--configs: only with --networks" in err


def test_chunks_depend_on_the_count_only():
    assert [chunk_size(n) for n in (8, 40, 500, 2000, 10**6)] == [20, 20, 63, 100, 100]


@pytest.mark.rtl
def test_cluster_run_equals_local_run(tmp_path):
    """A planted RTL bug (the padding mutant) makes verdicts of both kinds; a 2-worker cluster
    must give the same programs, verdicts, functional coverage and reproducer files as the pool."""
    args = ("default", 40, 5, ["fsim", "rtl"])
    opts = {"target_opts": {"rtl": {"mutation": PAD_OFF_BY_ONE}}, "shrink": False,
            "progress": lambda _: None}
    local = regress(*args, jobs=2, save_dir=tmp_path / "local", **opts)
    with cluster_executor(ClusterSpec("local", workers=2), log=lambda _: None) as ex:
        dist = regress(*args, executor=ex, save_dir=tmp_path / "cluster", **opts)

    def view(result):
        return [(r.name, [m.describe() for m in r.mismatches], r.error) for r in result.results]

    assert 0 < len(local.failed) < 40, "the mutant should fail some programs, not all"
    assert view(dist) == view(local)
    assert dist.coverage.hits == local.coverage.hits and dist.chunks == local.chunks == 2
    files = sorted(p.name for p in (tmp_path / "cluster").iterdir())
    assert files == sorted(p.name for p in (tmp_path / "local").iterdir())
    assert files == sorted(f"{r.name}{ext}" for r in local.failed
                           for ext in (".s", ".bin", ".dram.bin", ".json"))
    for name in files:
        assert (tmp_path / "cluster" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()


@pytest.mark.rtl
@pytest.mark.slow
def test_cluster_rtl_coverage_equals_local(tmp_path):
    """Merged Verilator coverage (a coverage build of the core) is the same point for point."""
    args = ("default", 40, 6, ["fsim", "rtl"])
    local = regress(*args, jobs=2, rtl_coverage=True, progress=lambda _: None)
    with cluster_executor(ClusterSpec("local", workers=2), log=lambda _: None) as ex:
        dist = regress(*args, executor=ex, rtl_coverage=True, progress=lambda _: None)
    assert local.rtl_coverage is not None and dist.rtl_coverage is not None
    assert local.rtl_coverage.totals("line")[0] > 0
    assert dict(dist.rtl_coverage.counts) == dict(local.rtl_coverage.counts)


class DaskProcesses:
    """A `dask scheduler` and `dask worker`s on 127.0.0.1, each in its own process group."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.file = tmp / "scheduler.json"
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, *args: str) -> None:
        log = open(self.tmp / f"{name}.log", "wb")
        self.procs[name] = subprocess.Popen([str(DASK), *args], cwd=self.tmp, stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=True)

    def start_cluster(self, workers: int) -> str:
        self.start("scheduler", "scheduler", "--host", "127.0.0.1", "--port", "0",
                   "--no-dashboard", "--scheduler-file", str(self.file))
        deadline = time.monotonic() + 60
        while not self.file.exists():
            assert time.monotonic() < deadline, (self.tmp / "scheduler.log").read_text()
            time.sleep(0.2)
        for k in range(workers):
            # no nanny: the killed worker must stay dead, not be restarted
            self.start(f"w{k}", "worker", "--scheduler-file", str(self.file), "--name", f"w{k}",
                       "--nthreads", "1", "--no-nanny", "--host", "127.0.0.1",
                       "--no-dashboard", "--death-timeout", "60")
        return json.loads(self.file.read_text())["address"]

    def kill(self, name: str) -> None:
        proc = self.procs[name]
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)  # the worker and its simulator
        proc.wait(timeout=30)

    def kill_all(self) -> None:
        for name in list(self.procs):
            self.kill(name)


@pytest.mark.rtl
def test_worker_killed_mid_run_loses_no_program(tmp_path, capsys):
    from distributed import Client

    procs = DaskProcesses(tmp_path)
    watchdog = threading.Timer(WATCHDOG_S, procs.kill_all)
    watchdog.start()
    killed: dict[str, object] = {}
    try:
        address = procs.start_cluster(2)
        with Client(address, timeout=60) as mon:
            mon.wait_for_workers(2, timeout=60)
            names = {a: w["name"] for a, w in mon.scheduler_info()["workers"].items()}

            def kill_a_busy_worker() -> None:
                """Once a worker has had a chunk for a second (its simulator runs), kill it."""
                deadline = time.monotonic() + 120
                while time.monotonic() < deadline:
                    if any(mon.processing().values()):
                        time.sleep(1.0)
                        for addr, keys in mon.processing().items():
                            if keys:
                                killed.update(worker=names[addr], keys=list(keys))
                                procs.kill(str(names[addr]))
                                return
                    time.sleep(0.1)

            killer = threading.Thread(target=kill_a_busy_worker, daemon=True)
            killer.start()
            junit = tmp_path / "r.xml"
            rc = main(["regress", "--count", "60", "--chunk", "10", "--seed", "8", "--targets",
                       "fsim,rtl", "--cluster", address, "--junit", str(junit), "--save-dir",
                       str(tmp_path / "f")])
            killer.join(timeout=10)
    finally:
        watchdog.cancel()
        procs.kill_all()
    out = capsys.readouterr().out
    assert killed.get("keys"), f"no worker was killed while running a chunk: {killed}"
    assert rc == 0, out
    assert "60 passed, 0 failed of 60 programs" in out
    assert verdicts(junit) == [(f"rand-8-{k}", "pass") for k in range(60)]


@pytest.mark.tvm
@pytest.mark.rtl
def test_network_tasks_small_resnet(tmp_path, capsys):
    junit = tmp_path / "n.xml"
    rc = main(["regress", "--networks", "small_resnet", "--targets", "fsim,rtl", "--configs",
               "default", "--seed", "2", "--junit", str(junit)])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert verdicts(junit) == [("small_resnet.fsim", "pass"), ("small_resnet.rtl", "pass")]
    assert "PASS small_resnet.default.rtl" in out and "core cycles" in out
