"""Unit bench: vta_core, the whole core on its AXI4 master ports, with cocotbext-axi's AxiRam as
device DRAM (random AR / R / AW / W / B stalls from its pause generators).

Each program is placed as the core bench places it (vtabench.spec.program.Placement: the image at
``dram_base``, the instruction stream after the next 4 KiB boundary plus ``insn_pad``), in a DRAM
filled with random bytes, and launched with launch_i; the bench sleeps until done_o (the clock
runs in C; Python is only on the AXI side). Scoreboard: a clean program's image must equal fsim's
(vtabench.fsim) after the run, every byte outside it (the instruction stream, the random fill
around it) unchanged, error_o 0, and the instruction counters of the three stages the number of
instructions fetch routes to each (vtabench.spec.tokens.stage_of); a program that must fail
(vtabench.verify.random_case: illegal streams, misaligned bases, AXI faults) must end with its
error code at one of the indices the validator allows, with nothing written outside its image.
Stimulus: every directed program (vtabench.verify.directed: GEMM loops and resets, every ALU op
with immediates and tensors, hazards, padded loads, strided loads and stores, tokens); random
cases (random programs with randomized don't-care fields and random placements) and one case of
each failing kind of random_case (AXI SLVERR in a fault window of a LOAD's data or of the
instruction stream, on one write burst, as the core bench's DRAM model gives them; misaligned
instruction and DRAM bases); every defect of vtabench.verify.illegal that the core checks (the
errors of fetch and of each stage, through the core's error priority). Run control: a launch
while busy is ignored, an error halts the run until the next launch, which clears it.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from dataclasses import replace
from typing import Any

import cocotb
import numpy as np
import pytest
from cocotb.triggers import ClockCycles, First, RisingEdge, Timer
from cocotbext.axi import AxiBus, AxiRam

from vtabench.fsim import Fsim
from vtabench.rtl.simjob import estimate_cycles
from vtabench.spec.config import Config
from vtabench.spec.contracts.errors import ErrorCode
from vtabench.spec.contracts.stages import Stage
from vtabench.spec.isa import MemType, decode_program
from vtabench.spec.program import INSN_ALIGN, Outcome, Program
from vtabench.spec.tokens import stage_of
from vtabench.tb.unit.clocked_tb import PERIOD_NS, ClockedTB, config, val
from vtabench.tb.unit.runner import bench_seed, configs, run_bench, unit_sources
from vtabench.verify.builder import ProgramBuilder
from vtabench.verify.directed import directed_programs
from vtabench.verify.illegal import DEFECTS, expected_outcomes
from vtabench.verify.random_case import random_case
from vtabench.verify.random_program import random_program

#: DRAM the AxiRam serves (every program's image, instruction stream and guard fit)
MEM_BYTES = 1 << 22
#: random bytes checked unchanged past the end of the instruction stream
GUARD_BYTES = 4096
#: the counters (outputs) of instructions retired per stage
INSN_COUNTERS = {Stage.LOAD: "load_insns_o", Stage.COMPUTE: "compute_insns_o",
                 Stage.STORE: "store_insns_o"}


class SuffixedPorts:
    """The DUT as cocotbext-axi's bus classes look it up (``m_axi_arid``...), over ports that end
    in ``_i`` / ``_o`` (lowRISC style): ``prefix`` + name maps to the one port with a suffix."""

    def __init__(self, dut: Any, prefix: str) -> None:
        self._dut, self._name, self._log = dut, dut._name, dut._log
        self._ports = {}
        for suffix in ("_i", "_o"):
            for name in dir(dut):
                if name.startswith(prefix) and name.endswith(suffix):
                    self._ports[name[:-len(suffix)]] = getattr(dut, name)

    def __dir__(self) -> list[str]:
        return list(self._ports)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_ports"][name]
        except KeyError:
            raise AttributeError(name) from None


def make_ram(tb: ClockedTB) -> AxiRam:
    """An AxiRam on the DUT's m_axi_* ports, quiet (its per-burst debug log is off)."""
    ram = AxiRam(AxiBus.from_prefix(SuffixedPorts(tb.dut, "m_axi"), "m_axi"), tb.dut.clk_i,
                 tb.dut.rst_ni, reset_active_level=False, size=MEM_BYTES)
    for part in (ram.read_if, ram.write_if):
        part.log.setLevel(logging.WARNING)
    return ram


