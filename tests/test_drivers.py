"""The driver API: the shared allocator, and the fsim and opencl backends through open_device."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from vtabench.spec.config import load_config
from vtabench.verify.smoke import gemm_tiled


from vtabench.drivers import (Allocator, DeviceError, OutOfMemoryError,  # noqa: E402
                              open_device)
from vtabench.drivers.alloc import (AllocError, BufferMisuseError,  # noqa: E402
                                    BufferOverrunError, DoubleFreeError, UseAfterFreeError)
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
    with pytest.raises(AllocError, match="not a live allocation"):
        a.free(x + 4096)


def test_alloc_names_a_misuse_of_its_buffers() -> None:
    """Past the end, after a free, freed twice: each names the buffer; raw memory (outside every
    allocation) passes; a freed buffer allocated again is live again."""
    a = Allocator(1 << 16)
    x = a.alloc(100, 64)
    y = a.alloc(64, 64)
    a.check_access(x, 100, "write")
    a.check_access(x + 99, 1, "read")
    a.check_access(1 << 12, 1 << 12, "write")  # raw memory
    with pytest.raises(BufferOverrunError, match=rf"^write of 101 bytes at {x:#x} \(offset 0\) "
                       rf"runs past the end of buffer {x:#x} \(100 bytes\)$"):
        a.check_access(x, 101, "write")
    a.free(x)
    with pytest.raises(UseAfterFreeError, match=rf"^use after free: read of 4 bytes at "
                       rf"{x + 8:#x} \(offset 8\) of buffer {x:#x} \(100 bytes\), which was freed$"):
        a.check_access(x + 8, 4, "read")
    with pytest.raises(DoubleFreeError, match=rf"^double free of buffer {x:#x} \(100 bytes\)$"):
        a.free(x)
    a.check()
    z = a.alloc(32, 64)
    assert z == x
    a.check_access(z, 32, "write")
    a.free(z)
    a.free(y)
    a.check()
    a.reset()
    a.check_access(x, 8, "write")  # reset: raw memory again, nothing freed to name
    with pytest.raises(AllocError, match="not a live allocation"):
        a.free(y)


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


@pytest.mark.parametrize("target", ["fsim", "opencl", "rtl"])
def test_backend_refuses_buffer_misuse(target: str) -> None:
    """The device refuses what a real card would corrupt, before anything moves: a write (host
    to device) or read (device to host) past a buffer's end, a use after free, a double free;
    one line naming the buffer, its size and the offending offset and size."""
    cfg = load_config("default")
    with open_device(target, cfg, mem_bytes=1 << 16) as dev:
        a = dev.alloc(4096, align=4096)
        b = dev.alloc(4096, align=4096)
        assert (a, b) == (0, 4096)
        pattern = np.arange(4096, dtype=np.uint8) ^ 0x5A
        dev.write(b, pattern)
        cases = [
            (lambda: dev.write(a, np.ones(8192, np.uint8)), BufferOverrunError,
             "write of 8192 bytes at 0x0 (offset 0) runs past the end of buffer 0x0 (4096 bytes)"),
            (lambda: dev.read(a + 1024, 4096), BufferOverrunError,
             "read of 4096 bytes at 0x400 (offset 1024) runs past the end of buffer 0x0 "
             "(4096 bytes)"),
            (lambda: dev.free(a) or dev.write(a + 16, b"0123456789abcdef"), UseAfterFreeError,
             "use after free: write of 16 bytes at 0x10 (offset 16) of buffer 0x0 (4096 bytes), "
             "which was freed"),
            (lambda: dev.read(a, 1), UseAfterFreeError,
             "use after free: read of 1 bytes at 0x0 (offset 0) of buffer 0x0 (4096 bytes), "
             "which was freed"),
            (lambda: dev.free(a), DoubleFreeError, "double free of buffer 0x0 (4096 bytes)"),
        ]
        for call, kind, line in cases:
            with pytest.raises(kind) as info:
                call()
            assert isinstance(info.value, DeviceError) and str(info.value) == line
            assert (info.value.addr, info.value.size) == (0, 4096)
        assert np.array_equal(dev.read(b, 4096), pattern), "a refused write reached the card"
        c = dev.alloc(4096, align=4096)  # the freed buffer's memory, allocated again
        dev.write(c, pattern)
        assert c == 0 and np.array_equal(dev.read(c, 4096), pattern)


def test_buffer_misuse_errors_pickle() -> None:
    import pickle

    for exc in (BufferOverrunError("past", 64, 128), UseAfterFreeError("freed", 0, 16),
                DoubleFreeError("twice", 4096, 1)):
        back = pickle.loads(pickle.dumps(exc))
        assert isinstance(back, BufferMisuseError) and type(back) is type(exc)
        assert (back.args, back.addr, back.size) == (exc.args, exc.addr, exc.size)


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
