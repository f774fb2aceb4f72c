"""The driver API: the shared allocator, and the fsim and opencl backends through open_device."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from vtabench.spec.config import load_config
from vtabench.verify.smoke import gemm_tiled


from vtabench.drivers import (Allocator, DeviceError, OutOfMemoryError,  # noqa: E402
                              open_device)
from vtabench.drivers.alloc import AllocError  # noqa: E402
from vtabench.fsim import Fsim  # noqa: E402
from vtabench.spec.isa.insn import encode_program  # noqa: E402
from vtabench.verify.directed import directed_programs  # noqa: E402

# ---------------------------------------------------------------------------------------------
# Allocator
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("align", [1, 2, 16, 64, 256, 4096])
def test_alloc_alignment(align: int) -> None:
    a = Allocator(1 << 20)
    addrs = [a.alloc(n, align) for n in (1, 3, 100, 17, 4096, 5)]
    assert all(x % align == 0 for x in addrs)
    a.check()


def test_alloc_no_overlap_random() -> None:
    rng = np.random.default_rng(1)
    a = Allocator(1 << 16, base=0)
    live: dict[int, int] = {}
    for _ in range(2000):
        if live and rng.random() < 0.45:
            addr = int(rng.choice(list(live)))
            a.free(addr)
            del live[addr]
        else:
            n = int(rng.integers(0, 700))
            align = 1 << int(rng.integers(0, 9))
            try:
                addr = a.alloc(n, align)
            except OutOfMemoryError:
                continue
            assert addr % align == 0
            live[addr] = max(n, 1)
        a.check()
        spans = sorted(live.items())
        for (s0, n0), (s1, _) in itertools.pairwise(spans):
            assert s0 + n0 <= s1, "overlapping allocations"
        assert all(s + n <= 1 << 16 for s, n in spans)
    for addr in list(live):
        a.free(addr)
    assert a.free_blocks() == [(0, 1 << 16)]


def test_alloc_merges_neighbours() -> None:
    a = Allocator(1024)
    x, y, z = a.alloc(100, 1), a.alloc(100, 1), a.alloc(100, 1)
    assert (x, y, z) == (0, 100, 200)
    a.free(x)
    a.free(z)  # merges with the tail
    assert a.free_blocks() == [(0, 100), (200, 824)]
    a.free(y)  # merges with both sides
    assert a.free_blocks() == [(0, 1024)]
    # The merged block serves a request none of the pieces could.
    assert a.alloc(1024, 1) == 0


def test_alloc_alignment_gap_stays_free() -> None:
    a = Allocator(8192)
    a.alloc(10, 1)
    b = a.alloc(100, 4096)
    assert b == 4096
    assert a.alloc(50, 1) == 10  # the gap before the aligned block is still usable
    a.check()


def test_out_of_memory_message() -> None:
    a = Allocator(4096)
    a.alloc(1000, 1)
    a.alloc(1000, 1)
    first = a.allocations()
    a.free(min(first))  # 1000 free at 0, 2096 free at the end
    with pytest.raises(OutOfMemoryError) as info:
        a.alloc(3000)
    err = info.value
    msg = str(err)
    assert "requested 3000 bytes" in msg and "largest free block 2096 bytes" in msg
    assert "3096 bytes free of 4096 total" in msg
    assert (err.requested, err.largest_free, err.total) == (3000, 2096, 4096)


def test_alloc_bad_arguments() -> None:
    a = Allocator(4096)
    with pytest.raises(AllocError, match="power of two"):
        a.alloc(10, 3)
    with pytest.raises(AllocError, match="non-negative"):
        a.alloc(-1)
    x = a.alloc(0)  # zero bytes still get a distinct address
    assert a.alloc(0) != x
    a.free(x)
    with pytest.raises(AllocError, match="not a live allocation"):
        a.free(x)


# ---------------------------------------------------------------------------------------------
# Backends through the API
# ---------------------------------------------------------------------------------------------

def _run_through_api(target: str, cfg, prog, **opts) -> np.ndarray:  # type: ignore[no-untyped-def]
    code = encode_program(cfg, prog.insns)
    with open_device(target, cfg, mem_bytes=1 << 20, **opts) as dev:
        # dram_base is absolute (base-0 convention): the image sits at address 0, and the
        # instructions go after it.
        base = dev.alloc(prog.dram.size, align=4096)
        assert base == 0
        iaddr = dev.alloc(len(code), align=16)
        dev.write(base, prog.dram)
        dev.write(iaddr, np.frombuffer(code, np.uint8))
        assert np.array_equal(dev.read(iaddr, len(code)), np.frombuffer(code, np.uint8))
        result = dev.run(iaddr, len(prog.insns), timeout_s=60)
        assert result.insn_count == len(prog.insns)
        return dev.read(base, prog.dram.size)


@pytest.mark.parametrize("target", ["fsim", "opencl", "rtl"])
def test_backend_runs_program(target: str) -> None:
    cfg = load_config("default")
    prog = gemm_tiled(cfg, 16, 4, 4)
    ref = prog.dram.copy()
    Fsim(cfg).run(prog.insns, ref)
    got = _run_through_api(target, cfg, prog)
    assert np.array_equal(got, ref)


@pytest.mark.parametrize("target", ["fsim", "opencl", "rtl"])
def test_backend_memory_errors(target: str) -> None:
    cfg = load_config("default")
    dev = open_device(target, cfg, mem_bytes=1 << 16)
    with pytest.raises(DeviceError, match="outside device memory"):
        dev.write((1 << 16) - 2, b"abcd")
    with pytest.raises(DeviceError, match="outside device memory"):
        dev.read(-1, 4)
    with pytest.raises(OutOfMemoryError, match="largest free block 65536"):
        dev.alloc(1 << 17)
    a = dev.alloc(64)
    dev.write(a, np.arange(64, dtype=np.uint8))
    assert dev.read(a + 8, 4).tolist() == [8, 9, 10, 11]
    with pytest.raises(DeviceError, match="16-byte aligned"):
        dev.run(8, 1)
    dev.close()
    with pytest.raises(DeviceError, match="closed"):
        dev.alloc(16)


def test_open_unknown_target() -> None:
    with pytest.raises(DeviceError, match="unknown target 'gpu'"):
        open_device("gpu", "default")


def test_target_table_resolves_every_target() -> None:
    """Every entry of the one target table names importable pieces."""
    from vtabench.drivers.api import BACKENDS, resolve

    for name, t in BACKENDS.items():
        for ref in (t.device, t.batch, t.bench, t.server):
            if ref is not None:
                assert callable(resolve(ref)), f"{name}: {ref}"


def test_device_errors_cross_processes_with_their_attributes() -> None:
    """The rtl driver's exceptions pickle with their attributes (a regression worker, a Dask
    task), TimeoutError subclasses included."""
    import pickle

    from vtabench.drivers import RunTimeoutError
    from vtabench.drivers.rtl.errors import DeviceRunError, DmaTimeoutError

    for exc in (DmaTimeoutError("late", "h2d", 64, 128, 0, {"STATUS": 2}),
                DeviceRunError("bad", 1, 7, {"ERROR_CODE": 1}),
                RunTimeoutError("slow", 2.5, {"STATUS": 1})):
        back = pickle.loads(pickle.dumps(exc))
        assert type(back) is type(exc) and back.args == exc.args
        assert back.__dict__ == exc.__dict__


def test_fsim_backend_directed_programs() -> None:
    cfg = load_config("default")
    for prog in directed_programs(cfg)[:4]:
        ref = prog.dram.copy()
        Fsim(cfg).run(prog.insns, ref)
        assert np.array_equal(_run_through_api("fsim", cfg, prog), ref), prog.name
