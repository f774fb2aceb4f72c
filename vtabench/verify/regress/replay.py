"""A saved failure that replays as it failed (issue #31 item 5).

Beside a failing program's NAME.s, NAME.bin and NAME.dram.bin, :func:`bench_record` writes
NAME.json: everything else the bench used, from the :class:`~vtabench.spec.program.Program`
record (DRAM knobs: memory timing and injected faults; placement; cycle bound; expected
outcomes; origin: what the generator chose, run seed and index), the bench's own seed (the DRAM
model's back-pressure), the configuration, the targets, their options (an RTL mutant's
:class:`~vtabench.rtl.verilator.Mutation` included, so a mutant's failure replays on the mutant)
and the commit of the checkout.
:func:`load_failure` reads the four files back into a Program and :func:`replay` reruns it on
each target's bench (the core bench for rtl, through :func:`run_on_target`, as the regression
did) against fsim, optionally writing waves and a GTKWave save file; :func:`failure_waves` does
that for the rtl target of failures a regression just saved (``regress --waves-on-fail``).
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from vtabench.rtl.verilator import Mutation
from vtabench.spec.config import Config, load_config
from vtabench.spec.contracts.errors import ErrorCode
from vtabench.spec.isa.insn import decode_program
from vtabench.spec.program import Origin, Outcome, Placement, Program
from vtabench.verify.regress.diff import compare, golden_image, run_on_target

FORMAT = 1


def checkout_commit() -> str | None:
    """The commit of the checkout this package runs from (``+dirty`` with local changes), or
    None outside a git checkout."""
    root = Path(__file__).resolve().parents[3]
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "hdl",
                                "vtabench", "tb", "opencl", "drivers"], capture_output=True,
                               text=True, timeout=30, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+dirty" if dirty else "")


def _outcome(o: Outcome | None) -> dict[str, Any] | None:
    if o is None:
        return None
    return {"error": o.error.name,
            "indices": None if o.indices is None else [int(i) for i in o.indices]}


#: Target options that name a run's own scratch files, not part of its setup.
SCRATCH_OPTS = frozenset({"coverage", "trace"})


def _opts_to_json(opts: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in opts.items():
        if key in SCRATCH_OPTS:
            continue
        if isinstance(value, Mutation):
            value = {"file": value.file, "old": value.old, "new": value.new}
        elif isinstance(value, Path):
            value = str(value)
        out[key] = value
    return out


def _opts_from_json(opts: dict[str, Any]) -> dict[str, Any]:
    out = dict(opts)
    if isinstance(out.get("mutation"), dict):
        out["mutation"] = Mutation(**out["mutation"])
    return out


def bench_record(cfg: Config, prog: Program, seed: int, targets: list[str],
                 target_opts: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """What the bench used for ``prog`` beyond its stream and image (NAME.json)."""
    origin = prog.origin or Origin()
    return {"format": FORMAT, "name": prog.name, "config": cfg.name, "seed": seed,
            "targets": list(targets),
            "target_opts": {t: _opts_to_json(o or {}) for t, o in (target_opts or {}).items()},
            "knobs": dict(prog.knobs),
            "placement": asdict(prog.placement),
            "max_cycles": prog.max_cycles,
            "expect": {t: _outcome(o) for t, o in prog.expect.items()},
            "origin": {"kind": origin.kind, "seed": origin.seed, "index": origin.index},
            "commit": checkout_commit()}


@dataclass
class SavedFailure:
    cfg: Config
    program: Program
    record: dict[str, Any]
    where: Path


def _find_record(path: Path) -> Path:
    if path.is_dir():
        found = sorted(path.glob("*.json"))
        if len(found) != 1:
            raise ValueError(f"{path}: expected one saved failure (NAME.json) in the folder, "
                             f"found {len(found)}; name the .json")
        return found[0]
    if path.suffix != ".json" or not path.is_file():
        raise ValueError(f"{path}: not a saved failure (a folder or its NAME.json)")
    return path


def load_failure(path: Path) -> SavedFailure:
    """The saved failure at ``path`` (its folder, when it holds one, or its NAME.json)."""
    rec_path = _find_record(path)
    try:
        rec = json.loads(rec_path.read_text())
        name = rec["name"]
        cfg = load_config(rec["config"])
        code = (rec_path.parent / f"{name}.bin").read_bytes()
        dram = np.frombuffer((rec_path.parent / f"{name}.dram.bin").read_bytes(), np.uint8).copy()
        try:
            insns = decode_program(cfg, code)
        except ValueError:  # an illegal stream: the targets see its code, fsim does not run it
            insns = []
        o = rec["origin"]
        prog = Program(name, insns, dram, code=code, placement=Placement(**rec["placement"]),
                       knobs={k: int(v) for k, v in rec["knobs"].items()},
                       max_cycles=rec["max_cycles"],
                       expect={t: None if e is None else Outcome(
                           ErrorCode[e["error"]],
                           None if e["indices"] is None else tuple(e["indices"]))
                           for t, e in rec["expect"].items()},
                       origin=Origin(o["kind"], o["seed"], o["index"]))
    except (OSError, KeyError, TypeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{rec_path}: not a readable saved failure ({type(exc).__name__}: "
                         f"{exc})") from None
    return SavedFailure(cfg, prog, rec, rec_path.parent)


def replay(saved: SavedFailure, waves: Path | None = None,
           targets: Sequence[str] | None = None) -> dict[str, str | None]:
    """Rerun the saved program on each of its targets but fsim (or those of ``targets``), with
    its bench seed, knobs and placement; target -> what is wrong (None: it passed). ``waves``:
    the rtl run writes its waves there (the cocotb bench) and a GTKWave save file beside them."""
    cfg, prog, rec = saved.cfg, saved.program, saved.record
    expected = golden_image(cfg, prog)
    out: dict[str, str | None] = {}
    for target in (t for t in rec["targets"]
                   if t != "fsim" and (targets is None or t in targets)):
        opts = _opts_from_json(rec["target_opts"].get(target) or {})
        if waves is not None and target == "rtl":
            opts["waves"] = waves
        images, problems = run_on_target(cfg, target, [prog], seed=int(rec["seed"]),
                                         target_opts=opts)
        m = compare(cfg, target, prog, expected, images[0])
        out[target] = problems[0] or (m.describe() if m is not None else None)
    if waves is not None and "rtl" in out:
        from vtabench.report.gtkw import find_waves, write_gtkw

        write_gtkw(find_waves(waves))
    return out


def failure_waves(save_dir: Path, names: Sequence[str]) -> list[tuple[Path, str | None]]:
    """Waves of the saved failures ``names`` (NAME.json in ``save_dir``): each reruns on the rtl
    target's cocotb bench with waves on, NAME.fst (or .vcd) and NAME.gtkw beside its other
    files; per failure, the waves' path and the rerun's rtl verdict (None: it passed there)."""
    from vtabench.report.gtkw import find_waves

    out = []
    for name in names:
        saved = load_failure(save_dir / f"{name}.json")
        waves = save_dir / f"{name}.fst"
        verdict = replay(saved, waves, targets=["rtl"])
        out.append((find_waves(waves), verdict.get("rtl")))
    return out
