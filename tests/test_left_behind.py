"""conftest.py's session-end check: a run that leaves a ``vtabench`` entry in /dev/shm fails and
names it, with and without pytest-xdist; a run that cleans up passes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
#: the prefix of the /dev/shm entries the small sessions make and watch
SELFTEST_PREFIX = "vtabench-selftest-"

LEAKY_TEST = '''
import os
from pathlib import Path

def test_leaves_a_folder():
    Path(os.environ["LEAK_PATH"]).mkdir()
    if os.environ.get("CLEAN_UP"):
        Path(os.environ["LEAK_PATH"]).rmdir()
'''


def _run(tmp_path: Path, leak: Path, *, xdist: bool,
         clean_up: bool) -> subprocess.CompletedProcess[str]:
    """A small pytest session with this suite's conftest as a plugin."""
    (tmp_path / "test_leaky.py").write_text(LEAKY_TEST)
    env = {**os.environ, "LEAK_PATH": str(leak), "PYTHONPATH": os.pathsep.join(
        [str(TESTS), os.environ.get("PYTHONPATH", "")])}
    env.pop("CLEAN_UP", None)
    env["VTABENCH_SHM_WATCH"] = SELFTEST_PREFIX  # not the entries of the suite's other workers
    if clean_up:
        env["CLEAN_UP"] = "1"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "conftest", "-p", "no:cacheprovider",
           "-n", "1" if xdist else "0", "--rootdir", str(tmp_path),
           str(tmp_path / "test_leaky.py")]
    return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
                          check=False)


@pytest.mark.parametrize("xdist", [False, True], ids=["single", "xdist"])
def test_a_run_that_leaves_a_shm_entry_fails_naming_it(tmp_path: Path, xdist: bool) -> None:
    leak = Path("/dev/shm") / f"{SELFTEST_PREFIX}{uuid.uuid4().hex[:8]}"
    try:
        r = _run(tmp_path, leak, xdist=xdist, clean_up=False)
    finally:
        shutil.rmtree(leak, ignore_errors=True)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert "1 passed" in out and "this run left" in out and str(leak) in out, out


def test_a_run_that_cleans_up_passes(tmp_path: Path) -> None:
    leak = Path("/dev/shm") / f"{SELFTEST_PREFIX}{uuid.uuid4().hex[:8]}"
    r = _run(tmp_path, leak, xdist=False, clean_up=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert not leak.exists()


@pytest.mark.parametrize("xdist", [False, True], ids=["single", "xdist"])
def test_the_build_scratch_of_a_run_is_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               xdist: bool) -> None:
    """The run's shared work (build/pytest/RUN) and its RTL mutant builds go at its end; what
    the build folder held before the run stays."""
    build = tmp_path / "build"
    kept = [build / "rtl" / "default", build / "rtl" / "default-mut-old"]
    for folder in kept:
        folder.mkdir(parents=True)
    monkeypatch.setenv("VTABENCH_BUILD_DIR", str(build))
    made = [build / "pytest" / "run1", build / "rtl" / "default-mut-abc",
            build / "units" / "alu-mut-def"]
    # the leaky test makes the first; the others are made the same way, one run each
    for folder in made:
        folder.parent.mkdir(parents=True, exist_ok=True)
        r = _run(tmp_path, folder, xdist=xdist, clean_up=False)
        assert r.returncode == 0, r.stdout + r.stderr
        assert not folder.exists(), f"{folder} stayed after the run"
    assert all(folder.is_dir() for folder in kept)
