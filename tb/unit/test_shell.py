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
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import cocotb
import pytest
from cocotb.triggers import ClockCycles
from cocotbext.axi import AxiLiteBus, AxiLiteMaster

from vtabench.rtl.simjob import estimate_cycles
from vtabench.spec.contracts import regs as R
from vtabench.spec.contracts.errors import ErrorCode
from vtabench.spec.program import Program
from vtabench.spec.tokens import stage_of
from vtabench.tb.unit.clocked_tb import ClockedTB, config, val
from vtabench.tb.unit.regmap_fields import effect_bits, field_mask, fields_with_access
from vtabench.tb.unit.runner import bench_seed, configs, run_bench, unit_sources
from vtabench.tb.unit.test_core import INSN_COUNTERS, Placed, SuffixedPorts, make_ram, stall
from vtabench.verify.directed import directed_programs

ALL_ONES = 0xFFFFFFFF
#: register of each stage's instruction counter (the core's output INSN_COUNTERS[stage])
STAGE_COUNTERS = {stage: port[:-2].upper() for stage, port in INSN_COUNTERS.items()}


class ShellTB(ClockedTB):
    def __init__(self, dut: Any) -> None:
        super().__init__(dut)
        self.cfg = config()
        self.axil = AxiLiteMaster(AxiLiteBus.from_prefix(SuffixedPorts(dut, "s_axil"), "s_axil"),
                                  dut.clk_i, dut.rst_ni, reset_active_level=False)
        self.ram = make_ram(self)

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
        """Poll STATUS until DONE; returns it."""
        for _ in range(max_cycles // 20):
            status = await self.rd(R.STATUS)
            if status & R.STATUS_DONE:
                return status
            await ClockCycles(self.dut.clk_i, 20)
        raise AssertionError(f"{what}: STATUS.DONE not set in {max_cycles} cycles")

    async def launch(self, prog: Program) -> Placed:
        """Place ``prog`` in DRAM, program the registers and write CTRL.LAUNCH."""
        placed = Placed(self.cfg, prog, self.rng)
        self.ram.write(0, placed.before)
        for lo, value in ((R.INSN_BASE_LO, placed.insn_base), (R.DRAM_BASE_LO, placed.base),
                          (R.DRAM_SIZE_LO, len(prog.dram))):
            await self.wr(lo, value)
            await self.wr(lo + 4, value >> 32)
        await self.wr(R.INSN_COUNT, len(placed.code) // 16)
        await self.wr(R.CTRL, R.CTRL_LAUNCH)
        return placed


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


# ------------------------------------------------------------------------------ pytest runner

SOURCES = unit_sources("vta_shell")


@pytest.mark.rtl
@pytest.mark.parametrize("config", configs())
def test_shell(config: str) -> None:
    run_bench("shell", "vta_shell", SOURCES, config=config, seed=bench_seed())
