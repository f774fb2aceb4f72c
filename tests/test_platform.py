"""PCIe platform model and the rtl driver (the simulated card as a device).

- The cost model (presets, packets, arithmetic) and the fault plan, in pure Python.
- The same programs through the driver API on fsim and on the RTL (VTA shell behind the modeled
  PCIe link, a simulator process per device) give the same memory images; two devices of two
  configurations in one process; no simulator process outlives its device; a simulator that dies
  is a clear DeviceError.
- Through ``vtabench serve`` + ``attach``: every injected fault (armed from this process) gives
  its documented exception or recovery, and buffers that were not the target of the fault keep
  their data; a lost device and a configuration mismatch are refused at open.

The simulator tests share one build per configuration (build/rtl/<config>-pcie) and run each
group of scenarios on one device (module-scoped fixtures).
"""

from __future__ import annotations

import math
import os
import signal

import numpy as np
import pytest
from vtabench.tb.platform.faults import FaultPlan
from vtabench.tb.platform.link import D2H, H2D, PRESETS, LinkModel, preset

from vtabench.drivers import DeviceError
from vtabench.spec.config import load_config
from vtabench.spec.contracts import regs as R
from vtabench.spec.contracts.errors import ErrorCode
from dense_layers import gemm_layer

# ---------------------------------------------------------------------------------------------
# Cost model (no simulator)
# ---------------------------------------------------------------------------------------------


def test_presets_bandwidth():
    # GT/s x lanes x 128/130 / 8 bits = GB/s per direction
    assert preset("gen3x8").bytes_per_ns == pytest.approx(8 * 8 * 128 / 130 / 8)  # 7.88
    assert preset("gen3x16").bytes_per_ns == pytest.approx(15.7538, rel=1e-4)
    assert preset("gen4x16").bytes_per_ns == pytest.approx(31.5077, rel=1e-4)
    assert set(PRESETS) == {"gen3x8", "gen3x16", "gen4x16"}
    assert preset(None).name == "gen3x16"
    assert preset("Gen4_x16").name == "gen4x16"
    with pytest.raises(ValueError, match="unknown PCIe preset"):
        preset("gen5x16")


def test_packets_and_wire_bytes():
    link = preset("gen3x16")
    assert link.mps == 256 and link.rcb == 64
    assert link.packets(0, D2H) == 0 and link.packets(1, D2H) == 1
    assert link.packets(256, D2H) == 1 and link.packets(257, D2H) == 2
    assert link.packets(4096, D2H) == 16 and link.packets(4096, H2D) == 64
    assert link.wire_bytes(4096, D2H) == 4096 + 16 * 24
    assert link.wire_bytes(4096, H2D) == 4096 + 64 * 20
    assert link.read_requests(4096) == 8
    with pytest.raises(ValueError, match="direction"):
        link.packets(10, "sideways")


def test_dma_time_arithmetic():
    link = preset("gen3x16")
    bw = 8 * 16 * 128 / 130 / 8
    assert link.dma_ns(4096, D2H) == pytest.approx(1000 + (4096 + 16 * 24) / bw)
    assert link.dma_ns(4096, H2D) == pytest.approx(1000 + 500 + (4096 + 64 * 20) / bw)
    assert link.dma_ns(0, H2D) == pytest.approx(1000)  # setup only
    # 1 MiB: bandwidth-bound; Gen4 x16 twice as fast on the wire as Gen3 x16
    mib = 1 << 20
    g3, g4 = preset("gen3x16"), preset("gen4x16")
    wire3 = g3.dma_ns(mib, D2H) - g3.dma_setup_ns
    wire4 = g4.dma_ns(mib, D2H) - g4.dma_setup_ns
    assert wire3 / wire4 == pytest.approx(2.0)
    assert preset("gen3x8").dma_ns(mib, D2H) > g3.dma_ns(mib, D2H)
    # MWr efficiency 256 / 280 at most; reads (64 B completions) lower
    assert g3.efficiency(mib, D2H) < 256 / 280 and g3.efficiency(mib, D2H) > 0.9 * 256 / 280
    assert g3.efficiency(mib, H2D) < 64 / 84
    assert g3.efficiency(64, D2H) < g3.efficiency(mib, D2H)
    assert g3.efficiency(0, D2H) == 0.0


