"""Contracts between languages: one JSON data file per contract (register map, error codes,
OpenCL control block, stage and queue ids) and the Python views generated from them by
:mod:`vtabench.hwgen` (`vtabench gen`)."""
