"""OpenCL backend of the driver API: the VTA kernel of opencl/ on any OpenCL device.

One module per idea, each importing only those before it:

- :mod:`.errors`: what the backend raises (:class:`~.errors.OpenCLError`,
  :class:`~.errors.KernelBuildError`, :class:`~.errors.KernelRunError`);
- :mod:`.platforms`: choosing the platform and device by name, and their contexts;
- :mod:`.kernel`: the kernel's text (the committed generated headers of opencl/gen/ and the
  variant's source), the variant and build options, building or loading the program;
- :mod:`.control`: what a launch reports: the control block's counters, the profiled time;
- :mod:`.batch`: many programs in one launch of the group variant;
- :mod:`.device`: :class:`~.device.OpenCLDevice` (target ``opencl`` of the driver API) and the
  target's batch function.

numpy, pyopencl and numpy-only parts of vtabench: this is what runs on the accelerator machine,
where nothing else is installed (no TVM).
"""
