"""The `vtabench` command: one subcommand per module in this package.

Each command module defines ``register(subparsers)`` that adds its parser and sets ``func`` to a
callable taking the parsed arguments and returning the exit status.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading

from vtabench.cli import signals

#: Command modules, in the order `vtabench --help` lists them.
COMMANDS = ("sim", "configs", "gen", "asm", "disasm", "validate", "exec", "serve", "smoke",
            "regress", "mutate", "formal", "quantize", "compile", "run", "fpga", "gls")


class CliError(Exception):
    """An error to print as one line (no traceback) before exiting non-zero."""


class Terminated(BaseException):
    """SIGTERM, raised in the main thread like KeyboardInterrupt is for SIGINT, so that every
    ``with`` block unwinds: devices close (an rtl device stops its simulator and removes its
    /dev/shm folder), temporary files go."""


def positive_int(text: str) -> int:
    """argparse type: an integer of at least 1 (a count of 0 or less would pass vacuously)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a positive count")
    return value


def _file_error(parser: argparse.ArgumentParser, args: argparse.Namespace,
                exc: OSError) -> str:
    """An OSError's message, led by the option (or argument) whose value is the file."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for action in sub.choices[args.command]._actions:
        value = getattr(args, action.dest, None)
        if exc.filename is not None and value is not None and str(value) == str(exc.filename):
            name = action.option_strings[0] if action.option_strings else action.dest.upper()
            return f"{name} {exc.filename}: {exc.strerror or exc}"
    return str(exc)


def _on_signal(signum: int, frame: object) -> None:
    """SIGINT and SIGTERM: stop the processes this command started in its process group
    (:mod:`.signals`), then unwind like KeyboardInterrupt (SIGINT) or :class:`Terminated`."""
    signals.stop_children()
    raise KeyboardInterrupt if signum == signal.SIGINT else Terminated


#: Exit status after a signal: 128 + its number, as a shell reports it.
SIGNAL_EXIT = {KeyboardInterrupt: 128 + signal.SIGINT, Terminated: 128 + signal.SIGTERM}


#: Exit status when the reader of stdout went away (``vtabench disasm p.bin | head``): what git
#: and ls end with, killed by SIGPIPE, as a shell reports it; no message, like them.
SIGPIPE_EXIT = 128 + signal.SIGPIPE


def _stdout_closed() -> int:
    """Point stdout at /dev/null so that the interpreter's last flush at exit does not fail a
    second time on the closed pipe; the status says what happened."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return SIGPIPE_EXIT  # not a real file (a test's capture): nothing to flush into a pipe
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
    return SIGPIPE_EXIT


def build_parser() -> argparse.ArgumentParser:
    from vtabench import __version__

    parser = argparse.ArgumentParser(prog="vtabench", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"vtabench {__version__}")
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


def _signal_cause(exc: BaseException) -> KeyboardInterrupt | Terminated | None:
    """The SIGINT / SIGTERM exception that ``exc`` was raised from, if any."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, (KeyboardInterrupt, Terminated)):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _signalled(command: str, exc: KeyboardInterrupt | Terminated) -> int:
    """Stop what the command started, say so in one line; the shell's exit status."""
    signals.end_children()
    what = "interrupted (SIGINT)" if isinstance(exc, KeyboardInterrupt) else "terminated (SIGTERM)"
    print(f"vtabench {command}: {what}; children stopped, temporary files removed",
          file=sys.stderr)
    return SIGNAL_EXIT[type(exc)]


def main(argv: list[str] | None = None) -> int:
    from vtabench.drivers.api import DeviceError
    from vtabench.rtl.verilator import RtlBuildError
    from vtabench.spec.config import ConfigError
    from vtabench.spec.isa.insn import EncodeError

    parser = build_parser()
    args = parser.parse_args(argv)
    main_thread = threading.current_thread() is threading.main_thread()
    previous = {sig: signal.signal(sig, _on_signal) for sig in (signal.SIGINT, signal.SIGTERM)} \
        if main_thread else {}
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:
        return _stdout_closed()
    except OSError as exc:
        print(f"vtabench {args.command}: error: {_file_error(parser, args, exc)}",
              file=sys.stderr)
        return 2
    except (CliError, ConfigError, EncodeError, DeviceError, ValueError) as exc:
        print(f"vtabench {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except RtlBuildError as exc:  # its first line says why and where the build's log is
        print(f"vtabench {args.command}: error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 1
    except (KeyboardInterrupt, Terminated) as exc:
        return _signalled(args.command, exc)
    except RuntimeError as exc:
        # a signal that lands in a class body's __set_name__ while a module is being imported
        # (TVM's, say) comes wrapped in a RuntimeError (Python 3.11)
        cause = _signal_cause(exc)
        if cause is None:
            raise
        return _signalled(args.command, cause)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


if __name__ == "__main__":
    sys.exit(main())
