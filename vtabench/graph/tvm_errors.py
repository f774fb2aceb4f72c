"""TVM's failures as one line: its C++ logging silenced, its multi-line messages cut to the
line that says what went wrong."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any


@contextlib.contextmanager
def quiet_stderr() -> Any:
    """File descriptor 2 to /dev/null (C++ logging bypasses sys.stderr)."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def one_line(exc: BaseException) -> str:
    """The line of an exception's message that says what went wrong (TVM errors carry a
    backtrace in the message)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    text = next((ln for ln in reversed(lines) if "Error" in ln), lines[-1] if lines else "")
    return (text or type(exc).__name__)[:300]