def test_link_model_is_configurable():
    custom = preset("gen3x16").with_(mps=512, dma_setup_ns=0.0)
    assert isinstance(custom, LinkModel) and custom.mps == 512
    assert custom.dma_ns(1024, D2H) == pytest.approx((1024 + 2 * 24) / custom.bytes_per_ns)
    assert preset(custom) is custom


def test_format_pcie():
    from vtabench.tb.platform.link import LinkStats, format_pcie

    st = LinkStats()
    st.add_dma(H2D, 4096, 2500.0)
    st.add_dma(D2H, 64, 1000.0)
    line = format_pcie({**st.as_dict(), "link": "gen3x16"})
    assert line.startswith("gen3x16: host->device 4096 B in 1 DMA(s), 2.5 us")
    assert "device->host 64 B in 1 DMA(s), 1.0 us" in line and "MSI 0 (0 lost)" in line


def test_fault_plan_selection():
    f = FaultPlan()
    f.dma_error(direction=D2H)
    f.dma_late(500.0, direction=H2D, nth=1)
    assert f.take_dma(H2D) is None  # the late fault skips the first h2d
    late = f.take_dma(H2D)
    assert late is not None and late.kind == "late" and late.delay_ns == 500.0
    assert f.take_dma(H2D) is None
    err = f.take_dma(D2H)
    assert err is not None and err.kind == "error"
    f.lose_irq(2)
    assert f.take_irq_loss() and f.take_irq_loss() and not f.take_irq_loss()
    f.mmio_all_ones(count=2, offset=0x48)
    assert not f.take_mmio_ones(0x40)
    assert f.take_mmio_ones(0x48) and f.take_mmio_ones(0x48) and not f.take_mmio_ones(0x48)
    assert f.fired[:2] == ["dma_late:h2d", "dma_error:d2h"]


def test_regmap_constants_used_by_driver():
    from vtabench.spec.contracts import regs

    assert regs.VERSION_EXPECTED >> 24 == regs.REGMAP_REVISION
    assert regs.DEFINED_BITS["STATUS"] != 0xFFFFFFFF  # all ones from STATUS means "no device"
    assert math.log2(regs.BAR0_BYTES) == 12


# ---------------------------------------------------------------------------------------------
# Through the simulator
# ---------------------------------------------------------------------------------------------


def _programs(cfg):  # type: ignore[no-untyped-def]
    from vtabench.spec.isa.insn import encode_program
    from vtabench.verify.directed import directed_programs

    return [(p.name, encode_program(cfg, p.insns), p.dram) for p in directed_programs(cfg)]