class Faults:
    """AxiRam's responses faulted as the core bench's DRAM model faults them (the knobs of
    vtabench.verify.random_case): a beat inside [fault_lo, fault_hi) answers SLVERR (read or
    written), and so does the wr_err_burst-th write burst (1-based) of the run. cocotbext-axi
    answers SLVERR for a read or write that raises."""

    def __init__(self, ram: AxiRam) -> None:
        self.lo = self.hi = self.wr_burst = self.bursts = 0
        read, write = ram.read_if._read, ram.write_if._write
        recv = ram.write_if.aw_channel.recv

        async def faulty_read(address: int, length: int) -> bytes:
            if self.lo <= address < self.hi:
                raise OSError(f"read fault at {address:#x}")
            return await read(address, length)

        async def faulty_write(address: int, data: bytes) -> None:
            if self.lo <= address < self.hi or self.bursts == self.wr_burst:
                raise OSError(f"write fault at {address:#x} (burst {self.bursts})")
            await write(address, data)

        async def counted_recv() -> Any:
            aw = await recv()
            self.bursts += 1
            return aw

        ram.read_if._read, ram.write_if._write = faulty_read, faulty_write
        ram.write_if.aw_channel.recv = counted_recv

    def set(self, knobs: dict[str, int]) -> None:
        self.lo, self.hi = knobs.get("fault_lo", 0), knobs.get("fault_hi", 0)
        self.wr_burst, self.bursts = knobs.get("wr_err_burst", 0), 0


def stall(tb: ClockedTB, ram: AxiRam, p: float) -> None:
    """Every AXI channel of ``ram`` pauses each cycle with probability ``p``."""
    def pauses():
        while True:
            yield int(tb.rng.random() < p)
    for ch in (ram.read_if.ar_channel, ram.read_if.r_channel, ram.write_if.aw_channel,
               ram.write_if.w_channel, ram.write_if.b_channel):
        ch.set_pause_generator(pauses())


