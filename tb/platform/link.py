"""PCIe link cost model: how long a DMA transfer, an MMIO access and an MSI take.

Pure Python (no simulator): the platform model (:mod:`.model`) advances simulated time by these
numbers, and tests/test_pcie_model.py checks the arithmetic. docs/platform.md gives every parameter
with its source; in short:

- lane rate: 8 GT/s (Gen3, PCIe Base Spec 3.0) or 16 GT/s (Gen4, PCIe Base Spec 4.0) per lane,
  128b/130b line encoding in both, so a lane carries ``GT/s * 128/130 / 8`` GB/s per direction;
- a transfer is split into TLPs: device-to-host writes (MWr) carry at most MPS = 256 bytes each
  with 24 bytes of overhead (Gen3+ framing token 4 B + 4DW header for 64-bit addresses 16 B +
  LCRC 4 B); host-to-device data is the device's DMA *read*: the root complex answers with
  completions (CplD) of at most RCB = 64 bytes (one cache line; what Intel root complexes return)
  with 20 bytes of overhead each (framing 4 + 3DW header 12 + LCRC 4), after one read round trip;
- each transfer pays a fixed setup (doorbell write, descriptor fetch, completion write-back).

Link-level traffic (ACK/flow-control DLLPs, SKP ordered sets) is not modelled (a few percent).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

#: 128b/130b line encoding of Gen3 and Gen4 (PCIe Base Spec 3.0 section 4.2.2).
ENCODING_128B130B = 128 / 130

H2D = "h2d"  # host memory -> device DRAM (the device's DMA reads host memory)
D2H = "d2h"  # device DRAM -> host memory (the device's DMA writes host memory)


@dataclass(frozen=True)
class LinkModel:
    """Parameters of one PCIe link and of the DMA engine / host behind it (times in ns)."""

    name: str
    gt_per_s: float            # transfer rate per lane (GT/s)
    lanes: int
    encoding: float = ENCODING_128B130B
    mps: int = 256             # max payload size of a posted write TLP (bytes)
    rcb: int = 64              # bytes per read completion TLP returned by the root complex
    mrrs: int = 512            # max read request size (bytes per MRd the DMA engine issues)
    wr_tlp_overhead: int = 24  # bytes per MWr TLP: framing 4 + 4DW header 16 + LCRC 4
    cpl_tlp_overhead: int = 20  # bytes per CplD TLP: framing 4 + 3DW header 12 + LCRC 4
    dma_setup_ns: float = 1000.0    # doorbell + descriptor fetch + completion write-back
    read_latency_ns: float = 500.0  # first completion of a DMA read after its request
    mmio_read_ns: float = 1000.0    # round trip of a non-posted 32-bit MMIO read
    mmio_write_ns: float = 250.0    # one-way latency of a posted MMIO write
    msi_latency_ns: float = 2000.0  # MSI write -> driver thread running
    notes: dict[str, str] = field(default_factory=dict, compare=False)

    # --- bandwidth ------------------------------------------------------------------------------
    @property
    def bytes_per_ns(self) -> float:
        """Raw bandwidth per direction after line encoding (bytes/ns == GB/s)."""
        return self.gt_per_s * self.lanes * self.encoding / 8.0

    # --- packets --------------------------------------------------------------------------------
    def packets(self, nbytes: int, direction: str) -> int:
        """Data-carrying TLPs for a transfer of ``nbytes`` in ``direction``."""
        _check_dir(direction)
        if nbytes <= 0:
            return 0
        size = self.mps if direction == D2H else self.rcb
        return math.ceil(nbytes / size)

    def read_requests(self, nbytes: int) -> int:
        """MRd TLPs the DMA engine issues for a host-to-device transfer."""
        return math.ceil(nbytes / self.mrrs) if nbytes > 0 else 0

    def wire_bytes(self, nbytes: int, direction: str) -> int:
        """Bytes on the link in the data direction: payload plus per-TLP overhead."""
        over = self.wr_tlp_overhead if direction == D2H else self.cpl_tlp_overhead
        return nbytes + self.packets(nbytes, direction) * over

    # --- times ----------------------------------------------------------------------------------
    def dma_ns(self, nbytes: int, direction: str) -> float:
        """Modeled time of one DMA transfer, setup to completion."""
        t = self.dma_setup_ns + self.wire_bytes(nbytes, direction) / self.bytes_per_ns
        if direction == H2D and nbytes > 0:
            t += self.read_latency_ns
        return t

    def efficiency(self, nbytes: int, direction: str) -> float:
        """Payload bytes per ns over raw link bytes per ns for one transfer (0..1)."""
        if nbytes <= 0:
            return 0.0
        return nbytes / self.dma_ns(nbytes, direction) / self.bytes_per_ns

    def with_(self, **changes: object) -> LinkModel:
        return replace(self, **changes)  # type: ignore[arg-type]


def _check_dir(direction: str) -> None:
    if direction not in (H2D, D2H):
        raise ValueError(f"direction must be {H2D!r} or {D2H!r}, got {direction!r}")


_SRC = {
    "gt_per_s": "PCI-SIG PCIe Base Specification 3.0 (8.0 GT/s) and 4.0 (16.0 GT/s)",
    "encoding": "128b/130b, PCIe Base Spec 3.0 section 4.2.2",
    "mps": "256 B: common Max_Payload_Size of server root ports (Xilinx WP350)",
    "rcb": "64 B completions: root complexes return cache-line completions (Xilinx WP350)",
    "tlp_overhead": "framing token 4 B + header 12/16 B + LCRC 4 B (PCIe 3.0 sections 2.2, 4.2)",
    "latencies": "order of magnitude of host measurements in Neugebauer et al., 'Understanding "
                 "PCIe performance for end host networking', SIGCOMM 2018 (pcie-bench)",
}

#: Link presets by name. Only the PHY differs; TLP sizes and latencies are shared assumptions.
PRESETS: dict[str, LinkModel] = {
    "gen3x8": LinkModel("gen3x8", 8.0, 8, notes=_SRC),
    "gen3x16": LinkModel("gen3x16", 8.0, 16, notes=_SRC),
    "gen4x16": LinkModel("gen4x16", 16.0, 16, notes=_SRC),
}
DEFAULT_PRESET = "gen3x16"


def preset(name: str | LinkModel | None = None) -> LinkModel:
    """A preset by name (``gen3x8``, ``gen3x16``, ``gen4x16``); a LinkModel is returned as is."""
    if isinstance(name, LinkModel):
        return name
    key = (name or DEFAULT_PRESET).lower().replace(" ", "").replace("_", "")
    try:
        return PRESETS[key]
    except KeyError:
        raise ValueError(f"unknown PCIe preset {name!r}; known: {', '.join(PRESETS)}") from None


@dataclass
class LinkStats:
    """What the platform moved and how long the model says it took (accumulated)."""

    h2d_bytes: int = 0
    d2h_bytes: int = 0
    h2d_transfers: int = 0
    d2h_transfers: int = 0
    h2d_ns: float = 0.0
    d2h_ns: float = 0.0
    mmio_reads: int = 0
    mmio_writes: int = 0
    mmio_ns: float = 0.0
    msi_sent: int = 0
    msi_lost: int = 0
    dma_errors: int = 0
    dma_late: int = 0
    mmio_all_ones: int = 0

    def add_dma(self, direction: str, nbytes: int, ns: float) -> None:
        if direction == H2D:
            self.h2d_bytes += nbytes
            self.h2d_transfers += 1
            self.h2d_ns += ns
        else:
            self.d2h_bytes += nbytes
            self.d2h_transfers += 1
            self.d2h_ns += ns

    def as_dict(self) -> dict[str, float | int]:
        return dict(vars(self))


def format_pcie(stats: dict[str, object]) -> str:
    """One line summarising :meth:`LinkStats.as_dict` (or ``RtlDevice.pcie_stats()``) for a
    report: bytes, transfers and modeled time each way, MMIO, MSIs."""
    def us(key: str) -> str:
        return f"{float(stats.get(key, 0.0)) / 1000.0:.1f} us"  # type: ignore[arg-type]

    link = stats.get("link", "PCIe")
    return (f"{link}: host->device {stats.get('h2d_bytes', 0)} B in "
            f"{stats.get('h2d_transfers', 0)} DMA(s), {us('h2d_ns')}; device->host "
            f"{stats.get('d2h_bytes', 0)} B in {stats.get('d2h_transfers', 0)} DMA(s), "
            f"{us('d2h_ns')}; MMIO {stats.get('mmio_reads', 0)} reads / "
            f"{stats.get('mmio_writes', 0)} writes, {us('mmio_ns')}; MSI "
            f"{stats.get('msi_sent', 0)} ({stats.get('msi_lost', 0)} lost)")
