"""Text assembly: one instruction per line, the kind's name then ``field=value`` pairs.

Fields left out are 0; enum fields take names (``memory_type=INP``, ``alu_opcode=SHR``) or numbers;
numbers may be decimal or 0x-hex, imm may be negative; ``#`` starts a comment. The disassembler
prints every nonzero field plus the enum fields, so ``assemble(disassemble(p)) == p``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vtabench.spec.isa.insn import EncodeError, Insn, encode_insn, make_insn
from vtabench.spec.isa.layout import ENUM_FIELDS, Opcode, insn_layout

if TYPE_CHECKING:
    from vtabench.spec.config import Config


class AsmError(ValueError):
    """A line of assembly that does not parse; the message names the line and the token."""


def _parse_value(name: str, text: str, where: str) -> int:
    enum = ENUM_FIELDS.get(name)
    if enum is not None and not text.lstrip("-").isdigit():
        try:
            return enum[text.upper()].value
        except KeyError:
            raise AsmError(f"{where}: {name}={text} is not one of "
                           f"{', '.join(e.name for e in enum)}") from None
    try:
        return int(text, 0)
    except ValueError:
        raise AsmError(f"{where}: {name}={text} is not a number") from None


def parse_line(cfg: Config, line: str, where: str) -> Insn | None:
    """Parse one line; None for blank or comment-only lines."""
    text = line.split("#", 1)[0].strip()
    if not text:
        return None
    kind, *pairs = text.split()
    try:
        op = Opcode[kind.upper()]
    except KeyError:
        raise AsmError(f"{where}: unknown instruction {kind!r}; expected one of "
                       f"{', '.join(o.name for o in Opcode)}") from None
    names = insn_layout(cfg, op).names
    values: dict[str, int] = {"opcode": op.value}
    for pair in pairs:
        if "=" not in pair:
            raise AsmError(f"{where}: expected field=value, got {pair!r}")
        name, value = pair.split("=", 1)
        if name not in names or name == "opcode":
            raise AsmError(f"{where}: {op.name} has no field {name!r}; its fields: "
                           f"{', '.join(n for n in names if n != 'opcode')}")
        if name in values:
            raise AsmError(f"{where}: field {name} given twice")
        values[name] = _parse_value(name, value, where)
    try:
        return make_insn(values)
    except ValueError as exc:
        raise AsmError(f"{where}: {exc}") from None


def assemble(cfg: Config, source: str, filename: str = "<asm>") -> list[Insn]:
    """Parse assembly text; each instruction is range-checked by encoding it."""
    insns: list[Insn] = []
    for lineno, line in enumerate(source.splitlines(), 1):
        where = f"{filename}:{lineno}"
        insn = parse_line(cfg, line, where)
        if insn is None:
            continue
        try:
            encode_insn(cfg, insn, len(insns))
        except EncodeError as exc:
            raise AsmError(f"{where}: {exc}") from None
        insns.append(insn)
    return insns


def format_insn(cfg: Config, insn: Insn) -> str:
    parts = [Opcode(insn.opcode).name]
    for name, value in insn.kind_fields(cfg).items():
        if name == "opcode":
            continue
        if name in ENUM_FIELDS:
            parts.append(f"{name}={ENUM_FIELDS[name](value).name}")
        elif value:
            parts.append(f"{name}={int(value)}")
    return " ".join(parts)


def disassemble(cfg: Config, insns: list[Insn], numbered: bool = False) -> str:
    lines = []
    for i, insn in enumerate(insns):
        text = format_insn(cfg, insn)
        lines.append(f"{text:<100s} # {i}" if numbered else text)
    return "\n".join(lines) + ("\n" if lines else "")
