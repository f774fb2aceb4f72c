"""vtabench: one VTA spec, its golden model, and every design entry held to it."""

from pathlib import Path

__version__ = "0.1.0"

# The driver API (drivers/) and the benches (tb/) sit at the repository root, as the project's
# layout has them, but are the subpackages vtabench.drivers and vtabench.tb: the root is on this
# package's search path. This holds for the editable install and for a bare checkout run with
# PYTHONPATH=. (the OpenCL smoke path on a machine with only numpy and pyopencl).
__path__.append(str(Path(__file__).resolve().parent.parent))
