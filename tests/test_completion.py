"""Upstream-compatible completion (docs/isa.md section 3): no STORE can execute after FINISH.

- The check (:func:`vtabench.spec.validate.check_upstream_completion`) finds the STORE that an
  unfenced stream leaves free to run after FINISH, accepts the runtime's fence and a STORE
  ordered before FINISH by other tokens; ``vtabench validate --upstream-completion`` reports it.
- Every program the compiler emits passes it: operators compiled and run through the runtime
  (every synchronized stream checked as it is launched) and the graph compiler's packages
  (batched and per-layer profiling programs).
"""

from __future__ import annotations

import numpy as np
import pytest

from vtabench.drivers.api import Device, RunResult
from vtabench.spec.config import load_config
from vtabench.spec.isa.insn import Insn, decode_program, encode_program
from vtabench.spec.isa.layout import MemType, Opcode
from vtabench.spec.validate import ValidationError, check_upstream_completion, validate_program


@pytest.fixture(scope="module")
def cfg():  # type: ignore[no-untyped-def]
    return load_config("default")


def _gemm_then_store(fenced: bool) -> list[Insn]:
    """LOAD UOP, GEMM (reset) pushing g2s, STORE popping it; optionally the fence."""
    prog = [Insn(Opcode.LOAD, memory_type=MemType.UOP, x_size=1, y_size=1, x_stride=1),
            Insn(Opcode.GEMM, reset_reg=1, uop_bgn=0, uop_end=1, iter_out=1, iter_in=1,
                 push_next_dep=1),
            Insn(Opcode.STORE, memory_type=MemType.OUT, dram_base=64, x_size=1, y_size=1,
                 x_stride=1, pop_prev_dep=1, push_prev_dep=int(fenced))]
    if fenced:
        prog.append(Insn(Opcode.LOAD, memory_type=MemType.UOP, pop_next_dep=1))
    return [*prog, Insn(Opcode.FINISH)]


def test_unfenced_store_is_reported(cfg) -> None:  # type: ignore[no-untyped-def]
    prog = _gemm_then_store(fenced=False)
    dram = np.zeros(4096, np.uint8)
    validate_program(cfg, prog, dram)  # valid for this project's cores (they drain first)
    with pytest.raises(ValidationError, match=r"instruction 2 \(STORE OUT\): can execute after "
                                              r"FINISH \(instruction 3\)") as info:
        validate_program(cfg, prog, dram, upstream_completion=True)
    assert info.value.index == 2


def test_fenced_store_passes(cfg) -> None:  # type: ignore[no-untyped-def]
    validate_program(cfg, _gemm_then_store(fenced=True), np.zeros(4096, np.uint8),
                     upstream_completion=True)


def test_store_ordered_by_an_earlier_token_passes() -> None:
    """The STORE pushes s2g and a GEMM (not a no-op) pops it before FINISH."""
    prog = _gemm_then_store(fenced=True)
    prog[3] = Insn(Opcode.GEMM, reset_reg=1, uop_bgn=0, uop_end=1, iter_out=1, iter_in=1,
                   pop_next_dep=1)
    check_upstream_completion(prog)


def test_validate_command(cfg, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from vtabench.cli import main

    bad, good = tmp_path / "bad.bin", tmp_path / "good.bin"
    bad.write_bytes(encode_program(cfg, _gemm_then_store(fenced=False)))
    good.write_bytes(encode_program(cfg, _gemm_then_store(fenced=True)))
    (tmp_path / "dram.bin").write_bytes(bytes(4096))
    assert main(["validate", str(bad)]) == 0  # the project's own rules hold
    assert main(["validate", str(bad), "--upstream-completion"]) == 1
    assert "instruction 2 (STORE OUT): can execute after FINISH" in capsys.readouterr().out
    assert main(["validate", str(good), "--upstream-completion", "--dram",
                 str(tmp_path / "dram.bin")]) == 0
    assert "valid: 5 instructions, every rule and upstream's completion rule" in \
        capsys.readouterr().out


# --- every program the compiler emits ---------------------------------------------------------

class CompletionChecked(Device):
    """An fsim device that checks every stream it is asked to run against upstream's
    completion rule first (what the runtime launches, decoded from device memory)."""

    def __init__(self, inner: Device) -> None:
        super().__init__(inner.cfg, inner.mem_bytes)
        self.inner = inner
        self.allocator = inner.allocator
        self.checked = 0

    def _write(self, addr: int, data: np.ndarray) -> None:
        self.inner.write(addr, data)

    def _read(self, addr: int, nbytes: int) -> np.ndarray:
        return self.inner.read(addr, nbytes)

    def _run(self, insn_addr: int, insn_count: int, timeout_s: float | None) -> RunResult:
        code = self.inner.read(insn_addr, 16 * insn_count).tobytes()
        check_upstream_completion(decode_program(self.cfg, code))
        self.checked += 1
        return self.inner.run(insn_addr, insn_count, timeout_s)


@pytest.mark.tvm
def test_compiled_operators_pass(cfg) -> None:  # type: ignore[no-untyped-def]
    from vtabench.compiler import Conv2dSpec, DenseSpec
    from vtabench.compiler.tiling import Tiling
    from vtabench.drivers import open_device
    from vtabench.verify.operators import NetLayer, OpJob, run_jobs_on, run_network_on

    B = cfg.block
    rng = np.random.default_rng(3)
    jobs = []
    for spec, tiling, db in (
            (DenseSpec(1, 3 * B, 2 * B, epilogue=(("bias",), ("shift", 5))), None, True),
            (Conv2dSpec(1, 2 * B, 7, 7, 2 * B, 3, 2, 1, epilogue=(("shift", 7), ("relu",))),
             Tiling(oc=1, ic=1, h=1, w=1), True),
            (Conv2dSpec(1, 2 * B, 9, 9, 2 * B, 3, 1, 1, epilogue=(("shift", 7), ("residual",))),
             Tiling(oc=1, ic=1, h=3, w=9), False)):
        from vtabench.compiler.compile import compile_op

        x = compile_op(spec, cfg, tiling=tiling, double_buffer=db).random_inputs(rng)
        jobs.append(OpJob(spec, x, tiling, db))
    layers = [NetLayer(DenseSpec(1, 2 * B, 2 * B, epilogue=(("shift", 7),)),
                       {"data": "x", "weight": "w0"}, "h"),
              NetLayer(DenseSpec(1, 2 * B, B, epilogue=(("shift", 7),)),
                       {"data": "h", "weight": "w1"}, "y")]
    tensors = {"x": rng.integers(-128, 128, (1, 2, 1, B), np.int8),
               "w0": rng.integers(-128, 128, (2, 2, B, B), np.int8),
               "w1": rng.integers(-128, 128, (1, 2, B, B), np.int8)}
    with open_device("fsim", cfg, 1 << 24) as inner:
        dev = CompletionChecked(inner)
        results = run_jobs_on(dev, jobs)
        for sync in ("layer", "batch"):
            run_network_on(dev, layers, tensors, sync)
    assert all(r.syncs >= 1 for r in results)
    assert dev.checked == sum(r.syncs for r in results) + 2 + 1


@pytest.mark.tvm
@pytest.mark.parametrize("model", ["small_resnet", "resnet50_block"])
def test_graph_packages_pass(cfg, model) -> None:  # type: ignore[no-untyped-def]
    from vtabench import workloads
    from vtabench.graph import compile_model

    pkg = compile_model(getattr(workloads, model)(), cfg)
    programs = pkg.programs + pkg.profile
    assert programs
    for p in programs:
        check_upstream_completion(decode_program(cfg, p.program.code))
