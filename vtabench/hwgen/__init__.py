"""Generators: each reads one data file (a configuration, a contract) and writes its views
(SystemVerilog package, C header, Python module, Markdown) for `vtabench gen`.

- :mod:`.constants`: a configuration -> ``vta_pkg.sv`` and ``vta_config.h``;
- :mod:`.regmap`: the register map (SystemRDL) -> with the PeakRDL tools, the SV register block,
  the C header, IP-XACT, ``regs.py``, docs/registers.md (and an HTML reference, not committed);
- :mod:`.contracts`: the error codes, the OpenCL control block, stage and queue ids -> SV
  packages, the OpenCL header ``vta_contracts.h``, Python modules, docs/contracts.md.

:func:`generated_files` lists every view with its text; :func:`write_all` rewrites those that
differ (tests fail when a committed view is stale).
"""

from __future__ import annotations

from pathlib import Path

from vtabench.hwgen import constants, contracts, regmap
from vtabench.spec.config import builtin_config_names, load_config


def generated_files(configs: list[str] | None = None) -> dict[Path, str]:
    """Every generated view, keyed by path, for ``configs`` (default: the built-in ones)."""
    files: dict[Path, str] = {}
    for name in configs or builtin_config_names():
        files.update(constants.generated_files(load_config(name)))
    files.update(regmap.generated_files())
    files.update(contracts.generated_files())
    return files


def write_all(configs: list[str] | None = None) -> list[Path]:
    """Rewrite the views that differ from their generator; returns the paths written."""
    written = []
    for path, text in generated_files(configs).items():
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            written.append(path)
    return written
