"""`vtabench configs [--json]`: the built-in configurations side by side, to pick one by.

Each row is one ``spec/configs/*.json`` as :mod:`vtabench.spec.config` loads it: the GEMM shape
(BATCH x BLOCK_IN x BLOCK_OUT, so the MACs per cycle), the on-chip buffers, the AXI data bus and
the configuration id a driver checks against the hardware.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from vtabench.spec.config import Config, builtin_config_names, config_path, load_config


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("configs", help="list the built-in configurations (GEMM shape, buffers, "
                       "bus width)")
    p.add_argument("--json", action="store_true", help="a JSON list, one object per configuration")
    p.set_defaults(func=run)


def describe(cfg: Config) -> dict[str, Any]:
    """What a user picks a configuration by, as plain values."""
    return {
        "name": cfg.name,
        "file": str(config_path(cfg.name)),
        "gemm": {"batch": cfg.batch, "block_in": cfg.block_in, "block_out": cfg.block_out},
        "macs_per_cycle": cfg.macs_per_cycle,
        "buffer_bytes": {"uop": 1 << cfg.log_uop_buff_size, "inp": 1 << cfg.log_inp_buff_size,
                         "wgt": 1 << cfg.log_wgt_buff_size, "acc": 1 << cfg.log_acc_buff_size},
        "buffer_depth": {"uop": cfg.uop_depth, "inp": cfg.inp_depth, "wgt": cfg.wgt_depth,
                         "acc": cfg.acc_depth},
        "axi_data_bits": cfg.axi_data_bits,
        "acc8_win_beats": cfg.acc8_win_beats,
        "config_id": f"0x{cfg.config_id:08x}",
    }


def _size(n: int) -> str:
    """Bytes in K / M (powers of 1024) when they divide evenly, as buffer sizes do."""
    for unit, scale in (("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{unit}"
    return str(n)


def table(rows: list[dict[str, Any]]) -> list[str]:
    head = (f"{'name':<10} {'GEMM BxBIxBO':>13} {'MAC/cyc':>8} {'uop':>6} {'inp':>6} "
            f"{'wgt':>6} {'acc':>6} {'bus bits':>9} {'acc8 beats':>11} {'config id':>11}")
    out = [head]
    for r in rows:
        g, b = r["gemm"], r["buffer_bytes"]
        shape = f"{g['batch']}x{g['block_in']}x{g['block_out']}"
        out.append(f"{r['name']:<10} {shape:>13} {r['macs_per_cycle']:>8} "
                   f"{_size(b['uop']):>6} {_size(b['inp']):>6} {_size(b['wgt']):>6} "
                   f"{_size(b['acc']):>6} {r['axi_data_bits']:>9} {r['acc8_win_beats']:>11} "
                   f"{r['config_id']:>11}")
    out += ["",
            "GEMM: BATCH x BLOCK_IN x BLOCK_OUT, the MACs of one cycle (MAC/cyc)",
            "uop, inp, wgt, acc: on-chip buffer bytes (K = 1024, M = 1024 K)",
            "bus bits: the AXI data bus; acc8 beats: LOAD ACC_8BIT's acc write window (bus beats)",
            "--config NAME picks one; --config PATH.json reads another file of the same keys"]
    return out


def run(args: argparse.Namespace) -> int:
    rows = [describe(load_config(name)) for name in builtin_config_names()]
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        print("\n".join(table(rows)))
    return 0
