"""The VTA kernel: its text, its variant and build options, the built program.

Two kernel variants (docs/opencl.md): ``group`` (opencl/vta_group.cl, one work-group per program,
for GPUs and CPUs) and ``item`` (vta.cl, one work-item, upstream's FPGA ABI). The device type
picks one (GPU, CPU: group; accelerators: item); ``variant=`` / ``VTA_OPENCL_VARIANT`` override
it. The kernel is built from source or loaded from a prebuilt binary (``binary=PATH`` or
``VTA_OPENCL_BINARY``; see docs/opencl.md for aoc / v++). A build failure is a
:class:`~vtabench.drivers.opencl.errors.KernelBuildError` carrying the build log.

The kernel's text is the configuration's header, the contracts header, vta_isa.h and the
variant's file. Both headers are the committed generated views in opencl/gen/ (written by
``vtabench gen`` / ``make gen``, checked fresh by the test suite): the driver reads them and
generates nothing. The one exception is a configuration that has no committed view (one loaded
from a path, or a built-in one edited without ``vtabench gen``: the view's VTA_CONFIG_ID is not
the configuration's): its header is rendered in memory by
:func:`vtabench.hwgen.constants.c_header`, the function that writes the committed views, imported
only then. Done here rather than by every caller above the driver (the CLI, the graph executor,
the regression each open devices for any configuration) so that no caller can forget it; the
kernel's probe checks the result either way (the configuration ID it was built with).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyopencl as cl

from vtabench.drivers.opencl.errors import KernelBuildError, OpenCLError, cl_error, status_name
from vtabench.sources import OPENCL_DIR
from vtabench.spec.contracts import ocl_control as C

if TYPE_CHECKING:
    from vtabench.spec.config import Config

KERNEL_DIR = OPENCL_DIR
KERNEL_PATH = KERNEL_DIR / "vta.cl"  # the item variant (upstream's FPGA ABI)
GROUP_KERNEL_PATH = KERNEL_DIR / "vta_group.cl"  # the group variant (GPUs, CPUs)
ISA_HEADER = KERNEL_DIR / "vta_isa.h"  # what both share
KERNEL_NAME = "vta_core"
BATCH_KERNEL_NAME = "vta_batch"  # group variant only: one program per work-group
GRID_KERNEL_NAME = "vta_grid"  # group variant only: one program on many work-groups
VARIANTS = ("group", "item")
ENV_BINARY = "VTA_OPENCL_BINARY"
ENV_VARIANT = "VTA_OPENCL_VARIANT"
#: Work-items per work-group of the group variant by device type. One program runs on one
#: compute unit, so a GPU's group is as large as it can be (latency hiding: on the H100, ResNet-18
#: takes 63 ms with 256, 35 ms with 1024). PoCL 3.0 crashes at 256; 64 is as fast there.
GROUP_SIZE_GPU = 1024
GROUP_SIZE_CPU = 64
GEN_DIR = KERNEL_DIR / "gen"  # the committed generated views (vtabench gen)
CONTRACTS_HEADER = GEN_DIR / "vta_contracts.h"
_CONFIG_ID = re.compile(r"^#define VTA_CONFIG_ID (\d+)u", re.MULTILINE)


def config_header(cfg: Config) -> str:
    """The configuration's header: the committed view opencl/gen/<name>/vta_config.h when it is
    this configuration's (its VTA_CONFIG_ID matches), else rendered now (the one exception: see
    the module docstring)."""
    path = GEN_DIR / cfg.name / "vta_config.h"
    if path.is_file():
        text = path.read_text()
        m = _CONFIG_ID.search(text)
        if m is not None and int(m.group(1)) == cfg.config_id:
            return text
    from vtabench.hwgen.constants import c_header

    return c_header(cfg)


def kernel_source(cfg: Config, source: str | os.PathLike[str] | None = None,
                  variant: str = "group", isa_header: str | None = None) -> str:
    """The kernel text: the configuration's header, the contracts header and vta_isa.h (or the
    text ``isa_header``), then the variant's file or ``source`` (a path or the text of another
    kernel: tests use it for a kernel that does not build, mutation runs for mutants)."""
    if source is None:
        path = GROUP_KERNEL_PATH if variant == "group" else KERNEL_PATH
        body, name = path.read_text(), path.name
    elif isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source
                                             and Path(source).exists()):
        body, name = Path(source).read_text(), Path(source).name
    else:
        body, name = str(source), "<source>"
    isa = ISA_HEADER.read_text() if isa_header is None else isa_header
    return (f'{config_header(cfg)}\n{CONTRACTS_HEADER.read_text()}\n#line 1 "{ISA_HEADER.name}"\n'
            f'{isa}\n#line 1 "{name}"\n{body}')


def choose_variant(dev: Any, variant: str | None, options: list[str]) -> str:
    """The kernel variant to build: ``variant``, else $VTA_OPENCL_VARIANT, else by device type
    (GPU and CPU: group; accelerators such as FPGAs: item). -DVTA_ONCHIP is an item build."""
    variant = variant or os.environ.get(ENV_VARIANT) or None
    if variant is not None and variant not in VARIANTS:
        raise OpenCLError(f"unknown kernel variant {variant!r}; expected one of "
                          f"{', '.join(VARIANTS)}")
    onchip = "-DVTA_ONCHIP" in options
    if variant == "group" and onchip:
        raise OpenCLError("-DVTA_ONCHIP builds the item variant (upstream's eight-argument ABI); "
                          "the group variant keeps its buffers in scratch")
    if variant is not None:
        return variant
    if onchip:
        return "item"
    return "group" if dev.type & (cl.device_type.GPU | cl.device_type.CPU) else "item"


def group_local_bytes(cfg: Config, group_size: int) -> int:
    """Local memory of the group variant's work area (vta_work_t in vta_group.cl)."""
    acc = cfg.acc_depth
    run_ix = 2 if cfg.uop_depth < 65536 else 4
    # tags, runs, counts and partial sums, parts, decoded GEMM/ALU, LOAD and STORE, index
    # ranges and scalars, slack
    return (4 * acc + run_ix * (acc + 1) + 8 * group_size + 4 * min(group_size, 16)
            + 4 * 16 + 4 * 9 + 4 * 22 + 4 * 6 + 64)


