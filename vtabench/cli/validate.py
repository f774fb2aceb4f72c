"""`vtabench validate`: check a binary program against the spec's rules without running it.

    vtabench validate PROG.bin --dram DRAM.bin          # every rule (docs/isa.md section 5)
    vtabench validate PROG.bin --upstream-completion    # the stream rules + upstream's completion

Without ``--dram`` only the rules that need no DRAM image are checked (encoding, routing, FINISH,
the token protocol). ``--upstream-completion`` adds upstream's completion rule: no STORE may
execute after FINISH (upstream's cores report done when FINISH executes; docs/isa.md section 3).
Exit status 0 when the program passes, 1 (with the instruction index, field and rule) when not.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("validate", help="check PROG.bin against the spec's rules")
    p.add_argument("program", type=Path, help="binary instruction stream")
    p.add_argument("--config", default="default", help="configuration name or JSON path")
    p.add_argument("--dram", type=Path, help="device memory image from byte 0 (every rule)")
    p.add_argument("--upstream-completion", action="store_true",
                   help="also: no STORE can execute after FINISH (upstream's completion rule)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from vtabench.spec.config import load_config
    from vtabench.spec.validate import (ValidationError, decode_binary, validate_program,
                                        validate_stream)

    cfg = load_config(args.config)
    try:
        insns = decode_binary(cfg, args.program.read_bytes())
        if args.dram is not None:
            validate_program(cfg, insns, np.fromfile(args.dram, dtype=np.uint8),
                             upstream_completion=args.upstream_completion)
        else:
            validate_stream(cfg, insns, upstream_completion=args.upstream_completion)
    except ValidationError as exc:
        print(f"{args.program}: invalid: {exc}")
        return 1
    rules = "every rule" if args.dram is not None else "stream rules (no --dram)"
    extra = " and upstream's completion rule" if args.upstream_completion else ""
    print(f"{args.program}: valid: {len(insns)} instructions, {rules}{extra}")
    return 0
