"""vtabench drivers: one device API (:mod:`.api`) over every target (fsim, opencl, rtl).

Importing this package pulls in numpy only; each backend is imported when a device of its target
is opened.
"""

from vtabench.drivers.alloc import Allocator, OutOfMemoryError
from vtabench.drivers.api import (BACKENDS, Device, DeviceError, RunResult, RunTimeoutError,
                                  open_device)

__all__ = ["BACKENDS", "Allocator", "Device", "DeviceError", "OutOfMemoryError", "RunResult",
           "RunTimeoutError", "open_device"]
