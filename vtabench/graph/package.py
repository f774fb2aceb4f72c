"""The compiled model: :class:`Package`, saved and loaded as a ``.vtapkg`` zip (docs/graph.md).

The manifest records the format and its version, the configuration (name, id and parameters),
the versions of vtabench and TVM that wrote it, each member's size and SHA-256, and its own
SHA-256 (over the manifest without that field). Loading checks all of it before using any byte
and raises :class:`PackageError` naming the first problem.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import tvm

import vtabench
from vtabench.spec.isa.insn import INSN_BYTES
from vtabench.spec.program import Program

FORMAT = "vtabench-vtapkg"
FORMAT_VERSION = 3
MANIFEST = "manifest.json"
CPU_MEMBER = "cpu.json"
_SEAL = "manifest_sha256"


class PackageError(ValueError):
    """A .vtapkg that is not a whole, unedited package for a known configuration."""


@dataclass
class WaveProgram:
    """One device program of a wave (one sync) and the nodes it covers. The program is its
    encoded stream only (``program.code``): its DRAM is the package's image."""

    wave: int
    layers: list[str]
    program: Program


def wave_program(wave: int, code: bytes, layers: list[str]) -> WaveProgram:
    """The record of the stream ``code`` of ``wave``, covering ``layers``."""
    name = f"wave{wave}:{','.join(layers)}"
    return WaveProgram(wave, layers, Program(name, [], np.zeros(0, np.uint8), code))


@dataclass
class Package:
    """CPU functions (a Relax module, built for llvm at load time), the static device image
    (address -> bytes, addresses relative to the plan's base), the device programs (one per
    sync of an inference), the per-layer profiling programs, and the manifest describing them."""

    cfg_name: str
    manifest: dict[str, Any]
    cpu_mod: Any  # tvm IRModule with one function per CPU wave
    image: list[tuple[int, np.ndarray]]
    programs: list[WaveProgram]
    profile: list[WaveProgram]
    mem_bytes: int
    compile_s: float = 0.0

    def to_bytes(self) -> bytes:
        from vtabench.spec.config import load_config

        cfg = load_config(self.cfg_name)
        members: dict[str, bytes] = {}
        for i, (_, d) in enumerate(self.image):
            members[f"image/{i}.bin"] = d.tobytes()
        for i, p in enumerate(self.programs):
            members[f"programs/{i}.bin"] = p.program.encoded(cfg)
        for i, p in enumerate(self.profile):
            members[f"profile/{i}.bin"] = p.program.encoded(cfg)
        members[CPU_MEMBER] = tvm.ir.save_json(self.cpu_mod).encode()
        man = dict(self.manifest)
        man.pop(_SEAL, None)
        man.update({
            "format": FORMAT, "format_version": FORMAT_VERSION,
            "config": self.cfg_name, "config_id": cfg.config_id, "config_params": cfg.as_dict(),
            "written_by": {"vtabench": vtabench.__version__, "tvm": tvm.__version__},
            "mem_bytes": self.mem_bytes,
            "image": [{"addr": a, "nbytes": int(d.size), "file": f"image/{i}.bin"}
                      for i, (a, d) in enumerate(self.image)],
            "programs": _program_entries(self.programs, "programs"),
            "profile": _program_entries(self.profile, "profile"),
            "members": {name: {"size": len(b), "sha256": hashlib.sha256(b).hexdigest()}
                        for name, b in members.items()},
        })
        man[_SEAL] = _manifest_digest(man)
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr(MANIFEST, json.dumps(man, indent=1))
            for name, b in members.items():
                z.writestr(name, b)
        return buf.getvalue()

    def save(self, path: Any) -> None:
        with open(path, "wb") as f:
            f.write(self.to_bytes())

    @classmethod
    def from_bytes(cls, data: bytes, config: str | None = None) -> Package:
        """Check and load a package; ``config`` (a name) refuses one built for another."""
        members = _read_members(data)
        man = _check_manifest(members)
        if config is not None and config != man["config"]:
            raise PackageError(f"built for configuration {man['config']}, not {config}")
        blobs = {name: members[name] for name in man["members"]}
        image = [(e["addr"], np.frombuffer(blobs[e["file"]], np.uint8).copy())
                 for e in man["image"]]
        progs = [wave_program(e["wave"], blobs[e["file"]], e["layers"]) for e in man["programs"]]
        prof = [wave_program(e["wave"], blobs[e["file"]], e["layers"]) for e in man["profile"]]
        try:
            cpu = tvm.ir.load_json(blobs[CPU_MEMBER].decode())
        except Exception as exc:  # TVM raises its own error types for a bad module
            raise PackageError(f"{CPU_MEMBER}: not a TVM module ({_first_line(exc)})") from exc
        return cls(man["config"], man, cpu, image, progs, prof, man["mem_bytes"])

    @classmethod
    def load(cls, path: Any, config: str | None = None) -> Package:
        """:meth:`from_bytes` on a file; errors are prefixed with the path."""
        data = Path(path).read_bytes()
        try:
            return cls.from_bytes(data, config)
        except PackageError as exc:
            raise PackageError(f"{path}: {exc}") from exc


def _program_entries(programs: list[WaveProgram], folder: str) -> list[dict[str, Any]]:
    return [{"wave": p.wave, "layers": p.layers, "count": p.program.count,
             "file": f"{folder}/{i}.bin"}
            for i, p in enumerate(programs)]


