"""fsim, the functional reference simulator (the golden model of docs/isa.md)."""

from vtabench.fsim.core import Fsim, FsimStats, run_raw

__all__ = ["Fsim", "FsimStats", "run_raw"]
