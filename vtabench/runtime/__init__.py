"""Stream builder and runtime over the driver API (upstream VTA runtime's role)."""

from vtabench.runtime.stream import (
                                     DeviceBuffer,
                                     Runtime,
                                     RuntimeError_,
                                     RuntimeStats,
                                     UopKernel,
                                     UopKernelBuilder,
                                     available_targets,
                                     open_device,
)

__all__ = ["DeviceBuffer", "Runtime", "RuntimeError_", "RuntimeStats", "UopKernel",
           "UopKernelBuilder", "available_targets", "open_device"]
