"""The C driver (upstream VTA's driver ABI over the simulator socket) and its example program.

``make`` builds libvtasim.a and vta_example with the system compiler (headers from the protocol,
the register map and the configuration's committed view); the example loads programs and their
DRAM images, runs them on a simulated card that ``vtabench serve`` runs, and checks the images
against fsim's, and says FAIL for an image that differs. A driver program that misuses its
buffers (tests/c/driver_misuse.c) is stopped at the faulting call with one line naming the
buffer.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from vtabench.drivers.rtl.c_driver import (
    C_DIR,
    COMMITTED_CONFIG_HEADERS,
    build_c_driver,
    config_header,
    generated_headers,
    main,
)
from vtabench.drivers.rtl.launcher import start_server
from vtabench.fsim import Fsim
from vtabench.spec.config import CONFIG_DIR, load_config
from vtabench.spec.isa.insn import encode_program
from vtabench.verify.directed import directed_programs


def test_generated_headers_name_every_register_and_op(tmp_path: Path) -> None:
    """The C view of the register map (peakrdl-cheader's vta_regs.h through vta/bar0.h) puts
    every register at the Python view's offset with the same field masks and expected VERSION:
    a C file of static assertions compiles."""
    from vtabench.tb.platform.protocol import Op
    from vtabench.spec.contracts import regs

    h = generated_headers(load_config("default"))
    for op in Op:
        assert f"#define VTA_SIM_OP_{op.name} {int(op)}u" in h["vta_sim_protocol.h"]
    assert "VTA_CONFIG_ID" in h["vta_config.h"]
    (tmp_path / "vta_regs.h").write_text(h["vta_regs.h"])
    checks = [f"_Static_assert(VTA_REG({n}) == {off:#x}u, \"{n}\");"
              for n, off in regs.REGISTERS.items()]
    for reg, fields in regs.FIELDS.items():
        for f, fld in fields.items():
            mask = ((1 << fld.width) - 1) << fld.lsb
            checks.append(f"_Static_assert(VTA_REGS__{reg}__{f}_bm == {mask:#x}u, \"{reg}.{f}\");")
    version = regs.VERSION_EXPECTED
    checks.append(f"_Static_assert(VTA_REG_VERSION_EXPECTED == {version:#x}u, \"VERSION\");")
    src = tmp_path / "check.c"
    src.write_text('#include "vta/bar0.h"\n' + "\n".join(checks) + "\n")
    r = subprocess.run(["cc", "-std=c11", "-fsyntax-only", f"-I{C_DIR / 'include'}",
                        f"-I{tmp_path}", str(src)], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr


def test_config_header_is_the_committed_view_without_the_generator() -> None:
    """A built-in configuration takes the header `vtabench gen` commits; the generator is not
    even imported."""
    from vtabench.hwgen.paths import OPENCL_GEN_DIR

    assert COMMITTED_CONFIG_HEADERS == OPENCL_GEN_DIR
    probe = ("import sys; from vtabench.drivers.rtl.c_driver import generated_headers; "
             "from vtabench.spec.config import load_config; "
             "h = generated_headers(load_config('cloud32'))['vta_config.h']; "
             "print(h == open(sys.argv[1]).read(), sorted(m for m in sys.modules "
             "if m.startswith('vtabench.hwgen')))")
    r = subprocess.run([sys.executable, "-c", probe,
                        str(COMMITTED_CONFIG_HEADERS / "cloud32" / "vta_config.h")],
                       capture_output=True, text=True, timeout=60, check=True)
    assert r.stdout.split() == ["True", "[]"], r.stdout + r.stderr


def test_config_given_by_path_is_generated(tmp_path: Path) -> None:
    """A JSON file under a built-in name but with other values does not take that name's
    committed header: its own is generated (its CONFIG_ID)."""
    from vtabench.hwgen.constants import c_header

    data = json.loads((CONFIG_DIR / "default.json").read_text())
    data["NAME"] = "default"
    data["LOG_ACC_BUFF_SIZE"] -= 1
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(data))
    cfg = load_config(path)
    committed = (COMMITTED_CONFIG_HEADERS / "default" / "vta_config.h").read_text()
    assert cfg.config_id != load_config("default").config_id
    assert config_header(cfg) == c_header(cfg) != committed
    assert f"#define VTA_CONFIG_ID {cfg.config_id}u" in config_header(cfg)


def test_build_into_an_output_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """--out DIR (relative to the working folder) gets the library, the example and gen/; a
    program links against them as docs/platform.md says."""
    monkeypatch.chdir(tmp_path)
    assert main(["--config", "edge8", "--out", "drv"]) == 0
    out = tmp_path / "drv"
    assert capsys.readouterr().out.strip() == str(out)
    assert {p.name for p in out.iterdir()} >= {"libvtasim.a", "vta_example", "gen"}
    assert (out / "gen" / "vta_config.h").read_text() == \
        (COMMITTED_CONFIG_HEADERS / "edge8" / "vta_config.h").read_text()
    prog = _link(MISUSE_SOURCE, out, tmp_path / "prog")
    assert prog.is_file()
    assert main(["--config", "nope", "--out", "drv"]) == 2
    assert "no configuration named 'nope'" in capsys.readouterr().err


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


#: A driver program that misuses the buffers in the way its argument names.
MISUSE_SOURCE = Path(__file__).parent / "c" / "driver_misuse.c"
#: Buffer A of driver_misuse.c, with the device address and size the driver names it by.
A_DESC = "buffer {A} (device address 0x0, 4096 bytes)"
#: What the driver says for each misuse (after "vta sim driver: ").
MISUSE_LINES = {
    "h2d": "VTAMemCopyFromHost: writing 8192 bytes at offset 0 of " + A_DESC
           + " runs past its end",
    "d2h": "VTAMemCopyToHost: reading 4096 bytes at offset 1024 of " + A_DESC
           + " runs past its end",
    "d2d": "VTAMemCopyFromHost: reading 8192 bytes at offset 0 of " + A_DESC
           + " runs past its end",
    "flush": "VTAFlushCache: flushing 8192 bytes at offset 0 of " + A_DESC + " runs past its end",
    "invalidate": "VTAInvalidateCache: invalidating 3997 bytes at offset 100 of " + A_DESC
                  + " runs past its end",
    "use_after_free": "VTAMemCopyFromHost: use after free: writing 16 bytes at offset 0 of "
                      + A_DESC + ", which VTAMemFree gave back",
    "double_free": "VTAMemFree: double free of " + A_DESC,
    "wrong_address": "VTAFlushCache: flushing 16 bytes at offset 0 of " + A_DESC
                     + ": device address 0x1000 given, the buffer's is 0x0",
    "negative_size": "VTAInvalidateCache: invalidating -1 bytes at {A}: a negative size",
    "not_a_buffer": "VTAMemCopyFromHost: {H} is not inside a VTAMemAlloc buffer",
    "free_inside": "VTAMemFree: {A8} is at offset 8 of " + A_DESC + ", not its start",
}


def _link(source: Path, lib_dir: Path, exe: Path) -> Path:
    """Build a driver program with the system compiler against libvtasim.a in ``lib_dir``."""

    subprocess.run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-DUSE_VTA64",
                    "-I", str(C_DIR / "include"), "-I", str(lib_dir / "gen"), str(source),
                    "-L", str(lib_dir), "-lvtasim", "-o", str(exe)], check=True, timeout=120)
    return exe


@pytest.fixture(scope="module")
def misuse_card(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    """driver_misuse built against the driver, and the environment of a card serving it."""
    cfg = load_config("default")
    folder = tmp_path_factory.mktemp("misuse")
    exe = _link(MISUSE_SOURCE, build_c_driver(cfg, folder / "driver"), folder / "driver_misuse")
    server = start_server(cfg, once=False)
    try:
        server.wait_listening()
        yield exe, {**os.environ, "VTA_SIM_SOCKET": str(server.socket_path),
                    "VTA_SIM_MEM_BYTES": str(1 << 20)}
    finally:
        server.stop(0.0)


def _run_misuse(card: tuple[Path, dict[str, str]], case: str) -> subprocess.CompletedProcess[str]:
    exe, env = card
    return subprocess.run([str(exe), case], env=env, capture_output=True, text=True, timeout=120,
                          check=False, preexec_fn=lambda: resource.setrlimit(  # no core file
                              resource.RLIMIT_CORE, (0, 0)))


@pytest.mark.rtl
@pytest.mark.parametrize("case", sorted(MISUSE_LINES))
def test_c_driver_stops_a_misuse(misuse_card, case: str) -> None:  # type: ignore[no-untyped-def]
    """Each misuse aborts at the faulting call with one line naming the buffer (A), its size and
    the offending offset and size (or the pointer that is no buffer); nothing after it runs."""
    r = _run_misuse(misuse_card, case)
    names = dict(kv.split("=") for kv in r.stdout.split())
    want = "vta sim driver: " + MISUSE_LINES[case].format(
        A8=f"{int(names['A'], 16) + 8:#x}", **names)
    assert r.returncode == -signal.SIGABRT and r.stderr.splitlines() == [want], \
        f"{case}: status {r.returncode}\n{r.stdout}{r.stderr}"


@pytest.mark.rtl
def test_c_driver_allows_every_in_bounds_use(misuse_card) -> None:  # type: ignore[no-untyped-def]
    """The control: the largest in-bounds copies (host, device and device to device), flush and
    invalidate pass, and the data survives the round trip through the card."""
    r = _run_misuse(misuse_card, "ok")
    assert r.returncode == 0 and r.stderr == "", r.stdout + r.stderr
