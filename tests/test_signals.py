"""SIGINT and SIGTERM end a command within 2 s in every phase, with one line and exit 130 / 143,
leaving no process and no /dev/shm entry behind (README: The command line).

Each test starts the command as a subprocess, waits for a file or a line that shows the phase
(the simulator build, the device start, the run, serving), sends the signal and checks: the exit
status, the one line on stderr since the signal, the time to end, that every process of the
command's tree at the moment of the signal is gone, and that /dev/shm holds no entry of theirs.

The build phase uses a build folder of its own (``VTABENCH_BUILD_DIR``), so the build is fresh
and interrupted; the other phases reuse the shared build (a cold machine builds it first).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from vtabench.processes import alive, descendants
from vtabench.spec.config import load_config
from vtabench.spec.isa import encode_program
from vtabench.verify.perf import gemm_program

pytestmark = pytest.mark.rtl

SHM = Path("/dev/shm")
#: The promise: a command ends within this many seconds of the signal.
END_S = 2.0
#: How long a phase may take to show (a cold machine builds the platform simulator first).
PHASE_S = 900.0
EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143}
LINE = {signal.SIGINT: "interrupted (SIGINT)", signal.SIGTERM: "terminated (SIGTERM)"}


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def shm_entries_of(pids: set[int]) -> list[str]:
    """/dev/shm entries that belong to these processes: job and device folders carry their
    owner's pid in their name (``...-pid<PID>-...``)."""
    return sorted(e.name for e in SHM.glob("vtabench*")
                  if (m := re.search(r"-pid(\d+)-", e.name)) and int(m.group(1)) in pids)


class Command:
    """A vtabench command in a subprocess, its stdout and stderr in files."""

    def __init__(self, args: list[str], tmp: Path, env: dict[str, str] | None = None) -> None:
        self.out, self.err = tmp / "stdout.txt", tmp / "stderr.txt"
        self.shm_before = {p.name for p in SHM.glob("vtabench*")}
        with open(self.out, "wb") as out, open(self.err, "wb") as err:
            self.proc = subprocess.Popen([sys.executable, "-m", "vtabench", *args],
                                         stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                         env={**os.environ, **(env or {})}, cwd=tmp)

    def wait_for(self, what: str, ready: Callable[[], bool]) -> None:
        deadline = time.monotonic() + PHASE_S
        while not ready():
            assert self.proc.poll() is None, (f"ended (status {self.proc.returncode}) before "
                                              f"{what}: {self.err.read_text()[-3000:]}")
            assert time.monotonic() < deadline, f"no {what} within {PHASE_S} s"
            time.sleep(0.02)

    def new_shm(self) -> set[str]:
        return {p.name for p in SHM.glob("vtabench*")} - self.shm_before

    def stop_and_check(self, sig: signal.Signals, command: str) -> None:
        tree = set(descendants(self.proc.pid)) | {self.proc.pid}
        err_at_signal = self.err.stat().st_size
        t0 = time.monotonic()
        self.proc.send_signal(sig)
        try:
            status = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            pytest.fail(f"still running 30 s after {sig.name}")
        took = time.monotonic() - t0
        late = self.err.read_bytes()[err_at_signal:].decode(errors="replace")
        deadline = time.monotonic() + 1.0  # children the command ended may take a moment to go
        while (left := [p for p in tree if alive(p)]) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert status == EXIT[sig], f"exit status {status}; stderr since the signal: {late!r}"
        line = f"vtabench {command}: {LINE[sig]}; children stopped, temporary files removed"
        assert late.splitlines() == [line], late
        assert took < END_S, f"{took:.2f} s to end after {sig.name}"
        assert not left, "left running: " + "; ".join(f"{p} {cmdline(p)}" for p in left)
        assert not shm_entries_of(tree), shm_entries_of(tree)


def _compiling(cmd: Command) -> Callable[[], bool]:
    """The build has reached the C++ compiler (make under the command): the step whose
    compilers would outlive a killed make."""
    return lambda: any(Path(cmdline(p).split(" ")[0]).name == "make"
                       for p in descendants(cmd.proc.pid))


def _program(tmp: Path) -> tuple[Path, Path]:
    """A GEMM program that keeps the RTL busy for many seconds of wall time."""
    cfg = load_config("default")
    prog, _ = gemm_program(cfg, 24, repeat=40)
    insns, dram = tmp / "p.bin", tmp / "d.bin"
    insns.write_bytes(encode_program(cfg, prog.insns))
    prog.dram.tofile(dram)
    return insns, dram


SIGNALS = [signal.SIGINT, signal.SIGTERM]


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
@pytest.mark.parametrize("phase", ["build", "start", "serving"])
def test_serve_ends_on_a_signal(tmp_path: Path, sig: signal.Signals, phase: str) -> None:
    build = tmp_path / "build"
    env = {"VTABENCH_BUILD_DIR": str(build)} if phase == "build" else {}
    sock = tmp_path / "vta.sock"
    cmd = Command(["serve", "--target", "rtl", "--socket", str(sock)], tmp_path, env)
    if phase == "build":
        cmd.wait_for("simulator build (make)", _compiling(cmd))
    elif phase == "start":
        cmd.wait_for("'serving on' line", lambda: "serving on" in cmd.out.read_text())
    else:
        cmd.wait_for("socket", sock.exists)
    cmd.stop_and_check(sig, "serve")
    assert not sock.exists()


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
@pytest.mark.parametrize("phase", ["build", "start", "run"])
def test_exec_rtl_ends_on_a_signal(tmp_path: Path, sig: signal.Signals, phase: str) -> None:
    build = tmp_path / "build"
    env = {"VTABENCH_BUILD_DIR": str(build)} if phase == "build" else {}
    insns, dram = _program(tmp_path)
    cmd = Command(["exec", "--target", "rtl", "--insns", str(insns), "--dram", str(dram),
                   "--out", str(tmp_path / "out.bin")], tmp_path, env)

    def device_folders() -> list[Path]:
        return [SHM / name for name in cmd.new_shm() if name.startswith("vtabench-device-")]

    if phase == "build":
        cmd.wait_for("simulator build (make)", _compiling(cmd))
    elif phase == "start":
        cmd.wait_for("device folder", lambda: bool(device_folders()))
    else:
        def attached() -> bool:
            logs = [f / "serve.log" for f in device_folders()]
            return any(log.is_file() and " attached with " in log.read_text() for log in logs)

        cmd.wait_for("driver attached", attached)
        time.sleep(0.5)  # the program written and launched
    cmd.stop_and_check(sig, "exec")
    assert not (tmp_path / "out.bin").exists()
