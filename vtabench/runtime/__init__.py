"""The runtime over the driver API (upstream VTA runtime's role): see :mod:`.runtime`."""

from vtabench.runtime.buffers import DeviceBuffer
from vtabench.runtime.errors import RuntimeError_
from vtabench.runtime.runtime import Runtime
from vtabench.runtime.stats import RuntimeStats
from vtabench.runtime.targets import available_targets
from vtabench.runtime.uop_kernels import UopKernel, UopKernelBuilder

__all__ = ["DeviceBuffer", "Runtime", "RuntimeError_", "RuntimeStats", "UopKernel",
           "UopKernelBuilder", "available_targets"]
