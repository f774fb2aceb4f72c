"""Unit bench: vta_mem_engine, the core's AXI4 master.

A Python AXI4 slave (random AR / AW / W ready, read latency, beat gaps, bursts of different IDs
returned out of order) serves three read clients and the write client, all driven from Python
with random back-pressure. Checked: every burst is INCR, full-width, beat-aligned, at most 256
beats and inside one aligned 4 KiB window; R beats reach the right client in order with the right
data; W beats carry the client's data and strobes, WLAST on each burst's last beat, only after
the burst's AW; several reads are outstanding at once; the fixed client priority; and, with
halt_i, that no new burst starts, announced write bursts complete with zero strobes and the
engine goes idle."""

from __future__ import annotations

from collections import deque

import cocotb
import numpy as np
import pytest

from vtabench.tb.unit.clocked_tb import ClockedTB, params, val
from vtabench.tb.unit.runner import bench_seed, configs, run_bench

TOP, SOURCES = "vta_mem_engine", ["vta_fifo.sv", "vta_mem_engine.sv"]

BUS = params().get("AxiDataWidth", 512) // 8   # bytes of a beat: the configuration's bus
NRD = 3
MEM_BYTES = 1 << 16
WINDOW = 4096


def field(value: int, i: int, width: int) -> int:
    return (value >> (i * width)) & ((1 << width) - 1)


