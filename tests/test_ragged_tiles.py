"""Ragged last tiles (issue #27): convolutions and max pools whose tile rows / columns do not
divide the output, bit-identical to the llvm build of the same TE on every target, and the
tiler's rule for choosing them (docs/compiler.md, "Tiling").

Odd shapes throughout: prime output sizes, H != W, stride 2, padding, full-shape epilogue
operands (a residual and a bias map are cut like the output). Four fsim cases are fast, two more
(a bias map, a 1x1 without padding) slow; two cases run on opencl (PoCL) and one on the RTL
(slow: it builds the simulator once).
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from vtabench.compiler import (CompileError, Conv2dSpec, MaxPoolSpec, Tiling, choose_tiling,
                               compile_op)
from vtabench.compiler.program_count import program_instructions
from vtabench.compiler.tiling import is_ragged, ragged_pad_columns
from vtabench.runtime import available_targets
from vtabench.spec.config import load_config
from vtabench.verify.operators import OpJob, run_ops

pytestmark = pytest.mark.tvm

B = 16  # the block of the default configuration
CFG = "default"

#: (id, spec, tiling: None for the tiler's own (ragged) choice).
CASES: list[tuple[str, Conv2dSpec | MaxPoolSpec, Tiling | None]] = [
    # 13 x 11 output (both prime), stride 2, pad 1: rows 4+4+4+1, columns 5+5+1
    ("conv3x3_s2_p1_13x11_res", Conv2dSpec(1, 2 * B, 25, 21, 2 * B, 3, 2, 1, epilogue=(
        ("bias",), ("shift", 7), ("residual",), ("clip", -128, 127))),
     Tiling(oc=1, ic=2, h=4, w=5)),
    # 13 x 17, stride 1, pad 1, a per-pixel bias map; two input chunks; rows 6+6+1, columns 7+7+3
    ("conv3x3_s1_p1_13x17_bias_map", Conv2dSpec(1, 2 * B, 13, 17, 3 * B, 3, 1, 1, epilogue=(
        ("bias_map",), ("shift", 8), ("relu",))), Tiling(oc=3, ic=1, h=6, w=7)),
    # 1x1 on 11 x 13 without padding (a plain input copy cut by rows and columns)
    ("conv1x1_11x13_mul", Conv2dSpec(1, 2 * B, 11, 13, 3 * B, 1, 1, 0, epilogue=(
        ("mul",), ("shift", 8))), Tiling(oc=3, ic=1, h=5, w=4)),
    # the tiler's choice: 23 x 23 3x3 p1 in rows of 8 (8+8+7) instead of 23 rows of 1
    ("conv3x3_23x23_auto", Conv2dSpec(1, 4 * B, 23, 23, 4 * B, 3, 1, 1, epilogue=(
        ("shift", 9), ("clip", -127, 127))), None),
    # max pools: 14 x 12 output of a padded 27 x 23 input (rows 5+5+4, columns 5+5+2) ...
    ("maxpool3x3_s2_p1_14x12", MaxPoolSpec(1, 2 * B, 27, 23, 3, 2, 1),
     Tiling(oc=1, ic=1, h=5, w=5)),
    # ... and the tiler's choice for 47 x 47 -> 23 x 23 (rows 8+8+7)
    ("maxpool3x3_s2_47_auto", MaxPoolSpec(1, 2 * B, 47, 47, 3, 2, 0), None),
]

_cache: dict[str, tuple] = {}


def _case(case_id: str) -> tuple:
    """(spec, compiled op, inputs, llvm reference) of a case, built once."""
    if case_id not in _cache:
        spec, tiling = {c[0]: c[1:] for c in CASES}[case_id]
        cfg = load_config(CFG)
        op = compile_op(spec, cfg, tiling=tiling)
        rng = np.random.default_rng(zlib.crc32(case_id.encode()))
        x = op.random_inputs(rng)
        if isinstance(spec, MaxPoolSpec):  # max pooling takes non-negative activations
            x = {k: v & np.int8(0x7F) for k, v in x.items()}
        _cache[case_id] = (spec, op, x, op.reference(x))
    return _cache[case_id]


def _check(target: str, case_ids: list[str]) -> None:
    cfg = load_config(CFG)
    cases = [_case(c) for c in case_ids]
    results = run_ops(target, cfg, [OpJob(spec, x, op.tiling) for spec, op, x, _ in cases])
    for cid, (spec, op, _x, ref), res in zip(case_ids, cases, results, strict=True):
        assert is_ragged(spec, res.tiling), f"{cid}: tiling {res.tiling} divides the output"
        bad = int(np.count_nonzero(res.out != ref))
        assert bad == 0, (f"{cid} on {target} (tiling {res.tiling}): {bad} of {ref.size} "
                          f"outputs differ from the llvm build")
        assert res.syncs == 1


_SLOW = ("conv3x3_s1_p1_13x17_bias_map", "conv1x1_11x13_mul")


@pytest.mark.parametrize("case_id", [pytest.param(c[0], marks=pytest.mark.slow) if c[0] in _SLOW
                                     else c[0] for c in CASES])
def test_ragged_on_fsim(case_id):
    _check("fsim", [case_id])


@pytest.mark.parametrize("target", [t for t in available_targets() if t == "opencl"])
def test_ragged_on_opencl(target):
    _check(target, ["conv3x3_s2_p1_13x11_res", "maxpool3x3_s2_p1_14x12"])


@pytest.mark.slow
@pytest.mark.parametrize("target", [t for t in available_targets() if t == "rtl"])
def test_ragged_on_rtl(target):
    _check(target, ["conv3x3_s2_p1_13x11_res"])


def test_tiler_prefers_ragged_where_it_saves_instructions():
    """23 x 23: the only dividing row counts are 1 and 23 (too big); rows of 8 are kept only
    because the real program has fewer instructions than the best dividing tiling's."""
    cfg = load_config(CFG)
    spec = Conv2dSpec(1, 4 * B, 23, 23, 4 * B, 3, 1, 1, epilogue=(("shift", 9),))
    op = compile_op(spec, cfg)
    even = compile_op(spec, cfg, tiling=choose_tiling(spec, cfg, ragged_tiles=False))
    assert op.tiling.h == 8 and 23 % op.tiling.h
    assert program_instructions(op) < program_instructions(even)


