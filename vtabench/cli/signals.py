"""What a command does with the processes it started when it is told to stop (SIGINT, SIGTERM).

A terminal's Ctrl-C reaches the whole foreground process group, but ``kill PID`` reaches only the
command, and the exception that unwinds it kills only its direct child (``subprocess.run`` sends
SIGKILL to it): the compilers under a Verilator ``make`` would build on, orphaned. So, on the
signal, the command

- becomes a child subreaper (Linux ``prctl``), so that a process orphaned from here on (a
  compiler whose ``make`` died) is re-parented to it rather than to init, and stays findable;
- sends SIGTERM to every process under it in its own process group (:func:`stop_children`);

and, once the stack has unwound (devices closed, job folders removed), ends what is still there
(:func:`end_children`). Processes in a session of their own (an rtl device's server) are not
touched here: the code that started them stops them as the stack unwinds, letting them clean up.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import time
from vtabench.processes import descendants, process_table

#: prctl option that makes this process the reaper of its orphaned descendants (linux/prctl.h).
PR_SET_CHILD_SUBREAPER = 36
#: Seconds the processes still there after unwinding get to end on SIGTERM before SIGKILL.
END_GRACE_S = 0.3


def group_children() -> list[int]:
    """The live processes under this one that share its process group (none without /proc)."""
    table = process_table()
    group = os.getpgid(0)
    return [pid for pid in descendants(os.getpid(), table)
            if table[pid].pgrp == group and table[pid].state != "Z"]


def _send(pids: list[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def become_subreaper() -> None:
    """Adopt the orphans of this process's descendants (Linux; elsewhere nothing)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def stop_children() -> None:
    """In the signal handler: adopt orphans from now on, and SIGTERM the group's children."""
    become_subreaper()
    _send(group_children(), signal.SIGTERM)


def end_children(grace_s: float = END_GRACE_S) -> None:
    """After unwinding: SIGTERM what is still under this process in its group, then SIGKILL
    what has not ended within ``grace_s``; the ended ones are reaped."""
    deadline = time.monotonic() + grace_s
    while (left := group_children()) and time.monotonic() < deadline:
        _send(left, signal.SIGTERM)
        time.sleep(0.02)
        _reap()
    _send(group_children(), signal.SIGKILL)
    _reap()


def _reap() -> None:
    """Collect the exit status of ended children (adopted orphans among them)."""
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
