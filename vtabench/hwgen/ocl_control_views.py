"""The OpenCL control block: one data file (spec/contracts/ocl_control.json).

Views: the control-block section of the OpenCL header (:mod:`vtabench.hwgen.contracts`:
``VTA_CTRL_BYTES``, ``VTA_ABI_VERSION``, ``CTRL_<WORD>`` word indices, ``VTA_STATUS_<NAME>``,
``VTA_<CONSTANT>``), the Python module spec/contracts/ocl_control.py (the same names without the
``VTA_`` prefix) for the driver (:mod:`vtabench.drivers.opencl`) and the control-block
tables of docs/contracts.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from vtabench.hwgen.contract_data import (CONTRACTS_DIR, ContractError, Named, check_unique,
                                          generated_by, named_entries, need, need_int, need_name,
                                          read_contract)
from vtabench.hwgen.render import aligned, render

OCL_CONTROL_JSON = CONTRACTS_DIR / "ocl_control.json"
WRITERS = ("host", "kernel")
HEADER = generated_by(__name__, OCL_CONTROL_JSON)


@dataclass(frozen=True)
class Word:
    name: str
    index: int
    writer: str
    doc: str


@dataclass(frozen=True)
class ControlBlock:
    doc: str
    bytes: int
    abi_version: int
    abi_doc: str
    words: tuple[Word, ...]
    status: tuple[Named, ...]
    constants: tuple[Named, ...]


def load_control_block(path: Path = OCL_CONTROL_JSON) -> ControlBlock:
    raw = read_contract(path)
    where = path.name
    nbytes = need_int(raw, "bytes", where)
    if nbytes % 4 or not nbytes:
        raise ContractError(f"{where}: bytes {nbytes} is not a positive multiple of 4")
    words = []
    for i, entry in enumerate(need(raw, "words", list, where)):
        name = need_name(entry, f"{where}: words[{i}]")
        at = f"{where}: word {name}"
        w = Word(name, need_int(entry, "index", at), need(entry, "writer", str, at),
                 need(entry, "doc", str, at))
        if w.index >= nbytes // 4:
            raise ContractError(f"{at}: index {w.index} outside the {nbytes // 4} words")
        if w.writer not in WRITERS:
            raise ContractError(f"{at}: writer {w.writer!r} is not one of {list(WRITERS)}")
        words.append(w)
    check_unique([(w.name, w.index) for w in words], "word", where)
    return ControlBlock(need(raw, "doc", str, where), nbytes, need_int(raw, "abi_version", where),
                        need(raw, "abi_doc", str, where), tuple(words),
                        named_entries(raw, "status", where),
                        named_entries(raw, "constants", where))


def c_section(cb: ControlBlock) -> str:
    rows = [("#define VTA_CTRL_BYTES", f" {cb.bytes}u", "  /* bytes of the control block */"),
            ("#define VTA_ABI_VERSION", f" {cb.abi_version}u", "  /* CTRL_ABI_VERSION */")]
    rows += [(f"#define CTRL_{w.name}", f" {w.index}", f"  /* {w.writer}: {w.doc} */")
             for w in cb.words]
    rows += [(f"#define VTA_STATUS_{s.name}", f" {s.value}u", f"  /* {s.doc} */")
             for s in cb.status]
    rows += [(f"#define VTA_{c.name}", f" {c.value}u", f"  /* {c.doc} */") for c in cb.constants]
    return aligned(rows)


def py_module(cb: ControlBlock) -> str:
    words = aligned([(f"CTRL_{w.name} = {w.index}", f"  # {w.writer}: {w.doc}")
                     for w in cb.words])
    status = aligned([(f"STATUS_{s.name} = {s.value}", f"  # {s.doc}") for s in cb.status])
    consts = aligned([(f"{c.name} = {c.value}", f"  # {c.doc}") for c in cb.constants])
    return render("ocl_control.py.tmpl", header=HEADER, bytes=str(cb.bytes),
                  abi_version=str(cb.abi_version), words=words, status=status, constants=consts)


def markdown(cb: ControlBlock) -> str:
    words = "\n".join(f"| {w.index} | {4 * w.index} | CTRL_{w.name} | {w.writer} | {w.doc} |"
                      for w in cb.words)
    status = "\n".join(f"| {s.value} | STATUS_{s.name} | {s.doc} |" for s in cb.status)
    consts = "\n".join(f"- `{c.name}` = {c.value}: {c.doc}" for c in cb.constants)
    return render("ocl_control.md.tmpl", doc=cb.doc, bytes=str(cb.bytes),
                  abi_version=str(cb.abi_version), abi_doc=cb.abi_doc, words=words,
                  status=status, constants=consts)
