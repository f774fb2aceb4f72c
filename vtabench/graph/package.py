"""The compiled model: :class:`Package`, saved and loaded as a ``.vtapkg`` zip (docs/graph.md)."""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass
from typing import Any

import numpy as np
import tvm

from vtabench.spec.isa.insn import INSN_BYTES

FORMAT = "vtabench-vtapkg-1"


@dataclass
class Program:
    """One device program: the encoded instructions of one sync."""

    wave: int
    insns: bytes
    layers: list[str]  # nodes it covers

    @property
    def count(self) -> int:
        return len(self.insns) // INSN_BYTES


@dataclass
class Package:
    """CPU functions (a Relax module, built for llvm at load time), the static device image
    (address -> bytes, addresses relative to the plan's base), the device programs (one per
    sync of an inference), the per-layer profiling programs, and the manifest describing them."""

    cfg_name: str
    manifest: dict[str, Any]
    cpu_mod: Any  # tvm IRModule with one function per CPU wave
    image: list[tuple[int, np.ndarray]]
    programs: list[Program]
    profile: list[Program]
    mem_bytes: int
    compile_s: float = 0.0

    def to_bytes(self) -> bytes:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            man = dict(self.manifest)
            man["format"] = FORMAT
            man["config"] = self.cfg_name
            man["mem_bytes"] = self.mem_bytes
            man["image"] = [{"addr": a, "nbytes": int(d.size), "file": f"image/{i}.bin"}
                            for i, (a, d) in enumerate(self.image)]
            man["programs"] = _program_entries(self.programs, "programs")
            man["profile"] = _program_entries(self.profile, "profile")
            z.writestr("manifest.json", json.dumps(man, indent=1))
            for i, (_, d) in enumerate(self.image):
                z.writestr(f"image/{i}.bin", d.tobytes())
            for i, p in enumerate(self.programs):
                z.writestr(f"programs/{i}.bin", p.insns)
            for i, p in enumerate(self.profile):
                z.writestr(f"profile/{i}.bin", p.insns)
            z.writestr("cpu.json", tvm.ir.save_json(self.cpu_mod))
        return buf.getvalue()

    def save(self, path: Any) -> None:
        with open(path, "wb") as f:
            f.write(self.to_bytes())

    @classmethod
    def from_bytes(cls, data: bytes) -> Package:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            man = json.loads(z.read("manifest.json"))
            if man.get("format") != FORMAT:
                raise ValueError(f"not a {FORMAT} package (format {man.get('format')!r})")
            image = [(e["addr"], np.frombuffer(z.read(e["file"]), np.uint8).copy())
                     for e in man["image"]]
            progs = [Program(e["wave"], z.read(e["file"]), e["layers"]) for e in man["programs"]]
            prof = [Program(e["wave"], z.read(e["file"]), e["layers"]) for e in man["profile"]]
            cpu = tvm.ir.load_json(z.read("cpu.json").decode())
        return cls(man["config"], man, cpu, image, progs, prof, man["mem_bytes"])

    @classmethod
    def load(cls, path: Any) -> Package:
        with open(path, "rb") as f:
            return cls.from_bytes(f.read())


def _program_entries(programs: list[Program], folder: str) -> list[dict[str, Any]]:
    return [{"wave": p.wave, "layers": p.layers, "count": p.count, "file": f"{folder}/{i}.bin"}
            for i, p in enumerate(programs)]
