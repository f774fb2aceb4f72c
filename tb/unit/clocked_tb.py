"""Shared pieces of the module-level unit benches (tb/unit/test_*.py).

Each bench has a small TB class that owns the clock (cocotb.clock.Clock: it runs in C, not in
Python) and the reset. Drivers change inputs at the falling edge; monitors sample 1 ns later, so
every handshake is judged on settled values well before the next rising edge. The random seed is
cocotb's (COCOTB_RANDOM_SEED, printed by cocotb at start and by the benches on failure).
"""

from __future__ import annotations

import json
import os
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge, Timer

from vtabench.spec.config import Config, load_config

PERIOD_NS = 10


def val(handle) -> int:
    """A signal's value as an unsigned int."""
    v = handle.value
    try:
        return int(v.to_unsigned())
    except AttributeError:
        return int(v)


def params() -> dict[str, int]:
    """HDL parameters the pytest side built the module with (UNIT_PARAMS, JSON)."""
    return json.loads(os.environ.get("UNIT_PARAMS", "{}"))


def config() -> Config:
    """The configuration the pytest side built the module against (UNIT_CONFIG): the package's
    widths and the instance parameters of the core come from it."""
    return load_config(os.environ.get("UNIT_CONFIG", "default"))


def seed_rng() -> random.Random:
    seed = cocotb.RANDOM_SEED  # per test, derived by cocotb from COCOTB_RANDOM_SEED and the name
    cocotb.log.info("test seed %d (derived from COCOTB_RANDOM_SEED=%s)", seed,
                    os.environ.get("COCOTB_RANDOM_SEED", "?"))
    return random.Random(seed)


class ClockedTB:
    """Clock + active-low reset for a module with clk_i / rst_ni."""

    def __init__(self, dut, has_reset: bool = True) -> None:
        self.dut = dut
        self.has_reset = has_reset
        self.rng = seed_rng()

    async def start(self, reset_inputs: dict[str, int] | None = None) -> None:
        Clock(self.dut.clk_i, PERIOD_NS, unit="ns").start()
        for name, value in (reset_inputs or {}).items():
            getattr(self.dut, name).value = value
        if self.has_reset:
            self.dut.rst_ni.value = 0
            for _ in range(3):
                await RisingEdge(self.dut.clk_i)
            self.dut.rst_ni.value = 1
        await FallingEdge(self.dut.clk_i)

    async def cycle(self) -> None:
        """From one falling edge to the next (inputs set now act at the rising edge between)."""
        await FallingEdge(self.dut.clk_i)

    @staticmethod
    async def settle() -> None:
        await Timer(1, unit="ns")
