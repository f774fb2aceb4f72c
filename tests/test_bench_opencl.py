"""bench/bench_opencl.py random: the figures it reports add up (where the time went).

The bench runs as a subprocess (its process pool forks, which a pytest-xdist worker's threads
make unsafe in this process), on a few programs: the golden side alone, and on PoCL.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _bench(tmp_path: Path, *args: str) -> tuple[dict[str, Any], str]:
    out = tmp_path / "random.json"
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_opencl.py"), "random",
                           "--count", "8", "--jobs", "1", "--golden-chunk", "4", "--json",
                           str(out), *args], capture_output=True, text=True, timeout=300,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(out.read_text()), proc.stdout


def _check_split(report: dict[str, Any], stdout: str) -> None:
    """The workers' parts and the main process's stages are measured and fit in the run."""
    w, main = report["worker_ms"], report["main_s"]
    assert set(w) == {"generate", "fsim", "validate", "pack"}
    assert w["generate"] > 0 and w["pack"] > 0
    assert 0 < w["validate"] < w["fsim"]  # validation is part of fsim's run
    assert 0 < report["worker_cpu_ms"] and 0 < report["main_cpu_s"]
    assert sum(main.values()) - main["kernel"] <= report["seconds"]
    assert "where the time went (8 programs" in stdout


def test_golden_side_split(tmp_path: Path) -> None:
    report, stdout = _bench(tmp_path, "--golden-only")
    _check_split(report, stdout)
    main = report["main_s"]
    assert main["launch"] == main["compare"] == 0
    assert main["wait"] > 0  # the main process has only the workers to wait for


def test_device_split_on_pocl(tmp_path: Path) -> None:
    pytest.importorskip("pyopencl")
    report, stdout = _bench(tmp_path, "--chunk", "4")
    _check_split(report, stdout)
    assert report["failed"] == 0 and report["programs"] == 8
    main = report["main_s"]
    assert 0 < main["kernel"] <= main["launch"]  # the kernels are part of the batches
    assert main["compare"] > 0 and main["open"] > 0
