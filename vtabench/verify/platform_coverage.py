"""Coverage of the RTL only the platform instantiates (vta_shell, the register block), for
`make coverage` (issue #31 item 1: the platform in the report, judged like the core's modules).

The regression drives the core bench, which instantiates vta_core alone: the files the shell IP
adds on top of the core's (vtabench.rtl.filelist.shell_own_files: hdl/gen/vta_regs.sv,
hdl/vta_shell.sv) have no point there. The shell's unit bench (tb/unit/test_shell.py:
cocotbext-axi on BAR0, every register, byte strobes, SLVERR, the interrupt, programs launched
through the registers on the real core) builds with Verilator line, branch and toggle coverage;
:func:`platform_coverage` runs it and keeps the points of those files alone.

Its points of the core's modules (vta_core under ``vta_shell.u_core``) are dropped, so that the
core's figures stay the core bench's: merged, they would add a second instance of every core
module, whose points the core bench's instance-scoped waivers (``*.u_load``, ...) do not name.

The unit build has no ``--coverage-user`` and no instrumented copy (vtabench.rtl.cover_points):
the platform's files have no assertion and no enum register, hence no FSM or assertion point to
count (tests/test_platform_coverage.py checks that this stays so).
"""

from __future__ import annotations

from pathlib import Path

from vtabench.rtl.coverage import RtlCoverage
from vtabench.rtl.filelist import shell_own_files
from vtabench.sources import HDL_DIR
from vtabench.tb.unit.runner import CONFIG_NAMES, run_bench


class PlatformCoverageError(Exception):
    """The shell bench gave no platform coverage: its build or a test failed (one line: why, and
    where to look)."""


def platform_files(hdl_dir: Path = HDL_DIR) -> list[Path]:
    """The design files only the platform compiles: the shell IP's on top of the core's, without
    the packages (which have no coverage points)."""
    return [f for f in shell_own_files(hdl_dir) if not f.stem.endswith("_pkg")]


def points_of(dat: Path, files: list[Path]) -> RtlCoverage:
    """The points of ``dat`` (a Verilator coverage.dat) in ``files``. Only those lines are
    parsed: a shell build's file holds about 36 MB of points, nearly all of the core's."""
    keys = [f"\x01f\x02{f}\x01".encode() for f in files]
    own = dat.with_name("platform.cov")
    own.write_bytes(b"\n".join(ln for ln in dat.read_bytes().split(b"\n")
                               if any(k in ln for k in keys)))
    return RtlCoverage.from_files([own])


def check_config(config: str) -> None:
    """ValueError unless the shell bench runs ``config`` (its builds take the built-in ones)."""
    if config not in CONFIG_NAMES:
        raise ValueError(f"platform coverage: the shell bench runs the built-in configurations "
                         f"({', '.join(CONFIG_NAMES)}), not {config!r}")


def platform_coverage(config: str, seed: int | None = None) -> RtlCoverage:
    """Run the shell's unit bench on ``config`` (a built-in configuration; ``seed``: cocotb's,
    fresh when None) as a coverage build and return the points of :func:`platform_files`."""
    check_config(config)
    from vtabench.tb.unit.test_shell import SOURCES  # (cocotb's test module: imported to run)

    try:
        run = run_bench("shell", "vta_shell", SOURCES, config=config, seed=seed, waves=False,
                        coverage=True)
    except (AssertionError, RuntimeError) as exc:  # a failing test (its names, log and seed), a
        first = (str(exc) or "the shell bench failed").splitlines()[0]  # failed build command
        raise PlatformCoverageError(f"platform coverage: {first}") from None
    dat = run.build_dir / "coverage.dat"
    if not dat.is_file():  # another run of the same build started meanwhile
        raise PlatformCoverageError(f"platform coverage: {dat} is gone (another run of the "
                                    "shell bench's build?); run again")
    cov = points_of(dat, platform_files())
    if not cov.table:
        raise PlatformCoverageError(f"platform coverage: {dat} has no point of "
                                    + ", ".join(f.name for f in platform_files()))
    return cov