def group_build_options(dev: Any, cfg: Config, group_size: int | None) -> list[str]:
    """Build options of the group variant on ``dev``: the work-group size (a power of two), the
    micro-op buffer in local memory where it fits beside the work area, dp4a on NVIDIA GPUs."""
    gpu = bool(dev.type & cl.device_type.GPU)
    n = group_size or (GROUP_SIZE_GPU if gpu else GROUP_SIZE_CPU)
    if n < 1 or n & (n - 1):
        raise OpenCLError(f"group_size must be a power of two, got {n}")
    while n > dev.max_work_group_size:
        n //= 2
    need = group_local_bytes(cfg, n)
    if need > dev.local_mem_size:
        raise OpenCLError(f"the group variant needs {need} bytes of local memory for "
                          f"configuration {cfg.name}; {dev.name.strip()} has "
                          f"{dev.local_mem_size} (use variant='item')")
    opts = [f"-DVTA_GROUP_SIZE={n}"]
    if need + cfg.uop_depth * cfg.uop_elem_bytes <= dev.local_mem_size:
        opts.append("-DVTA_LOCAL_UOP")
    if "NVIDIA" in dev.platform.name.upper() and _compute_capability(dev) >= (6, 1):
        opts.append("-DVTA_DP4A")
    return opts


def _compute_capability(dev: Any) -> tuple[int, int]:
    try:
        return (int(dev.compute_capability_major_nv), int(dev.compute_capability_minor_nv))
    except (cl.Error, AttributeError):
        return (0, 0)


_PROGRAMS: dict[tuple[int, str], Any] = {}


def build_program(ctx: Any, dev: Any, cfg: Config, *, source: str | os.PathLike[str] | None = None,
                  binary: str | os.PathLike[str] | bytes | None = None,
                  options: str | list[str] = (), variant: str = "group",
                  isa_header: str | None = None) -> Any:
    """Build (or load) the program; cached per context, text and options within this process."""
    opts = [options] if isinstance(options, str) else list(options)
    if binary is not None:
        data = binary if isinstance(binary, bytes) else Path(binary).read_bytes()
        key = (id(ctx), "bin:" + hashlib.sha256(data).hexdigest() + repr(opts))
    else:
        text = kernel_source(cfg, source, variant, isa_header)
        key = (id(ctx), "src:" + hashlib.sha256(text.encode()).hexdigest() + repr(opts))
    if key in _PROGRAMS:
        return _PROGRAMS[key]
    where = f"{dev.name.strip()} ({dev.platform.name.strip()})"
    try:
        if binary is not None:
            prg = cl.Program(ctx, [dev], [data])
        else:
            prg = cl.Program(ctx, text)
    except cl.Error as exc:
        raise cl_error(exc, f"creating the program on {where}") from None
    try:
        prg.build(options=opts)
    except cl.Error as exc:
        log = ""
        try:
            log = prg.get_build_info(dev, cl.program_build_info.LOG)
        except cl.Error:
            pass
        log = (log or "").strip() or str(exc).strip()
        kind = "binary" if binary is not None else "kernel"
        name = status_name(exc.code) if isinstance(getattr(exc, "code", None), int) else \
            "CL_BUILD_PROGRAM_FAILURE"
        raise KernelBuildError(f"OpenCL {kind} build failed on {where} ({name}); build log:\n"
                               f"{log}", log) from None
    _PROGRAMS[key] = prg
    return prg


def scratch_bytes(cfg: Config) -> int:
    """Bytes of the scratch buffer: control block + uop, inp, wgt, acc, out buffers."""
    return (C.CTRL_BYTES + cfg.uop_depth * cfg.uop_elem_bytes + cfg.inp_depth * cfg.inp_elem_bytes
            + cfg.wgt_depth * cfg.wgt_elem_bytes + cfg.acc_depth * cfg.acc_elem_bytes
            + cfg.out_depth * cfg.out_elem_bytes)

