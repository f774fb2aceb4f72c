"""Start the simulated card: the platform simulator serving one device on a Unix socket.

- :func:`serve` (``vtabench serve --target rtl``) builds the platform simulator for a
  configuration (reused while no input changed) and runs it in the foreground with the device
  server (:mod:`vtabench.tb.platform.server`) listening on a socket, until it is stopped (or,
  ``once``, until its first driver leaves). It prints one line when a driver attaches and one
  when it leaves (with that driver's PCIe statistics).
- :func:`start_server` does the same in a background process for ``open_device("rtl", cfg)``:
  ``vtabench serve --once --watch-pid <caller>`` in a session of its own (a Ctrl-C meant for
  the caller does not cut the simulator off in the middle of a request). It ends with its
  driver: when the driver's connection closes (close, crash, kill), or, before a driver has
  connected, when the caller's process is gone.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from vtabench.drivers.rtl.errors import SimulatorGoneError
from vtabench.processes import alive
from vtabench.spec.config import Config
from vtabench.workdirs import PACKAGE_DIR

#: Longest socket path the kernel takes (sun_path, with its terminating NUL).
SOCKET_PATH_MAX = 107
#: Wall seconds a started simulator may take to listen (the build is done before the start).
STARTUP_S = 600.0
#: Wall seconds the simulator may take to end after its driver left (waves written out).
STOP_S = 60.0
#: Wall seconds a server told to stop (SIGTERM) may take before it is killed (SIGKILL).
KILL_AFTER_S = 1.0
#: Name prefix of the folder :func:`start_server` makes for a server's socket, config and log.
DEVICE_FOLDER_PREFIX = "vtabench-device-"
#: How ``vtabench serve`` starts the one line it prints when the simulation failed.
FAILED_LINE = "rtl: the platform simulation"
#: Seconds between looks at the simulator's event file (drivers attaching and leaving).
EVENTS_POLL_S = 0.1


def serve(cfg: Config, socket_path: str | Path, *, link: str | None = None,
          clock_mhz: float = 250.0, seed: int | None = None, waves: bool | str | Path = False,
          stub: bool = False, once: bool = False, watch_pid: int | None = None,
          say: Callable[[str], None] | None = None) -> int:
    """Serve drivers on ``socket_path`` from a platform simulation of ``cfg``; blocks until the
    simulation ends. ``link``: PCIe preset (gen3x8, gen3x16, gen4x16); ``waves``: True or a
    path: an FST of the whole simulation; ``stub``: the bench's stand-in core; ``watch_pid``:
    stop (while no driver is connected) once that process is gone (default: this one).
    Returns 0, or 1 when the simulation failed (one line on stderr: why, and where its log is
    kept)."""
    from vtabench.tb.platform.link import preset
    from vtabench.rtl.platform_build import build_platform
    from vtabench.rtl.simjob import SimJob, pick_seed, waves_file

    say = say or _print_now
    path = Path(socket_path).absolute()
    if len(os.fsencode(path)) > SOCKET_PATH_MAX:
        raise ValueError(f"socket path {path} is longer than {SOCKET_PATH_MAX} bytes (the limit "
                         f"of a Unix socket address)")
    if not path.parent.is_dir():
        raise ValueError(f"socket path {path}: no folder {path.parent}")
    if path.exists():
        try:
            connect(path).close()
        except SimulatorGoneError:
            pass  # a stale file: the server replaces it
        else:
            raise ValueError(f"socket path {path}: another server listens there")
    link_name = preset(link).name
    b = build_platform(cfg, stub=stub, waves=bool(waves))
    seed = pick_seed(seed)
    fst = waves_file(waves, f"{cfg.name}-pcie-{seed}.fst")
    with SimJob(f"vtabench-pcie-{cfg.name}-") as sim:
        dram_file = sim.dir / "dram.bin"
        dram_file.write_bytes(b"")
        events = sim.dir / "events.log"
        events.write_bytes(b"")
        plusargs = [f"+vta_socket={path}", f"+dram_file={dram_file}", f"+vta_config={cfg.name}",
                    f"+vta_link={link_name}", f"+vta_clock_mhz={clock_mhz}",
                    f"+vta_watch_pid={watch_pid or os.getpid()}", f"+vta_events={events}"]
        if once:
            plusargs.append("+vta_serve_once")
        say(f"rtl ({cfg.name}, {link_name}, {clock_mhz:g} MHz, seed {seed}): serving on {path}"
            f"{' (one driver)' if once else ''}; log {sim.log}")
        try:
            with _echo_lines(events, say):
                sim.simulate(b, "vtabench.tb.platform.server", seed=seed, fst=fst,
                             plusargs=plusargs)
        finally:  # the server removes it, unless the simulator was killed
            path.unlink(missing_ok=True)
            _remove_orphaned_folder(path.parent, watch_pid)
        results = sim.dir / "results.xml"
        if not results.exists() or "<failure" in results.read_text(errors="replace"):
            print(f"{FAILED_LINE} of {cfg.name} failed (seed {seed}): {sim.failure()}",
                  file=sys.stderr, flush=True)
            return 1
    if fst is not None:
        say(f"rtl: waves written to {fst}")
    return 0


def _print_now(line: str) -> None:
    print(line, flush=True)


@contextmanager
def _echo_lines(path: Path, say: Callable[[str], None]) -> Iterator[None]:
    """While the block runs, pass each complete line appended to ``path`` to ``say`` (from a
    thread: the block is the simulator, which owns the main thread); the last ones at the end."""
    stop = threading.Event()

    def follow() -> None:
        with open(path, "rb") as f:
            pending = b""
            while True:
                stopping = stop.wait(EVENTS_POLL_S)
                pending += f.read()
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    say(line.decode(errors="replace"))
                if stopping:
                    return

    thread = threading.Thread(target=follow, name="serve-events", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _remove_orphaned_folder(folder: Path, watch_pid: int | None) -> None:
    """Remove the folder :func:`start_server` made for this server once the driver that made
    it is gone (killed with SIGKILL: nothing else removes it from /dev/shm)."""
    if watch_pid is None or not folder.name.startswith(DEVICE_FOLDER_PREFIX):
        return
    if not alive(watch_pid):
        shutil.rmtree(folder, ignore_errors=True)


class ServerProcess:
    """A background ``vtabench serve --once`` for one driver (see :func:`start_server`)."""

    def __init__(self, proc: subprocess.Popen[bytes], folder: Path, socket_path: Path) -> None:
        self.proc = proc
        self.folder = folder
        self.socket_path = socket_path
        self.log = folder / "serve.log"
        self._kept_log: str | None = None  # the log, once the folder is removed

    def wait_listening(self, timeout_s: float = STARTUP_S) -> None:
        """Return once the simulator accepts connections (its socket path exists);
        :class:`SimulatorGoneError` saying why (:meth:`cause`) if it ends (or does not listen
        within ``timeout_s``) first."""
        deadline = time.monotonic() + timeout_s
        while not self.socket_path.exists():
            if self.proc.poll() is not None:
                raise SimulatorGoneError(f"the rtl simulator ended before it served: "
                                         f"{self.cause()}")
            if time.monotonic() > deadline:
                self.stop(0.0)
                raise SimulatorGoneError(f"the rtl simulator did not listen within {timeout_s:.0f}"
                                         f" s: {self.cause()}")
            time.sleep(0.02)

    def connect(self) -> socket.socket:
        """Connect once the simulator listens (:meth:`wait_listening`)."""
        self.wait_listening()
        return connect(self.socket_path)

    def log_tail(self, nchars: int = 4000) -> str:
        if self._kept_log is not None:
            return self._kept_log[-nchars:]
        try:
            return self.log.read_text(errors="replace")[-nchars:] or "(empty log)"
        except OSError:
            return "(no log)"

    def cause(self) -> str:
        """Why the simulator ended, in one line with where its full log is kept: the failure
        line ``vtabench serve`` printed, else :func:`~vtabench.rtl.simjob.log_cause` of
        this server's log (then kept in :func:`~vtabench.rtl.simjob.failed_logs_dir`)."""
        from vtabench.rtl.simjob import failed_logs_dir, log_cause

        text = self.log_tail(1 << 20)
        for line in text.splitlines():
            if line.startswith(FAILED_LINE):
                return line.split(": ", 1)[-1]
        kept = failed_logs_dir() / f"{self.folder.name}.log"
        try:
            kept.parent.mkdir(parents=True, exist_ok=True)
            kept.write_text(text)
        except OSError:
            return log_cause(text, self.proc.returncode)
        return f"{log_cause(text, self.proc.returncode)}; full log: {kept}"

    def stop(self, timeout_s: float = STOP_S) -> None:
        """Wait up to ``timeout_s`` for the simulator to end (it does once its driver left),
        then end it, and remove its folder. A signal (KeyboardInterrupt, the CLI's SIGTERM)
        while waiting ends it at once and passes on."""
        try:
            self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self._end()
        except BaseException:
            self._end()
            raise
        finally:
            if self._kept_log is None:
                self._kept_log = self.log_tail(1 << 20)
                shutil.rmtree(self.folder, ignore_errors=True)

    def _end(self) -> None:
        """End the server's process group (the serve process and its simulator): SIGTERM, which
        it answers by stopping the simulator and removing its job folder, then SIGKILL."""
        for sig, wait_s in ((signal.SIGTERM, KILL_AFTER_S), (signal.SIGKILL, KILL_AFTER_S)):
            try:
                os.killpg(self.proc.pid, sig)
                self.proc.wait(timeout=wait_s)
                return
            except ProcessLookupError:
                self.proc.wait()
                return
            except subprocess.TimeoutExpired:
                continue


