"""cocotb side of the core bench (top vta_tb_top): runs a batch of raw programs in one simulator.

Started by vtabench.rtl.simjob (``runner.test(test_module="vtabench.tb.core.core_bench", ...)``) with
``+vta_job=JOB.json`` (the programs: image and instruction files, layout, DRAM knobs, limits) and
``+dram_file=FILE`` (the DRAM image file the DPI model maps: a window of bus memory, its base
``window_base``; the job's ``image_offset`` and ``insn_offset`` are offsets in it, ``dram_base`` and
``insn_base`` bus addresses). For each program the TB copies the image and instructions into the
shared mapping (numpy.memmap, bulk), resets the core and the DRAM model, launches, sleeps until
done_o (one wake-up per done or per chunk of cycles: Python is never on the per-cycle path; the
clock runs in C), then copies the image back and appends one JSON line
of statistics to the results file. A program that does not finish within its cycle bound (or
wall-clock limit) is reported as a timeout with the core's status outputs instead of hanging.

The job's ``owner_pid`` is the process that made the job folder and waits for this simulator;
when it is gone (killed: nothing else would remove the folder), the bench removes the job folder
and ends the simulator at once, between programs or within a chunk of cycles.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.simtime import get_sim_time
from cocotb.triggers import ClockCycles, First, RisingEdge, Timer

from vtabench.processes import alive
from vtabench.rtl.simjob import BENCH_KNOB_SIGNALS, DRAM_KNOB_SIGNALS

STATUS_OUTPUTS = ("busy_o", "done_o", "error_o", "error_insn_o", "cycles_o", "load_busy_o",
                  "compute_busy_o", "store_busy_o", "load_insns_o", "compute_insns_o",
                  "store_insns_o", "acc_writes_o")
DRAM_OUTPUTS = ("dram_rd_beats_o", "dram_wr_beats_o", "dram_rd_bursts_o", "dram_wr_bursts_o",
                "dram_max_rd_outstanding_o", "dram_proto_err_o", "dram_resp_err_o",
                "dram_open_at_done_o")
#: DRAM knob -> input of vta_tb_top (the knobs and their defaults: vtabench.rtl.simjob).
KNOB_INPUTS = {**DRAM_KNOB_SIGNALS, **BENCH_KNOB_SIGNALS}


class Orphan:
    """Ends the simulator once the process that owns the job folder is gone, removing the
    folder first (see the module docstring)."""

    def __init__(self, folder: Path, owner_pid: int | None) -> None:
        self.folder = folder
        self.owner_pid = owner_pid

    def check(self) -> None:
        if self.owner_pid is not None and not alive(self.owner_pid):
            shutil.rmtree(self.folder, ignore_errors=True)
            os._exit(3)  # no cocotb teardown: it would write results.xml into the folder again


def _int(handle: Any) -> int | None:
    try:
        return int(handle.value)
    except ValueError:  # X / Z bits
        return None


class DramImage:
    """Python's view of the DPI DRAM model's storage: the same file, mapped with numpy.memmap."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.mem = np.memmap(self.path, dtype=np.uint8, mode="r+")

    def load(self, image: np.ndarray, image_offset: int, code: bytes, insn_offset: int,
             total: int) -> None:
        self.mem[:total] = 0
        self.mem[image_offset:image_offset + len(image)] = image
        self.mem[insn_offset:insn_offset + len(code)] = np.frombuffer(code, dtype=np.uint8)

    def read(self, start: int, nbytes: int) -> np.ndarray:
        return np.array(self.mem[start:start + nbytes])


