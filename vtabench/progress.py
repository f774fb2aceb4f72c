"""Progress on stderr for commands that take more than a few seconds, drawn only when stderr is a
terminal (logs and pipes get nothing).

:class:`Activity` is for work whose length is not known in advance (compiling a network,
starting the RTL simulator and running a program on it): one line with what is going on and the
seconds so far, redrawn by a thread four times a second from the first second on (quick work
draws nothing) and erased at the end.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

#: seconds between redraws
REDRAW_S = 0.25
#: characters of the description shown
WIDTH = 60
#: seconds before the first draw
DELAY_S = 1.0


class Activity:
    """``with Activity("compiling net.onnx") as a: ...`` (``a.say("...")`` changes the text)."""

    def __init__(self, what: str, stream: TextIO | None = None) -> None:
        self.what = what
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = time.monotonic()

    def say(self, what: str) -> None:
        self.what = what

    def _line(self) -> str:
        spin = "|/-\\"[int((time.monotonic() - self._t0) / REDRAW_S) % 4]
        return f"\r{spin} {self.what[:WIDTH]:<{WIDTH}} {time.monotonic() - self._t0:7.1f} s"

    def _draw(self) -> None:
        if self._stop.wait(DELAY_S):
            return
        while not self._stop.wait(REDRAW_S):
            self.stream.write(self._line())
            self.stream.flush()

    def __enter__(self) -> Activity:
        self._t0 = time.monotonic()
        if self.enabled:
            self._thread = threading.Thread(target=self._draw, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            if time.monotonic() - self._t0 > DELAY_S:
                self.stream.write("\r" + " " * (WIDTH + 14) + "\r")
                self.stream.flush()
