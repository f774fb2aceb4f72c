"""The BAR0 register map: ``spec/contracts/regmap.rdl`` (SystemRDL 2.0) and its views.

The RDL file is the one hand-written description of the card's registers. systemrdl-compiler
compiles it (:func:`compile_regmap`) and the PeakRDL tools generate the views:

- ``hdl/gen/vta_regs.sv`` + ``vta_regs_pkg.sv`` (peakrdl-regblock): the register block, an
  AXI4-Lite slave with ``hwif_in`` / ``hwif_out`` structs, which ``hdl/vta_shell.sv``
  instantiates. Two settings keep the map's bus behaviour: an unmapped offset answers SLVERR
  (``err_if_bad_addr``), a write to a read-only register is ignored with OKAY (no
  ``err_if_bad_rw``). One edit is made to its text: every ``struct`` is made ``packed``, since
  Yosys (``make lint``, ``make fpga``) reads only packed structs; the members are all logic
  vectors or structs of them, so packing changes nothing else;
- ``drivers/c/gen/vta_regs.h`` (peakrdl-cheader): the C driver's register struct (offsets by
  ``offsetof``) and field macros;
- ``hdl/gen/vta_regs.xml`` (peakrdl-ipxact): IP-XACT 1685-2014 for vendor tools;
- ``spec/contracts/regs.py``: the Python access layer, rendered from the compiled model
  (template ``regs.py.tmpl``; its docstring says why not peakrdl-python);
- ``docs/registers.md``: the reference page, rendered from the compiled model (template
  ``registers.md.tmpl``: the upstream VCR column comes from the map's ``upstream`` property);
- an HTML reference (peakrdl-html, :func:`write_html`): not committed (a folder of scripts);
  ``vtabench gen`` writes it under ``build/docs/registers/``.

The views do not depend on the hardware configuration (the shell drives CONFIG_ID from
``vta_pkg::CONFIG_ID``; Python reads :attr:`Config.config_id`), so there is one copy of each.
``vtabench gen`` rewrites them (:func:`vtabench.hwgen.write_all`); tests/test_regmap.py fails
when a committed copy is stale.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vtabench.hwgen.paths import C_GEN_DIR, DOCS_DIR, RTL_GEN_DIR
from vtabench.hwgen.render import render
from vtabench.workdirs import PACKAGE_DIR

REGMAP_RDL = PACKAGE_DIR / "spec" / "contracts" / "regmap.rdl"
SV_MODULE = RTL_GEN_DIR / "vta_regs.sv"
SV_PACKAGE = RTL_GEN_DIR / "vta_regs_pkg.sv"
IPXACT_XML = RTL_GEN_DIR / "vta_regs.xml"
C_HEADER = C_GEN_DIR / "vta_regs.h"
PY_MODULE = PACKAGE_DIR / "spec" / "contracts" / "regs.py"
DOCS_PAGE = DOCS_DIR / "registers.md"

#: BAR0 is 4 KiB: the register block decodes 12 address bits (an offset past the map: SLVERR).
BAR0_ADDR_BITS = 12
DATA_BITS = 32
SOURCE = "spec/contracts/regmap.rdl"

#: Access kinds of the map's fields, from their SystemRDL properties (docs/registers.md).
ACCESS_DOC = {
    "rw": "read/write, stored in the register block (sw = rw)",
    "ro": "read-only, driven by the core or the shell, sampled on every read (sw = r, hw = w)",
    "const": "read-only constant of the register block (sw = r, hw = na, the reset value)",
    "wo_pulse": "write 1 for a one-cycle pulse towards the core; reads 0 (sw = w, singlepulse)",
    "w1c": "set by hardware, write 1 to clear; a set in the same cycle wins (sw = rw, onwrite = "
           "woclr, a sticky interrupt field)",
}


class RegmapError(ValueError):
    """The register map does not compile, or uses a construct the views do not support."""


@dataclass(frozen=True)
class Field:
    name: str
    lsb: int
    width: int
    access: str
    reset: int | None
    doc: str

    @property
    def msb(self) -> int:
        return self.lsb + self.width - 1

    @property
    def mask(self) -> int:
        return ((1 << self.width) - 1) << self.lsb


@dataclass(frozen=True)
class Register:
    name: str
    offset: int
    title: str
    doc: str
    upstream: str | None
    fields: tuple[Field, ...]

    @property
    def access(self) -> str:
        return "/".join(sorted({f.access for f in self.fields}))

    @property
    def defined_bits(self) -> int:
        return sum(f.mask for f in self.fields)


@dataclass(frozen=True)
class RegMap:
    """The compiled map in the terms the Python and Markdown views use (the PeakRDL exporters
    read :attr:`node`, the compiled addrmap, directly)."""

    node: Any  # systemrdl.node.AddrmapNode
    doc: str
    registers: tuple[Register, ...]

    def __getitem__(self, name: str) -> Register:
        return next(r for r in self.registers if r.name == name)

    @property
    def revision(self) -> int:
        return self.constant("VERSION") >> 24

    def constant(self, name: str) -> int:
        """The value of a register whose fields are all constants (VERSION)."""
        reg = self[name]
        if any(f.access != "const" for f in reg.fields):
            raise RegmapError(f"{name} is not a constant register")
        return sum((f.reset or 0) << f.lsb for f in reg.fields)


def _text(s: str | None) -> str:
    return " ".join((s or "").split())


class _Collect:
    """A systemrdl message printer that keeps the messages (for one clear line)."""

    def __init__(self) -> None:
        from systemrdl.messages import MessagePrinter

        outer = self

        class Printer(MessagePrinter):  # type: ignore[misc]
            def emit_message(self, lines: list[str]) -> None:
                outer.lines.extend(lines)

        self.lines: list[str] = []
        self.printer = Printer()


def _access(reg: str, field: Any) -> str:
    from systemrdl.rdltypes import AccessType, OnWriteType

    sw, hw = field.get_property("sw"), field.get_property("hw")
    onwrite = field.get_property("onwrite")
    if sw == AccessType.w and field.get_property("singlepulse"):
        return "wo_pulse"
    if sw == AccessType.rw and onwrite == OnWriteType.woclr and field.get_property("intr"):
        return "w1c"
    if sw == AccessType.rw and onwrite is None:
        return "rw"
    if sw == AccessType.r and hw == AccessType.na:
        return "const"
    if sw == AccessType.r and hw in (AccessType.w, AccessType.rw):
        return "ro"
    raise RegmapError(f"{reg}.{field.inst_name}: sw = {sw.name}, hw = {hw.name}, onwrite = "
                      f"{onwrite}: an access kind the views do not describe "
                      f"({', '.join(ACCESS_DOC)})")


def compile_regmap(path: Path = REGMAP_RDL) -> RegMap:
    """Compile and elaborate the map; a compile error is a :class:`RegmapError` with the
    compiler's first message."""
    from peakrdl_regblock.udps import ALL_UDPS
    from systemrdl import RDLCompileError, RDLCompiler

    msgs = _Collect()
    rdlc = RDLCompiler(message_printer=msgs.printer)
    for udp in ALL_UDPS:
        rdlc.register_udp(udp)
    try:
        rdlc.compile_file(str(path))
        top = rdlc.elaborate().top
    except RDLCompileError:
        first = msgs.lines[0] if msgs.lines else "does not compile"
        raise RegmapError(f"{path}: {first}") from None
    regs = []
    for reg in top.registers():
        if reg.get_property("regwidth") != DATA_BITS or reg.is_array:
            raise RegmapError(f"{reg.inst_name}: only single 32-bit registers are supported")
        fields = tuple(Field(f.inst_name, f.lsb, f.width, _access(reg.inst_name, f),
                             f.get_property("reset"), _text(f.get_property("desc")))
                       for f in reg.fields())
        regs.append(Register(reg.inst_name, reg.address_offset, _text(reg.get_property("name")),
                             _text(reg.get_property("desc")), reg.get_property("upstream"),
                             fields))
    if max(r.offset for r in regs) >= 1 << BAR0_ADDR_BITS:
        raise RegmapError(f"the map does not fit BAR0's {1 << BAR0_ADDR_BITS} bytes")
    return RegMap(top, _text(top.get_property("desc")), tuple(regs))


