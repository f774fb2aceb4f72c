"""The whole package as one Relax function on TVM's VM: CPU waves are the package's Relax
functions (llvm), each VTA wave is ``R.call_dps_packed("vtabench.graph.<id>.wave<w>", ...)``,
a destination-passing packed function registered with ``tvm.register_global_func`` that does the
wave's copies to VTA (pack + write), runs its device program(s) and does its copies back (read +
unpack into the VM's output tensors).

    vm = RelaxVMRunner(pkg, dev)        # dev: an open driver device
    y = vm(x)                           # one vm["main"] call per inference

Same device traffic as :class:`~vtabench.graph.execute.Executor` (it uses one underneath for the
loaded image, programs and counters).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import tvm
from tvm import relax

from vtabench.graph.execute import Executor

_ids = itertools.count()


class RelaxVMRunner:
    def __init__(self, pkg: Any, dev: Any) -> None:
        self.ex = Executor(pkg, dev)
        self.pkg = pkg
        man = pkg.manifest
        self.prefix = f"vtabench.graph.{next(_ids)}"
        self.nodes = nodes = {n["name"]: n for n in man["nodes"]}
        waves = sorted({p.wave for p in pkg.programs})
        cpu = {f["wave"]: f for f in man["cpu_functions"]}
        units = man["units"]
        # per VTA wave: copies in (host sources) and copies out (VTA sources)
        wave_io: dict[int, tuple[list[str], list[str]]] = {}
        for w in waves:
            vnodes = {u for p in pkg.programs if p.wave == w for u in p.layers}
            ins = [u for u in units if nodes[u]["op"] == "copy" and nodes[u]["device"] == "vta"
                   and any(u in nodes[v]["inputs"] for v in vnodes)]
            outs = [u for u in units if nodes[u]["op"] == "copy" and nodes[u]["device"] == "cpu"
                    and nodes[u]["inputs"][0] in vnodes]
            wave_io[w] = (ins, outs)
            tvm.register_global_func(f"{self.prefix}.wave{w}", self._wave_fn(w, ins, outs),
                                     override=True)
        mod = self.pkg.cpu_mod
        bb = relax.BlockBuilder(mod)
        x_in = [relax.Var(i["name"], relax.TensorType(i["shape"], i["dtype"]))
                for i in man["inputs"]]
        with bb.function("main", x_in):
            val: dict[str, Any] = {i["name"]: v for i, v in zip(man["inputs"], x_in)}
            nw = max([*cpu, *waves]) + 1 if (cpu or waves) else 0
            for w in range(nw):
                if w in cpu:
                    f = cpu[w]
                    gv = bb.get().get_global_var(f["name"])
                    r = bb.emit(relax.Call(gv, [val[p] for p in f["params"]]))
                    if len(f["outputs"]) == 1:
                        val[f["outputs"][0]] = r
                    else:
                        for k, o in enumerate(f["outputs"]):
                            val[o] = bb.emit(relax.TupleGetItem(r, k))
                if w in wave_io:
                    ins, outs = wave_io[w]
                    tys = [relax.TensorType(nodes[o]["shape"], nodes[o]["dtype"]) for o in outs]
                    r = bb.emit(relax.op.call_dps_packed(
                        f"{self.prefix}.wave{w}",
                        relax.Tuple([val[nodes[i]["inputs"][0]] for i in ins]),
                        tys if len(tys) != 1 else tys[0]))
                    if len(outs) == 1:
                        val[outs[0]] = r
                    else:
                        for k, o in enumerate(outs):
                            val[o] = bb.emit(relax.TupleGetItem(r, k))
            res = [val[o["name"]] for o in man["outputs"]]
            bb.emit_func_output(res[0] if len(res) == 1 else relax.Tuple(res))
        self.mod = bb.get()
        self.vm = relax.VirtualMachine(tvm.compile(self.mod, target="llvm"), tvm.cpu())

    def _wave_fn(self, w: int, ins: list[str], outs: list[str]) -> Any:
        ex = self.ex

        def fn(*args: Any) -> None:
            for name, a in zip(ins, args[:len(ins)], strict=True):
                ex.copy_in(name, a.numpy())
            ex.run_wave(w)
            for name, o in zip(outs, args[len(ins):], strict=True):
                o.copyfrom(ex.copy_out(name, tuple(o.shape)))
        return fn

    def __call__(self, *inputs: np.ndarray) -> list[np.ndarray]:
        args = [tvm.runtime.tensor(np.ascontiguousarray(x, dtype=np.float32)) for x in inputs]
        r = self.vm["main"](*args)
        if len(self.pkg.manifest["outputs"]) == 1:
            return [r.numpy()]
        return [t.numpy() for t in r]
