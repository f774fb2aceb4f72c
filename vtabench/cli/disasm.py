"""`vtabench disasm FILE.bin [--json]`: print a binary instruction stream as assembly or JSON."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from vtabench.spec.config import load_config
from vtabench.spec.isa.asm import disassemble
from vtabench.spec.isa.insn import decode_program, insn_to_dict


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("disasm", help="disassemble a binary instruction stream")
    p.add_argument("binary", type=Path)
    p.add_argument("--json", action="store_true", help="a JSON list, one object per instruction")
    p.add_argument("--config", default="default", help="configuration name or JSON path")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    cfg = load_config(args.config)
    insns = decode_program(cfg, args.binary.read_bytes())
    if args.json:
        print(json.dumps([insn_to_dict(cfg, i) for i in insns], indent=1))
    else:
        print(disassemble(cfg, insns, numbered=True), end="")
    return 0
