"""Fixtures and hooks shared by the whole suite (docs/dev/testing.md).

- Markers by parameter: a test parametrised with ``target="rtl"`` is marked ``rtl`` and one with
  ``target="opencl"`` is marked ``opencl`` (the markers are registered in pyproject.toml); whole
  files carry theirs in ``pytestmark``.
- ``VTABENCH_*_TARGETS`` variables are checked before collection: an unknown target name stops the
  run with a one-line error (targets_env.targets_from_env).
- ``run_seed``: the seed of this run's random tests, the same in every pytest-xdist worker.
- ``shared_work``: expensive items (an RTL build and a batch of simulations) computed once per run
  by whichever worker claims them first and shared with the other workers through files
  (:class:`SharedWork`).
- Nothing left behind: a run fails when /dev/shm holds a ``vtabench`` entry at its end that it did
  not hold at its start (a simulator's job folder, a device's socket folder), naming each one.
  Only the controlling process checks (with pytest-xdist, after every worker has finished).
  The build folder's scratch made during the run (the shared work of ``shared_work``, the
  simulators of RTL mutants that tests build) is removed at its end.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import pickle
import re
import shutil
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from targets_env import targets_from_env
from vtabench.workdirs import build_root

#: Parameter values of ``target`` that name a marker.
TARGET_MARKERS = ("rtl", "opencl")
#: Shared work of runs older than this is deleted when a run starts.
KEEP_RUNS_S = 6 * 3600
#: Where simulators and devices keep their run-time files, and the prefix of this tool's entries
#: (VTABENCH_SHM_WATCH narrows it: the small sessions tests/test_left_behind.py runs beside the
#: suite's other workers watch only their own "vtabench-selftest-" entries, not a device or
#: simulator another worker has open at that moment).
SHM_DIR = Path("/dev/shm")
SHM_PREFIX = os.environ.get("VTABENCH_SHM_WATCH", "vtabench")
#: Seconds an entry new at the end of the run may take to go (a process still exiting removes
#: its folder) before it counts as left behind.
SHM_GRACE_S = 2.0
#: The run's /dev/shm entries at its start (controller only).
_SHM_AT_START = pytest.StashKey[set[str]]()
#: The build folder's scratch at the run's start (controller only).
_SCRATCH_AT_START = pytest.StashKey[set[Path]]()


def pytest_configure(config: pytest.Config) -> None:
    for var in sorted(os.environ):
        if re.fullmatch(r"VTABENCH_\w+_TARGETS", var):
            targets_from_env(var)


def shm_entries() -> set[str]:
    """This tool's entries in /dev/shm now."""
    try:
        return {p.name for p in SHM_DIR.iterdir() if p.name.startswith(SHM_PREFIX)}
    except OSError:
        return set()


def _is_controller(config: pytest.Config) -> bool:
    """Not a pytest-xdist worker: the process that runs the whole session."""
    return not hasattr(config, "workerinput")


def build_scratch() -> set[Path]:
    """The build folder's scratch now: each run's shared work (build/pytest/RUN) and the
    simulators of RTL mutants (build/rtl/CONFIG-mut-TAG, build/units/UNIT-mut-TAG)."""
    root = build_root()
    return {*root.glob("pytest/*"), *root.glob("rtl/*-mut-*"), *root.glob("units/*-mut-*")}


