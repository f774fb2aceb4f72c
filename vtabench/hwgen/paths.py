"""Where the generated views live (inside the package, except the docs of a checkout)."""

from __future__ import annotations

from vtabench.targets.workdirs import PACKAGE_DIR, checkout_root

RTL_GEN_DIR = PACKAGE_DIR / "targets" / "rtl" / "hdl" / "gen"
OPENCL_GEN_DIR = PACKAGE_DIR / "targets" / "opencl" / "gen"
#: docs/ of the source checkout; generated pages are written only in a checkout.
DOCS_DIR = (checkout_root() or PACKAGE_DIR.parent) / "docs"

__all__ = ["DOCS_DIR", "OPENCL_GEN_DIR", "PACKAGE_DIR", "RTL_GEN_DIR"]
