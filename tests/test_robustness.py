"""Bad input and runaway programs end in one line and a non-zero exit (issue 16).

* Package integrity: a .vtapkg whose weight image is cut short, whose zip is truncated, that
  lacks a member, whose manifest has an out-of-range address, an edited configuration or invalid
  JSON, or that was built for another configuration, is refused by ``vtabench run`` with one line
  naming the problem (exit 2) before any run; the untouched package runs.
* Runaway programs: fsim stops a 16383 x 16383-iteration GEMM before allocating for it, and a
  run past its wall-clock timeout between instructions, with ``RunTimeoutError`` naming the
  instruction (``vtabench exec``: one line, exit 2, no output file); the OpenCL kernel (both
  variants) stops itself when the work budget of its timeout runs out, and the host raises the
  same error within the timeout + ``OVERRUN_S``; a device memory the host cannot hold is a
  ``DeviceError``, not numpy's ``MemoryError``.
* Signals: SIGINT and SIGTERM sent to ``vtabench exec`` mid-run print one line and exit 130 /
  143; on rtl the simulator (``vtabench serve --watch-pid``) ends and its /dev/shm folders go,
  and so they do when the command is killed with SIGKILL.
* examples/: matvec.s assembles, runs by ``vtabench exec`` on every target and its DRAM maker
  finds the expected result, as README.md shows.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from vtabench.cli import main
from vtabench.drivers import DeviceError, RunTimeoutError, open_device
from vtabench.drivers.api import run_program
from vtabench.spec.config import load_config
from vtabench.spec.isa import encode_program
from vtabench.verify.builder import ProgramBuilder
from vtabench.graph.package import MANIFEST, Package, PackageError

pytestmark = pytest.mark.tvm


@pytest.fixture(scope="module")
def small_pkg(tmp_path_factory) -> tuple[Path, Path, np.ndarray]:
    """The saved package, its input and the output of the package as compiled (not loaded)."""
    from vtabench.graph import compile_model, run_package
    from vtabench.spec.config import load_config
    from vtabench.workloads import small_resnet

    d = tmp_path_factory.mktemp("pkg")
    pkg = compile_model(small_resnet(logits=True), load_config("default"))
    pkg.save(d / "m.vtapkg")
    x = np.random.default_rng(1).normal(0, 1, (1, 3, 16, 16)).astype(np.float32)
    np.save(d / "x.npy", x)
    [res] = run_package(pkg, "fsim", [x])
    return d / "m.vtapkg", d / "x.npy", res.outputs[0]


def _rezip(data: bytes, edit: Callable[[dict[str, bytes]], None]) -> bytes:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        members = {i.filename: z.read(i) for i in z.infolist()}
    edit(members)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, blob in members.items():
            z.writestr(name, blob)
    return buf.getvalue()


def _edit_manifest(change: Callable[[dict], None]) -> Callable[[dict[str, bytes]], None]:
    def edit(members: dict[str, bytes]) -> None:
        man = json.loads(members[MANIFEST])
        change(man)
        members[MANIFEST] = json.dumps(man).encode()
    return edit


def _reseal(change: Callable[[dict], None]) -> Callable[[dict], None]:
    """An edit that also recomputes the manifest's own digest (a deliberate forgery)."""
    from vtabench.graph.package import _manifest_digest

    def edit(man: dict) -> None:
        change(man)
        man["manifest_sha256"] = _manifest_digest(man)
    return edit


def _cut_weights(members: dict[str, bytes]) -> None:
    members["image/0.bin"] = members["image/0.bin"][:100]