def test_dividing_layers_unchanged():
    """Layers whose best tiles divide keep their tiling: every conv of ResNet-18 (the shapes of
    bench/bench_resnet_layers.py) and its stem's max pool, whose cost model prefers ragged
    10 x 19 tiles (18 instead of 28) that compile_op's instruction count then refuses."""
    cfg = load_config(CFG)
    convs = [(56, 64, 64, 3, 1), (56, 64, 128, 3, 2), (56, 64, 128, 1, 2), (28, 128, 128, 3, 1),
             (28, 128, 256, 3, 2), (28, 128, 256, 1, 2), (14, 256, 256, 3, 1),
             (14, 256, 512, 3, 2), (14, 256, 512, 1, 2), (7, 512, 512, 3, 1)]
    specs: list[Conv2dSpec | MaxPoolSpec] = [
        Conv2dSpec(1, c, hw, hw, o, k, s, k // 2, epilogue=(("shift", 8), ("relu",)))
        for hw, c, o, k, s in convs]
    specs.append(MaxPoolSpec(1, 64, 112, 112, 3, 2, 1))
    for spec in specs:
        t = choose_tiling(spec, cfg)
        if is_ragged(spec, t):
            t = compile_op(spec, cfg).tiling
        assert t == choose_tiling(spec, cfg, ragged_tiles=False), spec


def test_ragged_width_beyond_the_pad_field_is_refused():
    """A padded copy keeps the full tile width on chip; its columns past the input are padding,
    at most 15 (the LOAD's pad field). 41 output columns at stride 2 in tiles of 4: the last
    tile (1 column) reads 7 padding columns on the right, fine; in tiles of 30: 39, refused by
    the tiler and, given explicitly, by compile_op with the reason."""
    cfg = load_config(CFG)
    spec = Conv2dSpec(1, B, 9, 81, B, 3, 2, 1)
    assert spec.out_w == 41
    assert ragged_pad_columns(spec, Tiling(oc=1, ic=1, h=5, w=4)) == 7
    assert ragged_pad_columns(spec, Tiling(oc=1, ic=1, h=5, w=30)) == 39
    compile_op(spec, cfg, tiling=Tiling(oc=1, ic=1, h=5, w=4))
    with pytest.raises(CompileError, match=r"w=30.*39 padding columns.*at most 15"):
        compile_op(spec, cfg, tiling=Tiling(oc=1, ic=1, h=5, w=30))
