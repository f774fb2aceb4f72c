"""cocotb test of the platform simulator: run one driver function in a thread of the simulator.

Started by ``vtabench.drivers.rtl_backend.run_in_simulator`` with ``+vta_platform_job=JOB.pkl``
(a pickle: the function to run as (module, file, qualname), its arguments, the link preset, the
clock, the DRAM file). The test starts the platform (clock, reset, MSI watcher), makes it the
current platform (so ``open_device("rtl", ...)`` inside the function finds it), runs the function
with ``cocotb.task.bridge`` (blocking code in a thread; the driver's coarse operations re-enter the
simulator with ``cocotb.task.resume``), and pickles its return value or its exception.
"""

from __future__ import annotations

import importlib
import importlib.util
import pickle
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cocotb
from vtabench.targets.rtl.platform.model import Platform, set_current_platform


def resolve(ref: tuple[str, str | None, str]) -> Callable[..., Any]:
    """A function from (module name, source file, qualname): imported by name, or loaded from
    its file when the module is not importable here (a test module, a script)."""
    modname, path, qualname = ref
    module = None
    if modname and modname != "__main__":
        try:
            module = importlib.import_module(modname)
        except ImportError:
            module = None
    if module is None:
        if not path:
            raise ImportError(f"cannot import {modname}.{qualname}")
        name = f"vtabench_platform_job_{Path(path).stem}"
        module = sys.modules.get(name)
        if module is None:
            spec = importlib.util.spec_from_file_location(name, path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
    obj: Any = module
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj  # type: ignore[no-any-return]


@cocotb.test()
async def run_platform_job(dut: Any) -> None:
    """Run the job's function against the VTA shell behind the modeled PCIe link."""
    from cocotb.task import bridge

    job_path = Path(str(cocotb.plusargs["vta_platform_job"]))
    job = pickle.loads(job_path.read_bytes())
    plat = Platform(dut, job["dram_file"], link=job["link"], clock_mhz=job["clock_mhz"])
    await plat.start()
    set_current_platform(plat)

    def body() -> tuple:
        try:
            fn = resolve(job["fn"])
            return ("ok", fn(*job["args"], **job["kwargs"]))
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller
            return ("err", exc, traceback.format_exc())

    try:
        outcome = await bridge(body)()
    finally:
        set_current_platform(None)
    try:
        data = pickle.dumps(outcome)
    except Exception:  # noqa: BLE001 - an unpicklable result or exception
        data = pickle.dumps(("err", RuntimeError(repr(outcome[1])), outcome[-1]))
    Path(job["result"]).write_bytes(data)
    if outcome[0] == "err":
        dut._log.info("job function raised:\n%s", outcome[2])
