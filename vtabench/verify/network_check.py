"""`make sim`: the default workload on the RTL co-simulation, through the driver, against fsim.

The workload is the project's small residual network (vtabench.workloads.small_resnet: an int8
QDQ ONNX model with seeded weights), compiled by the graph compiler: the VTA layers become one
device program (one host-device synchronisation per inference), the rest runs on the CPU through
TVM's llvm target. One inference runs on the RTL behind the modeled PCIe platform (DMA in,
launch, MSI, DMA out) and on fsim; both must equal each other and the TVM-on-CPU reference of the
same int8 graph.
"""

from __future__ import annotations

import time

import numpy as np

from vtabench.spec.config import Config

INPUT_SHAPE = (1, 3, 16, 16)


def simulate(cfg: Config, *, link: str = "gen3x16", seed: int | None = None,
             waves: bool | str = False) -> tuple[bool, str]:
    """Run one inference on rtl and fsim; returns (passed, summary text)."""
    from vtabench.graph import compile_model, reference_package, run_package
    from vtabench.runtime.utilization import utilization_text
    from vtabench.workloads import small_resnet

    model = small_resnet()
    x = np.random.default_rng(0).standard_normal(INPUT_SHAPE).astype(np.float32)
    pkg = compile_model(model, cfg)
    [golden] = run_package(pkg, "fsim", [x])
    [ref] = run_package(reference_package(model, cfg), "fsim", [x])
    t0 = time.perf_counter()
    [rtl] = run_package(pkg, "rtl", [x], link=link, seed=seed, waves=waves)
    wall = time.perf_counter() - t0
    layers = pkg.manifest["layers"]
    macs = sum(int(layer["macs"]) for layer in layers.values())
    per = rtl.per_inference
    cycles = int(per.get("cycles", 0))
    ok_fsim = all(np.array_equal(a, b) for a, b in zip(rtl.outputs, golden.outputs, strict=True))
    ok_ref = all(np.array_equal(a, b) for a, b in zip(golden.outputs, ref.outputs, strict=True))
    lines = [
        f"vtabench sim: config {cfg.name} ({cfg.batch}x{cfg.block}x{cfg.block}, "
        f"{cfg.macs_per_cycle} MAC/cycle), small residual network {INPUT_SHAPE}: "
        f"{len(layers)} layers on VTA ({macs / 1e6:.2f} M MACs), the rest on the CPU",
        f"  rtl vs fsim:            {'PASS' if ok_fsim else 'FAIL'} (bit-exact outputs)",
        f"  fsim vs TVM llvm:       {'PASS' if ok_ref else 'FAIL'} (same int8 graph on the CPU)",
        f"  instructions:           {pkg.manifest['stats']['insns']}",
        f"  core cycles:            {cycles}",
        f"  MAC utilization:        {utilization_text(cfg, macs, cycles, 'the inference')}",
        f"  host-device syncs:      {per.get('syncs')} per inference "
        f"(weights uploaded once: {rtl.load.get('bytes_written', 0)} B)",
        f"  PCIe ({link}) per inference: host->device {per.get('pcie_h2d_bytes', 0)} B in "
        f"{per.get('pcie_h2d_ns', 0) / 1e3:.1f} us, device->host {per.get('pcie_d2h_bytes', 0)} B"
        f" in {per.get('pcie_d2h_ns', 0) / 1e3:.1f} us (modeled)",
        f"  wall time:              {wall:.1f} s on rtl (simulator start included), "
        f"{golden.wall_s * 1e3:.0f} ms on fsim",
    ]
    return ok_fsim and ok_ref, "\n".join(lines)
