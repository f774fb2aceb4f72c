"""Choosing the OpenCL platform and device, and one context per device.

Platform and device are chosen by case-insensitive name substring: the ``platform=`` /
``device=`` options, else the environment variables ``VTA_OPENCL_PLATFORM`` /
``VTA_OPENCL_DEVICE``, else the first platform that has a device. Nothing matching is an
:class:`~vtabench.drivers.opencl.errors.OpenCLError` that lists every platform and device there is.
"""

from __future__ import annotations

import os
from typing import Any

import pyopencl as cl

from vtabench.drivers.opencl.errors import OpenCLError, cl_error, status_name

ENV_PLATFORM = "VTA_OPENCL_PLATFORM"
ENV_DEVICE = "VTA_OPENCL_DEVICE"


def _platforms() -> list[Any]:
    try:
        return list(cl.get_platforms())
    except cl.Error as exc:  # e.g. CL_PLATFORM_NOT_FOUND_KHR: the ICD loader found nothing
        code = getattr(exc, "code", None)
        vendors = os.environ.get("OCL_ICD_VENDORS", "/etc/OpenCL/vendors")
        raise OpenCLError(f"no OpenCL platform is installed ({status_name(code) if code else exc});"
                          f" the ICD loader looked in OCL_ICD_VENDORS={vendors}",
                          status_name(code) if isinstance(code, int) else None) from None


def _devices(platform: Any) -> list[Any]:
    try:
        return list(platform.get_devices())
    except cl.Error:
        return []


def available() -> list[tuple[str, list[str]]]:
    """(platform name, [device names]) of everything the ICD loader sees."""
    return [(p.name.strip(), [d.name.strip() for d in _devices(p)]) for p in _platforms()]


def describe_available() -> str:
    try:
        found = available()
    except OpenCLError as exc:
        return str(exc)
    if not found:
        return "no OpenCL platforms"
    return "; ".join(f"platform {p!r} (devices: {', '.join(repr(d) for d in ds) or 'none'})"
                     for p, ds in found)


def select_device(platform: str | None = None, device: str | None = None) -> tuple[Any, Any]:
    """The (platform, device) whose names contain the given substrings (case-insensitive)."""
    platform = platform if platform is not None else os.environ.get(ENV_PLATFORM) or None
    device = device if device is not None else os.environ.get(ENV_DEVICE) or None
    plats = _platforms()
    if platform:
        plats = [p for p in plats if platform.lower() in p.name.lower()]
    candidates = [(p, d) for p in plats for d in _devices(p)
                  if not device or device.lower() in d.name.strip().lower()]
    if not candidates:
        wanted = " and ".join(x for x in (f"platform {platform!r}" if platform else "",
                                           f"device {device!r}" if device else "") if x)
        raise OpenCLError(f"no OpenCL device matches {wanted or 'any platform'}; available: "
                          f"{describe_available()} (choose with --platform/--device or "
                          f"{ENV_PLATFORM}/{ENV_DEVICE}, a case-insensitive name substring)")
    return candidates[0]



_CONTEXTS: dict[tuple[str, str], tuple[Any, Any, Any]] = {}


def context(platform: str | None, device: str | None) -> tuple[Any, Any, Any]:
    """(platform, device, context) of the chosen device; one context per device and process."""
    plat, dev = select_device(platform, device)
    key = (plat.name, dev.name + str(dev.int_ptr))
    if key not in _CONTEXTS:
        try:
            ctx = cl.Context([dev])
        except cl.Error as exc:
            raise cl_error(exc, f"creating an OpenCL context on {dev.name.strip()}") from None
        _CONTEXTS[key] = (plat, dev, ctx)
    return _CONTEXTS[key]

