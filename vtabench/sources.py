"""Where the hardware sources are: the top-level ``hdl/``, ``tb/``, ``opencl/`` and ``drivers/``.

pyproject.toml maps those folders to the packages ``vtabench.hdl``, ``vtabench.tb``,
``vtabench.opencl`` and ``vtabench.drivers`` (setuptools ``package-dir``), so a checkout (its
editable install) and an installed wheel find them the same way: where the import system finds
those packages. Looking a package up does not import it.

``VTABENCH_HDL_DIR`` names another folder to take the core's SystemVerilog from (a copy with the
same files: the mutation campaign points its platform tests at a mutated one).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path


def package_dir(name: str) -> Path:
    """The folder of package ``name`` (not imported)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"{name} is not installed: run `make setup` (or pip install the wheel)")
    return Path(next(iter(spec.submodule_search_locations))).resolve()


#: the core's SystemVerilog and its generated packages (gen/)
HDL_DIR = Path(os.environ["VTABENCH_HDL_DIR"]).resolve() if os.environ.get("VTABENCH_HDL_DIR") \
    else package_dir("vtabench.hdl")
#: the testbenches: core/, csrc/, unit/, platform/
TB_DIR = package_dir("vtabench.tb")
#: the OpenCL kernels and their generated headers (gen/)
OPENCL_DIR = package_dir("vtabench.opencl")
#: the C driver of the simulated card (its sources and Makefile)
C_DRIVER_DIR = package_dir("vtabench.drivers") / "c"

__all__ = ["C_DRIVER_DIR", "HDL_DIR", "OPENCL_DIR", "TB_DIR", "package_dir"]
