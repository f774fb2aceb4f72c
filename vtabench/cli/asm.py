"""`vtabench asm FILE.s -o FILE.bin`: assemble text into a binary instruction stream."""

from __future__ import annotations

import argparse
from pathlib import Path

from vtabench.spec.config import load_config
from vtabench.spec.isa.asm import assemble
from vtabench.spec.isa.insn import encode_program


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("asm", help="assemble FILE.s into little-endian 16-byte instructions")
    p.add_argument("source", type=Path)
    p.add_argument("-o", "--output", type=Path, required=True)
    p.add_argument("--config", default="default", help="configuration name or JSON path")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    cfg = load_config(args.config)
    insns = assemble(cfg, args.source.read_text(), str(args.source))
    args.output.write_bytes(encode_program(cfg, insns))
    print(f"{args.output}: {len(insns)} instructions")
    return 0