def pytest_sessionstart(session: pytest.Session) -> None:
    if _is_controller(session.config):
        session.config.stash[_SHM_AT_START] = shm_entries()
        session.config.stash[_SCRATCH_AT_START] = build_scratch()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Remove the run's build scratch; fail the run when it left entries in /dev/shm (see the
    module docstring)."""
    config = session.config
    if not _is_controller(config) or _SHM_AT_START not in config.stash:
        return
    for scratch in build_scratch() - config.stash[_SCRATCH_AT_START]:
        shutil.rmtree(scratch, ignore_errors=True)
    before = config.stash[_SHM_AT_START]
    deadline = time.monotonic() + SHM_GRACE_S
    while (left := shm_entries() - before) and time.monotonic() < deadline:
        time.sleep(0.1)
    if not left:
        return
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    message = (f"this run left {len(left)} entr{'y' if len(left) == 1 else 'ies'} in {SHM_DIR}: "
               + ", ".join(str(SHM_DIR / name) for name in sorted(left)))
    if reporter is not None:
        reporter.write_line(message, red=True, bold=True)
    else:
        print(message)
    if session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED



@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        target = getattr(getattr(item, "callspec", None), "params", {}).get("target")
        if target in TARGET_MARKERS:
            item.add_marker(getattr(pytest.mark, target))


def run_id() -> str:
    """This test run: the same in every pytest-xdist worker, a new one for every run."""
    return os.environ.get("PYTEST_XDIST_TESTRUNUID") or f"pid{os.getpid()}"


@pytest.fixture(scope="session")
def run_seed() -> int:
    """VTABENCH_SEED when set (to repeat a run), otherwise derived from the run id. Tests that
    use it print it."""
    env = os.environ.get("VTABENCH_SEED")
    return int(env) if env else int(hashlib.sha256(run_id().encode()).hexdigest()[:7], 16)


class SharedWork:
    """Items computed once per test run and shared between pytest-xdist workers through files.

    ``define({key: fn})`` declares items; ``get(key)`` returns ``fn()``. The first ``get`` after a
    ``define`` also computes every declared item that no worker has claimed yet (starting at a
    worker-dependent one, never waiting for another worker), so the workers split the work; then
    it waits only for ``key``. A value is pickled to ``<run_dir>/<key>.pkl`` by whoever holds the
    item's lock file; an exception in ``fn`` is stored as its message and fails, without a
    traceback, every test that asks for the item.
    """

    def __init__(self, run_dir: Path, worker: int = 0) -> None:
        self.run_dir = run_dir
        self._worker = worker
        self._items: dict[str, Callable[[], Any]] = {}
        self._unstarted: list[str] = []
        self._values: dict[str, tuple[str, Any]] = {}

    def define(self, items: Mapping[str, Callable[[], Any]]) -> None:
        for key, fn in items.items():
            if key in self._items:
                raise ValueError(f"shared item {key!r} defined twice")
            self._items[key] = fn
            self._unstarted.append(key)

    def get(self, key: str) -> Any:
        if key not in self._items:
            raise KeyError(f"no shared item {key!r}; defined: {', '.join(self._items)}")
        if self._unstarted:
            keys, self._unstarted = self._unstarted, []
            start = self._worker % len(keys)
            for k in keys[start:] + keys[:start]:
                if not self._path(k).exists():
                    self._claim_and_run(k, block=False)
        if key not in self._values:
            if not self._path(key).exists():
                self._claim_and_run(key, block=True)
            self._values[key] = pickle.loads(self._path(key).read_bytes())
        state, value = self._values[key]
        if state != "ok":
            pytest.fail(f"{key}: {value}", pytrace=False)
        return value

    def _path(self, key: str) -> Path:
        return self.run_dir / f"{key}.pkl"

    def _claim_and_run(self, key: str, block: bool) -> None:
        """Compute ``key`` under its lock unless it is done; returns at once when another worker
        holds the lock and ``block`` is false."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        with open(self.run_dir / f"{key}.lock", "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | (0 if block else fcntl.LOCK_NB))
            except BlockingIOError:
                return
            path = self._path(key)
            if path.exists():
                return
            try:
                value: tuple[str, Any] = ("ok", self._items[key]())
            except Exception as exc:  # noqa: BLE001 - reported by every test that needs it
                value = ("error", f"{type(exc).__name__}: {exc}")
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(pickle.dumps(value))
            tmp.replace(path)


def _prune_old_runs(root: Path, keep: Path) -> None:
    if not root.is_dir():
        return
    for d in root.iterdir():
        try:
            if d != keep and time.time() - d.stat().st_mtime > KEEP_RUNS_S:
                shutil.rmtree(d, ignore_errors=True)
        except OSError:
            pass


@pytest.fixture(scope="session")
def shared_work() -> SharedWork:
    """This run's shared work, in ``<build root>/pytest/<run id>/``; old runs' folders are
    deleted. A test module defines its items in a module-scoped fixture (test_rtl_core.py)."""
    root = build_root() / "pytest"
    run_dir = root / run_id()
    _prune_old_runs(root, keep=run_dir)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    return SharedWork(run_dir, int(worker[2:]) if worker[2:].isdigit() else 0)
