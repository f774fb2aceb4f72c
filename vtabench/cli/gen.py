"""`vtabench gen`: rewrite the generated views of the configurations (spec/configs/*.json) and of
the contracts (spec/contracts/*.json, the register map regmap.rdl through the PeakRDL tools): SV
packages and the register block, C headers, IP-XACT, Python views, docs; and write the HTML
register reference (peakrdl-html, not committed) under build/docs/registers/."""

from __future__ import annotations

import argparse

from vtabench.hwgen import generated_files, regmap, write_all
from vtabench.workdirs import build_root


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("gen", help="regenerate the SV packages and register block, C headers, "
                                   "Python views and docs of the configurations and contracts")
    p.add_argument("--config", action="append", help="configuration name (default: all built-in)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    written = write_all(args.config)
    for path in written:
        print(f"wrote {path}")
    print(f"gen: {len(written)} of {len(generated_files(args.config))} generated files rewritten, "
          "the rest were current")
    index = regmap.write_html(build_root() / "docs" / "registers")
    print(f"gen: HTML register reference {index}")
    return 0
