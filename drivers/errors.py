"""The base of what every driver raises, below the driver API so that the allocator
(:mod:`.alloc`) can raise its subclasses; :mod:`.api` exports it."""

from __future__ import annotations


class DeviceError(RuntimeError):
    """A device could not be opened, or a run failed on the device."""
