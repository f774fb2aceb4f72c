"""The processes of this machine as /proc shows them: whether one is still there (the watch every
long-lived helper keeps on its owner: a simulator on the driver that started it, a job folder on
the process that made it) and which run under another (what a stopped command must end too)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple


class ProcessInfo(NamedTuple):
    """A process's parent, process group and state letter (``Z``: ended, not yet reaped)."""

    ppid: int
    pgrp: int
    state: str


def _stat_fields(text: str) -> list[str]:
    """The fields of /proc/PID/stat after the command name (which may hold spaces and ')')."""
    return text[text.rindex(")") + 2:].split()


def process_table() -> dict[int, ProcessInfo]:
    """pid -> :class:`ProcessInfo` of every process now (empty without /proc)."""
    table = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, ppid, pgrp = _stat_fields(stat.read_text())[:3]
        except OSError:
            continue
        table[int(stat.parent.name)] = ProcessInfo(int(ppid), int(pgrp), state)
    return table


def descendants(pid: int, table: dict[int, ProcessInfo] | None = None) -> list[int]:
    """Every process under ``pid`` (children first, in any state), from ``table`` or now."""
    children: dict[int, list[int]] = {}
    for child, info in (process_table() if table is None else table).items():
        children.setdefault(info.ppid, []).append(child)
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists and has not ended (a zombie has ended; another user's
    process counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        return _stat_fields(Path(f"/proc/{pid}/stat").read_text())[0] != "Z"
    except OSError:
        return True
