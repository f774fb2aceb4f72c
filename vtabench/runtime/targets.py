"""Which driver targets this installation can open."""

from __future__ import annotations

import importlib.util


def available_targets() -> list[str]:
    """Targets whose backend module exists in this checkout (importable by name)."""
    from vtabench.drivers.api import BACKENDS

    return [name for name, target in BACKENDS.items()
            if importlib.util.find_spec(target.device.split(":")[0]) is not None]
