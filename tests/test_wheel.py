"""The package as a user installs it: build the wheel, install it (not editable) into a folder
outside the checkout and run `vtabench exec` on fsim and rtl from a working directory outside the
checkout. The installed copy must find its configurations, RTL, bench and DPI sources inside
itself and build the simulator into the user's cache directory, never into site-packages."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import numpy as np
import pytest

from vtabench.fsim import Fsim
from vtabench.spec.config import load_config
from vtabench.spec.isa import encode_program
from vtabench.verify.directed import directed_programs

REPO = Path(__file__).resolve().parent.parent
#: What a wheel must carry besides Python modules (one file of each kind).
PACKAGE_DATA = (
    "vtabench/spec/configs/default.json",
    "vtabench/spec/contracts/errors.json",
    "vtabench/spec/contracts/regmap.rdl",
    "vtabench/hdl/gen/vta_regs_pkg.sv",
    "vtabench/hdl/gen/vta_regs.xml",
    "vtabench/drivers/c/gen/vta_regs.h",
    "vtabench/hdl/vta_core.sv",
    "vtabench/hdl/vta_core.f",
    "vtabench/hdl/gen/default/vta_pkg.sv",
    "vtabench/tb/core/vta_tb_top.sv",
    "vtabench/tb/csrc/dram.cpp",
    "vtabench/tb/platform/vta_pcie_top.sv",
    "vtabench/tb/platform/vta_pcie_top.f",
    "vtabench/opencl/vta.cl",
    "vtabench/opencl/gen/default/vta_config.h",
    "vtabench/drivers/c/vta_sim_driver.c",
)
IGNORED = shutil.ignore_patterns(".git", ".venv", "build", "results", ".pytest_cache",
                                 "__pycache__", "*.egg-info", ".whl", ".ocl", "dist")


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The wheel built from a copy of the source tree, installed with --target into a folder."""
    root = tmp_path_factory.mktemp("wheel")
    src = root / "src"
    shutil.copytree(REPO, src, ignore=IGNORED)
    dist = root / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist),
                    str(src)], check=True, capture_output=True, text=True)
    wheel = next(dist.glob("vtabench-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [p for p in PACKAGE_DATA if p not in names]
    assert not missing, f"the wheel lacks {missing}"
    site = root / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target",
                    str(site), str(wheel)], check=True, capture_output=True, text=True)
    return site


def _run_installed(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VTABENCH_")}
    env.update(PYTHONPATH=str(site), XDG_CACHE_HOME=str(cwd / "cache"))
    return subprocess.run([sys.executable, "-m", "vtabench", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=900)


# rtl (marked rtl by conftest.py) builds the simulator from nothing in a fresh cache (about a
# minute): it stays in `make test`, since CI must show that an installed wheel runs the RTL.
@pytest.mark.parametrize("target", ["fsim", "rtl"])
def test_installed_wheel_runs_exec(installed, tmp_path, target):
    cfg = load_config("default")
    prog = next(p for p in directed_programs(cfg) if p.name.startswith("gemm"))
    (tmp_path / "p.bin").write_bytes(encode_program(cfg, prog.insns))
    prog.dram.tofile(tmp_path / "dram.bin")
    expected = prog.dram.copy()
    Fsim(cfg).run(prog.insns, expected)

    where = subprocess.run([sys.executable, "-c", "import vtabench; print(vtabench.__file__)"],
                           cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(installed)},
                           capture_output=True, text=True)
    assert where.stdout.strip().startswith(str(installed)), where.stdout + where.stderr

    r = _run_installed(installed, tmp_path, "exec", "--config", "default", "--target", target,
                       "--insns", "p.bin", "--dram", "dram.bin", "--out", "out.bin",
                       "--seed", "3")
    assert r.returncode == 0, r.stdout + r.stderr
    np.testing.assert_array_equal(np.fromfile(tmp_path / "out.bin", np.uint8), expected)
    assert not list(installed.rglob("*.o")), "a build landed inside the installed package"
    if target == "rtl":
        assert list((tmp_path / "cache" / "vtabench" / "rtl").iterdir()), \
            "the rtl build is not in the user's cache directory"


def test_pyproject_lists_every_package():
    """pyproject.toml names its packages one by one (the hardware folders are mapped into
    vtabench): a package folder missing from the list would be left out of the wheel."""
    setup = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    dirs = {name: REPO / path for name, path in setup["package-dir"].items()}

    def folder(pkg: str) -> Path:
        for name in sorted(dirs, key=len, reverse=True):
            if pkg == name or pkg.startswith(name + "."):
                return dirs[name].joinpath(*pkg[len(name):].split(".")[1:])
        return REPO.joinpath(*pkg.split("."))

    listed = set(setup["packages"])
    for pkg in listed:
        assert (folder(pkg) / "__init__.py").is_file(), f"{pkg} listed but {folder(pkg)} is no package"
    found = set()
    for init in REPO.glob("**/__init__.py"):
        rel = init.parent.relative_to(REPO)
        if rel.parts[0] in {"tests", "bench", "build", "results", ".venv", "docs", "examples"} \
                or any(p.startswith(".") for p in rel.parts):
            continue
        top = {str(v): k for k, v in setup["package-dir"].items()}.get(rel.parts[0], rel.parts[0])
        found.add(".".join([top, *rel.parts[1:]]))
    assert found == listed, f"unlisted: {sorted(found - listed)}; stale: {sorted(listed - found)}"