def start_server(cfg: Config, *, link: str | None = None, clock_mhz: float = 250.0,
                 seed: int | None = None, waves: Path | None = None, stub: bool = False,
                 once: bool = True) -> ServerProcess:
    """Build the platform simulator for ``cfg`` here (so build errors surface in the caller),
    then start ``vtabench serve --once`` for it in the background with its socket in a fresh
    folder (in /dev/shm when there is one). ``once=False``: it serves driver after driver until
    this process is gone or :meth:`ServerProcess.stop` ends it."""
    from vtabench.tb.platform.link import preset
    from vtabench.rtl.platform_build import build_platform

    preset(link)  # an unknown preset is the caller's error, not a dead simulator
    build_platform(cfg, stub=stub, waves=waves is not None)
    shm = Path("/dev/shm")
    folder = Path(tempfile.mkdtemp(prefix=f"{DEVICE_FOLDER_PREFIX}{cfg.name}-pid{os.getpid()}-",
                                   dir=str(shm) if shm.is_dir() else None))
    proc: subprocess.Popen[bytes] | None = None
    try:
        proc = _start_serve(cfg, folder, link=link, clock_mhz=clock_mhz, seed=seed, waves=waves,
                            stub=stub, once=once)
        return ServerProcess(proc, folder, folder / "sock")
    except BaseException:  # a signal while starting: nothing of it stays
        if proc is None:
            shutil.rmtree(folder, ignore_errors=True)
        else:
            ServerProcess(proc, folder, folder / "sock").stop(0.0)
        raise


