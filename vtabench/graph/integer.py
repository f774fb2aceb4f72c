"""The integer form of a conv2d / dense chain: the operator compiler's epilogue and its tensor
operands, computed once from the quantization facts (:class:`~vtabench.graph.ir.QParams`).

VTA runs it (:mod:`vtabench.graph.compile`) and the CPU reference repeats it op by op
(:mod:`vtabench.graph.cpu_functions`), so the two agree bit for bit. docs/graph.md writes the
formula down; in short, with every tensor in its stored form (``v = q - offset``, int8):

    acc  = sum over the taps inside the input of v_x * w   (LOAD pads with 0)
           + bias[o] - z_x' * sum of w over those taps      (z_x' = the input's stored zero)
    y    = clip(rq(acc) + z_y', lo', hi')                    (rq: :mod:`vtabench.graph.requant`)

The zero-point term is per channel (folded into the bias) unless a padded border changes which
taps are inside; then the whole ``bias_map`` (output channel x pixel) is a tensor. An average
pool that does not count its padding (``QParams.pool_lcm = L``) multiplies ``acc`` by the
integer map ``L / count`` (``map_mul``, output channel x pixel) before ``rq``. With a fused
residual Add (other operand ``r``, output ``o``):

    a    = clip(rq(acc), lo - z_y, hi - z_y)                 (the conv's output minus its zero)
    out  = clip(rshift(a * ma + (v_r - z_r') * mb, n) + z_o', res_lo', res_hi')

(``ma``, ``mb``, ``n`` from :func:`vtabench.graph.requant.choose_add`; equal scales give 1, 1,
0: the plain integer add).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from vtabench.compiler.ops import IMM_MAX, IMM_MIN
from vtabench.graph.ir import QParams
from vtabench.graph.requant import INT32_MAX, Requant, choose, choose_add, rshift


@dataclass
class IntegerForm:
    """``epilogue`` for the operator compiler; ``operands[k]`` is the int32 tensor of epilogue
    op ``k`` when that op takes one (``bias``/``chan_mul``: per output channel (O,);
    ``bias_map``, ``map_mul``: (O, Ho, Wo))."""

    epilogue: tuple
    operands: dict[int, np.ndarray] = field(default_factory=dict)
    requant: Requant | None = None


def _imm_or_vector(c: int, channels: int, ops: list[tuple],
                   operands: dict[int, np.ndarray]) -> None:
    """Add the constant ``c``: an immediate when it fits, else a per-channel vector."""
    if c == 0:
        return
    if IMM_MIN <= c <= IMM_MAX:
        ops.append(("add_imm", c))
    else:
        operands[len(ops)] = np.full(channels, c, np.int32)
        ops.append(("bias",))


def _valid_tap_sums(w: np.ndarray, h: int, wd: int, stride: int, pad: int,
                    stride_w: int = 0) -> np.ndarray:
    """(O, Ho, Wo): the sum of w[o] over the taps of each output pixel that fall inside the
    unpadded input (``stride_w``: the horizontal stride when it differs)."""
    o, _, k, kwid = w.shape
    sw = stride_w or stride
    ho = (h + 2 * pad - k) // stride + 1
    wo = (wd + 2 * pad - kwid) // sw + 1
    tap = w.astype(np.int64).sum(axis=1)  # (O, k, kwid)
    out = np.zeros((o, ho, wo), np.int64)
    for kh in range(k):
        rows = np.arange(ho) * stride + kh - pad
        rv = (rows >= 0) & (rows < h)
        for kw in range(kwid):
            cols = np.arange(wo) * sw + kw - pad
            cv = (cols >= 0) & (cols < wd)
            out += tap[:, kh, kw][:, None, None] * (rv[:, None] & cv[None, :])
    return out


def window_counts(in_hw: tuple[int, int], k: int, kw: int, stride: int, pad: int,
                  stride_w: int = 0) -> np.ndarray:
    """(Ho, Wo): how many taps of each output pixel's k x kw window fall inside the unpadded
    input (an average pool's divisor when the padding is not counted)."""
    return _valid_tap_sums(np.ones((1, 1, k, kw), np.int8), *in_hw, stride, pad, stride_w)[0]


def _acc_bound(q: QParams, pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """Per output channel, the largest |accumulator| any input can produce (``pos``, ``neg``:
    the sums of the positive and of the negative weights)."""
    lo, hi = q.x.qmin - q.x.zero, q.x.qmax - q.x.zero
    top = pos * hi + neg * lo
    bottom = pos * lo + neg * hi
    return np.maximum(np.abs(top), np.abs(bottom)) + np.abs(q.bias.astype(np.int64))


def _constant_channels(r: np.ndarray, bias: np.ndarray, swing: np.ndarray) -> np.ndarray | None:
    """Channels whose output is all but a nonzero constant (``swing``: the largest |accumulator
    - bias| an input gives; it moves the real output by less than half a step), or None when
    there is none. Trained models leave such channels: PaddleOCR's recognizer has depthwise
    convs whose near-dead channels carry weight scales about 1e-9 and biases about 1e9 in
    accumulator units. Their ``r`` is some 2^24 below the other channels', which one shared
    shift serves only with a pre-shift that rounds every channel twice (two steps off
    onnxruntime). Multiplied by 0, with ``round(r * bias)`` added after the requantization,
    they are off by at most ``r * swing`` (the caller takes this form only where that worst
    case is below the pre-shift's), and the other channels keep one rounding."""
    const = (r * swing < 0.5) & (_constant_level(r, bias) != 0)
    return const if np.any(const) else None


def _constant_level(r: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """``r * bias`` rounded half up: a constant channel's output."""
    return np.floor(r * bias + 0.5)


def integer_form(q: QParams, in_hw: tuple[int, int] = (1, 1)) -> IntegerForm:
    """The integer form of conv2d / dense / avgpool parameters ``q`` (``in_hw``: the input's
    height and width). A global average pool is the sum over the map (weights 1, scale
    1 / (h * w)). ValueError when the chain has none (a scale out of range...)."""
    if q.kind == "leaky":
        return _slope_form(q)
    if q.kind == "mul":
        return _mul_form(q)
    if q.kind == "hardswish":
        return _hardswish_form(q)
    if q.kind == "eltwise_add":
        return _add_form(q)
    ops: list[tuple] = []
    operands: dict[int, np.ndarray] = {}
    ze = q.x.zero_stored
    bias = q.bias.astype(np.int64)
    if q.kind == "avgpool":
        o = bias.size
        pos, neg = np.full(o, in_hw[0] * in_hw[1], np.int64), np.zeros(o, np.int64)
    elif q.transposed:  # each output pixel sums one tap over the input channels
        o = q.weight.shape[0]
        taps = q.weight.astype(np.int64).sum(axis=1)  # (O, s, s)
        w = q.weight.astype(np.int64)
        pos = np.where(w > 0, w, 0).sum(1).reshape(o, -1).max(1)
        neg = np.where(w < 0, w, 0).sum(1).reshape(o, -1).min(1)
    else:
        o = q.weight.shape[0]
        w = q.weight.reshape(o, -1).astype(np.int64)
        pos, neg = np.where(w > 0, w, 0).sum(1), np.where(w < 0, w, 0).sum(1)
    if ze and q.transposed:  # the zero-point term differs per tap: per output pixel
        fold = bias[:, None, None] - ze * np.tile(taps, (1, *in_hw))
        _check_int32(fold, "zero-point corrected bias")
        operands[0] = fold.astype(np.int32)
        ops.append(("bias_map",))
    elif ze and q.kind == "conv2d" and q.pad:
        fold = bias[:, None, None] - ze * _valid_tap_sums(q.weight, *in_hw, q.stride, q.pad,
                                                          q.stride_w)
        _check_int32(fold, "zero-point corrected bias")
        operands[0] = fold.astype(np.int32)
        ops.append(("bias_map",))
    else:
        fold = bias - ze * (pos + neg)
        _check_int32(fold, "zero-point corrected bias")
        operands[0] = fold.astype(np.int32)
        ops.append(("bias",))
    bound = _acc_bound(q, pos, neg)
    if q.pool_lcm:  # an average pool not counting its padding: the sum times L / count
        scale = q.pool_lcm // window_counts(in_hw, *q.weight.shape[2:], q.stride, q.pad,
                                            q.stride_w)
        operands[len(ops)] = np.broadcast_to(scale, (o, *scale.shape)).astype(np.int32)
        ops.append(("map_mul",))
        bound = bound * int(scale.max())
    r = np.broadcast_to(q.x.scale * np.asarray(q.w_scale, np.float64) / q.y.scale, (o,))
    ymax = max(abs(q.lo - q.y.zero), abs(q.hi - q.y.zero)) + 1
    rq = choose(r, bound, ymax)
    swing = bound - np.abs(bias)
    const = _constant_channels(r, bias, swing) if rq.pre and ops[0] == ("bias",) else None
    if const is not None:
        rq_const = choose(np.where(const, 0.0, r), bound, ymax)
        error = max(rq_const.error, float((r * swing)[const].max()))
        if error < rq.error:
            rq = replace(rq_const, error=error)
        else:
            const = None
    for op, vec in rq.ops():
        if vec is not None:
            operands[len(ops)] = np.broadcast_to(vec, (o,)).astype(np.int32)
        ops.append(op)
    if const is not None:  # their multiplier is 0: add the output they all but always give
        level = np.where(const, _constant_level(r, bias), 0).astype(np.int64)
        _check_int32(level, "constant channels' output")
        operands[len(ops)] = level.astype(np.int32)
        ops.append(("bias",))
    if q.add_out is None:
        _imm_or_vector(q.y.zero_stored, o, ops, operands)
        ops.append(("clip", q.lo - q.y.offset, q.hi - q.y.offset))
        return IntegerForm(tuple(ops), operands, rq)
    res, out = q.res, q.add_out
    ma, mb, n = choose_add(q.y.scale / out.scale, res.scale / out.scale)
    ops.append(("clip", q.lo - q.y.zero, q.hi - q.y.zero))
    if ma != 1:
        if IMM_MIN <= ma <= IMM_MAX:
            ops.append(("mul_imm", ma))
        else:
            operands[len(ops)] = np.full(o, ma, np.int32)
            ops.append(("chan_mul",))
    if mb == 1:
        ops.append(("residual",))
    else:
        operands[len(ops)] = np.full(o, mb, np.int32)
        ops.append(("residual_mul",))
    _imm_or_vector(-res.zero_stored * mb, o, ops, operands)
    if n:
        ops.append(("shift", n))
    _imm_or_vector(out.zero_stored, o, ops, operands)
    ops.append(("clip", q.res_lo - out.offset, q.res_hi - out.offset))
    return IntegerForm(tuple(ops), operands, rq)


def _mul_form(q: QParams) -> IntegerForm:
    """The product of two activations as an identity (blockwise 1x1) conv of ``x`` with the
    other operand loaded into the accumulator (LOAD ACC_8BIT) and multiplied in (``mul``: the
    same shape; ``mul_chan``: one value per channel, broadcast over the pixels):
    ``a = v_x - z_x'`` (the GEMM and the bias), ``p = a * v_r``; with a zero point
    ``z_r'`` in the second operand, ``x`` loaded again takes off the rest:
    ``p + v_x * (-z_r') + z_x' * z_r' = a * (v_r - z_r')`` (``residual_mul``, a constant);
    then the requantization of ``p`` by ``s_x * s_r / s_y`` like any accumulator."""
    c = q.bias.size
    ops: list[tuple] = [("bias",), ("mul_chan",) if q.label else ("mul",)]
    operands: dict[int, np.ndarray] = {0: np.full(c, -q.x.zero_stored, np.int32)}
    zr = q.res.zero_stored
    if zr:
        operands[len(ops)] = np.full(c, -zr, np.int32)
        ops.append(("residual_mul",))
        _imm_or_vector(q.x.zero_stored * zr, c, ops, operands)
    amax = max(abs(q.x.qmin - q.x.zero), abs(q.x.qmax - q.x.zero))
    rmax = max(abs(q.res.qmin - q.res.zero), abs(q.res.qmax - q.res.zero))
    r = np.full(c, q.x.scale * q.res.scale / q.y.scale)
    ymax = max(abs(q.lo - q.y.zero), abs(q.hi - q.y.zero)) + 1
    rq = choose(r, np.full(c, amax * rmax, np.int64), ymax)
    for op, vec in rq.ops():
        if vec is not None:
            operands[len(ops)] = np.broadcast_to(vec, (c,)).astype(np.int32)
        ops.append(op)
    _imm_or_vector(q.y.zero_stored, c, ops, operands)
    ops.append(("clip", q.lo - q.y.offset, q.hi - q.y.offset))
    return IntegerForm(tuple(ops), operands, rq)


def _add_form(q: QParams) -> IntegerForm:
    """A standalone Add of two activations (``x`` and ``res``, one shape, output ``y``): an
    identity blockwise conv of ``x`` with ``res`` loaded as a residual, the fused Add's
    arithmetic with ``a = v_x - z_x'``: ``clip(rshift(a * ma + (v_r - z_r') * mb, n) + z_y')``
    (:func:`vtabench.graph.requant.choose_add`)."""
    c = q.bias.size
    ma, mb, n = choose_add(q.x.scale / q.y.scale, q.res.scale / q.y.scale)
    ops: list[tuple] = [("bias",)]
    operands: dict[int, np.ndarray] = {0: np.full(c, -q.x.zero_stored, np.int32)}
    if ma != 1:
        if IMM_MIN <= ma <= IMM_MAX:
            ops.append(("mul_imm", ma))
        else:
            operands[len(ops)] = np.full(c, ma, np.int32)
            ops.append(("chan_mul",))
    if mb == 1:
        ops.append(("residual",))
    else:
        operands[len(ops)] = np.full(c, mb, np.int32)
        ops.append(("residual_mul",))
    _imm_or_vector(-q.res.zero_stored * mb, c, ops, operands)
    if n:
        ops.append(("shift", n))
    _imm_or_vector(q.y.zero_stored, c, ops, operands)
    ops.append(("clip", q.lo - q.y.offset, q.hi - q.y.offset))
    return IntegerForm(tuple(ops), operands)


def _hardswish_form(q: QParams) -> IntegerForm:
    """The ONNX HardSwish operator, ``y = x * clip(x + 3, 0, 6) / 6`` quantized once: an
    identity (blockwise 1x1) conv of ``x`` with ``x`` also loaded as a second operand
    (``z_x' = 0``, checked when the chain was read): ``t = clip(a * K + C3, 0, C6)`` with
    ``C3 ~ 3 K / s_x``, ``C6 ~ 6 K / s_x`` (the gate in units of ``s_x / K``), ``p = t * v_x``
    (``mul``), then the requantization of ``p`` by ``s_x^2 / (6 K s_y)``. The input has 256
    values: among the powers of two ``K`` whose bounds are 16-bit immediates, the one that
    matches onnxruntime's float32 arithmetic on the most of them is taken, and none may be more
    than one step off (ValueError: the CPU runs it)."""
    c = q.bias.size
    f32 = np.float32
    v = np.arange(q.x.qmin, q.x.qmax + 1, dtype=np.int64) - q.x.offset
    xf = (v + q.x.offset - q.x.zero).astype(f32) * f32(q.x.scale)
    yf = xf * np.clip(xf * f32(1 / 6) + f32(0.5), f32(0), f32(1))
    want = np.clip(np.rint(yf / f32(q.y.scale)).astype(np.int64) + q.y.zero, q.lo, q.hi)
    ymax = max(abs(q.lo - q.y.zero), abs(q.hi - q.y.zero)) + 1
    best: tuple[int, int, list[tuple], dict[int, np.ndarray], Requant] | None = None
    for m in range(15):
        k = 1 << m
        c3, c6 = round(3 * k / q.x.scale), round(6 * k / q.x.scale)
        if c6 > IMM_MAX or c3 > INT32_MAX // 4:
            break
        try:
            rq = choose(np.full(c, q.x.scale ** 2 / (6 * k * q.y.scale)),
                        np.full(c, 128 * c6, np.int64), ymax)
        except ValueError:
            continue
        t = np.clip(v * k + c3, 0, c6)
        got = np.clip(rq.apply(t * v, 0) + q.y.zero, q.lo, q.hi)
        hits = int((got == want).sum())
        if np.abs(got - want).max() > 1 or (best is not None and hits <= best[0]):
            continue
        ops: list[tuple] = [] if k == 1 else [("mul_imm", k)]
        operands: dict[int, np.ndarray] = {}
        _imm_or_vector(c3, c, ops, operands)
        ops += [("clip", 0, c6), ("mul",)]
        for op, vec in rq.ops():
            if vec is not None:
                operands[len(ops)] = np.broadcast_to(vec, (c,)).astype(np.int32)
            ops.append(op)
        _imm_or_vector(q.y.zero_stored, c, ops, operands)
        ops.append(("clip", q.lo - q.y.offset, q.hi - q.y.offset))
        best = (hits, m, ops, operands, rq)
    if best is None:
        raise ValueError(f"no integer form for a HardSwish with input scale {q.x.scale:.3g} "
                         f"within one step of the float arithmetic")
    return IntegerForm(tuple(best[2]), best[3], best[4])


def _slope_form(q: QParams) -> IntegerForm:
    """LeakyReLU and PReLU as an identity (blockwise 1x1) conv of the input with the input also
    loaded as a second operand: ``a = v - z_x'`` (the GEMM and the bias), then
    ``rshift(max(a * ma, (v - z_x') * mb[c]), n) + z_y'`` with ``ma ~ s_x / s_y * 2^n`` and
    ``mb[c] ~ slope[c] * ma`` (epilogue op ``residual_max``: the maximum is the slope's branch
    for a negative ``a`` because every slope is at most 1); the second operand's zero-point
    term is moved across the max as a constant (an immediate when the slope is shared). The
    input has 256 values: (ma, mb, n) are checked against onnxruntime's float32 chain on every
    one of them (:func:`_slope_multipliers`)."""
    c = q.bias.size
    ze = q.x.zero_stored
    ma, mb, n = _slope_multipliers(q)
    mb = np.broadcast_to(mb, (c,)).astype(np.int64)
    shared = bool(np.all(mb == mb[0]))
    ops: list[tuple] = [("bias",)]
    operands: dict[int, np.ndarray] = {0: np.full(c, -ze, np.int32)}
    if ma != 1:
        if IMM_MIN <= ma <= IMM_MAX:
            ops.append(("mul_imm", ma))
        else:
            operands[len(ops)] = np.full(c, ma, np.int32)
            ops.append(("chan_mul",))

    def add(v: np.ndarray) -> None:
        if shared:
            _imm_or_vector(int(v[0]), c, ops, operands)
        elif ze:
            operands[len(ops)] = v.astype(np.int32)
            ops.append(("bias",))

    add(ze * mb)
    operands[len(ops)] = mb.astype(np.int32)
    ops.append(("residual_max",))
    add(-ze * mb)
    if n:
        ops.append(("shift", n))
    _imm_or_vector(q.y.zero_stored, c, ops, operands)
    ops.append(("clip", q.lo - q.y.offset, q.hi - q.y.offset))
    return IntegerForm(tuple(ops), operands)


def _slope_multipliers(q: QParams) -> tuple[int, np.ndarray, int]:
    """(ma, mb: one, or one per channel, n) whose integer form gives, on every input value of
    every channel, what the float32 chain DequantizeLinear -> LeakyRelu / PRelu ->
    QuantizeLinear gives (onnxruntime's arithmetic: a slope like 0.1 puts many products exactly
    on half steps, where float32 rounding decides): for each shift and ``ma``, each channel's
    ``mb`` is the floor or ceiling of ``slope * s_x / s_y * 2^n`` matching more values; the
    first (n, ma) matching all, else the most."""
    f32 = np.float32
    slopes = np.atleast_1d(np.asarray(q.alpha if q.slopes is None else q.slopes, np.float64))
    a = np.arange(q.x.qmin, q.x.qmax + 1, dtype=np.int64) - q.x.zero
    xf = a.astype(f32) * f32(q.x.scale)
    yf = np.where(xf >= 0, xf, xf * slopes.astype(f32)[:, None])
    want = np.clip(np.rint(yf / f32(q.y.scale)).astype(np.int64) + q.y.zero, q.lo, q.hi)
    ra, rb = q.x.scale / q.y.scale, slopes * q.x.scale / q.y.scale
    span = int(np.abs(a).max())
    best: tuple[int, int, np.ndarray, int] | None = None
    for n in range(32):
        base_a, base_b = ra * 2 ** n, rb * 2 ** n
        if span * (base_a + np.abs(base_b).max() + 2) + (1 << max(n - 1, 0)) > INT32_MAX:
            break
        for ma in sorted({math.floor(base_a), math.ceil(base_a)}):
            cands = np.stack([np.floor(base_b), np.ceil(base_b)]).astype(np.int64)  # (2, C)
            got = np.clip(rshift(np.maximum(a * ma, a[None, None, :] * cands[:, :, None]), n)
                          + q.y.zero, q.lo, q.hi)  # (2, C, values)
            hits = (got == want[None]).sum(axis=2)
            mb = cands[hits.argmax(axis=0), np.arange(cands.shape[1])]
            total = int(hits.max(axis=0).sum())
            if best is None or total > best[0]:
                best = (total, ma, mb, n)
            if total == want.size:
                return ma, mb, n
    if best is None:
        raise ValueError(f"no integer form for a LeakyReLU / PReLU with scale ratio {ra:.3g}")
    return best[1], best[2], best[3]


def _check_int32(a: np.ndarray, what: str) -> None:
    if a.size and (a.min() < -(1 << 31) or a.max() >= 1 << 31):
        raise ValueError(f"{what} does not fit int32")
