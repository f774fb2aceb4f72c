"""Where `vtabench regress --cluster SPEC` runs: the workers of a Dask distributed cluster.

SPEC is one of

- ``local:N``: a LocalCluster of N single-threaded worker processes on this machine (its
  scheduler listens on 127.0.0.1 only);
- ``tcp://HOST:PORT``: an existing scheduler (``dask scheduler``, workers started by
  ``dask worker``), which this run does not stop;
- ``slurm``, ``lsf``, ``pbs``, ``sge``: a scheduler in this process and workers submitted as
  batch jobs through dask-jobqueue (:class:`BatchOptions`: queue, cores, memory, walltime, jobs;
  everything else, e.g. the network interface or an account, from dask-jobqueue's own
  configuration, ``~/.config/dask/jobqueue.yaml``).

The campaign only sees a :class:`concurrent.futures.Executor` (the client's), the same interface
as the local process pool, so the tasks are the same functions on either. Every worker runs one
task at a time in its own process: fsim is Python and numpy, the simulators are subprocesses.
Workers on one host share the Verilator build cache (build_root(), file-locked, keyed by the hash
of the build inputs); a worker on another host builds into its own VTABENCH_BUILD_DIR once. A
worker that dies has its task re-run on another by the scheduler; the client keeps the first
result of each task, so nothing is lost or counted twice.
"""

from __future__ import annotations

import re
from concurrent.futures import Executor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator

#: Batch scheduler name -> dask-jobqueue cluster class.
BATCH_CLUSTERS = {"slurm": "SLURMCluster", "lsf": "LSFCluster", "pbs": "PBSCluster",
                  "sge": "SGECluster"}
#: Seconds to wait for an existing scheduler to answer.
CONNECT_TIMEOUT_S = 30


@dataclass(frozen=True)
class ClusterSpec:
    kind: str  # "local", "tcp" or a key of BATCH_CLUSTERS
    workers: int = 0  # local:N
    address: str = ""  # tcp://HOST:PORT

    def __str__(self) -> str:
        return {"local": f"local:{self.workers}", "tcp": self.address}.get(self.kind, self.kind)


@dataclass(frozen=True)
class BatchOptions:
    """One batch job = one Dask job of ``cores`` single-threaded worker processes."""

    queue: str | None = None
    cores: int = 1
    memory: str = "4GB"  # per job
    walltime: str | None = None  # in the scheduler's format (slurm 01:00:00, lsf 01:00)
    jobs: int = 1


def parse_cluster(text: str) -> ClusterSpec:
    """``local:N``, ``tcp://HOST:PORT`` or a batch scheduler name; ValueError naming the problem."""
    text = text.strip()
    if m := re.fullmatch(r"local:(\d+)", text):
        if int(m[1]) < 1:
            raise ValueError(f"--cluster {text}: a local cluster needs at least 1 worker")
        return ClusterSpec("local", workers=int(m[1]))
    if re.fullmatch(r"tcp://[^\s:/]+:\d+", text):
        return ClusterSpec("tcp", address=text)
    if text.lower() in BATCH_CLUSTERS:
        return ClusterSpec(text.lower())
    raise ValueError(f"--cluster {text!r}: expected local:N, tcp://HOST:PORT or one of "
                     f"{', '.join(BATCH_CLUSTERS)}")


def batch_cluster(kind: str, opts: BatchOptions) -> Any:
    import dask_jobqueue

    cls = getattr(dask_jobqueue, BATCH_CLUSTERS[kind])
    given = {"queue": opts.queue, "walltime": opts.walltime}  # else dask-jobqueue's settings
    cluster = cls(cores=opts.cores, processes=opts.cores, memory=opts.memory,
                  **{k: v for k, v in given.items() if v is not None})
    cluster.scale(jobs=opts.jobs)
    return cluster


@contextmanager
def cluster_executor(spec: ClusterSpec, batch: BatchOptions | None = None,
                     log: Callable[[str], None] = print) -> Iterator[Executor]:
    """A client of the cluster ``spec`` as an Executor; the cluster (unless it was an existing
    scheduler) and the client are closed on exit."""
    from distributed import Client, LocalCluster

    with ExitStack() as stack:
        if spec.kind == "local":
            cluster = stack.enter_context(LocalCluster(
                n_workers=spec.workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                dashboard_address=None))
            client = stack.enter_context(Client(cluster))
        elif spec.kind == "tcp":
            try:
                client = stack.enter_context(Client(spec.address, timeout=CONNECT_TIMEOUT_S))
            except (OSError, TimeoutError) as exc:
                raise ValueError(f"--cluster {spec.address}: no Dask scheduler answered "
                                 f"({exc})") from None
        else:
            cluster = stack.enter_context(batch_cluster(spec.kind, batch or BatchOptions()))
            log(f"cluster: submitting {(batch or BatchOptions()).jobs} {spec.kind} job(s); "
                f"job script:\n{cluster.job_script()}")
            client = stack.enter_context(Client(cluster))
        workers = len(client.scheduler_info(n_workers=-1)["workers"])
        log(f"cluster: {spec} (scheduler {client.scheduler.address}, {workers} worker(s) now)")
        yield client.get_executor(pure=False)