def _manifest_digest(man: dict[str, Any]) -> str:
    body = json.dumps({k: v for k, v in man.items() if k != _SEAL}, sort_keys=True)
    return hashlib.sha256(body.encode()).hexdigest()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _read_members(data: bytes) -> dict[str, bytes]:
    """Every member of the zip, read (so the zip's own CRCs are checked) or a PackageError."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            return {info.filename: z.read(info) for info in z.infolist()}
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError, NotImplementedError) as exc:
        raise PackageError(f"not a whole .vtapkg zip archive ({_first_line(exc)})") from exc


def _check_manifest(members: dict[str, bytes]) -> dict[str, Any]:
    """The manifest, checked field by field against the members and the configuration."""
    if MANIFEST not in members:
        raise PackageError(f"no {MANIFEST} member")
    try:
        man = json.loads(members[MANIFEST])
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise PackageError(f"{MANIFEST}: not valid JSON ({exc})") from exc
    if not isinstance(man, dict):
        raise PackageError(f"{MANIFEST}: not a JSON object")
    if man.get("format") != FORMAT:
        raise PackageError(f"{MANIFEST}: format {man.get('format')!r}, not {FORMAT!r}")
    if man.get("format_version") != FORMAT_VERSION:
        raise PackageError(f"{MANIFEST}: format version {man.get('format_version')!r}; this "
                           f"vtabench reads version {FORMAT_VERSION} (recompile the model)")
    if man.get(_SEAL) != _manifest_digest(man):
        raise PackageError(f"{MANIFEST} was edited: its SHA-256 does not match {_SEAL}")
    try:
        _check_config(man)
        _check_members(man, members)
        _check_layout(man)
    except (AttributeError, TypeError, KeyError) as exc:  # a forged manifest of the wrong shape
        raise PackageError(f"{MANIFEST}: malformed ({type(exc).__name__}: {exc})") from exc
    return man


def _check_config(man: dict[str, Any]) -> None:
    from vtabench.spec.config import ConfigError, load_config

    name = man.get("config")
    if not isinstance(name, str):
        raise PackageError(f"{MANIFEST}: config is {name!r}, not a configuration name")
    try:
        cfg = load_config(name)
    except ConfigError as exc:
        raise PackageError(f"built for configuration {name!r}, unknown here ({exc})") from exc
    params, here = man.get("config_params"), cfg.as_dict()
    if man.get("config_id") != cfg.config_id or params != here:
        if isinstance(params, dict) and params != here:
            key = sorted(k for k in params.keys() | here.keys() if params.get(k) != here.get(k))[0]
            what = f"{key} {params.get(key)!r}, here {here.get(key)!r}"
        else:
            what = f"id {man.get('config_id')!r}, here {cfg.config_id}"
        raise PackageError(f"built for a configuration named {name} whose parameters differ "
                           f"from this vtabench's {name} ({what}): recompile the model")


def _check_members(man: dict[str, Any], members: dict[str, bytes]) -> None:
    listed = man.get("members")
    if not isinstance(listed, dict) or CPU_MEMBER not in listed:
        raise PackageError(f"{MANIFEST}: no member table (or no {CPU_MEMBER} in it)")
    for name, meta in listed.items():
        if name not in members:
            raise PackageError(f"member {name} is missing")
        blob = members[name]
        if not isinstance(meta, dict) or len(blob) != meta.get("size"):
            raise PackageError(f"member {name} has {len(blob)} bytes, the manifest says "
                               f"{meta.get('size') if isinstance(meta, dict) else meta!r}")
        if hashlib.sha256(blob).hexdigest() != meta.get("sha256"):
            raise PackageError(f"member {name}: SHA-256 differs from the manifest's (corrupted)")
    extra = sorted(set(members) - set(listed) - {MANIFEST})
    if extra:
        raise PackageError(f"member {extra[0]} is not in the manifest")


def _check_layout(man: dict[str, Any]) -> None:
    """Image ranges inside device memory, programs whole instructions, every file listed."""
    mem = man.get("mem_bytes")
    if not isinstance(mem, int) or mem <= 0:
        raise PackageError(f"{MANIFEST}: mem_bytes {mem!r} is not a positive integer")
    sizes = {name: meta["size"] for name, meta in man["members"].items()}
    for i, e in enumerate(man.get("image", [])):
        where = f"{MANIFEST}: image[{i}]"
        addr, nbytes, file = e.get("addr"), e.get("nbytes"), e.get("file")
        if file not in sizes or sizes[file] != nbytes:
            raise PackageError(f"{where}: file {file!r} of {nbytes!r} bytes is not a member of "
                               f"that size")
        if not isinstance(addr, int) or addr < 0 or addr + nbytes > mem:
            raise PackageError(f"{where}: address {addr!r} + {nbytes} bytes is outside the "
                               f"{mem}-byte device memory")
    for key in ("programs", "profile"):
        for i, e in enumerate(man.get(key, [])):
            file = e.get("file")
            if file not in sizes or sizes[file] != e.get("count", -1) * INSN_BYTES:
                raise PackageError(f"{MANIFEST}: {key}[{i}]: file {file!r} does not hold "
                                   f"{e.get('count')!r} instructions")
