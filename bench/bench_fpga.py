"""Benchmark: the FPGA implementation flow (docs/fpga.md), timed: synth_ecp5 + nextpnr-ecp5 of a
configuration (Fmax, resources, critical path) and synth_xilinx estimates, summary in JSON.

    python bench/bench_fpga.py                           # edge8 on LFE5UM5G-85F, default + cloud32 estimates
    python bench/bench_fpga.py --xilinx '' --json results/bench_fpga.json

The flow itself is vtabench.rtl.fpga, run by `vtabench fpga` (also `make fpga`); this runs that
command with the same arguments and prints the wall time of the whole run.
"""

from __future__ import annotations

import sys
import time

from vtabench.cli import main as vtabench_main


def main(argv: list[str] | None = None) -> int:
    t0 = time.monotonic()
    rc = vtabench_main(["fpga", *(argv or [])])
    print(f"bench_fpga: {time.monotonic() - t0:.0f} s (exit {rc})", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