def _run_programs(dev, progs):  # type: ignore[no-untyped-def]
    """Runs on an open device of any target: image at 0, instructions after it."""
    outs = []
    for name, code, dram in progs:
        base = dev.alloc(dram.size, align=4096)
        assert base == 0
        ia = dev.alloc(len(code), align=4096)
        dev.write(base, dram)
        dev.write(ia, np.frombuffer(code, np.uint8))
        res = dev.run(ia, len(code) // 16, timeout_s=120)
        outs.append((name, dev.read(base, dram.size), res.stats))
        dev.free(base)
        dev.free(ia)
    return outs


def _alive(pid: int) -> bool:
    from vtabench.tb.platform.server import alive

    return alive(pid)


@pytest.fixture(scope="module")
def cfg():  # type: ignore[no-untyped-def]
    return load_config("default")


@pytest.fixture(scope="module")
def rtl_dev(cfg):  # type: ignore[no-untyped-def]
    """One rtl device (a simulator started for it) for the module's run tests."""
    from vtabench.drivers import open_device

    with open_device("rtl", cfg, mem_bytes=1 << 22, link="gen3x16") as dev:
        yield dev
    assert not _alive(dev.sim_pid), "the simulator outlived its device"


@pytest.mark.rtl
def test_same_programs_fsim_and_rtl(cfg, rtl_dev):  # type: ignore[no-untyped-def]
    from vtabench.drivers import open_device

    progs = _programs(cfg)
    p0 = rtl_dev.pcie_stats()
    rtl_outs = _run_programs(rtl_dev, progs)
    pcie = {k: v - p0[k] for k, v in rtl_dev.pcie_stats().items() if isinstance(v, (int, float))}
    with open_device("fsim", cfg, mem_bytes=1 << 22) as ref:
        fsim_outs = _run_programs(ref, progs)
    assert len(rtl_outs) == len(fsim_outs) == len(progs)
    for (name, got, st), (_, want, _) in zip(rtl_outs, fsim_outs, strict=True):
        assert np.array_equal(got, want), f"{name}: rtl differs from fsim"
        assert st["completion"] == "msi" and st["cycles"] > 0
    # every program moved its image in and out plus its instructions
    img = sum(d.size for _, _, d in progs)
    code = sum(len(c) for _, c, _ in progs)
    assert pcie["h2d_bytes"] == img + code and pcie["d2h_bytes"] == img
    assert pcie["h2d_transfers"] == 2 * len(progs) and pcie["msi_sent"] == len(progs)
    link = preset("gen3x16")
    expect_h2d = sum(link.dma_ns(d.size, H2D) + link.dma_ns(len(c), H2D) for _, c, d in progs)
    assert pcie["h2d_ns"] == pytest.approx(expect_h2d)


@pytest.mark.rtl
def test_two_configurations_in_one_process(cfg):  # type: ignore[no-untyped-def]
    """Two rtl devices (default and cloud32) open at once give fsim's results; closing them
    leaves no simulator; a simulator that dies is a DeviceError at the next request."""
    from vtabench.drivers import open_device
    from vtabench.drivers.rtl.errors import SimulatorGoneError

    cfgs = [cfg, load_config("cloud32")]
    devs = [open_device("rtl", c, mem_bytes=1 << 20, seed=1234 + k) for k, c in enumerate(cfgs)]
    try:
        assert [d.seed for d in devs] == [1234, 1235]
        assert len({d.sim_pid for d in devs}) == 2
        for c, dev in zip(cfgs, devs, strict=True):
            progs = _programs(c)[:3]
            with open_device("fsim", c, mem_bytes=1 << 20) as ref:
                want = _run_programs(ref, progs)
            for (name, got, _), (_, exp, _) in zip(_run_programs(dev, progs), want, strict=True):
                assert np.array_equal(got, exp), f"{c.name}/{name}: rtl differs from fsim"
        os.kill(devs[1].sim_pid, signal.SIGKILL)
        with pytest.raises(SimulatorGoneError, match="is gone"):
            devs[1].read(0, 16)
        with pytest.raises(SimulatorGoneError):  # and stays so
            devs[1].read(0, 16)
        assert devs[0].read(0, 16).size == 16  # the other device is not affected
    finally:
        for d in devs:
            d.close()
    assert not any(_alive(d.sim_pid) for d in devs)


@pytest.mark.rtl
def test_register_block_semantics(rtl_dev):  # type: ignore[no-untyped-def]
    """BAR0 through the modeled link, raw MMIO batches from the driver's process."""

    dev = rtl_dev
    _, code, dram = _programs(dev.cfg)[0]
    dev.allocator.reset()
    dev.write(0, dram)
    ia = 4096 * (dram.size // 4096 + 1)
    dev.write(ia, np.frombuffer(code, np.uint8))
    v = dev.mmio([("w", R.SCRATCH, 0xA5A51234), ("r", R.SCRATCH), ("r", 0xFFC),
                  ("w", R.CYCLES, 123), ("r", R.CYCLES), ("r", R.CTRL),
                  ("w", R.IRQ_ENABLE, 0), ("w", R.INSN_COUNT, len(code) // 16),
                  ("w", R.INSN_BASE_LO, ia), ("w", R.CTRL, R.CTRL_LAUNCH),
                  ("r", R.CTRL), ("w", R.SCRATCH, 0xFFFFFFFF, 0b0010), ("r", R.SCRATCH)])
    dev.idle(50_000.0)  # let the run finish
    w = dev.mmio([("r", R.STATUS), ("r", R.IRQ_STATUS), ("r", R.CTRL),
                  ("w", R.IRQ_STATUS, R.IRQ_STATUS_FINISH), ("r", R.IRQ_STATUS),
                  ("r", R.INSN_COUNT),
                  ("w", R.IRQ_ENABLE, R.IRQ_ENABLE_FINISH | R.IRQ_ENABLE_ERROR)])
    assert v[1] == 0xA5A51234
    assert v[12] == 0xA5A5FF34  # WSTRB selects byte lanes
    assert v[2] == 0xFFFFFFFF  # SLVERR reaches the host as all ones
    assert v[4] != 123  # writes to read-only registers are ignored
    assert v[5] & R.CTRL_LAUNCH == 0  # LAUNCH reads 0
    assert v[10] == 0  # launched: FINISH cleared until the end of the run
    assert w[2] == R.CTRL_FINISH and w[0] & R.STATUS_DONE
    assert not w[0] & R.STATUS_IRQ  # status set, interrupt masked
    assert w[1] == R.IRQ_STATUS_FINISH and w[4] == 0  # W1C
    assert dev.take_irq() == 0  # no MSI while disabled
    assert w[5] == len(code) // 16
    with pytest.raises(DeviceError, match="not a 32-bit register of BAR0"):
        dev.mmio([("r", 0x1000)])


# --- synchronization: per layer (upstream) versus batched (cloud RFC), through the runtime ------

def _dense_chain(dev, cfg, sync):  # type: ignore[no-untyped-def]
    """Three dense layers through the runtime; returns (output, reference, syncs, host ns,
    pcie delta)."""
    from vtabench.runtime import Runtime

    rng = np.random.default_rng(5)
    bi, n, ks = cfg.block_in, 2, [3, 4, 2, 3]
    x = rng.integers(-128, 128, (n, ks[0], 1, bi), dtype=np.int8)
    ws = [rng.integers(-128, 128, (ks[k + 1], ks[k], bi, bi), dtype=np.int8) for k in range(3)]
    dev.allocator.reset()
    t0 = dev.modeled_ns()
    p0 = dev.pcie_stats() if t0 is not None else {}
    rt = Runtime(dev, sync=sync)
    acts = [rt.alloc(x.nbytes)] + [rt.alloc(n * ks[k + 1] * bi) for k in range(3)]
    rt.write(acts[0], x)
    wbufs = []
    for w in ws:
        wbufs.append(rt.alloc(w.nbytes))
        rt.write(wbufs[-1], w)
    for k in range(3):
        gemm_layer(rt, cfg, acts[k], wbufs[k], acts[k + 1], n, ks[k], ks[k + 1], 8)
        rt.layer_end()
    rt.sync()
    out = rt.read(acts[-1])
    host_ns = dev.modeled_ns() - t0 if t0 is not None else 0.0
    p1 = dev.pcie_stats() if t0 is not None else {}
    rt.close()
    delta = {k: p1[k] - p0[k] for k in p1 if isinstance(p1[k], (int, float))}
    ref = x.reshape(n, ks[0], bi).astype(np.int32)
    for w in ws:
        ref = (np.einsum("nki,mkoi->nmo", ref, w.astype(np.int32)) >> 8).astype(np.int8)
        ref = ref.astype(np.int32)
    return out, ref.astype(np.int8).reshape(-1).view(np.uint8), rt.stats.syncs, host_ns, delta


@pytest.mark.rtl
def test_batched_sync_fewer_syncs_less_host_time(cfg, rtl_dev):  # type: ignore[no-untyped-def]
    from vtabench.drivers import open_device

    res = {mode: _dense_chain(rtl_dev, cfg, mode) for mode in ("layer", "batch")}
    with open_device("fsim", cfg, mem_bytes=1 << 22) as ref_dev:
        for mode in ("layer", "batch"):
            out, ref, _, _, _ = res[mode]
            f_out = _dense_chain(ref_dev, cfg, mode)[0]
            assert np.array_equal(out, ref), f"{mode}: rtl output differs from the reference"
            assert np.array_equal(out, f_out), f"{mode}: rtl differs from fsim"
    (_, _, s_l, t_l, p_l), (_, _, s_b, t_b, p_b) = res["layer"], res["batch"]
    assert (s_l, s_b) == (3, 1)
    assert p_l["msi_sent"] == 3 and p_b["msi_sent"] == 1
    assert p_b["mmio_ns"] < p_l["mmio_ns"] and p_b["h2d_transfers"] < p_l["h2d_transfers"]
    assert t_b < t_l, f"batched host time {t_b:.0f} ns not below per-layer {t_l:.0f} ns"


# --- vtabench serve + attach: fault injection armed from this process -----------------------------

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

    prog = _programs(cfg)[0]
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
        obs["still_serving"] = server.poll() is None and _alive(sim_pid)
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(60)
    obs["stopped"] = not _alive(sim_pid) and not sock.exists()
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
