"""The contracts between languages besides the register map (:mod:`.regmap`): error codes
(:mod:`.error_views`), the OpenCL control block (:mod:`.ocl_control_views`), stage and queue
ids (:mod:`.stage_views`). Each generator reads its data file in spec/contracts/ and renders its views;
this module places them:

- one SV package per contract the RTL uses, in hdl/gen/ (:data:`SV_PACKAGES`, which
  the Verilator builds, the lint and the unit benches compile before the modules);
- one common C header for the OpenCL kernel, opencl/gen/vta_contracts.h (the driver
  prepends it to the kernel source; vendor flows pass ``-I opencl/gen``);
- one Python module per contract in spec/contracts/;
- docs/contracts.md, a section per contract.

The views do not depend on the configuration, so there is one copy of each.
"""

from __future__ import annotations

from pathlib import Path

from vtabench.hwgen import error_views as errors
from vtabench.hwgen import ocl_control_views as ocl_control
from vtabench.hwgen import stage_views as stages
from vtabench.hwgen.contract_data import CONTRACTS_DIR
from vtabench.hwgen.paths import DOCS_DIR, OPENCL_GEN_DIR, RTL_GEN_DIR
from vtabench.hwgen.render import render

#: The contract packages, in the order the RTL builds compile them (before any module).
SV_PACKAGES = (RTL_GEN_DIR / "vta_err_pkg.sv", RTL_GEN_DIR / "vta_stage_pkg.sv")
C_HEADER = OPENCL_GEN_DIR / "vta_contracts.h"
DOCS_PAGE = DOCS_DIR / "contracts.md"


def generated_files() -> dict[Path, str]:
    """Every contract view, keyed by path."""
    err = errors.load_errors()
    ctrl = ocl_control.load_control_block()
    st = stages.load_stages()
    return {
        SV_PACKAGES[0]: errors.sv_package(err),
        SV_PACKAGES[1]: stages.sv_package(st),
        C_HEADER: render("vta_contracts.h.tmpl", errors=errors.c_section(err),
                         control=ocl_control.c_section(ctrl), stages=stages.c_section(st)),
        CONTRACTS_DIR / "errors.py": errors.py_module(err),
        CONTRACTS_DIR / "ocl_control.py": ocl_control.py_module(ctrl),
        CONTRACTS_DIR / "stages.py": stages.py_module(st),
        DOCS_PAGE: render("contracts.md.tmpl", errors=errors.markdown(err),
                          control=ocl_control.markdown(ctrl), stages=stages.markdown(st)),
    }
