"""Run a :class:`~vtabench.graph.package.Package` on a target through the driver API.

Per model: the static image (packed weights, biases, micro-op kernels) and the programs are
written to the device once. Per inference: the CPU functions run through TVM's llvm target (one
Relax VM), each copy to VTA packs a host int8 tensor and writes it, each device program runs
(one sync per wave of merged VTA nodes), each copy back reads and unpacks. Everything that
touches the device goes through a :class:`~vtabench.graph.counting.CountingDevice`, which counts
syncs, bytes and cycles.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vtabench.drivers.api import Device
from vtabench.graph.counting import CountingDevice
from vtabench.graph.im2col import im2col, im2col_args
from vtabench.graph.pack import pack_act, unpack_act
from vtabench.graph.package import Package
from vtabench.runtime.utilization import mac_utilization
from vtabench.spec.isa.insn import decode_program, encode_program
from vtabench.spec.isa.layout import Opcode, mem_elem_bytes


def relocate(cfg: Any, insns: bytes, base: int) -> bytes:
    """Shift every DRAM address of a program by ``base`` bytes (the plan starts at 0)."""
    if base == 0:
        return insns
    prog = decode_program(cfg, insns)
    for i in prog:
        if i.opcode in (Opcode.LOAD, Opcode.STORE) and (i.x_size and i.y_size):
            eb = mem_elem_bytes(cfg, i.memory_type)
            if base % eb:
                raise ValueError(f"base {base:#x} not aligned to {eb}-byte elements")
            i.dram_base += base // eb
    return encode_program(cfg, prog)


def draw_bar(i: int, n: int, what: str, t0: float) -> None:
    """A one-line progress bar on stderr (only when stderr is a terminal)."""
    if not sys.stderr.isatty():
        return
    w = 30
    k = int(w * i / max(n, 1))
    sys.stderr.write(f"\r[{'#' * k}{'.' * (w - k)}] {i}/{n} {time.perf_counter() - t0:6.1f} s "
                     f"{what[:44]:<44}")
    if i == n:
        sys.stderr.write("\n")
    sys.stderr.flush()


@dataclass
class Result:
    outputs: list[np.ndarray]
    wall_s: float
    per_inference: dict[str, Any]
    layers: list[dict[str, Any]] = field(default_factory=list)
    load: dict[str, Any] = field(default_factory=dict)
    target: str = ""


class Executor:
    """A package loaded on an open device (static image and programs written once)."""

    def __init__(self, pkg: Package, dev: Device, progress: Any = False) -> None:
        import tvm
        from tvm import relax

        self.pkg = pkg
        self.cfg = dev.cfg
        self.dev = dev if isinstance(dev, CountingDevice) else CountingDevice(dev)
        self.progress = progress  # False, True (a bar on stderr) or a callable(i, n, what)
        self._t0 = t0 = time.perf_counter()  # start of the current run (the bar's clock)
        man = pkg.manifest
        self.vm = None
        if man["cpu_functions"]:
            ex = tvm.compile(pkg.cpu_mod, target="llvm")
            self.vm = relax.VirtualMachine(ex, tvm.cpu())
        self.cpu_compile_s = time.perf_counter() - t0
        c0 = self.dev.counts.snapshot()
        self.base = 0
        self.progs: list[tuple[int, int]] = []
        self.prof: list[tuple[int, int]] = []
        if pkg.programs or pkg.image:
            self.base = self.dev.alloc(max(man["plan_bytes"], 64), align=4096)
            for addr, data in pkg.image:
                self.dev.write(self.base + addr, data)
            for plist, out in ((pkg.programs, self.progs), (pkg.profile, self.prof)):
                for p in plist:
                    code = relocate(self.cfg, p.program.encoded(self.cfg), self.base)
                    a = self.dev.alloc(len(code), align=64)
                    self.dev.write(a, np.frombuffer(code, np.uint8))
                    out.append((a, p.program.count))
        self.load = self.dev.counts.minus(c0)
        self.load["wall_s"] = time.perf_counter() - t0
        self.tensors = man["tensors"]
        self.nodes = {n["name"]: n for n in man["nodes"]}
        self._cpu_by_wave = {f["wave"]: f for f in man["cpu_functions"]}
        self._wave_of = {u: p.wave for p in pkg.programs for u in p.layers}
        self._wave_of.update({u: f["wave"] for f in man["cpu_functions"] for u in f["nodes"]})

    def copy_in(self, name: str, x: np.ndarray) -> None:
        """Write activation ``x`` packed into the device tensor ``name`` (a copy node's, or a VTA
        operator's output when a comparison feeds a layer alone), in im2col form where the copy
        says so (:mod:`vtabench.graph.im2col`)."""
        taps = im2col_args(self.nodes[name])
        if taps is not None:
            x = im2col(x, **taps)
        self.dev.write(self.base + self.tensors[name]["addr"], pack_act(x, self.cfg))

    def copy_out(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """Read back and unpack the device tensor that copy node ``name`` takes to the host."""
        t = self.tensors[self.nodes[name]["inputs"][0]]
        return unpack_act(self.dev.read(self.base + t["addr"], t["nbytes"]), shape, self.cfg)

    def run_wave(self, w: int) -> None:
        """Run the device programs of wave ``w`` (one sync each)."""
        for (a, cnt), p in zip(self.progs, self.pkg.programs):
            if p.wave == w:
                self.dev.run(a, cnt, timeout_s=3600)

    def _bar(self, i: int, n: int, what: str) -> None:
        if not self.progress:
            return
        if callable(self.progress):
            self.progress(i, n, what)
            return
        draw_bar(i, n, what, self._t0)

    def run(self, inputs: list[np.ndarray], profile: bool = False) -> Result:
        import tvm

        man = self.pkg.manifest
        nodes = self.nodes
        env: dict[str, Any] = {}
        for spec, x in zip(man["inputs"], inputs):
            env[spec["name"]] = np.ascontiguousarray(x, dtype=spec["dtype"])
        c0 = self.dev.counts.snapshot()
        pcie0 = self._pcie()
        ns0 = self.dev.dev.modeled_ns()
        t0 = self._t0 = time.perf_counter()
        layer_rows: list[dict[str, Any]] = []
        done_cpu: set[int] = set()
        done_vta: set[int] = set()
        units = man["units"]
        for k, u in enumerate(units):
            self._bar(k, len(units), u)
            n = nodes[u]
            w = self._wave_of.get(u, -1)
            if n["op"] == "copy":
                if n["device"] == "vta":
                    self.copy_in(u, np.asarray(env[n["inputs"][0]]))
                else:
                    env[u] = self.copy_out(u, tuple(n["shape"]))
            elif n["device"] == "cpu":
                if w in done_cpu:
                    continue
                done_cpu.add(w)
                f = self._cpu_by_wave[w]
                args = [tvm.runtime.tensor(np.ascontiguousarray(env[p])) for p in f["params"]]
                res = self.vm[f["name"]](*args)
                outs = [res] if len(f["outputs"]) == 1 else list(res)
                for name, r in zip(f["outputs"], outs, strict=True):
                    env[name] = r.numpy()
            else:
                if w in done_vta:
                    continue
                done_vta.add(w)
                if profile and self.prof:
                    for (a, cnt), p in zip(self.prof, self.pkg.profile):
                        if p.wave != w:
                            continue
                        self._bar(k, len(units), f"profiling layer {p.layers[0]}")
                        cb = self.dev.counts.snapshot()
                        tb = time.perf_counter()
                        self.dev.run(a, cnt, timeout_s=3600)
                        d = self.dev.counts.minus(cb)
                        lay = man["layers"][p.layers[0]]
                        row = {"layer": p.layers[0], "shape": lay["shape"], "macs": lay["macs"],
                               "insns": cnt, "wall_s": time.perf_counter() - tb}
                        if self.dev.counts.has_cycles:
                            row["cycles"] = d["cycles"]
                            row["util"] = mac_utilization(lay["macs"], self.cfg.macs_per_cycle,
                                                          d["cycles"])
                        layer_rows.append(row)
                else:
                    self._bar(k, len(units), f"device programs of wave {w}")
                    self.run_wave(w)
        self._bar(len(units), len(units), "done")
        wall = time.perf_counter() - t0
        outs = [np.asarray(env[o["name"]]) for o in man["outputs"]]
        per = self.dev.counts.minus(c0)
        if not self.dev.counts.has_cycles:
            per.pop("cycles")
        per["copies"] = sum(1 for u in units if nodes[u]["op"] == "copy")
        pcie1 = self._pcie()
        if pcie0 and pcie1:  # the rtl platform's own PCIe counters (DMA and MMIO time)
            for key in ("h2d_bytes", "d2h_bytes", "h2d_ns", "d2h_ns", "mmio_ns"):
                per[f"pcie_{key}"] = pcie1.get(key, 0) - pcie0.get(key, 0)
        ns1 = self.dev.dev.modeled_ns()
        if ns0 is not None and ns1 is not None:  # the whole inference in the device model's time
            per["modeled_ns"] = ns1 - ns0
        clock_mhz = getattr(self.dev.dev, "clock_mhz", None)
        if clock_mhz and "cycles" in per:
            per["core_ns"] = per["cycles"] * 1000.0 / clock_mhz
        return Result(outs, wall, per, layer_rows, self.load)

    def _pcie(self) -> dict[str, Any] | None:
        f = getattr(self.dev.dev, "pcie_stats", None)
        return dict(f()) if f else None


def run_package(pkg: Package, target: str, inputs: list[np.ndarray], *, runs: int = 1,
                profile: bool = False, progress: bool = False, **dev_opts: Any
                ) -> list[Result]:
    """Open the target, load the package once, run ``runs`` inferences (plus a profiling run
    with per-layer programs when ``profile``). ``dev_opts`` go to the device (rtl: ``link``,
    ``seed``, ``waves``...)."""
    from vtabench.drivers import open_device

    if progress is True:
        draw_bar(0, 1, f"opening the {target} device", time.perf_counter())
    out = []
    with open_device(target, pkg.cfg_name, pkg.mem_bytes, **dev_opts) as dev:
        ex = Executor(pkg, dev, progress=progress)
        for k in range(runs + int(profile)):
            r = ex.run(inputs, profile=k == runs)
            r.target = target
            out.append(r)
    return out