CASES: dict[str, tuple[Callable[[bytes], bytes], str]] = {
    "weights cut to 100 bytes": (lambda d: _rezip(d, _cut_weights),
                                 "member image/0.bin has 100 bytes"),
    "truncated zip": (lambda d: d[: len(d) // 2], "not a whole .vtapkg zip archive"),
    "missing member": (lambda d: _rezip(d, lambda m: m.pop("programs/0.bin")),
                       "member programs/0.bin is missing"),
    "no manifest": (lambda d: _rezip(d, lambda m: m.pop(MANIFEST)), "no manifest.json"),
    "invalid JSON in the manifest": (
        lambda d: _rezip(d, lambda m: m.__setitem__(MANIFEST, b"{\"format\": ")),
        "manifest.json: not valid JSON"),
    "address out of range, edited": (
        lambda d: _rezip(d, _edit_manifest(lambda m: m["image"][0].__setitem__("addr", 1 << 40))),
        "manifest.json was edited"),
    "address out of range, resealed": (
        lambda d: _rezip(d, _edit_manifest(_reseal(
            lambda m: m["image"][0].__setitem__("addr", 1 << 40)))),
        "outside the"),
    "config edited": (
        lambda d: _rezip(d, _edit_manifest(lambda m: m.__setitem__("config", "cloud64"))),
        "manifest.json was edited"),
    "config edited, resealed": (
        lambda d: _rezip(d, _edit_manifest(_reseal(lambda m: m.__setitem__("config",
                                                                          "cloud64")))),
        "parameters differ"),
    "config parameter edited, resealed": (
        lambda d: _rezip(d, _edit_manifest(_reseal(
            lambda m: m["config_params"].__setitem__("LOG_BLOCK", 5)))),
        "(LOG_BLOCK 5, here 4)"),
    "unknown config, resealed": (
        lambda d: _rezip(d, _edit_manifest(_reseal(lambda m: m.__setitem__("config", "nope")))),
        "built for configuration 'nope', unknown here"),
    "flipped byte in a program": (
        lambda d: _rezip(d, lambda m: m.__setitem__(
            "programs/0.bin", bytes([m["programs/0.bin"][0] ^ 1]) + m["programs/0.bin"][1:])),
        "member programs/0.bin: SHA-256 differs"),
    "extra member": (lambda d: _rezip(d, lambda m: m.__setitem__("evil.bin", b"x")),
                     "member evil.bin is not in the manifest"),
    "old format version": (
        lambda d: _rezip(d, _edit_manifest(_reseal(lambda m: m.__setitem__("format_version",
                                                                          1)))),
        "format version 1"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_damaged_package_is_refused(small_pkg, tmp_path, capsys, case):
    pkg, x, _ = small_pkg
    damage, expect = CASES[case]
    bad = tmp_path / "bad.vtapkg"
    bad.write_bytes(damage(pkg.read_bytes()))
    with pytest.raises(PackageError, match="^" + str(bad).replace(".", r"\.")):
        Package.load(bad)
    capsys.readouterr()
    assert main(["run", str(bad), "--input", str(x), "--output", str(tmp_path / "y.npy")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert expect in err, err
    assert not (tmp_path / "y.npy").exists()


def test_package_for_another_config_is_refused(small_pkg, capsys):
    pkg, x, _ = small_pkg
    with pytest.raises(PackageError, match="built for configuration default, not cloud64"):
        Package.load(pkg, config="cloud64")
    assert main(["run", str(pkg), "--input", str(x), "--config", "cloud64"]) == 2
    assert "default" in capsys.readouterr().err


def test_manifest_records_versions_and_members(small_pkg):
    import tvm

    import vtabench
    from vtabench.spec.config import load_config

    man = Package.load(small_pkg[0]).manifest
    assert man["format_version"] == 3
    assert man["written_by"] == {"vtabench": vtabench.__version__, "tvm": tvm.__version__}
    assert man["config_id"] == load_config("default").config_id
    assert set(man["members"]) >= {"cpu.json", "image/0.bin", "programs/0.bin"}
    assert all(len(m["sha256"]) == 64 and m["size"] > 0 for m in man["members"].values())


def test_whole_package_runs(small_pkg, tmp_path):
    pkg, x, expected = small_pkg
    assert main(["run", str(pkg), "--input", str(x), "--output", str(tmp_path / "y.npy")]) == 0
    assert np.array_equal(np.load(tmp_path / "y.npy"), expected)


def _gemm_loop(iters: tuple[int, int], repeat: int = 1,
               n_uops: int = 1) -> tuple[bytes, np.ndarray]:
    """``repeat`` GEMMs of ``iters`` iterations of ``n_uops`` micro-ops into acc[0] (a legal
    program)."""
    cfg = load_config("default")
    b = ProgramBuilder(cfg)
    uops = b.load_uops(0, [0] * n_uops)
    for _ in range(repeat):
        b.gemm(uops, iters=iters)
    b.finish()
    prog = b.build("loop")
    return encode_program(cfg, prog.insns), prog.dram


def test_fsim_runaway_loop_stops(tmp_path, capsys):
    code, dram = _gemm_loop((16383, 16383))
    with open_device("fsim", "default") as dev, pytest.raises(RunTimeoutError,
                                                               match="instruction 1 .GEMM."):
        run_program(dev, code, dram.copy(), 600)
    (tmp_path / "p.bin").write_bytes(code)
    dram.tofile(tmp_path / "d.bin")
    capsys.readouterr()
    assert main(["exec", "--insns", str(tmp_path / "p.bin"), "--dram", str(tmp_path / "d.bin"),
                 "--out", str(tmp_path / "o.bin")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "16383 x 16383" in err, err
    assert not (tmp_path / "o.bin").exists()


def test_fsim_timeout_between_instructions():
    code, dram = _gemm_loop((64, 64), repeat=400)
    with open_device("fsim", "default") as dev, pytest.raises(RunTimeoutError) as info:
        run_program(dev, code, dram.copy(), 1e-4)
    assert "wall clock" in str(info.value) and info.value.status["insn_index"] < 401


@pytest.mark.parametrize("variant", ["item", "group"])
def test_opencl_runaway_stops_itself(tmp_path, capsys, variant):
    """The OpenCL kernel stops itself when the work budget of its timeout runs out: at once
    before one loop larger than the budget, after ~100 instructions of a stream of smaller ones;
    the host raises RunTimeoutError naming the instruction before timeout + OVERRUN_S, also for
    each program of a batch launch (group variant); a normal program is unaffected. ``vtabench exec``: one line, exit 2, no output file."""
    pytest.importorskip("pyopencl")
    from vtabench.drivers.opencl.device import OVERRUN_S, OpenCLDevice
    from vtabench.spec.program import Program

    platform = os.environ.get("VTA_TEST_OPENCL_PLATFORM", "Portable")
    timeout = 1.0
    giant = _gemm_loop((16383, 16383), n_uops=256)  # 7e13 iterations
    stream = _gemm_loop((64, 64), repeat=2000)  # 2000 x 1e6 work units against 1e8
    with OpenCLDevice(load_config("default"), 1 << 20, platform=platform,
                      variant=variant) as dev:
        for (code, dram), first, last in [(giant, 1, 1), (stream, 2, 2000)]:
            t0 = time.perf_counter()
            with pytest.raises(RunTimeoutError, match="the work budget of its 1 s timeout") as info:
                run_program(dev, code, dram.copy(), timeout)
            assert time.perf_counter() - t0 < timeout + OVERRUN_S
            assert first <= info.value.status["insn_index"] <= last, info.value
            assert f"before instruction {info.value.status['insn_index']}:" in str(info.value)
        code, dram = _gemm_loop((16, 16), repeat=4)
        if variant == "group":  # a batch launch: every program stops on its share
            dev.run_programs([Program("loop", [], dram.copy(), code)],
                             timeout)  # builds vta_batch (PoCL: seconds)
            t0 = time.perf_counter()
            results = dev.run_programs([Program(f"runaway{k}", [], stream[1].copy(), stream[0])
                                        for k in range(4)], timeout)
            assert time.perf_counter() - t0 < timeout + OVERRUN_S
            assert all(isinstance(r, RunTimeoutError) for r in results), results
        got, want = dram.copy(), dram.copy()
        run_program(dev, code, got, timeout)
    with open_device("fsim", "default") as ref:
        run_program(ref, code, want)
    assert np.array_equal(got, want)
    (tmp_path / "p.bin").write_bytes(giant[0])
    giant[1].tofile(tmp_path / "d.bin")
    capsys.readouterr()
    assert main(["exec", "--target", "opencl", "--platform", platform, "--timeout", "1",
                 "--insns", str(tmp_path / "p.bin"), "--dram", str(tmp_path / "d.bin"),
                 "--out", str(tmp_path / "o.bin")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "before instruction 1:" in err, err
    assert not (tmp_path / "o.bin").exists()


_SIM_NOISE = "     0.00ns INFO     cocotb.regression                  running core_bench.run_job\n"
_SIM_ASSERTION = ("[7625000] %Error: vta_fetch.sv:222: Assertion failed in vta_tb_top.u_core.u_fetch"
                  ".a_beats_accepted: fetch: a read beat found the beat buffer full\n"
                  "%Error: /tmp/mutant_hdl/vta_fetch.sv:222: Verilog $stop\n")
_SIM_GENERIC = ("    cocotb.regression.SimFailure: cocotb expected it would shut down the simulation,"
                " but the simulation ended prematurely.\n")


@pytest.mark.parametrize("log, status, cause", [
    (_SIM_NOISE + _SIM_ASSERTION + _SIM_GENERIC, None,
     "%Error: vta_fetch.sv:222: Assertion failed in vta_tb_top.u_core.u_fetch.a_beats_accepted: "
     "fetch: a read beat found the beat buffer full"),
    (_SIM_NOISE + "  AttributeError: vta_tb_top contains no child object named x\n" + _SIM_GENERIC,
     None, "AttributeError: vta_tb_top contains no child object named x"),
    (_SIM_NOISE + _SIM_GENERIC, 1, "SimFailure: cocotb expected it would shut down the "
     "simulation, but the simulation ended prematurely."),
    (_SIM_NOISE, -9, "the simulator was killed by SIGKILL"),
    (_SIM_NOISE, 3, "the simulator exited with status 3"),
])
def test_rtl_failure_cause_from_the_log(log, status, cause):
    from vtabench.rtl.simjob import log_cause

    assert log_cause(log, status) == cause


def test_rtl_failure_is_one_line_naming_the_kept_log(tmp_path, monkeypatch):
    """A failed simulator run: one line, the cause and the full log, copied out of /dev/shm."""
    from vtabench.rtl.simjob import SimJob

    monkeypatch.setenv("VTABENCH_BUILD_DIR", str(tmp_path))
    monkeypatch.delenv("VTABENCH_KEEP_JOBS", raising=False)
    with SimJob("vtabench-rtl-test-") as job:
        job.log.write_text(_SIM_NOISE + _SIM_ASSERTION + _SIM_GENERIC)
        line = job.failure()
    kept = tmp_path / "logs" / f"{job.dir.name}.log"
    assert line == (f"%Error: vta_fetch.sv:222: Assertion failed in vta_tb_top.u_core.u_fetch"
                    f".a_beats_accepted: fetch: a read beat found the beat buffer full; full log: "
                    f"{kept}")
    assert kept.read_text().endswith(_SIM_GENERIC) and not job.dir.exists()


def test_fsim_memory_the_host_cannot_hold():
    with pytest.raises(DeviceError, match="cannot allocate"):
        open_device("fsim", "default", mem_bytes=1 << 45)


def _commands_with(text: str) -> list[str]:
    """Command lines of the running processes that contain ``text``."""
    found = []
    for pid in os.listdir("/proc"):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if text in cmd:
            found.append(cmd)
    return found


def _wait_for(check: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.2)
    return check()


def _start_exec(tmp_path: Path, target: str, iters: tuple[int, int],
                repeat: int = 1) -> subprocess.Popen[str]:
    code, dram = _gemm_loop(iters, repeat)
    (tmp_path / "p.bin").write_bytes(code)
    dram.tofile(tmp_path / "d.bin")
    return subprocess.Popen(
        [sys.executable, "-m", "vtabench", "exec", "--target", target, "--insns",
         str(tmp_path / "p.bin"), "--dram", str(tmp_path / "d.bin"), "--out",
         str(tmp_path / "o.bin")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_on_fsim(tmp_path, sig):
    proc = _start_exec(tmp_path, "fsim", (256, 256), repeat=2000)
    assert _wait_for(lambda: "config default" in (proc.stdout.readline() or ""), 60)
    time.sleep(0.5)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert not (tmp_path / "o.bin").exists()


@pytest.mark.rtl
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_signal_on_rtl_leaves_nothing(tmp_path, sig):
    proc = _start_exec(tmp_path, "rtl", (2000, 2000))
    marker = f"--watch-pid {proc.pid} "
    try:
        assert _wait_for(lambda: bool(_commands_with(marker)), 300), "no simulator started"
        [server] = _commands_with(marker)
        device_dir = Path(server.split("--socket ")[1].split()[0]).parent
        assert _wait_for(lambda: "serving on" in (device_dir / "serve.log").read_text(), 60)
        sim_log = (device_dir / "serve.log").read_text().split("; log ")[1].split()[0]
        time.sleep(2.0)  # mid-run
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    if sig == signal.SIGKILL:
        assert proc.returncode == -sig
    else:
        assert proc.returncode == 128 + sig, err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert _wait_for(lambda: not _commands_with(marker), 60), "the simulator outlived vtabench"
    assert _wait_for(lambda: not device_dir.exists() and not Path(sim_log).parent.exists(), 30)
    assert not (tmp_path / "o.bin").exists()


def test_missing_file_names_the_option(tmp_path, capsys):
    code, dram = _gemm_loop((1, 1))
    (tmp_path / "p.bin").write_bytes(code)
    assert main(["exec", "--insns", str(tmp_path / "p.bin"), "--dram", str(tmp_path / "no.bin"),
                 "--out", str(tmp_path / "o.bin")]) == 2
    err = capsys.readouterr().err
    assert f"--dram {tmp_path / 'no.bin'}" in err and len(err.strip().splitlines()) == 1, err


def test_regress_count_must_be_positive(capsys):
    with pytest.raises(SystemExit) as info:
        main(["regress", "--count", "-3"])
    assert info.value.code == 2
    assert "--count: -3 is not a positive count" in capsys.readouterr().err


def test_int8_input_is_refused_and_seed_printed(small_pkg, tmp_path, capsys):
    pkg, x, _ = small_pkg
    np.save(tmp_path / "x8.npy", np.load(x).astype(np.int8))
    assert main(["run", str(pkg), "--input", str(tmp_path / "x8.npy")]) == 2
    assert "holds int8" in capsys.readouterr().err
    assert main(["run", str(pkg), "--input", str(x), "--seed", "1234"]) == 0
    assert "target fsim, seed 1234" in capsys.readouterr().out


def test_cpu_only_model_is_warned_about():
    from types import SimpleNamespace

    from vtabench.cli.compile import summarize

    pkg = SimpleNamespace(programs=[], manifest={
        "nodes": [{"name": "c", "op": "conv2d", "device": "cpu"}], "stats": {"insns": 0},
        "plan_bytes": 0, "static_bytes": 0})
    assert any("warning: nothing runs on VTA" in line for line in summarize(pkg))


EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.mark.parametrize("target", ["fsim", "opencl", "rtl"])
def test_example_runs_as_the_readme_shows(tmp_path, target):
    def cmd(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=600)

    vtabench = [sys.executable, "-m", "vtabench"]
    maker = [sys.executable, str(EXAMPLES / "make_dram.py")]
    assert cmd(*maker, "dram.bin").returncode == 0
    assert cmd(*vtabench, "asm", str(EXAMPLES / "matvec.s"), "-o", "matvec.bin").returncode == 0
    run = cmd(*vtabench, "exec", "--target", target, "--insns", "matvec.bin", "--dram", "dram.bin",
              "--out", "out.bin")
    assert run.returncode == 0, run.stderr
    check = cmd(*maker, "--check", "out.bin")
    assert check.returncode == 0 and "y as expected" in check.stdout, check.stderr
    (tmp_path / "out.bin").write_bytes((tmp_path / "dram.bin").read_bytes())  # y still zero
    assert cmd(*maker, "--check", "out.bin").returncode == 1


def test_forged_manifest_of_the_wrong_shape(small_pkg, tmp_path):
    pkg, _, _ = small_pkg
    bad = tmp_path / "bad.vtapkg"
    bad.write_bytes(_rezip(pkg.read_bytes(), _edit_manifest(_reseal(
        lambda m: m.__setitem__("image", ["not an entry"])))))
    with pytest.raises(PackageError, match="manifest.json: malformed"):
        Package.load(bad)


@pytest.fixture
def no_run(monkeypatch):
    """Any inference started fails the test: what is refused must be refused before one."""
    import vtabench.graph

    def run_package(*args, **kwargs):
        raise AssertionError("an inference ran before the options were refused")

    monkeypatch.setattr(vtabench.graph, "run_package", run_package)


@pytest.mark.parametrize("extra, needle", [
    (["--pcie-plot", "{tmp}/p.png", "--target", "opencl"],
     "--pcie-plot: target opencl models no PCIe time"),
    (["--output", "{tmp}/file/y.npy"], "--output {tmp}/file/y.npy: {tmp}/file is not a folder"),
    (["--output", "{tmp}/y.txt"], "--output {tmp}/y.txt: the name must end in .npy"),
    (["--timeline", "{tmp}/t.svg", "--target", "rtl"], "must end in .json or .png"),
    (["--plot", "{tmp}/p.png", "--target", "fsim"], "--plot: only target rtl records"),
    (["--plot", "{tmp}/p.gif", "--target", "rtl"], "--plot {tmp}/p.gif: the name must end in"),
])
def test_run_refuses_bad_options_before_any_run(small_pkg, tmp_path, capsys, no_run, extra,
                                                needle):
    pkg, x, _ = small_pkg
    (tmp_path / "file").write_text("a file, not a folder")
    argv = ["run", str(pkg), "--input", str(x), *(a.format(tmp=tmp_path) for a in extra)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle.format(tmp=tmp_path) in err and len(err.strip().splitlines()) == 1, err


def test_run_input_must_be_npy(small_pkg, tmp_path, capsys, no_run):
    """A raw image (what exec takes) as --input: one line saying what --input takes, not numpy's
    advice about pickles."""
    pkg, _, _ = small_pkg
    np.zeros(4096, np.uint8).tofile(tmp_path / "dram.bin")
    assert main(["run", str(pkg), "--input", str(tmp_path / "dram.bin")]) == 2
    err = capsys.readouterr().err
    assert "not a .npy array file" in err and "numpy.save" in err and "pickle" not in err
    assert len(err.strip().splitlines()) == 1


def test_run_json_is_the_result_alone_on_stdout(small_pkg, tmp_path):
    pkg, x, expected = small_pkg
    y = tmp_path / "y.npy"
    proc = subprocess.run([sys.executable, "-m", "vtabench", "run", str(pkg), "--input", str(x),
                           "--output", str(y), "--seed", "3", "--json", "--no-progress"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["command"] == "run" and result["target"] == "fsim" and result["seed"] == 3
    assert result["config"] == "default" and result["device_programs"] >= 1
    assert len(result["inferences"]) == 1 and result["inferences"][0]["syncs"] >= 1
    assert "cycles" not in result["inferences"][0]  # fsim counts none
    assert result["outputs"] == {"output": str(y)}
    np.testing.assert_array_equal(np.load(y), expected)
    assert "target fsim, seed 3" in proc.stderr


def test_all_cpu_package_on_rtl_says_nothing_ran(tmp_path, capsys):
    """A package with no device program: the target ran nothing, and the output says so (not
    that rtl counts no cycles)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    shape = [1, 3, 4, 4]
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Add", ["r", "c"], ["y"])],
        "cpu_only", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
        [numpy_helper.from_array(np.ones(shape, np.float32), "c")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              tmp_path / "cpu.onnx")
    x = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    assert main(["run", str(tmp_path / "cpu.onnx"), "--input", str(tmp_path / "x.npy"),
                 "--target", "rtl", "--no-progress", "--output", str(tmp_path / "y.npy")]) == 0
    out = capsys.readouterr().out
    assert "no device program" in out and "rtl runs nothing" in out
    assert "counts no cycles" not in out
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), np.maximum(x, 0) + 1, rtol=1e-6)
