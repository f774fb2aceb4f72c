"""Build the C driver of the simulated card (drivers/c/) for a configuration.

``make`` with the system C compiler builds, into ``build_root()/c-driver/<config>/``:
``libvtasim.a`` (upstream VTA's driver ABI, ``include/vta/driver.h``, over the simulator socket)
and ``vta_example`` (an example driver program). Three headers are generated there first, so the
C side copies no constant: ``vta_sim_protocol.h`` (the socket protocol,
:func:`vtabench.drivers.rtl.protocol.c_header`), ``vta_regs.h`` (the BAR0 register map, from
:mod:`vtabench.spec.contracts.regs`) and ``vta_config.h`` (the configuration,
:func:`vtabench.hwgen.constants.c_header`).

    python -m vtabench.drivers.rtl.c_driver --config default    # prints the folder
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

from vtabench.drivers.rtl.protocol import c_header as protocol_header
from vtabench.sources import C_DRIVER_DIR
from vtabench.spec.config import Config, load_config
from vtabench.workdirs import build_root

#: The C sources (package data): Makefile, include/vta/driver.h, vta_sim_driver.c, example/.
C_DIR = C_DRIVER_DIR


class CDriverBuildError(RuntimeError):
    """make failed; the message has its output."""


def regs_header() -> str:
    """``vta_regs.h``: every integer constant of the register map module as ``VTA_REG_<NAME>``
    (register offsets, field masks and their LSBs, the revision, VERSION_EXPECTED)."""
    from vtabench.spec.contracts import regs

    lines = ["/* Generated from vtabench.spec.contracts.regs by the C driver build. Do not edit. */",
             "#ifndef VTA_REGS_H_", "#define VTA_REGS_H_", ""]
    for name, value in vars(regs).items():
        if name.isupper() and isinstance(value, int):
            lines.append(f"#define VTA_REG_{name} {value:#x}u")
    lines += ["", "#endif  /* VTA_REGS_H_ */", ""]
    return "\n".join(lines)


def generated_headers(cfg: Config) -> dict[str, str]:
    from vtabench.hwgen.constants import c_header as config_header

    return {"vta_sim_protocol.h": protocol_header(), "vta_regs.h": regs_header(),
            "vta_config.h": config_header(cfg)}


def build_c_driver(cfg: Config) -> Path:
    """Build libvtasim.a and vta_example for ``cfg`` (make rebuilds what changed); returns the
    folder they are in."""
    out = build_root() / "c-driver" / cfg.name
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="default", help="configuration name or JSON path")
    args = ap.parse_args(argv)
    print(build_c_driver(load_config(args.config)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
