"""The PCIe platform model in pure Python (no simulator): the cost model (presets, packets, DMA
time arithmetic), the fault plan's selection, and the register map constants the driver uses."""

from __future__ import annotations

import math

import pytest
from vtabench.tb.platform.faults import FaultPlan
from vtabench.tb.platform.link import D2H, H2D, PRESETS, LinkModel, preset


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