class Placed:
    """A program placed in DRAM: where its image and its instruction stream are, and what
    the DRAM held before the run (random bytes around them)."""

    def __init__(self, cfg: Config, prog: Program, rng: random.Random) -> None:
        self.prog = prog
        self.code = prog.encoded(cfg)
        self.base = prog.placement.dram_base
        self.insn_base = prog.placement.insn_offset(len(prog.dram))
        self.end = -(-(self.insn_base + len(self.code)) // INSN_ALIGN) * INSN_ALIGN + GUARD_BYTES
        assert self.end <= MEM_BYTES, f"{prog.name}: needs {self.end} bytes of DRAM"
        before = bytearray(rng.randbytes(self.end))
        before[self.base:self.base + len(prog.dram)] = prog.dram.tobytes()
        before[self.insn_base:self.insn_base + len(self.code)] = self.code
        self.before = bytes(before)

    def expected(self, cfg: Config) -> bytes:
        """The DRAM after a clean run: the image as fsim leaves it, the rest unchanged."""
        image = self.prog.dram.copy()
        Fsim(cfg).run(self.prog.insns, image)
        after = bytearray(self.before)
        after[self.base:self.base + len(image)] = image.tobytes()
        return bytes(after)


class CoreTB(ClockedTB):
    def __init__(self, dut: Any) -> None:
        super().__init__(dut)
        self.cfg = config()
        self.ram = make_ram(self)
        self.faults = Faults(self.ram)

    async def start_core(self) -> None:
        await self.start({"launch_i": 0, "insn_count_i": 0, "insn_base_i": 0, "dram_base_i": 0,
                          "dram_size_i": 0})

    async def launch(self, insn_base: int, count: int, dram_base: int, dram_size: int) -> None:
        """launch_i for one cycle (from a falling edge to the next)."""
        d = self.dut
        d.insn_base_i.value = insn_base
        d.insn_count_i.value = count
        d.dram_base_i.value = dram_base
        d.dram_size_i.value = dram_size
        d.launch_i.value = 1
        await self.cycle()
        d.launch_i.value = 0

    async def wait_done(self, max_cycles: int, what: str) -> None:
        d = self.dut
        if not val(d.done_o):
            timeout = Timer(max_cycles * PERIOD_NS, unit="ns")
            assert await First(RisingEdge(d.done_o), timeout) is not timeout, \
                f"{what}: not done in {max_cycles} cycles (error_o {val(d.error_o):#x})"
        await self.cycle()

    async def run(self, prog: Program) -> None:
        """Place, launch, wait for done_o and check ``prog`` against its expected outcome."""
        d, cfg = self.dut, self.cfg
        placed = Placed(cfg, prog, self.rng)
        self.ram.write(0, placed.before)
        self.faults.set(prog.knobs)
        await self.launch(placed.insn_base, len(placed.code) // 16, placed.base,
                          len(prog.dram))
        assert val(d.busy_o) and not val(d.done_o), f"{prog.name}: launch did not start a run"
        await self.wait_done(estimate_cycles(cfg, placed.code) + 2000, prog.name)
        assert not val(d.busy_o)
        err, idx = val(d.error_o), val(d.error_insn_o)
        outcome = prog.outcome("rtl")
        assert outcome is not None
        got = self.ram.read(0, placed.end)
        if outcome.error != ErrorCode.NONE:
            assert err == outcome.error, \
                f"{prog.name} ({prog.kind}): error {err:#x}, want {outcome.describe()}"
            assert outcome.indices is None or idx in outcome.indices, \
                f"{prog.name} ({prog.kind}): error at {idx}, want {outcome.describe()}"
            image = slice(placed.base, placed.base + len(prog.dram))
            outside = bytearray(got)
            outside[image] = placed.before[image]
            assert outside == placed.before, f"{prog.name} ({prog.kind}): wrote outside the image"
            return
        assert err == ErrorCode.NONE, f"{prog.name}: error {err:#x} at instruction {idx}"
        want = placed.expected(cfg)
        if got != want:
            diff = np.flatnonzero(np.frombuffer(got, np.uint8) != np.frombuffer(want, np.uint8))
            inside = [int(a) for a in diff if placed.base <= a < placed.base + len(prog.dram)]
            raise AssertionError(f"{prog.name}: {len(diff)} bytes differ from fsim "
                                 f"({len(inside)} inside the image), first at "
                                 f"{[hex(int(a)) for a in diff[:6]]}")
        routed = Counter(stage_of(i) for i in prog.insns)
        for stage, port in INSN_COUNTERS.items():
            assert val(getattr(d, port)) == routed[stage], \
                f"{prog.name}: {port} {val(getattr(d, port))}, {routed[stage]} routed there"


async def start(dut: Any) -> CoreTB:
    tb = CoreTB(dut)
    await tb.start_core()
    return tb


@cocotb.test()
async def directed(dut):
    """Every directed program, under random AXI stalls."""
    tb = await start(dut)
    for j, prog in enumerate(directed_programs(tb.cfg)):
        stall(tb, tb.ram, (0.0, 0.2, 0.5)[j % 3])
        await tb.run(prog)


@cocotb.test()
async def random_cases(dut):
    """Random cases (random programs, placements, don't-care fields, illegal streams and
    misaligned bases, AXI read / write / fetch faults) under random AXI stalls."""
    tb = await start(dut)
    rng = np.random.default_rng(tb.rng.randrange(2**32))
    kinds: Counter[str] = Counter()
    failing = {"fault.read", "fault.fetch", "fault.write", "align.insn", "align.dram"}
    for _ in range(1000):  # the rarest failing kind is drawn once in 50 cases
        prog = random_case(tb.cfg, rng, anywhere=False)  # the AxiRam holds MEM_BYTES
        if prog.outcome("rtl") is None or (kinds[prog.kind] if prog.kind in failing
                                           else sum(kinds.values()) >= 3 + len(failing)):
            continue
        kinds[prog.kind] += 1
        stall(tb, tb.ram, tb.rng.choice((0.0, 0.1, 0.4)))
        await tb.run(prog)
        if failing <= set(kinds) and sum(kinds.values()) >= 3 + len(failing):
            break
    dut._log.info("random cases run: %s", dict(kinds))
    assert failing <= set(kinds), f"failing kinds not drawn: {failing - set(kinds)}"


@cocotb.test()
async def illegal_streams(dut):
    """Every defect of vtabench.verify.illegal that the core checks, applied to a random
    program: the error code the validator names, at one of the indices it allows, and no write
    outside the image (the errors of fetch and of each stage: the core's error priority)."""
    tb = await start(dut)
    rng = np.random.default_rng(tb.rng.randrange(2**32))
    run: list[str] = []
    for name, defect in DEFECTS.items():
        for _ in range(8):
            body = random_program(tb.cfg, rng)
            code = defect(tb.cfg, list(body.insns), body.dram, rng)
            expect = None if code is None else expected_outcomes(tb.cfg, code, body.dram)
            if not expect or expect.get("rtl") is None:
                continue
            try:
                insns = decode_program(tb.cfg, code)
            except ValueError:
                insns = body.insns
            await tb.run(replace(body, name=f"illegal.{name}", insns=insns, code=code,
                                 expect=expect))
            run.append(name)
            break
    dut._log.info("defects run: %s", run)
    assert len(run) >= len(DEFECTS) - 4, f"only {run} of {list(DEFECTS)} applied"
    # the load stage's own error (the defects above reach it only when they pick an INP / WGT
    # LOAD): a LOAD INP past the inp buffer
    p = ProgramBuilder(tb.cfg)
    p.load(MemType.INP, tb.cfg.inp_depth - 1, p.alloc(MemType.INP, 2), 1, 2)
    p.finish()
    prog = p.build("load_past_inp")
    expect = expected_outcomes(tb.cfg, prog.encoded(tb.cfg), prog.dram)
    assert expect and expect["rtl"] == Outcome(ErrorCode.SRAM_LOAD, (0,)), expect
    await tb.run(replace(prog, expect=expect))


@cocotb.test()
async def run_control(dut):
    """A launch while busy is ignored; a misaligned DRAM base stops the run at once with ALIGN
    (done, nothing written); the next launch clears the error and runs clean."""
    tb = await start(dut)
    d = tb.dut
    progs = directed_programs(tb.cfg)
    prog = progs[0]
    placed = Placed(tb.cfg, prog, tb.rng)
    tb.ram.write(0, placed.before)
    await tb.launch(placed.insn_base, len(placed.code) // 16, placed.base, len(prog.dram))
    await ClockCycles(d.clk_i, 5)
    await tb.cycle()
    await tb.launch(0, 1, 1, 0)  # ignored: busy
    await tb.wait_done(estimate_cycles(tb.cfg, placed.code) + 2000, prog.name)
    assert (val(d.error_o), val(d.busy_o)) == (ErrorCode.NONE, 0)
    assert tb.ram.read(0, placed.end) == placed.expected(tb.cfg), "second launch changed the run"
    cycles = val(d.cycles_o)
    await ClockCycles(d.clk_i, 10)
    await tb.cycle()
    assert val(d.cycles_o) == cycles, "cycles_o counts after done"
    # a misaligned DRAM base: ALIGN at instruction 0, done with nothing written
    before = tb.ram.read(0, placed.end)
    await tb.launch(placed.insn_base, len(placed.code) // 16, tb.cfg.bus_bytes // 2,
                    len(prog.dram))
    await tb.wait_done(200, "misaligned base")
    assert (val(d.error_o), val(d.error_insn_o)) == (ErrorCode.ALIGN, 0)
    assert tb.ram.read(0, placed.end) == before, "a misaligned run wrote DRAM"
    await tb.run(progs[1])


# ------------------------------------------------------------------------------ pytest runner

SOURCES = unit_sources("vta_core")


# slow on every configuration (make test-all, make unit): in make test the same vta_core runs
# inside test_shell (directed programs and every error code of random_case through the registers,
# on the same AxiRam, faults and stalls) and on the core bench (tests/test_rtl_core.py: every
# directed program under ideal and stressed memory, random programs, the core's errors), which
# the rest of the suite builds anyway; this build and run took 67 s of a worker in a fresh-clone
# make test at 0e89dc2
@pytest.mark.rtl
@pytest.mark.slow
@pytest.mark.parametrize("config", configs())
def test_core(config: str) -> None:
    run_bench("core", "vta_core", SOURCES, config=config, seed=bench_seed())