class MemTB(ClockedTB):
    def __init__(self, dut) -> None:
        super().__init__(dut)
        np_rng = np.random.default_rng(self.rng.randrange(2**32))
        self.mem = np_rng.integers(0, 256, MEM_BYTES, dtype=np.uint8)
        self.np_rng = np_rng
        self.n = 0

    async def start_engine(self) -> None:
        await self.start({"halt_i": 0, "rd_req_valid_i": 0, "rd_req_addr_i": 0, "rd_req_len_i": 0,
                          "rd_ready_i": 0, "wr_req_valid_i": 0, "wr_req_addr_i": 0,
                          "wr_req_len_i": 0, "wr_valid_i": 0, "wr_data_i": 0, "wr_strb_i": 0,
                          "m_axi_arready_i": 0, "m_axi_rid_i": 0, "m_axi_rdata_i": 0,
                          "m_axi_rresp_i": 0, "m_axi_rlast_i": 0, "m_axi_rvalid_i": 0,
                          "m_axi_awready_i": 0, "m_axi_wready_i": 0, "m_axi_bid_i": 0,
                          "m_axi_bresp_i": 0, "m_axi_bvalid_i": 0})

    @staticmethod
    def check_burst(kind: str, addr: int, length: int, size: int, burst: int) -> None:
        assert burst == 1, f"{kind}: burst type {burst}, not INCR"
        assert 1 << size == BUS, f"{kind}: size {size}, not the full {BUS}-byte bus"
        assert addr % BUS == 0, f"{kind}: address {addr:#x} not beat aligned"
        assert length <= 255
        assert addr % WINDOW + (length + 1) * BUS <= WINDOW, \
            f"{kind}: burst {addr:#x} + {length + 1} beats crosses a 4 KiB window"

    async def run(self, rd_reqs: list[list[tuple[int, int]]], wr_reqs: list[tuple[int, int]], *,
                  p_ar=0.7, p_aw=0.7, p_w=0.7, p_r=0.7, p_cli=0.8, latency=8,
                  halt_at: int | None = None, max_cycles=40000) -> dict:
        d = self.dut
        r = self.rng
        # client side
        rd_pending = [deque(q) for q in rd_reqs]
        rd_expect: list[deque[int]] = [deque() for _ in range(NRD)]
        rd_got = [0] * NRD
        accept_order: list[int] = []
        wr_pending = deque(wr_reqs)
        w_beats: deque[tuple[bytes, int, int]] = deque()   # (data, strb, beat address)
        for addr, length in wr_reqs:
            for b in range(addr // BUS * BUS, addr + length, BUS):
                strb = sum(1 << i for i in range(BUS) if addr <= b + i < addr + length)
                w_beats.append((self.np_rng.integers(0, 256, BUS, dtype=np.uint8).tobytes(),
                                strb, b))
        want_mem = self.mem.copy()
        for data, strb, b in w_beats:
            for i in range(BUS):
                if (strb >> i) & 1:
                    want_mem[b + i] = data[i]
        # slave side
        rq: dict[int, deque] = {i: deque() for i in range(NRD)}   # per-ID bursts (t, addr, len)
        cur = None                                                # [id, addr, beats left]
        aw_q: deque[list[int]] = deque()                          # [addr, beats left]
        b_due = 0
        outstanding = max_out = 0
        stats = {"ar": 0, "aw": 0, "ar_after_halt": 0, "aw_after_halt": 0}
        halted = False
        w_offered = False   # the client shows a beat: it keeps it until the engine takes it
        for n in range(max_cycles):
            if halt_at is not None and n == halt_at:
                d.halt_i.value = 1
                halted = True
            # clients drive
            valid = addr_v = len_v = 0
            for i in range(NRD):
                if rd_pending[i] and r.random() < p_cli:
                    valid |= 1 << i
                    addr_v |= rd_pending[i][0][0] << (64 * i)
                    len_v |= rd_pending[i][0][1] << (32 * i)
            d.rd_req_valid_i.value = valid
            d.rd_req_addr_i.value = addr_v
            d.rd_req_len_i.value = len_v
            d.rd_ready_i.value = sum(int(r.random() < p_cli) << i for i in range(NRD))
            if wr_pending:
                d.wr_req_valid_i.value = 1
                d.wr_req_addr_i.value, d.wr_req_len_i.value = wr_pending[0]
            else:
                d.wr_req_valid_i.value = 0
            if w_beats and (w_offered or r.random() < p_cli):  # held until taken (AXI W)
                w_offered = True
                d.wr_valid_i.value = 1
                d.wr_data_i.value = int.from_bytes(w_beats[0][0], "little")
                d.wr_strb_i.value = w_beats[0][1]
            else:
                d.wr_valid_i.value = 0
            # slave drives
            d.m_axi_arready_i.value = int(r.random() < p_ar)
            d.m_axi_awready_i.value = int(r.random() < p_aw)
            d.m_axi_wready_i.value = int(bool(aw_q) and r.random() < p_w)
            if cur is None:
                ready = [i for i in range(NRD) if rq[i] and rq[i][0][0] <= n]
                if ready:
                    i = r.choice(ready)                    # IDs may come back in any order
                    _, a, ln = rq[i].popleft()
                    cur = [i, a, ln + 1]
            if cur is not None and r.random() < p_r:
                d.m_axi_rvalid_i.value = 1
                d.m_axi_rid_i.value = cur[0]
                d.m_axi_rdata_i.value = int.from_bytes(self.mem[cur[1]:cur[1] + BUS].tobytes(),
                                                       "little")
                d.m_axi_rlast_i.value = int(cur[2] == 1)
            else:
                d.m_axi_rvalid_i.value = 0
            b_sent = b_due > 0
            d.m_axi_bvalid_i.value = int(b_sent)
            await self.settle()
            # --- sample handshakes
            ready_v = val(d.rd_req_ready_o)
            for i in range(NRD):
                if (ready_v >> i) & 1:
                    assert (valid >> i) & 1, f"client {i} accepted without a request"
                    assert valid & ((1 << i) - 1) == 0, f"client {i} taken over a higher priority"
                    a, ln = rd_pending[i].popleft()
                    rd_expect[i].extend(range(a // BUS * BUS, a + ln, BUS))
                    accept_order.append(i)
            if val(d.wr_req_ready_o):
                wr_pending.popleft()
            if val(d.m_axi_arvalid_o) and val(d.m_axi_arready_i):
                a, ln, i = val(d.m_axi_araddr_o), val(d.m_axi_arlen_o), val(d.m_axi_arid_o)
                self.check_burst("AR", a, ln, val(d.m_axi_arsize_o), val(d.m_axi_arburst_o))
                assert i < NRD
                rq[i].append((n + latency, a, ln))
                outstanding += 1
                max_out = max(max_out, outstanding)
                stats["ar"] += 1
                stats["ar_after_halt"] += int(halted)
            if val(d.m_axi_rvalid_i) and val(d.m_axi_rready_o):
                i = cur[0]
                if not halted:
                    assert (val(d.rd_valid_o) >> i) & 1
                if (val(d.rd_valid_o) >> i) & 1 and (val(d.rd_ready_i) >> i) & 1:
                    b = rd_expect[i].popleft()
                    got = val(d.rd_data_o).to_bytes(BUS, "little")
                    assert got == self.mem[b:b + BUS].tobytes(), f"client {i}: wrong data at {b:#x}"
                    rd_got[i] += 1
                cur[1] += BUS
                cur[2] -= 1
                if cur[2] == 0:
                    cur = None
                    outstanding -= 1
            if val(d.m_axi_awvalid_o) and val(d.m_axi_awready_i):
                a, ln = val(d.m_axi_awaddr_o), val(d.m_axi_awlen_o)
                self.check_burst("AW", a, ln, val(d.m_axi_awsize_o), val(d.m_axi_awburst_o))
                aw_q.append([a, ln + 1])
                stats["aw"] += 1
                stats["aw_after_halt"] += int(halted)
            if val(d.m_axi_wvalid_o) and val(d.m_axi_wready_i):
                a = aw_q[0][0]
                strb = val(d.m_axi_wstrb_o)
                data = val(d.m_axi_wdata_o).to_bytes(BUS, "little")
                for k in range(BUS):
                    if (strb >> k) & 1:
                        self.mem[a + k] = data[k]
                assert val(d.m_axi_wlast_o) == int(aw_q[0][1] == 1), "WLAST misplaced"
                if not halted:
                    assert val(d.wr_ready_o)
                    assert w_beats[0][2] == a, "W beat for the wrong address"
                    assert strb == w_beats[0][1]
                if val(d.wr_ready_o) and val(d.wr_valid_i):
                    w_beats.popleft()
                    w_offered = False
                aw_q[0][0] += BUS
                aw_q[0][1] -= 1
                if aw_q[0][1] == 0:
                    aw_q.popleft()
                    b_due += 1
            if b_sent and val(d.m_axi_bready_o):
                b_due -= 1
            done = (not any(rd_pending) and not any(rd_expect) and not wr_pending and not w_beats
                    and cur is None and not aw_q and b_due == 0 and outstanding == 0)
            if halted and cur is None and not aw_q and b_due == 0 and outstanding == 0 \
                    and not any(rq.values()):
                done = True
            await self.cycle()
            if done:
                await self.settle()
                assert val(d.idle_o), "engine not idle with nothing outstanding"
                break
        else:
            raise AssertionError(f"not finished in {max_cycles} cycles")
        if halt_at is None:
            assert np.array_equal(self.mem, want_mem), "DRAM differs after the writes"
        d.halt_i.value = 0
        stats.update(max_outstanding=max_out, cycles=n + 1, rd_beats=rd_got, order=accept_order)
        return stats

    def random_reqs(self, n: int, max_len: int = 3 * WINDOW) -> list[tuple[int, int]]:
        out = []
        for _ in range(n):
            ln = self.rng.randrange(1, max_len)
            out.append((self.rng.randrange(0, MEM_BYTES - ln), ln))
        return out


@cocotb.test()
async def directed(dut):
    tb = MemTB(dut)
    await tb.start_engine()
    # bursts at window edges, a 1-byte read, unaligned ends, a row longer than 256 beats
    rd = [[(0, 1), (4096 - 64, 128), (4096 - 8, 16)], [(100, 20000)], [(8191, 2), (0, 64)]]
    wr = [(4096 - 32, 64), (5, 3), (12000, 17000)]
    st = await tb.run(rd, wr, p_ar=1, p_aw=1, p_w=1, p_r=1, p_cli=1)
    dut._log.info("directed: %s", st)
    assert st["max_outstanding"] > 1, "reads were not outstanding in parallel"


@cocotb.test()
async def priority(dut):
    """All three clients ask at once: fetch (0) first, then 1, then 2."""
    tb = MemTB(dut)
    await tb.start_engine()
    st = await tb.run([[(0, 64)], [(4096, 64)], [(8192, 64)]], [], p_cli=1)
    assert st["order"] == [0, 1, 2], st["order"]


@cocotb.test()
async def randomised(dut):
    tb = MemTB(dut)
    await tb.start_engine()
    for _ in range(3):
        rd = [tb.random_reqs(tb.rng.randrange(1, 6)) for _ in range(NRD)]
        wr = tb.random_reqs(tb.rng.randrange(1, 6))
        st = await tb.run(rd, wr, p_ar=tb.rng.choice([0.3, 1]), p_aw=tb.rng.choice([0.3, 1]),
                          p_w=tb.rng.choice([0.4, 1]), p_r=tb.rng.choice([0.4, 1]),
                          p_cli=tb.rng.choice([0.5, 1]), latency=tb.rng.randrange(1, 30))
        dut._log.info("random: ar %d aw %d max outstanding %d in %d cycles", st["ar"], st["aw"],
                      st["max_outstanding"], st["cycles"])


@cocotb.test()
async def halt(dut):
    """halt_i in the middle of long transfers: bursts in flight complete, nothing new starts."""
    tb = MemTB(dut)
    await tb.start_engine()
    rd = [[(0, 30000)], [(1000, 20000)], [(64, 10000)]]
    wr = [(20000, 30000)]
    # bursts in flight drain: up to 4 KiB each, four times the beats on a 128-bit bus
    st = await tb.run(rd, wr, halt_at=60, max_cycles=5000 * 64 // BUS)
    dut._log.info("halt: %s", {k: v for k, v in st.items() if k != "order"})
    assert st["ar_after_halt"] <= 1 and st["aw_after_halt"] <= 1   # one held valid may complete


# ------------------------------------------------------------------------------ pytest runner


@pytest.mark.rtl
@pytest.mark.parametrize("config", configs())
def test_mem_engine(config: str) -> None:
    """The configuration's bus: 512 bits in default and cloud32, 128 in edge8."""
    from vtabench.spec.config import load_config

    run_bench("mem_engine", TOP, SOURCES, config=config, seed=bench_seed(),
              params={"AxiDataWidth": load_config(config).bus_bytes * 8})