class CoreTB:
    """Owns the clock, the reset and the DRAM model of vta_tb_top; runs programs one by one."""

    def __init__(self, dut: Any, dram_file: str | Path, clock_ns: int = 10,
                 orphan: Orphan | None = None) -> None:
        self.dut = dut
        self.orphan = orphan
        self.clock_ns = clock_ns
        self.dram = DramImage(dram_file)
        self.log = dut._log

    async def start(self) -> None:
        d = self.dut
        d.rst_ni.value = 0
        d.launch_i.value = 0
        d.insn_count_i.value = 0
        d.insn_base_i.value = 0
        d.dram_base_i.value = 0
        d.dram_size_i.value = 0
        d.dram_seed_i.value = 1
        d.dram_win_base_i.value = 0
        for sig in KNOB_INPUTS.values():
            getattr(d, sig).value = 0
        Clock(d.clk_i, self.clock_ns, unit="ns").start(start_high=False)
        await ClockCycles(d.clk_i, 2)

    def set_knobs(self, knobs: dict[str, int], seed: int, window_base: int) -> None:
        """The DRAM model's knobs, its seed and the bus address of its window (the file's
        byte 0)."""
        for k, sig in KNOB_INPUTS.items():
            getattr(self.dut, sig).value = int(knobs.get(k, 0))
        self.dut.dram_seed_i.value = seed & 0xFFFFFFFF or 1
        self.dut.dram_win_base_i.value = window_base

    async def reset(self, cycles: int = 4) -> None:
        self.dut.rst_ni.value = 0
        self.dut.launch_i.value = 0
        await ClockCycles(self.dut.clk_i, cycles)  # the DRAM model remaps its file here
        self.dut.rst_ni.value = 1
        await ClockCycles(self.dut.clk_i, 2)

    async def launch(self, insn_base: int, insn_count: int, dram_base: int,
                     dram_size: int) -> None:
        d = self.dut
        d.insn_base_i.value = insn_base
        d.insn_count_i.value = insn_count
        d.dram_base_i.value = dram_base
        d.dram_size_i.value = dram_size
        await RisingEdge(d.clk_i)
        d.launch_i.value = 1
        await RisingEdge(d.clk_i)
        d.launch_i.value = 0

    async def wait_done(self, max_cycles: int, timeout_s: float | None) -> tuple[str, int]:
        """Sleep until done_o; returns (state, cycles waited): 'done' or 'timeout'."""
        d = self.dut
        t_start = get_sim_time("ns")
        wall0 = time.monotonic()
        chunk = 200_000
        while True:
            if _int(d.done_o) == 1:
                return "done", int((get_sim_time("ns") - t_start) // self.clock_ns)
            waited = int((get_sim_time("ns") - t_start) // self.clock_ns)
            if waited >= max_cycles:
                return "timeout", waited
            if timeout_s is not None and time.monotonic() - wall0 > timeout_s:
                return "wall-timeout", waited
            if self.orphan is not None:
                self.orphan.check()
            n = min(chunk, max_cycles - waited)
            await First(RisingEdge(d.done_o), Timer(n * self.clock_ns, unit="ns"))

    def status(self) -> dict[str, int | None]:
        out = {name[:-2]: _int(getattr(self.dut, name)) for name in STATUS_OUTPUTS}
        out.update({name[:-2]: _int(getattr(self.dut, name)) for name in DRAM_OUTPUTS})
        return out

    async def run_program(self, p: dict[str, Any], image: np.ndarray, code: bytes) -> dict:
        start, n_img = p["image_offset"], p["image_bytes"]
        self.dram.load(image, start, code, p["insn_offset"], p["total_bytes"])
        self.set_knobs(p["knobs"], p["seed"], p["window_base"])
        await self.reset()
        wall0 = time.monotonic()
        cpu0 = time.process_time()
        await self.launch(p["insn_base"], p["insn_count"], p["dram_base"], p["dram_size"])
        state, waited = await self.wait_done(p["max_cycles"], p.get("timeout_s"))
        wall = time.monotonic() - wall0
        cpu = time.process_time() - cpu0
        if state == "done":
            await ClockCycles(self.dut.clk_i, 2)  # let the counters settle
        st = self.status()
        error = st.get("error") or 0
        res: dict[str, Any] = {"name": p["name"], "state": state if not (state == "done" and error)
                               else "error", **st, "sim_cycles": waited,
                               "wall_s": round(wall, 4)}
        res["cycles_per_s"] = round(waited / wall) if wall > 0 else None
        # CPU time of the simulator process: the rate without other processes' contention.
        res["cpu_s"] = round(cpu, 4)
        res["cycles_per_cpu_s"] = round(waited / cpu) if cpu > 0 else None
        # Bytes the core must not have touched: everything outside the image.
        rest = self.dram.read(0, p["total_bytes"])
        expect = np.zeros_like(rest)
        expect[p["insn_offset"]:p["insn_offset"] + len(code)] = np.frombuffer(code, np.uint8)
        inside = slice(start, start + n_img)
        rest[inside] = expect[inside] = 0
        res["stray_writes"] = int(np.count_nonzero(rest != expect))
        if state != "done":
            self.log.error("%s: %s after %d cycles; status %s", p["name"], state, waited, st)
        return res


@cocotb.test()
async def run_job(dut: Any) -> None:
    """Run every program of the job file in order (reset between programs)."""
    job_path = Path(str(cocotb.plusargs["vta_job"]))
    job = json.loads(job_path.read_text())
    base = job_path.parent
    orphan = Orphan(base, job.get("owner_pid"))
    tb = CoreTB(dut, job["dram_file"], job.get("clock_ns", 10), orphan)
    await tb.start()
    with open(job["results"], "a") as out:
        for i, p in enumerate(job["programs"]):
            orphan.check()
            image = np.fromfile(base / f"p{i}.img", dtype=np.uint8)
            code = (base / f"p{i}.insn").read_bytes()
            res = await tb.run_program(p, image, code)
            tb.dram.read(p["image_offset"], p["image_bytes"]).tofile(base / f"p{i}.out")
            out.write(json.dumps(res) + "\n")
            out.flush()
            tb.log.info("%s: %s, %s cycles, %.3f s", p["name"], res["state"], res["cycles"],
                        res["wall_s"])
