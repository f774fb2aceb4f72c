"""The runtime's error type."""


class RuntimeError_(RuntimeError):
    """A stream cannot be built (bad argument, a piece of work larger than a buffer)."""