def _start_serve(cfg: Config, folder: Path, *, link: str | None, clock_mhz: float,
                 seed: int | None, waves: Path | None, stub: bool,
                 once: bool) -> subprocess.Popen[bytes]:
    """``vtabench serve`` for :func:`start_server` with its socket, configuration and log in
    ``folder``."""
    from vtabench.tb.platform.link import preset

    cfg_file = folder / "config.json"
    cfg_file.write_text(json.dumps(cfg.as_dict()))
    sock = folder / "sock"
    cmd = [sys.executable, "-m", "vtabench", "serve", "--target", "rtl", "--config", str(cfg_file),
           "--socket", str(sock), "--watch-pid", str(os.getpid()),
           "--clock-mhz", repr(float(clock_mhz))] + (["--once"] if once else [])
    if link is not None:
        cmd += ["--link", preset(link).name]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    if waves is not None:
        cmd += ["--waves", str(waves)]
    if stub:
        cmd.append("--stub")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PACKAGE_DIR.parent),
                                                    env.get("PYTHONPATH")) if p)
    with open(folder / "serve.log", "wb") as log:
        return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, env=env, start_new_session=True)


def connect(path: str | Path) -> socket.socket:
    """Connect to a simulator that ``vtabench serve`` runs at ``path``."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
    except OSError as exc:
        sock.close()
        raise SimulatorGoneError(f"no rtl simulator serves on {path} ({exc.strerror or exc}); "
                                 f"start one with: vtabench serve --target rtl --config NAME "
                                 f"--socket {path}") from None
    return sock
