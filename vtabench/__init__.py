"""vtabench: one VTA spec, its golden model, and every design entry held to it.

The package follows the flow: ``workloads`` (models) -> ``graph`` and ``compiler`` (TVM) ->
programs (``spec``: ISA, validation) -> ``runtime`` -> ``drivers`` -> ``targets`` (fsim, RTL,
OpenCL), checked by ``verify``. docs/dev/flow.md has the map.
"""

__version__ = "0.1.0"
