"""Whether a process is still there: the watch every long-lived helper keeps on its owner (a
simulator on the driver that started it, a job folder on the process that made it)."""

from __future__ import annotations

import os
from pathlib import Path


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
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2] != "Z"
