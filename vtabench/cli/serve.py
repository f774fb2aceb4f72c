"""`vtabench serve`: run a simulated device that drivers in other processes attach to.

    vtabench serve --target rtl --config default --socket /tmp/vta.sock
    # Python: open_device("rtl", "default", attach="/tmp/vta.sock")
    # C:      VTA_SIM_SOCKET=/tmp/vta.sock ./my_driver   (docs/platform.md)

Drivers take turns: each one that connects resets the card with the DRAM size it asks for. The
server runs until Ctrl-C or SIGTERM (one line, exit 130 / 143; ``--once``: until its first
driver leaves). It prints one line when a driver attaches and one when it leaves.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    from vtabench.drivers.api import BACKENDS

    p = sub.add_parser("serve", help="run a simulated device for drivers in other processes")
    p.add_argument("--target", choices=sorted(t for t, s in BACKENDS.items() if s.server),
                   default="rtl")
    p.add_argument("--config", default="default", help="configuration name or JSON path")
    p.add_argument("--socket", type=Path, required=True, help="Unix socket path to listen on")
    p.add_argument("--link", help="PCIe preset: gen3x8, gen3x16 (default), gen4x16")
    p.add_argument("--clock-mhz", type=float, default=250.0, help="core clock (default 250)")
    p.add_argument("--seed", type=int, help="random seed (initial state, DRAM model; printed)")
    p.add_argument("--waves", nargs="?", const="auto", help="write an FST waveform (path)")
    p.add_argument("--stub", action="store_true", help="the bench's stand-in core (a memcpy)")
    p.add_argument("--once", action="store_true", help="stop when the first driver leaves")
    p.add_argument("--watch-pid", type=int,
                   help="stop, while no driver is connected, once this process is gone")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from vtabench.drivers.api import resolve, target
    from vtabench.spec.config import load_config

    serve = resolve(target(args.target).server)  # type: ignore[arg-type]
    return int(serve(load_config(args.config), args.socket, link=args.link,
                     clock_mhz=args.clock_mhz, seed=args.seed, waves=args.waves or False,
                     stub=args.stub, once=args.once, watch_pid=args.watch_pid))
