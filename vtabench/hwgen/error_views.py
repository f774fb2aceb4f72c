"""The error codes: one data file (spec/contracts/errors.json), one numbering for every target.

Views: the SV package ``vta_err_pkg`` (hdl/gen/vta_err_pkg.sv, constants
``ERR_<NAME>``), the ``VTA_ERR_<NAME>`` section of the OpenCL header
(:mod:`vtabench.hwgen.contracts`), the Python module spec/contracts/errors.py (``ErrorCode``,
``MESSAGES``, ``describe``) and the error table of docs/contracts.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from vtabench.hwgen.contract_data import (CONTRACTS_DIR, ContractError, check_unique,
                                          generated_by, need, need_int, need_name, read_contract)
from vtabench.hwgen.render import aligned, render

ERRORS_JSON = CONTRACTS_DIR / "errors.json"
#: The targets that report these codes.
TARGETS = ("rtl", "opencl")
HEADER = generated_by(__name__, ERRORS_JSON)


@dataclass(frozen=True)
class Error:
    name: str
    value: int
    message: str  # the short text drivers print
    doc: str  # when it is raised
    targets: tuple[str, ...]


@dataclass(frozen=True)
class ErrorCodes:
    doc: str
    width: int
    codes: tuple[Error, ...]


def load_errors(path: Path = ERRORS_JSON) -> ErrorCodes:
    raw = read_contract(path)
    where = path.name
    width = need(raw, "width", int, where)
    codes = []
    for i, entry in enumerate(need(raw, "codes", list, where)):
        name = need_name(entry, f"{where}: codes[{i}]")
        at = f"{where}: code {name}"
        value = need_int(entry, "value", at)
        if value >> width:
            raise ContractError(f"{at}: value {value:#x} does not fit in {width} bits")
        targets = tuple(need(entry, "targets", list, at))
        unknown = [t for t in targets if t not in TARGETS]
        if unknown or not targets:
            raise ContractError(f"{at}: targets {list(targets)} not a non-empty subset of "
                                f"{list(TARGETS)}")
        codes.append(Error(name, value, need(entry, "message", str, at),
                           need(entry, "doc", str, at), targets))
    check_unique([(c.name, c.value) for c in codes], "code", where)
    if not codes or (codes[0].name, codes[0].value) != ("NONE", 0):
        raise ContractError(f"{where}: the first code must be NONE = 0")
    return ErrorCodes(need(raw, "doc", str, where), width, tuple(codes))


def _hex(ec: ErrorCodes, value: int) -> str:
    return f"0x{value:0{(ec.width + 3) // 4}X}"


def sv_package(ec: ErrorCodes) -> str:
    rows = [(f"localparam logic [{ec.width - 1}:0] ERR_{c.name}",
             f" = {ec.width}'h{c.value:0{(ec.width + 3) // 4}x};", f"  // {c.message}")
            for c in ec.codes]
    return render("vta_err_pkg.sv.tmpl", header=HEADER, width=str(ec.width),
                  codes=aligned(rows, "  "))


def c_section(ec: ErrorCodes) -> str:
    rows = [(f"#define VTA_ERR_{c.name}", f" {_hex(ec, c.value)}u", f"  /* {c.message} */")
            for c in ec.codes]
    return aligned(rows)


def py_module(ec: ErrorCodes) -> str:
    members = aligned([(f"{c.name} = {_hex(ec, c.value)}", f"  # {c.message}") for c in ec.codes],
                      "    ")
    messages = "\n".join(f"    ErrorCode.{c.name}: {c.message!r}," for c in ec.codes)
    return render("errors.py.tmpl", header=HEADER, members=members, messages=messages)


def markdown(ec: ErrorCodes) -> str:
    rows = "\n".join(f"| {_hex(ec, c.value)} | ERR_{c.name} | {', '.join(c.targets)} | "
                     f"{c.message} | {c.doc} |" for c in ec.codes)
    return render("errors.md.tmpl", doc=ec.doc, width=str(ec.width), rows=rows)
