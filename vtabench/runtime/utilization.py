"""MAC utilization: the one definition behind every figure of it (``vtabench sim``, ``vtabench
run``'s inference line and layer table, the timeline and breakdown pictures, the benchmarks).

    MAC utilization = useful MACs / (GEMM lanes x core cycles)

- GEMM lanes: BATCH x BLOCK_IN x BLOCK_OUT (``Config.macs_per_cycle``), the multiply-accumulates
  the array does in one cycle.
- core cycles: the core's cycle counter (``cycles_o``, which the driver reports as ``cycles`` and
  the pipeline trace as a run's length): every cycle from the launch (the first instruction
  fetch) to done (FINISH retired, the last STORE written), summed over the launches a figure is
  over: one inference's, or one layer's launch of the profiling run. Host time between launches
  (PCIe, the driver) is not in it. A window of a trace (a layer inside a batched program) has the
  cycles from its first compute instruction to the next window's
  (:func:`vtabench.report.breakdown.segment_breakdowns`).
- useful MACs: a network layer's multiply-accumulates (``macs`` of the package manifest: the
  channels as compiled, without the zero blocks a blockwise conv, an average pool, multiplies);
  for a raw program, which says nothing of padding, every MAC its GEMM micro-op iterations issue
  (:func:`gemm_iterations` x lanes; resetting GEMMs issue none).

The runtime lies below every user of it (graph, verify, report, cli, bench), hence this module's
place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vtabench.spec.isa.layout import Opcode

if TYPE_CHECKING:
    from vtabench.spec.config import Config
    from vtabench.spec.isa.insn import Insn

#: What the useful MACs are, by where they come from (the labels name it).
LAYER_MACS = "layer MACs"
ISSUED_MACS = "GEMM MACs issued"


def mac_utilization(macs: int, lanes: int, cycles: int) -> float:
    """``macs / (lanes x cycles)``, 0 for no cycles (see the module docstring)."""
    return macs / (lanes * cycles) if cycles > 0 else 0.0


def gemm_iterations(insn: Insn) -> int:
    """The array steps (BATCH x BLOCK_IN x BLOCK_OUT MACs each) one instruction issues: a GEMM's
    micro-op iterations; none for a resetting GEMM or any other instruction."""
    if insn.opcode != Opcode.GEMM or insn.reset_reg:
        return 0
    return insn.iter_out * insn.iter_in * max(0, insn.uop_end - insn.uop_bgn)


def definition(cfg: Config, macs: str = LAYER_MACS, cycles: str = "core cycles") -> str:
    """The formula with this configuration's lanes, for labels: what the MACs and the cycles
    are."""
    return f"{macs} / ({cfg.macs_per_cycle} lanes x {cycles})"


def utilization_text(cfg: Config, macs: int, cycles: int, over: str,
                     source: str = LAYER_MACS) -> str:
    """One figure with what it is over, to follow a "MAC utilization" label: ``47.7% (one
    inference: 2,689,536 layer MACs / (256 lanes x 22,026 core cycles))``."""
    util = mac_utilization(macs, cfg.macs_per_cycle, cycles)
    return (f"{100 * util:.1f}% ({over}: {macs:,} {source} / ({cfg.macs_per_cycle} lanes x "
            f"{cycles:,} core cycles))")
