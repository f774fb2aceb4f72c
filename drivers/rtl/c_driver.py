"""Build the C driver of the simulated card (drivers/c/) for a configuration.

``make`` with the system C compiler builds, into an output folder (``--out``; by default
``build_root()/c-driver/<config>/``): ``libvtasim.a`` (upstream VTA's driver ABI,
``include/vta/driver.h``, over the simulator socket) and ``vta_example`` (an example driver
program). Its three headers are put in the folder's ``gen/`` first, so the C side copies no
constant; for a built-in configuration none of them runs a generator:

- ``vta_config.h`` (the configuration): the view ``vtabench gen`` commits for each built-in
  configuration, ``opencl/gen/<config>/vta_config.h``. A configuration given by a JSON path has
  no committed view: :func:`config_header` generates its header with one explicit call of the
  generator (:func:`vtabench.hwgen.constants.c_header`), the only place this module reaches it;
- ``vta_regs.h`` (the BAR0 register map): the view ``vtabench gen`` commits,
  ``drivers/c/gen/vta_regs.h`` (peakrdl-cheader from ``spec/contracts/regmap.rdl``), which
  ``include/vta/bar0.h`` wraps (a register's offset, the expected VERSION);
- ``vta_sim_protocol.h`` (the socket protocol): :func:`vtabench.tb.platform.protocol.c_header`.

    python -m vtabench.drivers.rtl.c_driver --config default [--out DIR]   # prints the folder

A driver program links against it as docs/platform.md shows
(``cc -DUSE_VTA64 -I drivers/c/include -I DIR/gen prog.c -L DIR -lvtasim``).
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
from pathlib import Path

from vtabench.tb.platform.protocol import c_header as protocol_header
from vtabench.sources import C_DRIVER_DIR, OPENCL_DIR
from vtabench.spec.config import Config, ConfigError, is_builtin, load_config
from vtabench.workdirs import build_root

#: The C sources (package data): Makefile, include/vta/driver.h, vta_sim_driver.c, example/.
C_DIR = C_DRIVER_DIR
#: The register map's C header ``vtabench gen`` commits (peakrdl-cheader).
COMMITTED_REGS_HEADER = C_DIR / "gen" / "vta_regs.h"
#: Where ``vtabench gen`` commits each built-in configuration's ``<name>/vta_config.h``
#: (:data:`vtabench.hwgen.paths.OPENCL_GEN_DIR`, named here without importing the generators).
COMMITTED_CONFIG_HEADERS = OPENCL_DIR / "gen"


class CDriverBuildError(RuntimeError):
    """make failed; the message has its output."""


def regs_header() -> str:
    """``vta_regs.h``: the committed peakrdl-cheader view of the register map."""
    return COMMITTED_REGS_HEADER.read_text()


def config_header(cfg: Config) -> str:
    """``vta_config.h`` for ``cfg``: the committed view of a built-in configuration (its name
    and every value: :func:`~vtabench.spec.config.is_builtin`, the rule the RTL build follows
    too), or, for one given by path, the generator's (one explicit call)."""
    if is_builtin(cfg):
        return (COMMITTED_CONFIG_HEADERS / cfg.name / "vta_config.h").read_text()
    from vtabench.hwgen.constants import c_header

    return c_header(cfg)


def generated_headers(cfg: Config) -> dict[str, str]:
    """The headers the build puts in ``gen/``, by file name."""
    return {"vta_sim_protocol.h": protocol_header(), "vta_regs.h": regs_header(),
            "vta_config.h": config_header(cfg)}


def default_out(cfg: Config) -> Path:
    """The folder :func:`build_c_driver` builds into when not given one."""
    return build_root() / "c-driver" / cfg.name


def build_c_driver(cfg: Config, out: Path | None = None) -> Path:
    """Build libvtasim.a and vta_example for ``cfg`` into ``out`` (default
    :func:`default_out`; make rebuilds what changed); returns the folder (absolute)."""
    out = (out or default_out(cfg)).resolve()  # make runs in the sources' folder
    gen = out / "gen"
    gen.mkdir(parents=True, exist_ok=True)
    for name, text in generated_headers(cfg).items():
        path = gen / name
        if not path.exists() or path.read_text() != text:  # unchanged headers keep their mtime
            path.write_text(text)
    run = subprocess.run(["make", "-s", "-C", str(C_DIR), f"BUILD={out}", f"GEN={gen}"],
                         capture_output=True, text=True, check=False)
    if run.returncode != 0:
        raise CDriverBuildError(f"building the C driver in {out} failed:\n{run.stdout}"
                                f"{run.stderr}")
    return out


class _Terminated(BaseException):
    """SIGTERM, raised in the main thread so that make (a child) is stopped on the way out."""


def _terminated(signum: int, frame: object) -> None:
    raise _Terminated


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vtabench.drivers.rtl.c_driver",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="default", help="configuration name or JSON path")
    ap.add_argument("--out", type=Path, metavar="DIR",
                    help="output folder (default: c-driver/<config> under the build folder)")
    args = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, _terminated)
    try:
        print(build_c_driver(load_config(args.config), args.out))
    except (ConfigError, OSError) as exc:
        print(f"c_driver: error: {exc}", file=sys.stderr)
        return 2
    except CDriverBuildError as exc:
        print(f"c_driver: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("c_driver: interrupted (SIGINT)", file=sys.stderr)
        return 128 + signal.SIGINT
    except _Terminated:
        print("c_driver: terminated (SIGTERM)", file=sys.stderr)
        return 128 + signal.SIGTERM
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
