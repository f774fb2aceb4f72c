"""Through ``vtabench serve`` + ``attach``: every injected fault (armed from this process) gives
its documented exception or recovery, and buffers that were not the target of the fault keep
their data; a lost device and a configuration mismatch are refused at open.

One ``vtabench serve`` (build/rtl/<config>-pcie) serves the drivers of a module-scoped fixture
in turn.
"""

from __future__ import annotations

import os
import re
import signal

import numpy as np
import pytest

from vtabench.drivers import DeviceError
from vtabench.processes import alive
from vtabench.spec.config import load_config
from vtabench.spec.contracts import regs as R
from vtabench.spec.contracts.errors import ErrorCode
from platform_devices import programs


@pytest.fixture(scope="module")
def cfg():  # type: ignore[no-untyped-def]
    return load_config("default")


def _fault_suite(dev, prog):  # type: ignore[no-untyped-def]
    """Returns what each fault did."""
    from vtabench.drivers import RunTimeoutError
    from vtabench.drivers.rtl.errors import DeviceRunError, DmaError, DmaTimeoutError

    _name, code, dram = prog
    obs: dict = {}
    rng = np.random.default_rng(1)
    base = dev.alloc(dram.size, align=4096)
    ia = dev.alloc(len(code), align=4096)
    a = dev.alloc(8192, align=64)
    b = dev.alloc(8192, align=64)
    c = dev.alloc(8192, align=64)
    da, db, dc = (rng.integers(0, 256, 8192, dtype=np.uint8) for _ in range(3))
    dev.write(a, da)
    dev.write(b, db)
    dev.write(ia, np.frombuffer(code, np.uint8))

    def intact() -> bool:
        return bool(np.array_equal(dev.read(a, 8192), da) and
                    np.array_equal(dev.read(b, 8192), db) and
                    np.array_equal(dev.read(ia, len(code)), np.frombuffer(code, np.uint8)))

    def run_prog(**kw):  # type: ignore[no-untyped-def]
        dev.write(base, dram)
        res = dev.run(ia, len(code) // 16, **kw)
        return dev.read(base, dram.size), res

    obs["clean"] = run_prog()[0]

    # 1. DMA h2d error after half the bytes: DmaError; other buffers intact; retry works
    dev.faults.dma_error(direction="h2d", after_bytes=4096)
    try:
        dev.write(c, dc)
        obs["h2d_error"] = None
    except DmaError as exc:
        got_c = dev.read(c, 8192)
        obs["h2d_error"] = {"type": type(exc).__name__, "direction": exc.direction,
                            "landed": exc.landed, "status": "STATUS" in exc.status,
                            "first_half": bool(np.array_equal(got_c[:4096], dc[:4096])),
                            "intact": intact()}
    dev.write(c, dc)
    obs["h2d_retry"] = bool(np.array_equal(dev.read(c, 8192), dc))

    # 2. DMA d2h error: the read raises, device memory unchanged
    dev.faults.dma_error(direction="d2h")
    try:
        dev.read(b, 8192)
        obs["d2h_error"] = None
    except DmaError as exc:
        obs["d2h_error"] = {"type": type(exc).__name__, "direction": exc.direction,
                            "intact": intact()}

    # 3. late DMA within the timeout: succeeds, the model time grows by the delay
    before = dev.pcie_stats()["h2d_ns"]
    dev.faults.dma_late(20_000.0, direction="h2d")
    dev.write(c, dc[::-1].copy())
    obs["late_ok"] = {"extra_ns": dev.pcie_stats()["h2d_ns"] - before
                      - dev.link.dma_ns(8192, "h2d"),
                      "data": bool(np.array_equal(dev.read(c, 8192), dc[::-1]))}

    # 4. late DMA beyond the driver's DMA timeout: DmaTimeoutError, nothing lands
    dev.faults.dma_late(10 * dev.dma_timeout_ns, direction="h2d")
    try:
        dev.write(c, dc)
        obs["late_timeout"] = None
    except DmaTimeoutError as exc:
        obs["late_timeout"] = {"type": type(exc).__name__, "landed": exc.landed,
                               "timeout": isinstance(exc, TimeoutError),
                               "untouched": bool(np.array_equal(dev.read(c, 8192), dc[::-1])),
                               "intact": intact()}

    # 5. lost interrupt: recovered by polling, same result
    dev.faults.lose_irq()
    out, res = run_prog()
    obs["lost_irq"] = {"completion": res.stats["completion"],
                       "recovered": res.stats["irq_recovered_by_poll"],
                       "same": bool(np.array_equal(out, obs["clean"])), "intact": intact(),
                       "lost": dev.pcie_stats()["msi_lost"]}

    # 6. one MMIO read of STATUS returns all ones: re-read, run completes

    dev.faults.mmio_all_ones(count=1, offset=R.STATUS)
    out, res = run_prog()
    obs["mmio_ones"] = {"retries": res.stats["mmio_all_ones_retries"],
                        "same": bool(np.array_equal(out, obs["clean"]))}

    # 7. simulated-time run timeout: RunTimeoutError with the status registers; the core
    #    keeps running, wait_idle() then a new run gives the right result
    dev.run_timeout_ns = 500.0
    try:
        run_prog()
        obs["timeout"] = None
    except RunTimeoutError as exc:
        obs["timeout"] = {"status": dict(exc.status)}
    dev.run_timeout_ns = None
    obs["idle"] = dev.wait_idle()
    out, res = run_prog()
    obs["after_timeout"] = {"same": bool(np.array_equal(out, obs["clean"])), "intact": intact()}

    # 8. core error: an illegal opcode at instruction 1 -> DeviceRunError with the index
    bad = bytearray(code)
    bad[16] = (bad[16] & ~0x7) | 0x7
    dev.write(ia, np.frombuffer(bytes(bad), np.uint8))
    try:
        dev.run(ia, len(code) // 16)
        obs["core_error"] = None
    except DeviceRunError as exc:
        obs["core_error"] = {"code": exc.code, "insn": exc.insn, "status": "ERROR_CODE" in
                             exc.status,
                             "status_error": bool(exc.status.get("STATUS", 0) & R.STATUS_ERROR)}
    dev.write(ia, np.frombuffer(code, np.uint8))
    out, res = run_prog()
    obs["after_error"] = bool(np.array_equal(out, obs["clean"]))
    obs["fired"] = dev.faults.fired
    return obs


@pytest.fixture(scope="module")
def faults(cfg, tmp_path_factory):  # type: ignore[no-untyped-def]
    """``vtabench serve`` in a process of its own; three drivers attach in turn: the fault
    suite, one that finds the device lost (MMIO reads all ones at open), one built for another
    configuration."""
    import subprocess
    import sys
    import time

    from vtabench.drivers import open_device
    from vtabench.drivers.rtl.errors import DeviceLostError, DeviceMismatchError
    from vtabench.fsim import Fsim
    from vtabench.spec.isa.insn import decode_program

    prog = programs(cfg)[0]
    ref = prog[2].copy()
    Fsim(cfg).run(decode_program(cfg, prog[1]), ref)
    work = tmp_path_factory.mktemp("serve")
    sock, log = work / "vta.sock", work / "serve.log"
    # the server's output goes to a file: a pipe nobody reads fills up (a cold simulator build
    # prints a lot) and blocks the server, which then cannot stop
    with open(log, "wb") as out:
        server = subprocess.Popen([sys.executable, "-m", "vtabench", "serve", "--target", "rtl",
                                   "--config", cfg.name, "--socket", str(sock), "--link",
                                   "gen3x8"], stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 300
        while not sock.exists():
            assert server.poll() is None and time.monotonic() < deadline, \
                log.read_text() if server.poll() is not None else "no socket"
            time.sleep(0.05)
        with open_device("rtl", cfg, mem_bytes=1 << 20, attach=sock) as dev:
            obs = _fault_suite(dev, prog)
            sim_pid = dev.sim_pid
            # the next driver reads all ones from VERSION (once, then the driver's re-reads)
            dev.faults.mmio_all_ones(count=dev.mmio_retries + 1, offset=R.VERSION)
        try:
            open_device("rtl", cfg, mem_bytes=1 << 16, attach=sock)
            obs["lost"] = None
        except DeviceLostError as exc:
            obs["lost"] = str(exc)
        try:  # a driver for another configuration refuses the device
            open_device("rtl", load_config("cloud32"), mem_bytes=1 << 16, attach=sock)
            obs["mismatch"] = None
        except DeviceMismatchError as exc:
            obs["mismatch"] = str(exc)
        with pytest.raises(DeviceError, match="set by the simulator"):
            open_device("rtl", cfg, attach=sock, link="gen4x16")
        with open_device("rtl", cfg, mem_bytes=1 << 16, attach=sock) as dev:  # after the others
            obs["fresh_pcie"] = dev.pcie_stats()
            dev.write(0, np.zeros(4096, np.uint8))
            obs["fresh_pcie_after_write"] = dev.pcie_stats()
        obs["still_serving"] = server.poll() is None and alive(sim_pid)
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(60)
    obs["stopped"] = not alive(sim_pid) and not sock.exists()
    obs["serve_log"] = log.read_text()
    return ref, obs


@pytest.mark.rtl
def test_fault_clean_run_matches_fsim(faults):  # type: ignore[no-untyped-def]
    ref, obs = faults
    assert np.array_equal(obs["clean"], ref)


@pytest.mark.rtl
def test_fault_dma_h2d_error(faults):  # type: ignore[no-untyped-def]
    _, obs = faults
    e = obs["h2d_error"]
    assert e is not None, "no DmaError raised"
    assert e["type"] == "DmaError" and e["direction"] == "h2d" and e["landed"] == 4096
    assert e["status"] and e["first_half"] and e["intact"]
    assert obs["h2d_retry"]


@pytest.mark.rtl
def test_fault_dma_d2h_error(faults):  # type: ignore[no-untyped-def]
    _, obs = faults
    e = obs["d2h_error"]
    assert e is not None and e["type"] == "DmaError" and e["direction"] == "d2h" and e["intact"]


@pytest.mark.rtl
def test_fault_dma_late(faults):  # type: ignore[no-untyped-def]
    _, obs = faults
    assert obs["late_ok"]["extra_ns"] == pytest.approx(20_000.0)
    assert obs["late_ok"]["data"]
    t = obs["late_timeout"]
    assert t is not None and t["type"] == "DmaTimeoutError" and t["timeout"]
    assert t["landed"] == 0 and t["untouched"] and t["intact"]


@pytest.mark.rtl
def test_fault_lost_interrupt_recovered_by_polling(faults):  # type: ignore[no-untyped-def]
    _, obs = faults
    e = obs["lost_irq"]
    assert e["completion"] == "poll (interrupt lost)" and e["recovered"] == 1
    assert e["lost"] == 1 and e["same"] and e["intact"]


@pytest.mark.rtl
def test_fault_mmio_all_ones(faults):  # type: ignore[no-untyped-def]
    _, obs = faults
    assert obs["mmio_ones"]["retries"] >= 1 and obs["mmio_ones"]["same"]
    assert obs["lost"] is not None and "VERSION" in obs["lost"]


@pytest.mark.rtl
def test_run_timeout_carries_status(faults):  # type: ignore[no-untyped-def]
    _, obs = faults
    t = obs["timeout"]
    assert t is not None, "no RunTimeoutError"
    assert t["status"]["status_at_timeout"] & 1, "STATUS showed the core busy"
    assert {"STATUS", "CYCLES", "ERROR_CODE", "IRQ_STATUS"} <= set(t["status"])
    assert obs["idle"] and obs["after_timeout"]["same"] and obs["after_timeout"]["intact"]


@pytest.mark.rtl
def test_core_error_reported(faults):  # type: ignore[no-untyped-def]
    _, obs = faults
    e = obs["core_error"]
    assert e is not None and e["code"] == ErrorCode.OPCODE and e["insn"] == 1 and e["status"]
    assert e["status_error"], "STATUS.ERROR is not set after a core error"
    assert obs["after_error"]


@pytest.mark.rtl
def test_faults_fired_in_order(faults):  # type: ignore[no-untyped-def]
    _, obs = faults
    assert obs["fired"][:5] == ["dma_error:h2d", "dma_error:d2h", "dma_late:h2d", "dma_late:h2d",
                                "lost_irq"]


@pytest.mark.rtl
def test_serve_attach_mismatch_and_stop(faults):  # type: ignore[no-untyped-def]
    _, obs = faults
    assert obs["mismatch"] is not None and "CONFIG_ID" in obs["mismatch"]
    assert obs["still_serving"], "vtabench serve stopped serving after a driver left"
    assert obs["stopped"], "the simulator (or its socket) outlived vtabench serve"


@pytest.mark.rtl
def test_serve_counts_pcie_per_driver(faults):  # type: ignore[no-untyped-def]
    """A driver that attaches after others (which moved megabytes) sees only its own traffic."""
    _, obs = faults
    fresh, after = obs["fresh_pcie"], obs["fresh_pcie_after_write"]
    assert (fresh["h2d_bytes"], fresh["d2h_bytes"], fresh["msi_sent"]) == (0, 0, 0), fresh
    assert fresh["mmio_reads"] <= 4, fresh  # its own open: VERSION and CONFIG_ID
    assert (after["h2d_bytes"], after["h2d_transfers"]) == (4096, 1), after


@pytest.mark.rtl
def test_serve_says_when_a_driver_attaches_and_leaves(faults):  # type: ignore[no-untyped-def]
    """One line per driver attaching and one per driver leaving, naming its process; the four
    drivers that reached the card (the fault suite, the lost one, the mismatched one, the
    fresh one), in order; the one refused for its options never connected."""
    _, obs = faults
    lines = obs["serve_log"].splitlines()
    attached = [ln for ln in lines if re.fullmatch(r"rtl: driver \d+ \(pid \d+\) attached with "
                                                   r"\d+ B of DRAM", ln)]
    left = [ln for ln in lines if re.match(r"rtl: driver \d+ \(pid \d+\) left \(", ln)]
    me = f"(pid {os.getpid()})"
    assert [ln.split(" (pid")[0] for ln in attached] == [f"rtl: driver {n}" for n in range(1, 5)]
    assert [ln.split(" (pid")[0] for ln in left] == [f"rtl: driver {n}" for n in range(1, 5)]
    assert all(me in ln for ln in attached + left), attached + left
    assert attached[0].endswith(f"with {1 << 20} B of DRAM")
    assert "said goodbye" in left[-1] and "host->device 4096 B in 1 DMA(s)" in left[-1]
