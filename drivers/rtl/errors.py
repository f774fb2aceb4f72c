"""What the rtl driver raises, all :class:`~vtabench.drivers.api.DeviceError` subclasses.

They carry attributes (codes, the register snapshot...) and stay picklable with them, so they
cross process boundaries intact (a regression worker, a Dask task): the default pickling of an
exception re-calls ``cls(*args)`` with the message only, which these constructors refuse.
"""

from __future__ import annotations

import copyreg
from typing import Any

from vtabench.drivers.api import DeviceError, RunTimeoutError

def _rebuild(cls: type, args: tuple, attrs: dict[str, Any]) -> BaseException:
    """An instance of ``cls`` without its constructor. Of the ``__new__`` along the MRO only the
    built-in base with the largest layout accepts the class (OSError's for a TimeoutError)."""
    for base in cls.__mro__:
        try:
            exc = base.__new__(cls)
            break
        except TypeError:
            continue
    exc.args = args
    exc.__dict__.update(attrs)
    return exc  # type: ignore[no-any-return]


def _reduce(exc: BaseException) -> tuple:
    return (_rebuild, (type(exc), exc.args, dict(exc.__dict__)))


copyreg.pickle(RunTimeoutError, _reduce)


class _Picklable(DeviceError):
    def __reduce__(self) -> tuple:
        return _reduce(self)


class SimulatorGoneError(_Picklable):
    """The simulator process ended or closed the connection (a crash, Ctrl-C on its side, a
    server stopped); the message says during which request and has its log tail when known."""


class DeviceMismatchError(_Picklable):
    """VERSION or CONFIG_ID of the device differs from what the driver expects."""


class DeviceLostError(_Picklable):
    """MMIO reads keep returning all ones (completion timeout / surprise removal)."""


class DeviceRunError(_Picklable):
    """The core stopped with a nonzero ERROR_CODE. ``code``, ``insn`` and ``status``."""

    def __init__(self, message: str, code: int, insn: int, status: dict[str, Any]):
        super().__init__(message)
        self.code = code
        self.insn = insn
        self.status = status


class DmaError(_Picklable):
    """A DMA completed with an error. ``direction`` ("h2d"/"d2h"), ``addr``, ``nbytes``,
    ``landed`` (bytes that did reach the target), ``status`` (device registers)."""

    def __init__(self, message: str, direction: str, addr: int, nbytes: int, landed: int,
                 status: dict[str, Any]):
        super().__init__(message)
        self.direction = direction
        self.addr = addr
        self.nbytes = nbytes
        self.landed = landed
        self.status = status


class DmaTimeoutError(DmaError, TimeoutError):
    """A DMA did not complete within ``dma_timeout_ns``; it was aborted (nothing landed)."""
