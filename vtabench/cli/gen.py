"""`vtabench gen`: rewrite the generated SV package and OpenCL header from config/*.json."""

from __future__ import annotations

import argparse

from vtabench.codegen import write_generated
from vtabench.config import builtin_config_names, load_config


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("gen", help="regenerate hdl/gen and opencl/gen from the configurations")
    p.add_argument("--config", action="append", help="configuration name (default: all built-in)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    for name in args.config or builtin_config_names():
        for path in write_generated(load_config(name)):
            print(f"wrote {path}")
    return 0
