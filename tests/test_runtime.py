"""The stream builder (vtabench.runtime) on fsim: micro-op kernels, token helpers, batched versus
per-layer synchronization, automatic syncs at buffer capacity."""

from __future__ import annotations

import numpy as np
import pytest

from vtabench.drivers import open_device
from vtabench.runtime import Runtime, RuntimeError_, UopKernelBuilder
from vtabench.spec.config import load_config
from vtabench.spec.isa.layout import MemType, Opcode
from vtabench.spec.tokens import Stage
from vtabench.spec.validate import validate_program

from dense_layers import gemm_layer


@pytest.fixture(scope="module")
def cfg():
    return load_config("default")


def test_handwritten_gemm_and_kernel_cache(cfg):
    rng = np.random.default_rng(1)
    N, K, M, BI = 4, 3, 5, cfg.block_in
    A = rng.integers(-128, 128, (N, K, 1, BI), dtype=np.int8)
    W = rng.integers(-128, 128, (M, K, BI, BI), dtype=np.int8)
    with open_device("fsim", cfg, 1 << 22) as dev:
        rt = Runtime(dev)
        a, w, c = rt.alloc(A.nbytes), rt.alloc(W.nbytes), rt.alloc(N * M * BI)
        rt.write(a, A)
        rt.write(w, W)
        gemm_layer(rt, cfg, a, w, c, N, K, M, 8)
        insns = list(rt.insns)
        out = rt.read(c).view(np.int8).reshape(N, M, BI)
        ref = np.einsum("nki,mkoi->nmo", A.reshape(N, K, BI).astype(np.int32),
                        W.astype(np.int32)) >> 8
        np.testing.assert_array_equal(out, ref.astype(np.int8))
        # Kernels are cached by content: two slots x (reset, gemm) + the shared-shape ALU kernels.
        assert rt.stats.uop_uploads <= 6
        assert rt.stats.uop_loads == sum(1 for i in insns if i.opcode == Opcode.LOAD
                                         and i.memory_type == MemType.UOP and i.x_size)
        assert rt.stats.uop_loads <= 6  # resident kernels are not reloaded
        assert rt.stats.syncs == 1


def test_dep_helpers_insert_noops(cfg):
    with open_device("fsim", cfg, 1 << 22) as dev:
        rt = Runtime(dev, auto_deps=False)
        rt.dep_push(Stage.LOAD, Stage.COMPUTE)  # nothing in the load queue: a no-op carries it
        rt.dep_pop(Stage.LOAD, Stage.COMPUTE)
        rt.dep_pop(Stage.LOAD, Stage.COMPUTE)  # second pending pop: a compute no-op takes one
        rt.dep_push(Stage.LOAD, Stage.COMPUTE)  # last load insn already pushes: another no-op
        assert rt.stats.noops == 3
        kinds = [(i.opcode, i.memory_type, i.x_size) for i in rt.insns]
        assert kinds[0] == (Opcode.LOAD, MemType.INP, 0)
        assert rt.insns[0].push_next_dep == 1
        rt.sync()  # pending pop goes on a no-op; FINISH; tokens balance (validated by fsim)
        assert rt.stats.syncs == 1


CHAIN_SEED = 7


def _chain_specs(cfg):
    from vtabench.compiler import DenseSpec

    B = cfg.block
    return [DenseSpec(1, 4 * B, 3 * B, epilogue=(("shift", 7), ("relu",))),
            DenseSpec(1, 3 * B, 5 * B, epilogue=(("shift", 7), ("clip", -50, 50))),
            DenseSpec(1, 5 * B, 2 * B, epilogue=(("shift", 6),))]


def _chain_inputs(cfg):
    from vtabench.compiler import compile_op

    rng = np.random.default_rng(CHAIN_SEED)
    x = rng.integers(-128, 128, (1, 4, 1, cfg.block), dtype=np.int8)
    ws = [compile_op(s, cfg).random_inputs(rng)["weight"] for s in _chain_specs(cfg)]
    return x, ws


