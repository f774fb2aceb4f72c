"""TVM operator compiler: every operator, on every target whose driver backend exists, bit-exact
against a TVM-on-CPU (llvm) build of the same TE definition, for default and cloud32.

Targets are the driver backends present in this checkout (vtabench.runtime.available_targets):
fsim, opencl (PoCL), rtl. Nothing is skipped silently: a target whose backend module is missing
is not parametrised at all, and one that is present but cannot start (no OpenCL platform, no
Verilator) fails. ``VTABENCH_COMPILER_TARGETS=fsim,opencl`` narrows the list (an unknown name is
an error). On rtl the cases of one configuration run in one platform simulation (module-scoped
fixture).
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from vtabench.compiler import CompileError, Conv2dSpec, DenseSpec, Tiling, compile_op
from vtabench.verify.operators import OpJob, run_ops
from vtabench.spec.config import load_config

from targets_env import targets_from_env

pytestmark = pytest.mark.tvm

CONFIGS = ["default", "cloud32"]


def cases(B: int) -> list[tuple[str, object, Tiling | None, bool]]:
    """(id, spec, tiling or None for the automatic choice, double buffering)."""
    return [
        ("dense_bias_shift_clip", DenseSpec(1, 3 * B, 2 * B, epilogue=(
            ("bias",), ("shift", 5), ("clip", -100, 100))), None, True),
        # 32 x 32 blocks of weights = the whole weight buffer; tiles must split it.
        ("dense_big_weights", DenseSpec(1, 32 * B, 32 * B, epilogue=(("shift", 9),)), None, True),
        ("conv1x1_s1_7x7_relu", Conv2dSpec(1, 2 * B, 7, 7, 3 * B, 1, 1, 0, epilogue=(
            ("shift", 6), ("relu",))), None, True),
        ("conv1x1_s2_9x9_mul", Conv2dSpec(1, 2 * B, 9, 9, 2 * B, 1, 2, 0, epilogue=(
            ("mul",), ("shift", 8))), None, True),
        ("conv3x3_s1_p1_9x9_bias_res_clip", Conv2dSpec(1, 2 * B, 9, 9, 2 * B, 3, 1, 1, epilogue=(
            ("bias",), ("shift", 7), ("residual",), ("clip", -128, 127))),
         Tiling(oc=1, ic=1, h=3, w=9), True),
        ("conv3x3_s1_p1_9x9_bias_res_clip_nodb", Conv2dSpec(1, 2 * B, 9, 9, 2 * B, 3, 1, 1,
                                                           epilogue=(("bias",), ("shift", 7),
                                                                     ("residual",),
                                                                     ("clip", -128, 127))),
         Tiling(oc=1, ic=1, h=3, w=9), False),
        ("conv3x3_s2_p1_7x7_relu", Conv2dSpec(1, 3 * B, 7, 7, 2 * B, 3, 2, 1, epilogue=(
            ("shift", 7), ("relu",))), None, True),
        ("conv3x3_s2_p1_7x7_1px_tiles", Conv2dSpec(1, 2 * B, 7, 7, 2 * B, 3, 2, 1, epilogue=(
            ("shift", 7),)), Tiling(oc=1, ic=1, h=1, w=1), True),
        # 16 x 16 x 9 = 2304 weight tiles > 1024 (the weight buffer of default and cloud32).
        ("conv3x3_big_weights_5x5", Conv2dSpec(1, 16 * B, 5, 5, 16 * B, 3, 1, 1, epilogue=(
            ("shift", 11), ("clip", -127, 127))), None, True),
    ]


def _case_ids() -> list[str]:
    return [c[0] for c in cases(16)]


_inputs_cache: dict = {}
_ref_cache: dict = {}


def _case(cfg_name: str, case_id: str):
    cfg = load_config(cfg_name)
    c = {k[0]: k for k in cases(cfg.block)}[case_id]
    key = (cfg_name, case_id)
    if key not in _inputs_cache:
        op = compile_op(c[1], cfg, tiling=c[2], double_buffer=c[3])
        rng = np.random.default_rng(zlib.crc32(f"{cfg_name}/{case_id}".encode()))
        x = op.random_inputs(rng)
        _inputs_cache[key] = (op, x)
        _ref_cache[key] = op.reference(x)
    op, x = _inputs_cache[key]
    return cfg, c, op, x, _ref_cache[key]


@pytest.fixture(scope="module")
def rtl_results():
    """All cases of a configuration in one platform simulation, run on first use."""
    store: dict = {}

    def get(cfg_name: str, case_id: str):
        if cfg_name not in store:
            cfg = load_config(cfg_name)
            jobs, ids = [], []
            for cid in _case_ids():
                _, c, _op, x, _ = _case(cfg_name, cid)
                jobs.append(OpJob(c[1], x, c[2], c[3]))
                ids.append(cid)
            store[cfg_name] = dict(zip(ids, run_ops("rtl", cfg, jobs), strict=True))
        return store[cfg_name][case_id]
    return get


@pytest.mark.parametrize("target", targets_from_env("VTABENCH_COMPILER_TARGETS"))
@pytest.mark.parametrize("cfg_name", CONFIGS)
@pytest.mark.parametrize("case_id", _case_ids())
def test_operator(target, cfg_name, case_id, rtl_results):
    cfg, c, _op, x, ref = _case(cfg_name, case_id)
    if target == "rtl":
        res = rtl_results(cfg_name, case_id)
    else:
        (res,) = run_ops(target, cfg, [OpJob(c[1], x, c[2], c[3])])
    assert res.out.shape == ref.shape
    bad = int(np.count_nonzero(res.out != ref))
    assert bad == 0, (f"{case_id} on {target}/{cfg_name} (tiling {res.tiling}): {bad} of "
                      f"{ref.size} outputs differ from the llvm build")
    assert res.syncs == 1 and res.insns > 0


def test_tiling_splits_big_weights():
    cfg = load_config("default")
    B = cfg.block
    op = compile_op(Conv2dSpec(1, 16 * B, 5, 5, 16 * B, 3, 1, 1), cfg)
    t = op.tiling
    assert t.oc * t.ic * 9 * 2 <= cfg.wgt_depth < (16 * 16 * 9)


def test_untileable_layer_names_the_buffer():
    cfg = load_config("default")
    B = cfg.block
    # A 33 x 33 kernel needs 1089 input tiles for one output pixel: x2 buffers > 2048.
    with pytest.raises(CompileError, match=r"input buffer.*1089.*2048"):
        compile_op(Conv2dSpec(1, B, 40, 40, B, 33, 1, 0), cfg)


def test_bad_channels():
    cfg = load_config("default")
    with pytest.raises(CompileError, match="multiple of 16"):
        compile_op(DenseSpec(1, 24, 16), cfg)


def test_padding_other_than_zero_is_refused(monkeypatch):
    """VTA's LOAD pads with zeros: a padded copy whose padding value is anything else (here the
    max pool's padding made 1) is refused with the block's name, not emitted as zero padding."""
    from tvm import tirx

    from vtabench.compiler import MaxPoolSpec, ops

    class _OnePadding:
        def __getattr__(self, name: str):
            return getattr(tirx, name)

        @staticmethod
        def const(value, dtype=None):
            return tirx.const(1 if (value, dtype) == (0, "int8") else value, dtype)

    cfg = load_config("default")
    monkeypatch.setattr(ops, "tirx", _OnePadding())
    with pytest.raises(CompileError, match="pads with 1.*zeros only"):
        compile_op(MaxPoolSpec(1, cfg.block, 9, 9, 3, 1, 1, name="onepad"), cfg)


def _program(op) -> list[bytes]:
    """The instruction streams of ``op`` emitted alone with its operands laid out in order."""
    from vtabench.graph.record import RecordingDevice
    from vtabench.runtime import Runtime

    dev = RecordingDevice(op.cfg)
    rt = Runtime(dev)
    bufs = {name: rt.alloc(int(np.prod(shape)) * 4) for name, shape in op.input_shapes().items()}
    bufs["out"] = rt.alloc(int(np.prod(op.output_shape)))
    op.emit(rt, bufs)
    rt.sync()
    return dev.runs


def test_same_structure_shares_the_compile_with_its_own_immediates():
    """An operator that differs from one compiled before only in its epilogue's immediates
    reuses that compile (vtabench.compiler.immediates); its program is the one its own compile
    gives, byte for byte."""
    cfg = load_config("default")
    B = cfg.block

    def conv(name, shift, mul, zero, low):
        return Conv2dSpec(1, 2 * B, 9, 9, 2 * B, 3, 1, 1, name=name, epilogue=(
            ("bias",), ("mul_imm", mul), ("shift", shift), ("add_imm", zero), ("clip", low, 127)))

    first = compile_op(conv("first", 9, 300, 5, -100), cfg)
    spec = conv("second", 12, 1234, -17, -128)  # x + (-17) is x - 17 in TVM: the same ADD
    shared = compile_op(spec, cfg)
    assert shared.lowered is first.lowered and shared.spec == spec
    own = compile_op(spec, cfg, tiling=shared.tiling)  # a given tiling compiles on its own
    assert own.lowered is not first.lowered
    assert _program(shared) == _program(own) != _program(first)
