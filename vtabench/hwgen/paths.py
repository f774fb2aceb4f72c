"""Where the generated views live (beside the sources they serve, except the docs of a checkout)."""

from __future__ import annotations

from vtabench.sources import HDL_DIR, OPENCL_DIR
from vtabench.workdirs import PACKAGE_DIR, checkout_root

RTL_GEN_DIR = HDL_DIR / "gen"
OPENCL_GEN_DIR = OPENCL_DIR / "gen"
#: docs/ of the source checkout; generated pages are written only in a checkout.
DOCS_DIR = (checkout_root() or PACKAGE_DIR.parent) / "docs"

__all__ = ["DOCS_DIR", "OPENCL_GEN_DIR", "RTL_GEN_DIR"]