def _chain_on(dev, cfg, sync: str, insn_capacity: int = 16384, uop_pool_uops: int = 1 << 16):
    """Three dense layers, each reading the previous one's output from device memory; returns
    the output, the runtime statistics and the summed per-run statistics."""
    from vtabench.compiler import compile_op

    ops = [compile_op(s, cfg) for s in _chain_specs(cfg)]
    x, ws = _chain_inputs(cfg)
    rt = Runtime(dev, sync=sync, insn_capacity=insn_capacity, uop_pool_uops=uop_pool_uops)
    acts = [rt.alloc(x.nbytes)] + [rt.alloc(int(np.prod(op.output_shape))) for op in ops]
    rt.write(acts[0], x)
    wbufs = []
    for w in ws:
        wbufs.append(rt.alloc(w.nbytes))
        rt.write(wbufs[-1], w)
    for k, op in enumerate(ops):
        op.emit(rt, {"data": acts[k], "weight": wbufs[k], "out": acts[k + 1]})
    rt.sync()
    out = rt.read(acts[-1]).view(np.int8).reshape(ops[-1].output_shape)
    summed: dict[str, float] = {}
    for r in rt.stats.run_results:
        for k, v in r.stats.items():
            if isinstance(v, (int, float)):
                summed[k] = summed.get(k, 0) + v
    st = rt.stats
    return out, {"syncs": st.syncs, "auto_syncs": st.auto_syncs, "noops": st.noops,
                 "insns": st.insns}, summed


def _chain_reference(cfg):
    from vtabench.compiler import compile_op

    x, ws = _chain_inputs(cfg)
    h = x
    for s, w in zip(_chain_specs(cfg), ws, strict=True):
        h = compile_op(s, cfg).reference({"data": h, "weight": w})
    return h


def _chain(cfg, sync: str, insn_capacity: int = 16384, uop_pool_uops: int = 1 << 16):
    with open_device("fsim", cfg, 1 << 24) as dev:
        out, st, _ = _chain_on(dev, cfg, sync, insn_capacity, uop_pool_uops)
    return out, _chain_reference(cfg), type("S", (), st)


@pytest.mark.tvm
def test_batched_vs_per_layer(cfg):
    out_b, ref, st_b = _chain(cfg, "batch")
    out_l, _, st_l = _chain(cfg, "layer")
    np.testing.assert_array_equal(out_b, ref)
    np.testing.assert_array_equal(out_l, ref)
    assert st_l.syncs == 3
    assert st_b.syncs == 1
    # Batched, the store -> load dependency between layers travels through compute no-ops.
    assert st_b.noops >= 2


@pytest.mark.tvm
def test_auto_sync_on_full_instruction_buffer(cfg):
    out, ref, st = _chain(cfg, "batch", insn_capacity=32)
    np.testing.assert_array_equal(out, ref)
    assert st.auto_syncs >= 1 and st.syncs > 1


@pytest.mark.tvm
def test_auto_sync_on_full_uop_pool(cfg):
    out, ref, st = _chain(cfg, "batch", uop_pool_uops=8)
    np.testing.assert_array_equal(out, ref)
    assert st.auto_syncs >= 1 and st.syncs > 1


@pytest.mark.tvm
def test_streams_validate(cfg):
    """A double-buffered operator's stream passes the validator (tokens balanced)."""
    from vtabench.compiler import Conv2dSpec, Tiling, compile_op

    B = cfg.block
    op = compile_op(Conv2dSpec(1, 2 * B, 6, 6, 2 * B, 3, 1, 1, epilogue=(("shift", 8),)), cfg,
                    tiling=Tiling(oc=1, ic=1, h=2, w=6))
    with open_device("fsim", cfg, 1 << 22) as dev:
        rt = Runtime(dev)
        bufs = {n: rt.alloc(int(np.prod(s))) for n, s in op.input_shapes().items()}
        bufs["out"] = rt.alloc(int(np.prod(op.output_shape)))
        op.emit(rt, bufs)
        validate_program(cfg, rt.insns + [type(rt.insns[0])(Opcode.FINISH)], dev.mem)
        flags = sum(i.pop_prev_dep + i.pop_next_dep for i in rt.insns)
        assert flags > 0


def test_bad_kernel(cfg):
    kb = UopKernelBuilder()
    kb.loop_begin(2, 1, 1, 1)
    kb.loop_begin(2, 1, 1, 1)
    with pytest.raises(RuntimeError_):
        kb.loop_begin(2, 1, 1, 1)
