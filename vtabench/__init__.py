"""vtabench: one VTA spec, its golden model, and every design entry held to it."""

__version__ = "0.1.0"
