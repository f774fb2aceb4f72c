"""`vtabench gen`: rewrite the generated views of the configurations (spec/configs/*.json) and of
the contracts (spec/contracts/*.json): SV packages, C headers, Python modules, docs."""

from __future__ import annotations

import argparse

from vtabench.hwgen import generated_files, write_all


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("gen", help="regenerate the SV packages, C headers, Python views and docs "
                                   "of the configurations and contracts")
    p.add_argument("--config", action="append", help="configuration name (default: all built-in)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    written = write_all(args.config)
    for path in written:
        print(f"wrote {path}")
    print(f"gen: {len(written)} of {len(generated_files(args.config))} generated files rewritten, "
          "the rest were current")
    return 0
