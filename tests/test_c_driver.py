"""The C driver (upstream VTA's driver ABI over the simulator socket) and its example program.

``make`` builds libvtasim.a and vta_example with the system compiler (headers generated from the
protocol, the register map and the configuration); the example loads programs and their DRAM
images, runs them on a simulated card that ``vtabench serve`` runs, and checks the images against
fsim's, and says FAIL for an image that differs.
"""

from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest

from vtabench.drivers.rtl.c_driver import build_c_driver, generated_headers
from vtabench.drivers.rtl.launcher import start_server
from vtabench.fsim import Fsim
from vtabench.spec.config import load_config
from vtabench.spec.isa.insn import encode_program
from vtabench.verify.directed import directed_programs


def test_generated_headers_name_every_register_and_op() -> None:
    from vtabench.drivers.rtl.protocol import Op
    from vtabench.spec.contracts import regs

    h = generated_headers(load_config("default"))
    for name, off in regs.REGISTERS.items():
        assert f"#define VTA_REG_{name} {off:#x}u" in h["vta_regs.h"]
    for op in Op:
        assert f"#define VTA_SIM_OP_{op.name} {int(op)}u" in h["vta_sim_protocol.h"]
    assert "VTA_CONFIG_ID" in h["vta_config.h"]


@pytest.mark.rtl
def test_example_driver_runs_programs_on_the_card(tmp_path) -> None:  # type: ignore[no-untyped-def]
    cfg = load_config("default")
    example = build_c_driver(cfg) / "vta_example"
    progs = {p.name: p for p in directed_programs(cfg)}
    cases = []
    for name in ("gemm_loops", "alu_hazards"):
        p = progs[name]
        want = p.dram.copy()
        Fsim(cfg).run(p.insns, want)
        files = [tmp_path / f"{name}.{kind}.bin" for kind in ("prog", "dram", "expected")]
        files[0].write_bytes(encode_program(cfg, p.insns))
        files[1].write_bytes(p.dram.tobytes())
        files[2].write_bytes(want.tobytes())
        cases.append((name, files, want))
    wrong = tmp_path / "wrong.expected.bin"
    flipped = cases[0][2].copy()
    flipped[np.flatnonzero(cases[0][2] != progs["gemm_loops"].dram)[0]] ^= 1
    wrong.write_bytes(flipped.tobytes())

    server = start_server(cfg, once=False)
    try:
        server.wait_listening()
        env = {**os.environ, "VTA_SIM_SOCKET": str(server.socket_path),
               "VTA_SIM_MEM_BYTES": str(1 << 20)}

        def example_run(*files):  # type: ignore[no-untyped-def]
            return subprocess.run([str(example), *map(str, files)], env=env, capture_output=True,
                                  text=True, timeout=300, check=False)

        for name, files, _ in cases:
            r = example_run(*files)
            assert r.returncode == 0 and r.stdout.startswith("PASS"), \
                f"{name}: {r.stdout}{r.stderr}"
            assert " cycles" in r.stdout
        r = example_run(cases[0][1][0], cases[0][1][1], wrong)
        assert r.returncode == 1 and r.stdout.startswith("FAIL: first difference at byte"), \
            r.stdout + r.stderr
    finally:
        server.stop(0.0)
    no_server = subprocess.run([str(example), *map(str, cases[0][1])],
                               env={**env, "VTA_SIM_SOCKET": str(server.socket_path)},
                               capture_output=True, text=True, timeout=60, check=False)
    assert no_server.returncode == 1 and "no simulator serves on" in no_server.stderr
