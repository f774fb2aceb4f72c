"""The rtl driver: the simulated card (VTA shell behind the modeled PCIe link, a simulator process
per device) as a device of the driver API.

The same programs on fsim and on the RTL give the same memory images; two devices of two
configurations in one process; no simulator process outlives its device; a simulator that dies
is a clear DeviceError; the register block through raw MMIO; per-layer versus batched sync.

The tests share one build per configuration (build/rtl/<config>-pcie) and run on one device
(a module-scoped fixture).
"""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest
from dense_layers import gemm_layer
from platform_devices import programs, run_programs
from test_rtl_assertions import fired
from vtabench.drivers import DeviceError
from vtabench.tb.platform.link import H2D, preset

from vtabench.processes import alive
from vtabench.spec.config import load_config
from vtabench.spec.contracts import regs as R


@pytest.fixture(scope="module")
def cfg():  # type: ignore[no-untyped-def]
    return load_config("default")


@pytest.fixture(scope="module")
def rtl_dev(cfg):  # type: ignore[no-untyped-def]
    """One rtl device (a simulator started for it) for the module's run tests."""
    from vtabench.drivers import open_device

    with open_device("rtl", cfg, mem_bytes=1 << 22, link="gen3x16") as dev:
        yield dev
    assert not alive(dev.sim_pid), "the simulator outlived its device"


@pytest.mark.rtl
def test_same_programs_fsim_and_rtl(cfg, rtl_dev):  # type: ignore[no-untyped-def]
    from vtabench.drivers import open_device

    progs = programs(cfg)
    p0 = rtl_dev.pcie_stats()
    rtl_outs = run_programs(rtl_dev, progs)
    pcie = {k: v - p0[k] for k, v in rtl_dev.pcie_stats().items() if isinstance(v, (int, float))}
    with open_device("fsim", cfg, mem_bytes=1 << 22) as ref:
        fsim_outs = run_programs(ref, progs)
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
            progs = programs(c)[:3]
            with open_device("fsim", c, mem_bytes=1 << 20) as ref:
                want = run_programs(ref, progs)
            for (name, got, _), (_, exp, _) in zip(run_programs(dev, progs), want, strict=True):
                assert np.array_equal(got, exp), f"{c.name}/{name}: rtl differs from fsim"
        probes = [d.alloc(16) for d in devs]  # run_programs freed its buffers
        os.kill(devs[1].sim_pid, signal.SIGKILL)
        with pytest.raises(SimulatorGoneError, match="is gone"):
            devs[1].read(probes[1], 16)
        with pytest.raises(SimulatorGoneError):  # and stays so
            devs[1].read(probes[1], 16)
        assert devs[0].read(probes[0], 16).size == 16  # the other device is not affected
    finally:
        for d in devs:
            d.close()
    assert not any(alive(d.sim_pid) for d in devs)


@pytest.mark.rtl
def test_register_block_semantics(rtl_dev):  # type: ignore[no-untyped-def]
    """BAR0 through the modeled link, raw MMIO batches from the driver's process."""

    dev = rtl_dev
    _, code, dram = programs(dev.cfg)[0]
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


@pytest.mark.rtl
def test_bar0_protocol_assertions_fire(cfg):  # type: ignore[no-untyped-def]
    """The platform top's AXI4-Lite checks stop a master that breaks the rules (every other
    platform test runs with them on and quiet): AWADDR changed while AWVALID waits."""
    from vtabench.rtl.platform_build import build_platform
    from vtabench.rtl.simjob import SimJob

    with SimJob("vtabench-bar0-misuse-") as job:
        job.simulate(build_platform(cfg), "vtabench.tb.platform.bar0_misuse", seed=1,
                     plusargs=[])
        log = job.log_tail(20000)
    hits = fired(log)
    assert hits, f"no assertion fired:\n{log[-3000:]}"
    assert hits[0][1] == "a_axil_aw_held" and "AWADDR" in hits[0][2], hits


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
