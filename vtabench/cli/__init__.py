"""The `vtabench` command: one subcommand per module in this package.

Each command module defines ``register(subparsers)`` that adds its parser and sets ``func`` to a
callable taking the parsed arguments and returning the exit status.
"""

from __future__ import annotations

import argparse
import importlib
import sys

#: Command modules, in the order `vtabench --help` lists them.
COMMANDS = ("sim", "gen", "asm", "disasm", "validate", "exec", "serve", "smoke", "regress",
            "mutate", "quantize", "compile", "run")


class CliError(Exception):
    """An error to print as one line (no traceback) before exiting non-zero."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="vtabench", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"vtabench.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"vtabench.cli.{name}":
                raise
            continue
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    from vtabench.drivers.api import DeviceError
    from vtabench.spec.config import ConfigError
    from vtabench.spec.isa.insn import EncodeError

    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (CliError, ConfigError, EncodeError, DeviceError, ValueError, OSError) as exc:
        print(f"vtabench {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
