"""Where builds and run outputs go, never into the installed package.

- Builds (Verilator objects, lint and synthesis scratch): ``$VTABENCH_BUILD_DIR``; otherwise
  ``build/`` in a source checkout, or the user's cache directory (``$XDG_CACHE_HOME/vtabench``,
  default ``~/.cache/vtabench``) for an installed copy.
- Run outputs (waves, regression reports): ``$VTABENCH_RESULTS_DIR``; otherwise ``results/`` in a
  checkout, or ``./results`` under the current directory for an installed copy.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def checkout_root() -> Path | None:
    """The source checkout this package runs from (editable install or PYTHONPATH), if any."""
    root = PACKAGE_DIR.parent
    return root if (root / "pyproject.toml").is_file() and (root / "vtabench").is_dir() else None


def build_root() -> Path:
    """The root of every build this package makes (see the module docstring)."""
    env = os.environ.get("VTABENCH_BUILD_DIR")
    if env:
        return Path(env)
    root = checkout_root()
    if root is not None:
        return root / "build"
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "vtabench"


def results_root() -> Path:
    """The folder run outputs go to by default (see the module docstring)."""
    env = os.environ.get("VTABENCH_RESULTS_DIR")
    if env:
        return Path(env)
    root = checkout_root()
    return root / "results" if root is not None else Path.cwd() / "results"
