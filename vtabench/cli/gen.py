"""`vtabench gen`: rewrite the generated files: the SV package and OpenCL header of each
configuration (config/*.json) and the register block, constants and docs of the register map
(hdl/regmap.json)."""

from __future__ import annotations

import argparse

from vtabench import regmap
from vtabench.codegen import write_generated
from vtabench.config import builtin_config_names, load_config


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("gen", help="regenerate hdl/gen, opencl/gen and the register map outputs")
    p.add_argument("--config", action="append", help="configuration name (default: all built-in)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    for name in args.config or builtin_config_names():
        for path in write_generated(load_config(name)):
            print(f"wrote {path}")
    for path in regmap.write_generated():
        print(f"wrote {path}")
    return 0
