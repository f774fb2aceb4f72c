"""Where the generated views live (beside the sources they serve, except the docs of a checkout)."""

from __future__ import annotations

from vtabench.sources import C_DRIVER_DIR, HDL_DIR, OPENCL_DIR
from vtabench.workdirs import PACKAGE_DIR, checkout_root

RTL_GEN_DIR = HDL_DIR / "gen"
OPENCL_GEN_DIR = OPENCL_DIR / "gen"
#: the C driver's committed header of the register map (vta_regs.h)
C_GEN_DIR = C_DRIVER_DIR / "gen"
#: docs/ of the source checkout; generated pages are written only in a checkout.
DOCS_DIR = (checkout_root() or PACKAGE_DIR.parent) / "docs"

__all__ = ["C_GEN_DIR", "DOCS_DIR", "OPENCL_GEN_DIR", "RTL_GEN_DIR"]