# ------------------------------------------------------------------------------------------------
# PeakRDL exporters
# ------------------------------------------------------------------------------------------------
def _banner(comment: str, tool: str) -> str:
    return (f"{comment} Generated by vtabench.hwgen.regmap (`vtabench gen`) from {SOURCE} with "
            f"{tool}. Do not edit.\n")


_UNPACKED_STRUCT = re.compile(r"\bstruct\s*\{")


def regblock(rm: RegMap) -> dict[Path, str]:
    """The register block and its package (peakrdl-regblock, AXI4-Lite, asynchronous
    active-low reset like the rest of the shell), structs packed for Yosys."""
    from peakrdl_regblock import RegblockExporter
    from peakrdl_regblock.cpuif.axi4lite import AXI4Lite_Cpuif_flattened

    with tempfile.TemporaryDirectory() as tmp:
        RegblockExporter().export(
            rm.node, tmp, cpuif_cls=AXI4Lite_Cpuif_flattened, module_name=SV_MODULE.stem,
            package_name=SV_PACKAGE.stem, address_width=BAR0_ADDR_BITS,
            default_reset_activelow=True, default_reset_async=True, err_if_bad_addr=True,
            err_if_bad_rw=False, reuse_hwif_typedefs=False)
        out = {}
        for path in (SV_MODULE, SV_PACKAGE):
            text = (Path(tmp) / path.name).read_text()
            out[path] = (_banner("//", "PeakRDL-regblock")
                         + "// Every struct is made packed for Yosys (vtabench/hwgen/regmap.py).\n"
                         + _UNPACKED_STRUCT.sub("struct packed {", text))
    return out


