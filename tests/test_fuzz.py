"""Property-based fuzzing of the command line and the loaders (issue 16), with hypothesis.

Inputs: random byte edits (flips, overwrites, cuts, extensions) of an instruction stream, a DRAM
image, a .vtapkg (its members or the zip's raw bytes) and an ONNX file, and random configuration
JSON. The only allowed outcomes of the ``vtabench`` command given them: success with the correct
result (the same DRAM image as fsim run directly; the package's output unchanged; a config that
loads), or exactly one line on stderr and a non-zero exit. A traceback fails the test.

Profiles: ``short`` (the default, seconds, run by ``make test``) and ``long``
(``VTABENCH_FUZZ=long``, ``make fuzz``). fsim's per-instruction loop limit is lowered for the
fuzz so an edit that makes a long loop ends in its one-line error quickly; the limit's value is
tested in tests/test_robustness.py.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vtabench.cli import main
from vtabench.spec.config import KEY_LIMITS, load_config
from vtabench.spec.isa import encode_program
from vtabench.verify.directed import directed_programs

settings.register_profile("short", max_examples=15, deadline=None, derandomize=True,
                          suppress_health_check=list(HealthCheck))
settings.register_profile("long", max_examples=400, deadline=None,
                          suppress_health_check=list(HealthCheck))
PROFILE = os.environ.get("VTABENCH_FUZZ", "short")
settings.load_profile(PROFILE)

CFG = load_config("default")

#: A byte edit: (kind, position as a fraction of the length, bytes).
EDIT = st.tuples(st.sampled_from(["flip", "write", "cut", "extend"]),
                 st.floats(0, 1, allow_nan=False), st.binary(min_size=1, max_size=8))


def apply_edits(data: bytes, edits: list[tuple[str, float, bytes]]) -> bytes:
    buf = bytearray(data)
    for kind, where, blob in edits:
        at = min(int(where * len(buf)), max(len(buf) - 1, 0))
        if kind == "flip" and buf:
            buf[at] ^= blob[0] or 1
        elif kind == "write":
            buf[at:at + len(blob)] = blob
        elif kind == "cut":
            del buf[at:]
        else:
            buf[at:at] = blob
    return bytes(buf)


def outcome(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """Run the command; a non-zero exit must come with exactly one line on stderr."""
    capsys.readouterr()
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse's usage errors
        rc = int(exc.code or 0)
        capsys.readouterr()
        assert rc == 2
        return rc, ""
    out, err = capsys.readouterr()
    if rc != 0:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("vtabench "), err
    return rc, out


@pytest.fixture(autouse=True)
def short_loops(monkeypatch):
    monkeypatch.setattr("vtabench.fsim.core.MAX_INSN_ITERATIONS", 1 << 14)


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    prog = next(p for p in directed_programs(CFG) if p.name.startswith("gemm"))
    return encode_program(CFG, prog.insns), prog.dram.tobytes(), tmp_path_factory.mktemp("fz")


def _fsim_reference(code: bytes, dram: bytes) -> np.ndarray | None:
    """The DRAM image after running the program on fsim directly (None: it does not run)."""
    from vtabench.drivers import DeviceError, open_device
    from vtabench.drivers.api import PAGE_BYTES, mem_bytes_for, run_program
    from vtabench.spec.validate import validate_binary

    image = np.frombuffer(dram, np.uint8).copy()
    try:
        validate_binary(CFG, code, image)
        with open_device("fsim", CFG, mem_bytes_for(image.size, len(code), guard=PAGE_BYTES)) as d:
            run_program(d, code, image, 60, insn_align=PAGE_BYTES)
    except (ValueError, DeviceError, OSError):
        return None
    return image


def _exec(code: bytes, dram: bytes, folder: Path, capsys) -> None:
    (folder / "p.bin").write_bytes(code)
    (folder / "d.bin").write_bytes(dram)
    out = folder / "o.bin"
    out.unlink(missing_ok=True)
    rc, _ = outcome(["exec", "--insns", str(folder / "p.bin"), "--dram", str(folder / "d.bin"),
                     "--out", str(out), "--seed", "1", "--timeout", "30"], capsys)
    if rc == 0:
        expected = _fsim_reference(code, dram)
        assert expected is not None and np.array_equal(np.fromfile(out, np.uint8), expected)
    else:
        assert not out.exists()


@given(edits=st.lists(EDIT, min_size=1, max_size=4))
def test_fuzz_instruction_stream(program, capsys, edits):
    code, dram, folder = program
    _exec(apply_edits(code, edits), dram, folder, capsys)


@given(edits=st.lists(EDIT, min_size=1, max_size=4))
def test_fuzz_dram_image(program, capsys, edits):
    code, dram, folder = program
    _exec(code, apply_edits(dram, edits), folder, capsys)


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    from vtabench.graph import compile_model, run_package
    from vtabench.workloads import small_resnet

    folder = tmp_path_factory.mktemp("fzpkg")
    model = small_resnet(logits=True)
    (folder / "m.onnx").write_bytes(model.SerializeToString())
    pkg = compile_model(model, CFG)
    x = np.random.default_rng(2).normal(0, 1, (1, 3, 16, 16)).astype(np.float32)
    np.save(folder / "x.npy", x)
    [res] = run_package(pkg, "fsim", [x])
    return pkg.to_bytes(), folder, res.outputs[0]


def _run_package(data: bytes, folder: Path, expected: np.ndarray, capsys) -> None:
    (folder / "e.vtapkg").write_bytes(data)
    out = folder / "y.npy"
    out.unlink(missing_ok=True)
    rc, _ = outcome(["run", str(folder / "e.vtapkg"), "--input", str(folder / "x.npy"),
                     "--output", str(out), "--no-progress"], capsys)
    if rc == 0:
        assert np.array_equal(np.load(out), expected)


@pytest.mark.tvm
@given(edits=st.lists(EDIT, min_size=1, max_size=3), member=st.integers(0, 1000))
def test_fuzz_package_member(package, capsys, edits, member):
    data, folder, expected = package
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        members = {i.filename: z.read(i) for i in z.infolist()}
    name = sorted(members)[member % len(members)]
    members[name] = apply_edits(members[name], edits)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for n, blob in members.items():
            z.writestr(n, blob)
    _run_package(buf.getvalue(), folder, expected, capsys)


@pytest.mark.tvm
@given(edits=st.lists(EDIT, min_size=1, max_size=3))
def test_fuzz_package_zip_bytes(package, capsys, edits):
    data, folder, expected = package
    _run_package(apply_edits(data, edits), folder, expected, capsys)


@pytest.mark.tvm
@settings(max_examples=4 if PROFILE == "short" else 60)
@given(edits=st.lists(EDIT, min_size=1, max_size=3))
def test_fuzz_onnx_file(package, capsys, edits):
    _, folder, _ = package
    onnx_bytes = (folder / "m.onnx").read_bytes()
    (folder / "e.onnx").write_bytes(apply_edits(onnx_bytes, edits))
    out = folder / "e.vtapkg"
    out.unlink(missing_ok=True)
    rc, _ = outcome(["compile", str(folder / "e.onnx"), "-o", str(out), "--no-profile"], capsys)
    if rc == 0:
        from vtabench.graph.package import Package

        assert Package.load(out).cfg_name == CFG.name


CONFIG_VALUE = st.one_of(st.integers(-2, 40), st.booleans(), st.text(max_size=3), st.none(),
                         st.floats(allow_nan=True))


@given(values=st.dictionaries(st.sampled_from([*KEY_LIMITS, "NAME", "EXTRA"]), CONFIG_VALUE),
       base=st.booleans(), junk=st.binary(max_size=6))
def test_fuzz_config_json(program, capsys, values, base, junk):
    code, _, folder = program
    data = {**CFG.as_dict(), **values} if base else values
    text = json.dumps(data).encode() + (junk if junk and not base else b"")
    path = folder / "cfg.json"
    path.write_bytes(text)
    (folder / "p.bin").write_bytes(code)
    rc, out = outcome(["disasm", "--config", str(path), str(folder / "p.bin")], capsys)
    if rc == 0:
        cfg = load_config(path)
        assert len(out.strip().splitlines()) == len(code) // 16
        assert cfg.config_id == load_config(path).config_id
