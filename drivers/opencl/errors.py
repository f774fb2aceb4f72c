"""What the OpenCL backend raises: every OpenCL failure names the step, the status name
(``CL_OUT_OF_RESOURCES`` ...) and the routine; a kernel that stops on a program error reports
the error code and instruction index."""

from __future__ import annotations

import pyopencl as cl

from vtabench.drivers.api import DeviceError


class OpenCLError(DeviceError):
    """An OpenCL call failed; ``status`` is the OpenCL status name (``CL_...``) when known."""

    def __init__(self, message: str, status: str | None = None) -> None:
        super().__init__(message)
        self.status = status


class KernelBuildError(OpenCLError):
    """The kernel did not build; ``log`` is the compiler's build log."""

    def __init__(self, message: str, log: str) -> None:
        super().__init__(message, "CL_BUILD_PROGRAM_FAILURE")
        self.log = log


class KernelRunError(DeviceError):
    """The kernel stopped on a program error; ``code``, ``index`` (instruction), ``arg``."""

    def __init__(self, message: str, code: int, index: int, arg: int) -> None:
        super().__init__(message)
        self.code = code
        self.index = index
        self.arg = arg


def status_name(code: int) -> str:
    try:
        return "CL_" + cl.status_code.to_string(code)
    except Exception:  # noqa: BLE001 - an unknown code is still worth printing
        return f"CL status {code}"



def cl_error(exc: cl.Error, what: str) -> OpenCLError:
    """An OpenCLError naming the failed step, the OpenCL status name and the routine."""
    code = getattr(exc, "code", None)
    name = status_name(code) if isinstance(code, int) else None
    routine = getattr(exc, "routine", "") or ""
    detail = ""
    record = exc.args[0] if exc.args else None
    if record is not None and callable(getattr(record, "what", None)):
        detail = str(record.what() or "").strip()
    elif record is not None:
        detail = str(record).strip()
    msg = f"{what} failed: {name or type(exc).__name__}"
    if routine:
        msg += f" (in {routine})"
    if detail and detail not in (name, (name or "")[3:]):
        msg += f": {detail}"
    return OpenCLError(msg, name)

