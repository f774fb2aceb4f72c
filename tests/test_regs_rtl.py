"""The BAR0 register semantics on the RTL platform, generated from the register map.

Every check is derived from ``regs.FIELDS`` (generated from spec/contracts/regmap.rdl), not
written per register: every register's value after power-on (the map's reset values; hardware-
driven fields read the idle core's zeros, CONFIG_ID the configuration's id), every writable field
written and read back with its neighbours untouched, read-only fields unchanged by writes, and
write-one-to-clear on every w1c field. They run on the platform simulator (the generated register
block inside the shell) over the driver's socket, without the driver's bring-up writes: each test
re-attaches device memory, which resets the card.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np
import pytest
from vtabench.drivers.rtl.device import Channel
from vtabench.drivers.rtl.launcher import start_server
from vtabench.tb.platform.protocol import Op, pack_mmio

from vtabench.spec.config import Config, load_config
from vtabench.spec.contracts import regs as R
from vtabench.tb.unit.regmap_fields import effect_bits, field_mask, fields_with_access

MEM_BYTES = 1 << 16
ALL_ONES = 0xFFFFFFFF
Mmio = Callable[[Sequence[tuple]], list[int]]


@pytest.fixture(scope="module")
def cfg() -> Config:
    return load_config("default")


@pytest.fixture(scope="module")
def card(cfg: Config) -> Iterator[Callable[[], Mmio]]:
    """A function that resets the card (ATTACH: power-on) and returns its raw MMIO."""
    server = start_server(cfg, seed=4321)
    ch = Channel(server.connect(), server, "the register tests' simulator")
    try:
        ch.request(Op.HELLO)

        def mmio(ops: Sequence[tuple]) -> list[int]:
            data = ch.request(Op.MMIO, payload=pack_mmio(ops)).payload
            return list(np.frombuffer(data, dtype="<u4").tolist())

        def reset() -> Mmio:
            ch.request(Op.ATTACH, addr=MEM_BYTES)
            return mmio

        yield reset
        ch.request(Op.BYE)
    finally:
        ch.close()
        server.stop()


@pytest.mark.rtl
def test_reset_values(card: Callable[[], Mmio], cfg: Config) -> None:
    mmio = card()
    got = dict(zip(R.REGISTERS, mmio([("r", off) for off in R.REGISTERS.values()]), strict=True))
    for reg, name, f in fields_with_access("rw", "ro", "const", "wo_pulse", "w1c"):
        value = (got[reg] & field_mask(f)) >> f.lsb
        if f.reset is not None:  # stored or constant: the map's reset value (LAUNCH reads 0)
            want = f.reset
        elif reg == "CONFIG_ID":
            want = cfg.config_id
        else:  # driven by the idle core and shell after reset: nothing ran, nothing raised
            want = 0
        assert value == want, f"{reg}.{name} reads {value:#x} after reset, want {want:#x}"
    for reg, value in got.items():
        assert value & ~R.DEFINED_BITS[reg] == 0, f"{reg}: undefined bits read {value:#010x}"


@pytest.mark.rtl
def test_writable_fields_read_back(card: Callable[[], Mmio]) -> None:
    """Each rw field takes two patterns and reads each back; the other fields of its register
    keep their value; byte enables select the lanes written."""
    mmio = card()
    for reg, name, f in fields_with_access("rw"):
        off, m = R.REGISTERS[reg], field_mask(f)
        before = mmio([("r", off)])[0]
        for pattern in (0xA5C3_5A3C, 0x5A3C_A5C3, ALL_ONES, 0):
            value = (before & ~m) | (pattern & m)
            got = mmio([("w", off, value & ~effect_bits(reg)), ("r", off)])[1]
            assert got & m == pattern & m, \
                f"{reg}.{name}: wrote {pattern & m:#x}, read {got & m:#x}"
            assert got & ~m == before & ~m, f"{reg}.{name}: a write changed other fields"
        got = mmio([("w", off, ALL_ONES, 0b0100), ("r", off)])[1]  # byte lane 2 only
        assert got & m == 0x00FF_0000 & m, f"{reg}.{name}: WSTRB 0b0100 gave {got:#x}"
        mmio([("w", off, before & ~effect_bits(reg))])


@pytest.mark.rtl
def test_read_only_fields_unchanged_by_writes(card: Callable[[], Mmio]) -> None:
    mmio = card()
    for reg in {reg for reg, _, _ in fields_with_access("ro", "const")}:
        off = R.REGISTERS[reg]
        ro = sum(field_mask(f) for f in R.FIELDS[reg].values() if f.access in ("ro", "const"))
        before = mmio([("r", off)])[0]
        for value in (ALL_ONES, 0, ~before & ALL_ONES):
            got = mmio([("w", off, value & ~effect_bits(reg)), ("r", off)])[1]
            assert got & ro == before & ro, \
                f"{reg}: a write of {value:#x} changed {before:#x} to {got:#x}"


@pytest.mark.rtl
def test_write_one_to_clear(card: Callable[[], Mmio]) -> None:
    """A run that fails at once (one instruction outside the 0-byte DRAM window of reset) sets
    every interrupt cause; writing 0 clears nothing, writing 1 to one field clears that field
    alone, and the interrupt output (STATUS.IRQ) follows IRQ_STATUS & IRQ_ENABLE."""
    mmio = card()
    w1c = fields_with_access("w1c")
    assert w1c, "the map has write-one-to-clear fields"
    regs_w1c = {reg for reg, _, _ in w1c}
    every_cause = sum(field_mask(f) for f in R.FIELDS["IRQ_ENABLE"].values())
    mmio([("w", R.IRQ_ENABLE, every_cause), ("w", R.INSN_COUNT, 1),
          ("w", R.CTRL, R.CTRL_LAUNCH)])
    for _ in range(100):
        status = mmio([("r", R.STATUS)])[0]
        if status & R.STATUS_DONE:
            break
    assert status & R.STATUS_DONE and status & R.STATUS_ERROR, f"STATUS {status:#x}"
    for reg in regs_w1c:
        off = R.REGISTERS[reg]
        all_set = sum(field_mask(f) for f in R.FIELDS[reg].values() if f.access == "w1c")
        assert mmio([("r", off)])[0] & all_set == all_set, f"{reg}: the failed run set it all"
        assert mmio([("w", off, 0), ("r", off)])[1] & all_set == all_set, f"{reg}: 0 cleared"
        remaining = all_set
        for r2, name, f in w1c:
            if r2 != reg:
                continue
            assert mmio([("r", R.STATUS)])[0] & R.STATUS_IRQ, "interrupt raised while causes set"
            remaining &= ~field_mask(f)
            got = mmio([("w", off, field_mask(f)), ("r", off)])[1]
            assert got & all_set == remaining, f"{reg}.{name}: W1C left {got:#x}"
        status = mmio([("r", R.STATUS)])[0]
        assert not status & R.STATUS_IRQ, "interrupt dropped once every cause is cleared"
