"""The driver targets a test module runs on: every backend present, or the ones an environment
variable names (``VTABENCH_GRAPH_TARGETS=fsim,opencl``). A name that is not a present backend is
an error, never dropped: a typo must not shrink the suite silently."""

from __future__ import annotations

import os

import pytest

from vtabench.runtime import available_targets


def targets_from_env(var: str) -> list[str]:
    """The targets ``$var`` names (comma-separated), or every present backend when it is unset or
    empty; raises pytest.UsageError naming the variable and the known targets otherwise."""
    known = available_targets()
    value = os.environ.get(var, "")
    names = [t.strip() for t in value.split(",") if t.strip()]
    if not names:
        return known
    unknown = [t for t in names if t not in known]
    if unknown:
        raise pytest.UsageError(f"{var}={value}: unknown target(s) {', '.join(unknown)}; "
                                f"known: {', '.join(known)}")
    return list(dict.fromkeys(names))
