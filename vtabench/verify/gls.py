"""The gate-level netlist of the core (:mod:`vtabench.rtl.gls`) on the core bench, checked against
fsim (`vtabench gls`, `make gls`): the directed set and random regression programs (memory timing,
placement, injected faults), every DRAM image and outcome compared.
"""

from __future__ import annotations

from pathlib import Path

from vtabench.spec.config import Config
from vtabench.spec.program import Program
from vtabench.verify.directed import directed_programs
from vtabench.verify.regress.campaign import generate
from vtabench.verify.regress.diff import compare, golden_image, run_on_target


def programs_for(cfg: Config, count: int, seed: int, directed: bool = True) -> list[Program]:
    """The directed set (when ``directed``) and random regression programs 0..count-1 of
    ``seed`` (the programs ``vtabench regress --seed`` runs)."""
    progs = directed_programs(cfg) if directed else []
    return progs + [generate(cfg, seed, k) for k in range(count)]


def check(cfg: Config, netlist: Path, programs: list[Program], seed: int) -> list[str]:
    """Run ``programs`` on the netlist; one line per program that differs from fsim (its image or
    its outcome), empty when all match."""
    expected = [golden_image(cfg, p) for p in programs]
    images, problems = run_on_target(cfg, "rtl", programs, seed=seed,
                                     target_opts={"netlist": netlist})
    bad = []
    for p, want, got, problem in zip(programs, expected, images, problems, strict=True):
        diff = compare(cfg, "rtl", p, want, got)
        if problem or diff:
            bad.append(f"{p.name}: {problem or diff}")
    return bad