def c_header(rm: RegMap) -> str:
    from peakrdl_cheader.exporter import CHeaderExporter

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / C_HEADER.name
        CHeaderExporter().export(rm.node, str(path), reuse_typedefs=False)
        return _banner("//", "PeakRDL-cheader") + path.read_text()


def ipxact(rm: RegMap) -> str:
    from peakrdl_ipxact import IPXACTExporter

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / IPXACT_XML.name
        IPXACTExporter(vendor="vtabench", library="vta", version="1").export(rm.node, str(path))
        text = path.read_text()
    head, sep, rest = text.partition("?>\n")
    return f"{head}{sep}<!-- {_banner('', 'PeakRDL-ipxact').strip()} -->\n{rest}"


def write_html(out_dir: Path, rm: RegMap | None = None) -> Path:
    """The HTML register reference (peakrdl-html) in ``out_dir``; returns its index page."""
    from peakrdl_html import HTMLExporter

    rm = rm or compile_regmap()
    HTMLExporter().export(rm.node, str(out_dir))
    return out_dir / "index.html"


# ------------------------------------------------------------------------------------------------
# Python access layer and docs (templates over the compiled model)
# ------------------------------------------------------------------------------------------------
def py_module(rm: RegMap) -> str:
    consts: list[str] = []
    for r in rm.registers:
        consts.append(f"{r.name} = {r.offset:#04x}  # {r.access}")
        for f in r.fields:
            if f.name != "VALUE":
                consts += [f"{r.name}_{f.name} = {f.mask:#x}", f"{r.name}_{f.name}_LSB = {f.lsb}"]
    fields = []
    for r in rm.registers:
        fields.append(f"    {r.name!r}: {{")
        for f in r.fields:
            fields.append(f"        {f.name!r}: Field({f.lsb}, {f.width}, {f.access!r}, "
                          f"{f.reset!r}),")
        fields.append("    },")
    return render(
        "regs.py.tmpl", header=_banner("", "systemrdl-compiler").strip(),
        revision=str(rm.revision), bar0_bytes=f"{1 << BAR0_ADDR_BITS:#x}",
        constants="\n".join(consts),
        registers="\n".join(f"    {r.name!r}: {r.offset:#04x}," for r in rm.registers),
        access="\n".join(f"    {r.name!r}: {r.access!r}," for r in rm.registers),
        defined_bits="\n".join(f"    {r.name!r}: {r.defined_bits:#010x}," for r in rm.registers),
        fields="\n".join(fields), version=f"{rm.constant('VERSION'):#010x}")


def markdown(rm: RegMap) -> str:
    regs = []
    fields = []
    for r in rm.registers:
        regs.append(f"| 0x{r.offset:02X} | {r.name} | {r.access} | {r.upstream or 'extension'} "
                    f"| {r.doc} |")
        for f in r.fields:
            bits = f"[{f.msb}:{f.lsb}]" if f.width > 1 else f"[{f.lsb}]"
            reset = "-" if f.reset is None else str(f.reset)
            fields.append(f"| {r.name} | {f.name} | {bits} | {f.access} | {reset} | {f.doc} |")
    return render("registers.md.tmpl", header=_banner("", "systemrdl-compiler").strip(),
                  doc=rm.doc, revision=str(rm.revision),
                  access="\n".join(f"- `{k}`: {v}" for k, v in ACCESS_DOC.items()),
                  registers="\n".join(regs), fields="\n".join(fields))


def generated_files(rm: RegMap | None = None) -> dict[Path, str]:
    """The committed generated files, keyed by repository path."""
    rm = rm or compile_regmap()
    return {**regblock(rm), C_HEADER: c_header(rm), IPXACT_XML: ipxact(rm),
            PY_MODULE: py_module(rm), DOCS_PAGE: markdown(rm)}
