"""What several commands share: output paths checked before any run, and ``--json`` (the result
as one JSON object on stdout, the human text on stderr)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from pathlib import Path
from typing import Any

from vtabench.cli import CliError


def check_output(option: str, path: Path | None, suffixes: tuple[str, ...] = ()) -> None:
    """Refuse, before any run, an output file that cannot be written: a folder, a file without
    write permission, a path under something that is not a folder or under a folder without write
    permission (missing folders are fine: the writers make them), or (``suffixes``) a name the
    writer cannot draw."""
    if path is None:
        return
    if suffixes and path.suffix not in suffixes:
        raise CliError(f"{option} {path}: the name must end in {' or '.join(suffixes)}")
    if path.is_dir():
        raise CliError(f"{option} {path}: is a folder, not a file")
    if path.exists():
        if not os.access(path, os.W_OK):
            raise CliError(f"{option} {path}: not writable (permission denied)")
        return
    folder = path.parent
    while not folder.exists():
        if folder == folder.parent:
            break
        folder = folder.parent
    if not folder.is_dir():
        raise CliError(f"{option} {path}: {folder} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise CliError(f"{option} {path}: cannot create files in {folder} (permission denied)")


def make_parent(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


@contextmanager
def human_text_to_stderr(enabled: bool) -> Iterator[None]:
    """With ``--json``, everything the block writes to stdout, simulators and C libraries
    included (file descriptor 1), goes to stderr, so that stdout holds the JSON alone."""
    if not enabled:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        with redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _plain(value: Any) -> Any:
    """numpy scalars and paths as JSON values."""
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def print_json(result: dict[str, Any]) -> None:
    print(json.dumps(result, default=_plain))
