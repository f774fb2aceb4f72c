"""`vtabench regress --networks ...`: whole networks on every (configuration, target), as tasks.

For each (network, configuration) one task compiles the generated network
(:mod:`vtabench.workloads`) with the graph compiler and runs its integer reference (the same int8
graph with every operator on the CPU, :func:`vtabench.graph.reference_package`) on a seeded
input; then one task per target runs the compiled package and compares its outputs with the
reference exactly. The tasks run on the same executor as the random programs: the local process
pool or a Dask cluster. A compiled package travels from its compile task to its target tasks
through the client (small_resnet's is a few kB, resnet18's about 12 MB).
"""

from __future__ import annotations

import time
import warnings
import xml.etree.ElementTree as ET
from concurrent.futures import Executor, Future, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from vtabench.spec.config import Config, load_config
from vtabench.workloads import WORKLOADS


@dataclass
class Prepared:
    """A compiled network, its input and its reference outputs (what a target task needs)."""

    network: str
    config: str
    package: bytes
    inputs: list[np.ndarray]
    reference: list[np.ndarray]
    seconds: float  # compile + reference


@dataclass
class NetworkResult:
    network: str
    config: str
    target: str
    seconds: float
    problem: str | None = None  # None: outputs equal the reference
    cycles: int | None = None  # core cycles of the inference (rtl)

    @property
    def name(self) -> str:
        return f"{self.network}.{self.config}.{self.target}"


def model_input(model: object, seed: int) -> np.ndarray:
    """A seeded float input of the model's (first) input shape."""
    dims = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]  # type: ignore[attr-defined]
    return np.random.default_rng([seed, 0]).standard_normal(dims).astype(np.float32)


def prepare(network: str, cfg: Config, seed: int) -> Prepared:
    """Task: compile ``network`` for ``cfg``, run its reference on the seeded input."""
    from vtabench.graph import compile_model, reference_package, run_package

    t0 = time.monotonic()
    model = WORKLOADS[network]()
    x = model_input(model, seed)
    pkg = compile_model(model, cfg)
    [ref] = run_package(reference_package(model, cfg), "fsim", [x])
    return Prepared(network, cfg.name, pkg.to_bytes(), [x], ref.outputs, time.monotonic() - t0)


def compare(outputs: Sequence[np.ndarray], reference: Sequence[np.ndarray]) -> str | None:
    """None when equal; else where the first output differs."""
    if len(outputs) != len(reference):
        return f"{len(outputs)} outputs, the reference has {len(reference)}"
    for k, (got, ref) in enumerate(zip(outputs, reference)):
        if got.shape != ref.shape:
            return f"output {k}: shape {got.shape}, the reference's {ref.shape}"
        diff = np.flatnonzero(got != ref)
        if diff.size:
            i = int(diff[0])
            return (f"output {k}: {diff.size} of {ref.size} elements differ, first at flat index "
                    f"{i}: {got.flat[i]} (reference {ref.flat[i]})")
    return None


def run_target(prep: Prepared, target: str, seed: int) -> NetworkResult:
    """Task: run the compiled package on ``target`` and compare with the reference."""
    from vtabench.drivers.api import BACKENDS
    from vtabench.graph import Package, run_package

    t0 = time.monotonic()
    opts = {"seed": seed} if "seed" in BACKENDS[target].options else {}
    try:
        [res] = run_package(Package.from_bytes(prep.package), target, prep.inputs, **opts)
    except Exception as exc:  # noqa: BLE001 - a failing target is a result, not a crash
        return NetworkResult(prep.network, prep.config, target, time.monotonic() - t0,
                             f"{type(exc).__name__}: {exc}"[:2000])
    cycles = res.per_inference.get("cycles")
    return NetworkResult(prep.network, prep.config, target, time.monotonic() - t0,
                         compare(res.outputs, prep.reference),
                         int(cycles) if cycles is not None else None)


def check_networks(names: Sequence[str]) -> None:
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        raise ValueError(f"--networks: unknown network(s) {', '.join(unknown)}; expected "
                         f"{', '.join(sorted(WORKLOADS))}")


def regress_networks(networks: Sequence[str], configs: Sequence[str], targets: Sequence[str],
                     seed: int, executor: Executor,
                     progress: Callable[[str], None] = print) -> list[NetworkResult]:
    """Every (network, configuration, target) on ``executor``; results in that order."""
    check_networks(networks)
    cfgs = [load_config(c) for c in configs]
    total = len(networks) * len(configs) * len(targets)
    progress(f"regress networks: {', '.join(networks)} x configs {', '.join(configs)} x targets "
             f"{', '.join(targets)}: {total} task(s), seed {seed}")
    t0 = time.monotonic()
    preps: dict[Future[Prepared], tuple[str, str]] = {
        executor.submit(prepare, n, c, seed): (n, c.name) for n in networks for c in cfgs}
    runs: list[Future[NetworkResult]] = []
    results: list[NetworkResult] = []
    for fut in as_completed(preps):
        network, config = preps[fut]
        try:
            prep = fut.result()
        except Exception as exc:  # noqa: BLE001 - every target of it fails with the reason
            why = f"compile or reference failed: {type(exc).__name__}: {exc}"[:2000]
            results += [NetworkResult(network, config, t, 0.0, why) for t in targets]
            continue
        progress(f"  compiled {network} for {config} ({prep.seconds:.0f} s), "
                 f"{time.monotonic() - t0:.0f} s")
        with warnings.catch_warnings():
            # Dask warns of a task argument of megabytes (resnet18's package, 11 MB): a few
            # tasks per run, sent once each; nothing to act on.
            warnings.filterwarnings("ignore", "Sending large graph", UserWarning)
            runs += [executor.submit(run_target, prep, t, seed) for t in targets]
    for fut in as_completed(runs):
        r = fut.result()
        results.append(r)
        progress(f"  {r.name}: {'PASS' if r.problem is None else 'FAIL'} ({r.seconds:.0f} s), "
                 f"{time.monotonic() - t0:.0f} s")
    order = {(n, c.name, t): k for k, (n, c, t) in enumerate(
        (n, c, t) for n in networks for c in cfgs for t in targets)}
    return sorted(results, key=lambda r: order[(r.network, r.config, r.target)])


def write_junit(results: Sequence[NetworkResult], seed: int, path: Path) -> None:
    suite = ET.Element("testsuite", name="regress-networks", tests=str(len(results)),
                       failures=str(sum(1 for r in results if r.problem)), errors="0",
                       time=f"{sum(r.seconds for r in results):.3f}")
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="seed", value=str(seed))
    for r in results:
        case = ET.SubElement(suite, "testcase", classname=f"networks.{r.config}",
                             name=f"{r.network}.{r.target}", time=f"{r.seconds:.3f}")
        if r.problem:
            ET.SubElement(case, "failure", message=r.problem[:300]).text = r.problem
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(suite).write(path, encoding="unicode", xml_declaration=True)


def summary(results: Sequence[NetworkResult], seed: int) -> str:
    bad = [r for r in results if r.problem]
    lines = [f"regress networks: {len(results) - len(bad)} passed, {len(bad)} failed of "
             f"{len(results)} (network, config, target) tasks (seed {seed})"]
    for r in results:
        cycles = f", {r.cycles} core cycles" if r.cycles else ""
        lines.append(f"  {'PASS' if r.problem is None else 'FAIL'} {r.name} "
                     f"({r.seconds:.1f} s{cycles})" + (f": {r.problem}" if r.problem else ""))
    return "\n".join(lines)
