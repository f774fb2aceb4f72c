"""Unit bench: vta_shell, the register block (BAR0) and the interrupt around the core, driven by
cocotbext-axi's AxiLiteMaster on s_axil_*, with its AxiRam as device DRAM on m_axi_* (the ports'
``_i`` / ``_o`` suffixes mapped by tb/unit/test_core.py's SuffixedPorts).

Every register check is derived from the generated register map (vtabench.spec.contracts.regs,
from spec/contracts/regmap.rdl), not written per register: the value of every field after reset
(the map's reset values; hardware-driven fields read the idle core's zeros, CONFIG_ID the
configuration's id; undefined bits 0), every rw field written with patterns and read back with
its neighbours unchanged and the byte strobes obeyed, every ro / const field unchanged by
writes. A program launched through CTRL.LAUNCH (instruction and DRAM window from the registers)
must end with STATUS DONE, not BUSY, no ERROR; its DRAM image equal to fsim's; the per-stage
instruction counters the instructions routed to each stage; IRQ_STATUS.FINISH set alone and
irq_o high only while a set cause is enabled (registered: a cycle after the cause or the
enable); W1C clears exactly the bits written 1. A failing run sets FINISH and ERROR, with
ERROR_CODE / ERROR_INSN the core's error; a LAUNCH while the core is busy is dropped.

The bench also closes the platform's coverage (`make coverage` merges its points of vta_shell and
vta_regs, vtabench.verify.platform_coverage): SLVERR at every offset past the map, every register
under each WSTRB value with AW and W apart, address bits 1:0 (driven pin by pin: cocotbext-axi
aligns them), B and R held off until the register block's response buffer is full, a W1C in the
cycle a cause is set, every error code the core raises (the core bench's random cases through the
registers), bus addresses above 4 GiB, and runs that take every counter and ERROR_INSN through
its bits below COUNTER_BITS (tb/coverage_waivers.toml waives the bits above).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import cocotb
import numpy as np
import pytest
from cocotb.handle import SimHandleBase
from cocotb.triggers import ClockCycles
from cocotbext.axi import AxiLiteBus, AxiLiteMaster, AxiResp

from vtabench.rtl.simjob import estimate_cycles
from vtabench.spec.contracts import regs as R
from vtabench.spec.contracts.errors import ErrorCode
from vtabench.spec.isa import Insn, MemType, Opcode, encode_program, mem_elem_bytes
from vtabench.spec.program import Program
from vtabench.spec.tokens import stage_of
from vtabench.tb.unit.clocked_tb import ClockedTB, config, val
from vtabench.tb.unit.regmap_fields import effect_bits, field_mask, fields_with_access
from vtabench.tb.unit.runner import bench_seed, configs, run_bench, unit_sources
from vtabench.tb.unit.test_core import (INSN_COUNTERS, MEM_BYTES, Faults, Placed, SuffixedPorts,
                                        make_ram, stall)
from vtabench.verify.builder import NO_TOKENS, ProgramBuilder
from vtabench.verify.directed import directed_programs
from vtabench.verify.random_case import random_case

ALL_ONES = 0xFFFFFFFF
#: The long runs drive every 32-bit counter and ERROR_INSN through their bits below this one
#: (tb/coverage_waivers.toml waives the bits above: a run of 2**31 cycles is out of reach).
COUNTER_BITS = 16
#: Bus offsets of two runs whose address bits 14-63 are complements (bits 0-13: the image's own
#: offsets); the AxiRam answers at the offset modulo its size.
HIGH_OFFSETS = (0xAAAA_AAAA_AAAA_8000, 0x5555_5555_5555_4000)
#: register of each stage's instruction counter (the core's output INSN_COUNTERS[stage])
STAGE_COUNTERS = {stage: port[:-2].upper() for stage, port in INSN_COUNTERS.items()}


class ShellTB(ClockedTB):
    def __init__(self, dut: Any) -> None:
        super().__init__(dut)
        self.cfg = config()
        self.axil = AxiLiteMaster(AxiLiteBus.from_prefix(SuffixedPorts(dut, "s_axil"), "s_axil"),
                                  dut.clk_i, dut.rst_ni, reset_active_level=False)
        self.ram = make_ram(self)
        self.faults = Faults(self.ram)

    async def rd(self, off: int) -> int:
        return await self.axil.read_dword(off)

    async def wr(self, off: int, value: int) -> None:
        await self.axil.write_dword(off, value & ALL_ONES)

    async def irq_after(self) -> int:
        """irq_o two cycles after now (the register block's interrupt, then the shell's
        register): settled after a write's response."""
        await ClockCycles(self.dut.clk_i, 2)
        await self.cycle()
        return val(self.dut.irq_o)

    async def wait_done(self, max_cycles: int, what: str) -> int:
        """Poll STATUS until DONE (about 500 times in ``max_cycles``, every 20 cycles at least:
        a poll is an AXI-Lite read in Python); returns it."""
        step = max(20, max_cycles // 500)
        for _ in range(-(-max_cycles // step)):
            status = await self.rd(R.STATUS)
            if status & R.STATUS_DONE:
                return status
            await ClockCycles(self.dut.clk_i, step)
        raise AssertionError(f"{what}: STATUS.DONE not set in {max_cycles} cycles")

    async def launch(self, prog: Program, offset: int = 0) -> Placed:
        """Place ``prog`` in DRAM (its addresses moved by ``offset`` on the bus, by ``offset``
        modulo the RAM's size in it), program the registers and write CTRL.LAUNCH."""
        placed = Placed(self.cfg, prog, self.rng)
        self.ram.write(offset % MEM_BYTES, placed.before)
        await self.program(offset + placed.insn_base, len(placed.code) // 16,
                           offset + placed.base, len(prog.dram))
        return placed

    async def program(self, insn_base: int, count: int, dram_base: int, dram_size: int) -> None:
        """The launch registers, then CTRL.LAUNCH."""
        for lo, value in ((R.INSN_BASE_LO, insn_base), (R.DRAM_BASE_LO, dram_base),
                          (R.DRAM_SIZE_LO, dram_size)):
            await self.wr(lo, value)
            await self.wr(lo + 4, value >> 32)
        await self.wr(R.INSN_COUNT, count)
        await self.wr(R.CTRL, R.CTRL_LAUNCH)

    async def run(self, prog: Program, offset: int = 0) -> None:
        """Launch ``prog`` through the registers and check its outcome: ERROR_CODE and
        ERROR_INSN as the core must report them, or DRAM equal to fsim's and the counters."""
        self.faults.set(prog.knobs)
        placed = await self.launch(prog, offset)
        status = await self.wait_done(estimate_cycles(self.cfg, placed.code) + 4000, prog.name)
        outcome = prog.outcome("rtl")
        assert outcome is not None
        code, idx = await self.rd(R.ERROR_CODE), await self.rd(R.ERROR_INSN)
        what = f"{prog.name} ({prog.kind})"
        if outcome.error != ErrorCode.NONE:
            assert status & R.STATUS_ERROR, f"{what}: STATUS {status:#x}, want ERROR"
            assert code == outcome.error, f"{what}: ERROR_CODE {code:#x}, {outcome.describe()}"
            assert outcome.indices is None or idx in outcome.indices, \
                f"{what}: ERROR_INSN {idx}, want {outcome.describe()}"
            return
        assert code == ErrorCode.NONE, f"{what}: ERROR_CODE {code:#x} at instruction {idx}"
        assert self.ram.read(offset % MEM_BYTES, placed.end) == placed.expected(self.cfg), \
            f"{what}: DRAM differs from fsim's"

    async def raw_write(self, addr: int, data: int, strb: int = 0xF, aw_delay: int = 0,
                        w_delay: int = 0) -> int:
        """A write driven pin by pin (cocotbext-axi aligns addresses and writes whole byte
        runs): any address bits, any WSTRB, AW and W each after its delay in cycles; returns
        BRESP (taken by the idle master's B sink)."""
        d = self.dut
        await self.cycle()
        d.s_axil_awaddr_i.value, d.s_axil_wdata_i.value = addr, data & ALL_ONES
        d.s_axil_wstrb_i.value = strb
        aw = cocotb.start_soon(self._handshake(d.s_axil_awvalid_i, d.s_axil_awready_o,
                                               aw_delay))
        await self._handshake(d.s_axil_wvalid_i, d.s_axil_wready_o, w_delay)
        await aw
        return int((await self.axil.write_if.b_channel.recv()).bresp)

    async def raw_read(self, addr: int) -> tuple[int, int]:
        """A read driven pin by pin at any address; returns (RDATA, RRESP)."""
        d = self.dut
        await self.cycle()
        d.s_axil_araddr_i.value = addr
        await self._handshake(d.s_axil_arvalid_i, d.s_axil_arready_o, 0)
        beat = await self.axil.read_if.r_channel.recv()
        return int(beat.rdata), int(beat.rresp)

    async def _handshake(self, valid: SimHandleBase, ready: SimHandleBase, delay: int) -> None:
        """``valid`` from a falling edge ``delay`` cycles on until the rising edge that takes
        it (ready sampled settled before it)."""
        if delay:
            await ClockCycles(self.dut.clk_i, delay, rising=False)
        valid.value = 1
        while True:
            await self.settle()
            taken = val(ready)
            await self.cycle()
            if taken:
                break
        valid.value = 0


async def start(dut: Any) -> ShellTB:
    tb = ShellTB(dut)
    await tb.start()
    return tb


@cocotb.test()
async def reset_values(dut):
    """Every field after reset; undefined bits read 0."""
    tb = await start(dut)
    got = {reg: await tb.rd(off) for reg, off in R.REGISTERS.items()}
    for reg, name, f in fields_with_access("rw", "ro", "const", "wo_pulse", "w1c"):
        value = (got[reg] & field_mask(f)) >> f.lsb
        if f.reset is not None:
            want = f.reset
        elif reg == "CONFIG_ID":
            want = tb.cfg.config_id
        else:  # driven by the idle core: nothing ran
            want = 0
        assert value == want, f"{reg}.{name} reads {value:#x} after reset, want {want:#x}"
    for reg, value in got.items():
        assert value & ~R.DEFINED_BITS[reg] == 0, f"{reg}: undefined bits read {value:#010x}"
    assert not val(dut.irq_o)


@cocotb.test()
async def writable_fields(dut):
    """Each rw field takes patterns and reads each back, its neighbours unchanged; a one-byte
    write changes only its byte lane."""
    tb = await start(dut)
    for reg, name, f in fields_with_access("rw"):
        off, m = R.REGISTERS[reg], field_mask(f)
        before = await tb.rd(off)
        for pattern in (0xA5C3_5A3C, 0x5A3C_A5C3, ALL_ONES, tb.rng.getrandbits(32), 0):
            await tb.wr(off, ((before & ~m) | (pattern & m)) & ~effect_bits(reg))
            got = await tb.rd(off)
            assert got & m == pattern & m, f"{reg}.{name}: wrote {pattern & m:#x}, read {got:#x}"
            assert got & ~m == before & ~m, f"{reg}.{name}: a write changed other fields"
        await tb.axil.write(off + 2, b"\xff")  # WSTRB 0b0100
        got = await tb.rd(off)
        assert got & m == 0x00FF_0000 & m, f"{reg}.{name}: WSTRB 0b0100 gave {got:#x}"
        await tb.wr(off, before & ~effect_bits(reg))


@cocotb.test()
async def read_only_fields(dut):
    """Writes leave every ro and const field unchanged (and start nothing)."""
    tb = await start(dut)
    for reg in dict.fromkeys(reg for reg, _, _ in fields_with_access("ro", "const")):
        off = R.REGISTERS[reg]
        ro = sum(field_mask(f) for f in R.FIELDS[reg].values() if f.access in ("ro", "const"))
        before = await tb.rd(off)
        for value in (ALL_ONES, 0, ~before, tb.rng.getrandbits(32)):
            await tb.wr(off, value & ~effect_bits(reg))
            got = await tb.rd(off)
            assert got & ro == before & ro, \
                f"{reg}: a write of {value & ALL_ONES:#x} changed {before:#x} to {got:#x}"
    assert not (await tb.rd(R.STATUS)) & R.STATUS_BUSY, "a register write started the core"


@cocotb.test()
async def launch_program(dut):
    """Directed programs launched through the registers: STATUS, counters, DRAM against fsim,
    the FINISH interrupt (enabled and masked) and its W1C."""
    tb = await start(dut)
    progs = directed_programs(tb.cfg)
    for j, prog in enumerate(progs[:3] + progs[-2:]):
        stall(tb, tb.ram, (0.0, 0.3)[j % 2])
        enabled = j % 2 == 0
        await tb.wr(R.IRQ_ENABLE, R.IRQ_ENABLE_FINISH | R.IRQ_ENABLE_ERROR if enabled else 0)
        placed = await tb.launch(prog)
        status = await tb.wait_done(estimate_cycles(tb.cfg, placed.code) + 4000, prog.name)
        assert status & (R.STATUS_BUSY | R.STATUS_ERROR) == 0, f"{prog.name}: STATUS {status:#x}"
        assert await tb.rd(R.CTRL) & R.CTRL_FINISH, f"{prog.name}: CTRL.FINISH not set"
        assert await tb.rd(R.ERROR_CODE) == ErrorCode.NONE
        assert tb.ram.read(0, placed.end) == placed.expected(tb.cfg), \
            f"{prog.name}: DRAM differs from fsim's"
        routed = Counter(stage_of(i) for i in prog.insns)
        for stage, reg in STAGE_COUNTERS.items():
            got = await tb.rd(R.REGISTERS[reg])
            assert got == routed[stage], f"{prog.name}: {reg} {got}, {routed[stage]} routed"
        assert await tb.rd(R.CYCLES) > 0
        assert await tb.rd(R.IRQ_STATUS) == R.IRQ_STATUS_FINISH, f"{prog.name}: IRQ_STATUS"
        assert await tb.irq_after() == enabled, f"{prog.name}: irq_o with enable {enabled}"
        assert bool(await tb.rd(R.STATUS) & R.STATUS_IRQ) == enabled
        if not enabled:  # enabling a pending cause raises the interrupt
            await tb.wr(R.IRQ_ENABLE, R.IRQ_ENABLE_FINISH)
            assert await tb.irq_after(), f"{prog.name}: enabling FINISH raised no irq_o"
        await tb.wr(R.IRQ_STATUS, 0)
        assert await tb.rd(R.IRQ_STATUS) == R.IRQ_STATUS_FINISH, "writing 0 cleared a cause"
        await tb.wr(R.IRQ_STATUS, R.IRQ_STATUS_FINISH)
        assert await tb.rd(R.IRQ_STATUS) == 0, "W1C left FINISH set"
        assert not await tb.irq_after(), f"{prog.name}: irq_o after the cause was cleared"


@cocotb.test()
async def error_run(dut):
    """A run that fails at once (a misaligned DRAM base: ALIGN at instruction 0) sets FINISH
    and ERROR, ERROR_CODE / ERROR_INSN name it, W1C clears each cause alone and irq_o falls
    with the last; then a LAUNCH written while the core is busy is dropped."""
    tb = await start(dut)
    every = R.IRQ_ENABLE_FINISH | R.IRQ_ENABLE_ERROR
    await tb.wr(R.IRQ_ENABLE, every)
    # a misaligned DRAM base: ALIGN at instruction 0
    prog = directed_programs(tb.cfg)[0]
    placed = Placed(tb.cfg, prog, tb.rng)
    tb.ram.write(0, placed.before)
    await tb.wr(R.INSN_BASE_LO, placed.insn_base)
    await tb.wr(R.INSN_COUNT, len(placed.code) // 16)
    await tb.wr(R.DRAM_BASE_LO, tb.cfg.bus_bytes // 2)
    await tb.wr(R.DRAM_SIZE_LO, len(prog.dram))
    await tb.wr(R.CTRL, R.CTRL_LAUNCH)
    status = await tb.wait_done(400, "misaligned run")
    assert status & R.STATUS_ERROR, f"STATUS {status:#x}"
    assert (await tb.rd(R.ERROR_CODE), await tb.rd(R.ERROR_INSN)) == (ErrorCode.ALIGN, 0)
    assert await tb.rd(R.IRQ_STATUS) == every, "a failed run sets FINISH and ERROR"
    assert await tb.irq_after()
    for field in (R.IRQ_STATUS_ERROR, R.IRQ_STATUS_FINISH):
        before = await tb.rd(R.IRQ_STATUS)
        await tb.wr(R.IRQ_STATUS, field)
        assert await tb.rd(R.IRQ_STATUS) == before & ~field, f"W1C of {field:#x}"
    assert not await tb.irq_after()
    # a clean run with a LAUNCH written again while the core is busy: one run, clean
    placed = await tb.launch(prog)
    assert await tb.rd(R.STATUS) & R.STATUS_BUSY, "LAUNCH started no run"
    await tb.wr(R.DRAM_BASE_LO, 1)  # a launch taken now would fail with ALIGN
    await tb.wr(R.CTRL, R.CTRL_LAUNCH)
    status = await tb.wait_done(estimate_cycles(tb.cfg, placed.code) + 4000, prog.name)
    assert status & R.STATUS_ERROR == 0, f"the LAUNCH while busy was taken: STATUS {status:#x}"
    assert tb.ram.read(0, placed.end) == placed.expected(tb.cfg)
    assert await tb.rd(R.IRQ_STATUS) == R.IRQ_STATUS_FINISH
    await ClockCycles(dut.clk_i, 20)
    assert await tb.rd(R.STATUS) & R.STATUS_BUSY == 0, "the dropped LAUNCH ran later"


@cocotb.test()
async def slverr_offsets(dut):
    """Every word offset of the 4 KiB BAR past the map, read and written: SLVERR, RDATA 0, no
    register changed; back-to-back errors pass through both response slots."""
    tb = await start(dut)
    before = {reg: await tb.rd(off) for reg, off in R.REGISTERS.items()}
    for off in range(max(R.REGISTERS.values()) + 4, R.BAR0_BYTES, 4):
        read = await tb.axil.read(off, 4)
        assert (read.resp, read.data) == (AxiResp.SLVERR, bytes(4)), f"read {off:#x}: {read}"
        write = await tb.axil.write(off, ALL_ONES.to_bytes(4, "little"))
        assert write.resp == AxiResp.SLVERR, f"write {off:#x}: {write}"
    after = {reg: await tb.rd(off) for reg, off in R.REGISTERS.items()}
    assert after == before, "a write past the map changed a register"


@cocotb.test()
async def every_register_every_strobe(dut):
    """Every register written with each of the 16 WSTRB values (AW and W apart either way or
    together): its rw fields take exactly the enabled byte lanes, every other bit stays."""
    tb = await start(dut)
    for reg, off in R.REGISTERS.items():
        rw = sum(field_mask(f) for f in R.FIELDS[reg].values() if f.access == "rw")
        for strb in range(16):
            lanes = sum(0xFF << 8 * i for i in range(4) if strb >> i & 1)
            old, new = await tb.rd(off), tb.rng.getrandbits(32) & ~effect_bits(reg)
            resp = await tb.raw_write(off, new, strb, aw_delay=strb % 3, w_delay=strb // 3 % 3)
            assert resp == AxiResp.OKAY, f"{reg} WSTRB {strb:#06b}: BRESP {resp}"
            got, want = await tb.rd(off), (old & ~(rw & lanes)) | (new & rw & lanes)
            assert got == want, f"{reg} WSTRB {strb:#06b}: wrote {new:#x}, read {got:#x}"
        await tb.wr(off, 0)


@cocotb.test()
async def unaligned_addresses(dut):
    """Address bits 1:0 select nothing: a write or read at offset + 1, 2 or 3 is one at the
    register's offset (driven pin by pin; cocotbext-axi aligns every address)."""
    tb = await start(dut)
    for low in (1, 2, 3):
        value = tb.rng.getrandbits(32)
        assert await tb.raw_write(R.SCRATCH | low, value) == AxiResp.OKAY
        assert await tb.rd(R.SCRATCH) == value, f"a write at SCRATCH + {low}"
        assert await tb.raw_read(R.SCRATCH | low) == (value, AxiResp.OKAY), \
            f"a read at SCRATCH + {low}"
        assert await tb.raw_read(R.BAR0_BYTES - 4 | low) == (0, AxiResp.SLVERR)


@cocotb.test()
async def back_pressure(dut):
    """B and R held off: two transactions fill the register block's response buffer, its
    AWREADY / WREADY / ARREADY fall and the rest wait; released, every write lands in order and
    every read returns its register; then reads and writes interleaved under random B / R
    stalls."""
    tb = await start(dut)
    regs = [reg for reg, _, f in fields_with_access("rw") if f.width == 32]
    b_sink, r_sink = tb.axil.write_if.b_channel, tb.axil.read_if.r_channel
    values = {reg: tb.rng.getrandbits(32) for reg in regs}
    b_sink.pause = True
    writes = [tb.axil.init_write(R.REGISTERS[reg], v.to_bytes(4, "little"))
              for reg, v in values.items()]
    await ClockCycles(dut.clk_i, 20)
    assert val(dut.s_axil_bvalid_o) and not val(dut.s_axil_awready_o), "B held: AW still taken"
    b_sink.pause = False
    for event in writes:
        await event.wait()
        assert event.data.resp == AxiResp.OKAY
    r_sink.pause = True
    reads = [tb.axil.init_read(R.REGISTERS[reg], 4) for reg in regs]
    await ClockCycles(dut.clk_i, 20)
    assert val(dut.s_axil_rvalid_o) and not val(dut.s_axil_arready_o), "R held: AR still taken"
    r_sink.pause = False
    for reg, event in zip(regs, reads):
        await event.wait()
        assert int.from_bytes(event.data.data, "little") == values[reg], f"{reg} read back"

    def stalls():
        while True:
            yield int(tb.rng.random() < 0.5)
    b_sink.set_pause_generator(stalls())
    r_sink.set_pause_generator(stalls())
    for _ in range(20):
        reg, other = tb.rng.sample(regs, 2)
        value = tb.rng.getrandbits(32)
        write = tb.axil.init_write(R.REGISTERS[reg], value.to_bytes(4, "little"))
        read = tb.axil.init_read(R.REGISTERS[other], 4)
        await write.wait()
        await read.wait()
        assert int.from_bytes(read.data.data, "little") == values[other], f"{other} read"
        values[reg] = value
    b_sink.clear_pause_generator()
    r_sink.clear_pause_generator()


@cocotb.test()
async def irq_set_clear_race(dut):
    """A W1C of IRQ_STATUS written every cycle (a write decoded in each) across the end of a
    clean run and of a failing one (its first write burst answered SLVERR: AXI_WR at its
    stores): the causes set in the cycle of a clear survive it (set wins), so irq_o still
    rises; the next W1C clears them."""
    tb = await start(dut)
    d, every = dut, R.IRQ_STATUS_FINISH | R.IRQ_STATUS_ERROR
    await tb.wr(R.IRQ_ENABLE, every)
    prog = directed_programs(tb.cfg)[0]
    b_sink = tb.axil.write_if.b_channel
    for knobs, error in (({}, ErrorCode.NONE), ({"wr_err_burst": 1}, ErrorCode.AXI_WR)):
        tb.faults.set(knobs)
        placed = await tb.launch(prog)
        b_sink.queue_occupancy_limit = -1  # one B a cycle, none refused
        await tb.cycle()
        d.s_axil_awaddr_i.value, d.s_axil_wdata_i.value = R.IRQ_STATUS, every
        d.s_axil_wstrb_i.value = 0xF
        d.s_axil_awvalid_i.value = d.s_axil_wvalid_i.value = 1
        irq_seen, done_at, n = False, None, 0
        while done_at is None or n < done_at + 8:
            await tb.cycle()
            n += 1
            if n > 4:  # the stream runs: every cycle answers a write
                assert val(d.s_axil_bvalid_o), f"cycle {n}: no write answered"
            irq_seen |= bool(val(d.irq_o))
            if done_at is None and val(d.core_done):
                done_at = n
            assert n < estimate_cycles(tb.cfg, placed.code) + 4000, "the run did not end"
        d.s_axil_awvalid_i.value = d.s_axil_wvalid_i.value = 0
        await ClockCycles(d.clk_i, 4)
        b_sink.clear()
        b_sink.queue_occupancy_limit = 2
        assert done_at is not None and done_at > 4, "the run ended before the W1C stream ran"
        assert irq_seen, "a cause set in the cycle of a W1C was lost: irq_o never rose"
        assert await tb.rd(R.IRQ_STATUS) == 0, "the W1C after the finish left a cause"
        assert await tb.rd(R.ERROR_CODE) == error
        assert not await tb.irq_after()
    tb.faults.set({})


@cocotb.test()
async def errors_through_registers(dut):
    """Random cases of the core bench (illegal streams, misaligned bases, AXI read / write /
    fetch faults, clean programs) launched through the registers: ERROR_CODE and ERROR_INSN as
    the core must report them, or DRAM as fsim leaves it; then a clean program at bus
    addresses whose bits 14-63 are set and clear in turn (HIGH_OFFSETS)."""
    tb = await start(dut)
    rng = np.random.default_rng(tb.rng.randrange(2**32))
    runs: Counter[ErrorCode] = Counter()
    for _ in range(400):  # each error code once, three clean runs
        prog = random_case(tb.cfg, rng, anywhere=False)  # the AxiRam holds MEM_BYTES
        outcome = prog.outcome("rtl")
        if outcome is not None and runs[outcome.error] < (3 if outcome.error == 0 else 1):
            await tb.run(prog)
            runs[outcome.error] += 1
    tb.faults.set({})
    dut._log.info("runs by error code: %s", {ErrorCode(c).name: n for c, n in runs.items()})
    assert len(runs) >= 9, f"only {sorted(runs)} drawn"
    for offset in HIGH_OFFSETS:
        await tb.run(directed_programs(tb.cfg)[0], offset)


@cocotb.test()
async def long_runs(dut):
    """Each stage's instruction and busy counters, CYCLES and ACC_WRITES past
    2**(COUNTER_BITS-1) in one run (token-free no-ops on every stage, one long GEMM reset, and
    an 8 KiB row stored: write bursts as long as the 4 KiB window allows), and ERROR_INSN =
    2**COUNTER_BITS - 1 (an illegal opcode after that many no-ops): every bit below
    COUNTER_BITS of each set, then cleared by the next launch."""
    tb = await start(dut)
    half = 1 << COUNTER_BITS - 1
    row = min(tb.cfg.out_depth, 8192 // mem_elem_bytes(tb.cfg, MemType.OUT))
    p = ProgramBuilder(tb.cfg)
    uops = p.load_uops(0, dst=[0])
    p.gemm(uops, (half >> 7, 1 << 7), reset=True)
    p.gemm(uops, (1, row), dst=(0, 1), reset=True)  # out[0, row) = 0
    p.store_synced(0, p.alloc(MemType.OUT, row, fill=0x5A), 1, row)
    for _ in range(half):
        p.noop(MemType.INP, NO_TOKENS)
        p.noop(MemType.UOP, NO_TOKENS)
        p.noop(MemType.OUT, NO_TOKENS)
    p.finish()
    prog = p.build("long_run")
    await tb.run(prog)
    for reg in ("CYCLES", "ACC_WRITES", "LOAD_BUSY_CYCLES", "COMPUTE_BUSY_CYCLES",
                "STORE_BUSY_CYCLES", "LOAD_INSNS", "COMPUTE_INSNS", "STORE_INSNS"):
        got = await tb.rd(R.REGISTERS[reg])
        assert got >= half, f"{reg} {got}: below {half}"
    last = (1 << COUNTER_BITS) - 1
    code = bytearray(encode_program(tb.cfg, [Insn(Opcode.LOAD, memory_type=MemType.INP)] * last
                                    + [Insn(Opcode.FINISH)]))
    code[last * 16] |= 0x7  # opcode 7: none
    tb.ram.write(0, bytes(code))
    await tb.program(0, last + 1, 0, 1 << 20)
    await tb.wait_done(64 * last, "the illegal opcode after no-ops")
    assert (await tb.rd(R.ERROR_CODE), await tb.rd(R.ERROR_INSN)) == (ErrorCode.OPCODE, last)
    await tb.run(directed_programs(tb.cfg)[0])  # the counters and ERROR_INSN fall


# ------------------------------------------------------------------------------ pytest runner

SOURCES = unit_sources("vta_shell")


@pytest.mark.rtl
@pytest.mark.parametrize("config", configs())
def test_shell(config: str) -> None:
    run_bench("shell", "vta_shell", SOURCES, config=config, seed=bench_seed())
