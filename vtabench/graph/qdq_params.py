"""Quantization facts of a QDQ composite: :func:`composite_params` reads one composite function
(``vta.conv2d``, ``vta.dense``, ... of :mod:`vtabench.graph.patterns`) into
:class:`~vtabench.graph.ir.QParams`: int8 weights with the zero point removed, per-output-channel
weight scales, the int32 bias, each tensor's scale and zero point
(:class:`~vtabench.graph.ir.TensorQ`), the activation's bounds. A chain with no integer form (a
weight zero point that does not fit int8, per-channel activation scales...) raises
:class:`Unsupported` with the reason.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from tvm import relax

from vtabench.graph import relax_exprs as rx
from vtabench.graph.integer import window_counts
from vtabench.graph.ir import QParams, TensorQ


class Unsupported(ValueError):
    """A composite with no integer form (the CPU runs its QDQ chain)."""


def _fingerprint(*arrays: np.ndarray) -> str:
    h = hashlib.sha1()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:10]


def _qd(call: Any) -> tuple[Any, np.ndarray, np.ndarray, int, str]:
    """(data, scale, zero point, axis, integer dtype) of a quantize/dequantize call."""
    scale = np.asarray(rx.const(call.args[1]), np.float64)
    zp = np.asarray(rx.const(call.args[2]))
    dtype = (str(call.attrs.out_dtype) if call.op.name == "relax.quantize"
             else rx.dtype(call.args[0]))
    return call.args[0], scale, zp, int(call.attrs.axis), dtype


def _tensor_q(call: Any, what: str) -> tuple[Any, TensorQ]:
    """(data, TensorQ) of an activation's quantize/dequantize: one scale, int8 or uint8."""
    data, scale, zp, _, dtype = _qd(call)
    if scale.size != 1 or zp.size != 1:
        raise Unsupported(f"{what}: per-channel activation scales")
    if dtype not in ("int8", "uint8"):
        raise Unsupported(f"{what}: {dtype} activations (int8 and uint8 only)")
    s = float(scale.reshape(-1)[0])
    if not (np.isfinite(s) and s > 0):
        raise Unsupported(f"{what}: scale {s} is not positive")
    return data, TensorQ(s, int(zp.reshape(-1)[0]), dtype)


def _act_bounds(bs: list[Any], y: TensorQ) -> tuple[int, int]:
    """[lo, hi] in y's q units of the ReLU / Clip between the float op and the quantize."""
    lo, hi = y.qmin, y.qmax
    if rx.find_calls(bs, "relax.nn.relu"):
        lo = max(lo, y.zero)
    for c in rx.find_calls(bs, "relax.clip"):
        a, b = (int(np.clip(np.rint(float(v.value) / y.scale) + y.zero, -(1 << 20), 1 << 20))
                for v in c.args[1:])
        lo, hi = max(lo, a), min(hi, b)
    if lo > hi:
        raise Unsupported(f"empty activation range [{lo}, {hi}]")
    return lo, hi


def _mul_params(bs: list[Any], y: TensorQ, index: Any, producer: Any
                ) -> tuple[QParams, list[int], dict]:
    """The product of two activations (hard-swish's ``x * relu6(x + 3)``, a squeeze-and-
    excitation block's ``x * gate``): ``x`` the operand of the output's shape, ``res`` the
    other one, of the same shape or one value per channel (broadcast over the pixels)."""
    mul = rx.find_calls(bs, "relax.multiply")[0]
    ops = []
    for arg in mul.args:
        src = producer(arg)
        if not (isinstance(src, relax.Call) and src.op.name == "relax.dequantize"):
            raise Unsupported("an operand that is not a dequantized tensor")
        ops.append(_tensor_q(src, "mul input"))
    out_shape = list(rx.shape(rx.find_calls(bs, "relax.quantize")[-1]))
    shapes = [list(rx.shape(a)) for a, _ in ops]
    if len(out_shape) != 4:
        raise Unsupported(f"a {len(out_shape)}-D product (NCHW only)")
    if shapes[0] != out_shape:
        ops.reverse()
        shapes.reverse()
    c = out_shape[1]
    if shapes[0] != out_shape or shapes[1] not in (out_shape, [1, c, 1, 1]):
        raise Unsupported(f"product of shapes {shapes[0]} and {shapes[1]} (same shape, or "
                          f"one value per channel, only)")
    (a, qa), (b, qb) = ops
    lo, hi = _act_bounds(bs, y)
    broadcast = shapes[1] != out_shape
    qp = QParams(kind="mul", x=qa, res=qb, y=y, w_scale=np.ones(c), bias=np.zeros(c, np.int32),
                 lo=lo, hi=hi, label="channel multiply" if broadcast else "",
                 key=f"mul_{_fingerprint(np.array([qa.scale, qb.scale, y.scale, lo, hi]))}")
    # with a zero point in the second operand, x is an input again (z_r * x is subtracted)
    idx = [index(a), index(b)] + ([index(a)] if qb.zero_stored else [])
    return qp, idx, {"broadcast": broadcast}


def _avgpool_params(bs: list[Any], y: TensorQ, index: Any, producer: Any
                    ) -> tuple[QParams, list[int], dict]:
    """An ``AveragePool`` as the depthwise conv of a kernel of ones (kind ``conv2d``). Padding
    counted, or none: the weight scale is ``1 / (k * kw)``. Not counted (ONNX's default
    ``count_include_pad = 0``): the divisor is the number of taps inside the input, which
    changes at the borders (4, 6, 9 for a 3x3 pad 1 pool); with ``L`` the least common multiple
    of those counts, the weight scale is ``1 / L`` and the epilogue multiplies each pixel by the
    integer ``L / count`` (``QParams.pool_lcm``, :func:`vtabench.graph.integer.integer_form`),
    so the result is the mean over the taps inside, exactly."""
    pool = rx.find_calls(bs, "relax.nn.avg_pool2d")[0]
    xin, x = _tensor_q(producer(pool.args[0]), "average pool input")
    a = pool.attrs
    k, kw = (int(v) for v in a.pool_size)
    sh, sw = (int(v) for v in a.strides)
    pads = {int(p) for p in a.padding}
    shape = rx.shape(xin)
    if (len(pads) != 1 or any(int(d) != 1 for d in a.dilation) or bool(a.ceil_mode)
            or str(a.layout) != "NCHW" or len(shape) != 4):
        raise Unsupported("average pool attributes outside VTA's form (equal pads on every "
                          "side, no dilation, no ceil mode, NCHW)")
    pad = pads.pop()
    c, h, w = shape[1], shape[2], shape[3]
    lcm = 0
    if pad and not bool(a.count_include_pad):
        counts = window_counts((h, w), k, kw, sh, pad, sw)
        if counts.min() < 1:
            raise Unsupported(f"average pool windows with no tap inside the input (pad {pad})")
        lcm = math.lcm(*(int(v) for v in np.unique(counts)))
        if lcm >= 1 << 24:  # |sum| * L / count <= 128 L must stay an int32
            raise Unsupported(f"average pool window counts whose least common multiple "
                              f"{lcm} is 2^24 or more")
    scale = 1.0 / (lcm or k * kw)
    qp = QParams(kind="conv2d", x=x, y=y, weight=np.ones((c, 1, k, kw), np.int8),
                 w_scale=np.full(c, scale), bias=np.zeros(c, np.int32), lo=y.qmin, hi=y.qmax,
                 stride=sh, stride_w=sw if sw != sh else 0, pad=pad, groups=c, pool_lcm=lcm,
                 key=f"avgpool2d_{c}x{h}x{w}_k{k}x{kw}_s{sh}x{sw}_p{pad}_{lcm}_"
                     f"{_fingerprint(np.array([x.scale, y.scale]))}",
                 label="average pool")
    return qp, [index(xin)], {}


def _weight(call: Any, out_axis: int, what: str) -> tuple[np.ndarray, np.ndarray]:
    """int8 weight (zero point removed) and its per-output-channel scales from a weight's
    dequantize; ``out_axis`` is the output-channel axis."""
    data, scale, zp, axis, dtype = _qd(call)
    q = rx.const(data).astype(np.int64)
    channels = q.shape[out_axis]
    if dtype not in ("int8", "uint8"):
        raise Unsupported(f"{what}: {dtype} weights")
    if scale.size > 1 and axis != out_axis:
        raise Unsupported(f"{what}: per-channel weight scales along axis {axis} (not the "
                          f"output channels)")
    shape = [1] * q.ndim
    shape[out_axis] = -1
    w = q - (zp.astype(np.int64).reshape(shape) if zp.size > 1 else int(zp.reshape(-1)[0]))
    if w.min(initial=0) < -128 or w.max(initial=0) > 127:
        raise Unsupported(f"{what}: weight zero point {zp.reshape(-1)[:4].tolist()} leaves "
                          f"values outside int8")
    ws = np.broadcast_to(scale.reshape(-1), (channels,)).astype(np.float64)
    if not np.all(np.isfinite(ws) & (ws > 0)):
        raise Unsupported(f"{what}: weight scales must be positive")
    return w.astype(np.int8), ws


def _bias(call: Any | None, x: TensorQ, ws: np.ndarray, what: str) -> np.ndarray:
    """int32 bias in units of x.scale * ws (rescaled, rounded, when its own scale differs)."""
    if call is None:
        return np.zeros(ws.shape, np.int32)
    data, scale, zp, _, _ = _qd(call)
    real = (rx.const(data).astype(np.float64).reshape(-1) - zp.astype(np.float64).reshape(-1)) \
        * scale.reshape(-1)
    unit = x.scale * ws
    b = real / unit
    exact = rx.const(data).astype(np.int64).reshape(-1)
    if zp.size == 1 and int(zp.reshape(-1)[0]) == 0 and np.allclose(
            scale.reshape(-1), unit, rtol=1e-5, atol=0):
        return np.broadcast_to(exact, ws.shape).astype(np.int32)
    b = np.rint(np.broadcast_to(b, ws.shape))
    if np.abs(b).max(initial=0) >= 1 << 31:
        raise Unsupported(f"{what}: bias does not fit int32 at scale input x weight")
    return b.astype(np.int32)


def _transposed(qp: QParams, a: Any, w_shape: tuple[int, ...]) -> None:
    """A transposed conv as the conv node of :attr:`QParams.transposed`, or the reason it has
    no form on VTA (set as ``qp.unsupported``)."""
    s = {int(v) for v in a.strides}
    qp.kind, qp.label, qp.transposed = "conv2d", "transpose", True
    qp.stride = s.pop() if len(s) == 1 else 0
    if (qp.stride == 0 or w_shape[2:] != (qp.stride, qp.stride)
            or any(int(p) for p in a.padding) or any(int(p) for p in a.output_padding)
            or any(int(d) != 1 for d in a.dilation) or int(a.groups) != 1
            or str(a.data_layout) != "NCHW" or str(a.kernel_layout) != "IOHW"):
        qp.unsupported = ("conv2d_transpose outside VTA's form (kernel = stride on both axes, "
                          "no padding or output padding, no dilation, one group, NCHW/IOHW)")


def resize_scales(attrs: Any, in_shape: list[int], out_shape: list[int]) -> tuple[int, int]:
    """The integer (row, column) factors of a nearest-neighbour resize that copies input pixel
    (i, j) to the output block ``[i s, (i + 1) s) x [j s_w, (j + 1) s_w)``, or
    :class:`Unsupported` with the reason. ``asymmetric`` coordinates take source ``o / s``: its
    floor is ``i``; ``half_pixel`` ones take ``(o + 1/2) / s - 1/2``, strictly between
    ``i - 1/2`` and ``i + 1/2``: any rounding gives ``i``."""
    method, coords = str(attrs.method), str(attrs.coordinate_transformation_mode)
    rounding = str(attrs.rounding_method)
    if method != "nearest_neighbor" or str(attrs.layout) != "NCHW":
        raise Unsupported(f"resize method {method} ({attrs.layout}): only nearest (NCHW) is a "
                          f"copy")
    if not (coords == "half_pixel" or (coords == "asymmetric" and rounding == "floor")):
        raise Unsupported(f"nearest resize with {coords} coordinates and {rounding} rounding "
                          f"(a copy of whole blocks: asymmetric with floor, or half_pixel)")
    if len(in_shape) != 4 or in_shape[:2] != out_shape[:2]:
        raise Unsupported(f"resize of {in_shape} to {out_shape}: only the two spatial axes")
    factors = []
    for a, b in zip(in_shape[2:], out_shape[2:], strict=True):
        if b % a:
            raise Unsupported(f"resize of {in_shape} to {out_shape}: a scale that is not an "
                              f"integer")
        factors.append(b // a)
    return factors[0], factors[1]


def _prelu_slopes(call: Any, producer: Callable[[Any], Any], c: int) -> np.ndarray:
    """The slope of each of the ``c`` channels of a ``relax.nn.prelu`` call (its slope a
    constant, reshaped by TVM's converter). The integer form takes the larger of the two
    branches, which is the slope's exactly when the slope is at most 1."""
    src = producer(call.args[1])
    if isinstance(src, relax.Call) and src.op.name == "relax.reshape":
        src = producer(src.args[0])
    slopes = rx.const(src).astype(np.float64).reshape(-1)
    axis = int(call.attrs.axis)
    if slopes.size == 1:
        slopes = np.full(c, slopes[0])
    elif axis != 1 or slopes.size != c:
        raise Unsupported(f"a PReLU slope of {slopes.size} values along axis {axis} (one "
                          f"value or one per channel, axis 1)")
    if slopes.max() > 1:
        raise Unsupported(f"a PReLU slope {slopes.max():.3g} above 1 (the integer form takes "
                          f"the larger branch)")
    return slopes


def composite_params(kind: str, func: relax.Function) -> tuple[QParams, list[int], dict]:
    """Integer parameters of a composite, which of its parameters are the node's inputs (in
    order), and the attributes an integer CPU op needs (reshape: shape; maxpool: pool attrs).
    :class:`Unsupported` when the chain has no integer form."""
    bs = rx.bindings(func)
    params = list(func.params)
    var_val = {b.var: b.value for b in bs}

    def producer(e: Any) -> Any:
        return var_val.get(e, e)

    def index(v: Any) -> int:
        if v not in params:
            raise Unsupported("an operand that is not a graph tensor")
        return params.index(v)

    _, y = _tensor_q(rx.find_calls(bs, "relax.quantize")[-1], f"{kind} output")
    if kind in ("conv2d", "conv2d_transpose", "dense"):
        main = rx.find_calls(bs, {"conv2d": "relax.nn.conv2d", "dense": "relax.matmul",
                                  "conv2d_transpose": "relax.nn.conv2d_transpose"}[kind])[0]
        x_src = producer(main.args[0])
        if x_src.op.name == "relax.reshape":
            x_src = producer(x_src.args[0])
        xin, x = _tensor_q(x_src, f"{kind} input")
        w_src = producer(main.args[1])
        transposed = w_src.op.name == "relax.permute_dims"
        if transposed:
            w_src = producer(w_src.args[0])
        if kind == "conv2d":
            w, ws = _weight(w_src, 0, kind)
        elif kind == "conv2d_transpose":  # (C, O, s, s): the outputs on axis 1
            w, ws = _weight(w_src, 1, kind)
            w = np.ascontiguousarray(w.transpose(1, 0, 2, 3))
        else:
            w, ws = _weight(w_src, 0 if transposed else 1, kind)
            if not transposed:
                w = np.ascontiguousarray(w.T)
            rows = int(np.prod(rx.shape(xin))) // w.shape[1]
            if rows != 1:  # a 3-D MatMul: VTA's dense (and its integer form) take one row
                raise Unsupported(f"matmul of a {tuple(rx.shape(xin))} activation: {rows} rows "
                                  f"of {w.shape[1]}, VTA's dense takes one")
        adds = rx.find_calls(bs, "relax.add")
        b_src = None
        if adds:
            b_src = producer(adds[0].args[1])
            if b_src.op.name == "relax.reshape":
                b_src = producer(b_src.args[0])
        b = _bias(b_src, x, ws, kind)
        lo, hi = _act_bounds(bs, y)
        qp = QParams(kind=kind, x=x, y=y, weight=w, w_scale=ws, bias=b, lo=lo, hi=hi,
                     key=f"{kind}_{_fingerprint(w, b, ws)}")
        if kind == "conv2d_transpose":
            _transposed(qp, main.attrs, w.shape)
        if kind == "conv2d":
            a = main.attrs
            qp.stride = int(a.strides[0])
            if int(a.strides[1]) != qp.stride:
                qp.stride_w = int(a.strides[1])
            top, left, bottom, right = (int(p) for p in a.padding)
            if top == bottom and left == right and top != left:
                # pads (p, q) as (r, r), r = max(p, q): zero rows (or columns) on both sides
                # of the kernel cover the extra padding, and the taps stay the same (the
                # recognizer's 1 x 3 convs, pads (0, 1), on maps of height 1)
                d = abs(top - left)
                rows = (d, d) if left > top else (0, 0)
                cols = (0, 0) if left > top else (d, d)
                qp.weight = np.pad(qp.weight, ((0, 0), (0, 0), rows, cols))
                qp.key = f"{kind}_{_fingerprint(qp.weight, b, ws)}"
                top = bottom = left = right = max(top, left)
            qp.pad = top
            ok = (len({top, left, bottom, right}) == 1 and all(int(d) == 1 for d in a.dilation)
                  and str(a.data_layout) == "NCHW" and str(a.kernel_layout) == "OIHW")
            qp.groups = int(a.groups)
            if not ok:
                qp.unsupported = ("conv2d attributes outside VTA's form (equal pads on every "
                                  "side, no dilation, NCHW/OIHW)")
        return qp, [index(xin)], {}
    if kind == "avgpool":
        mean = rx.find_calls(bs, "relax.mean")[0]
        xin, x = _tensor_q(producer(mean.args[0]), "avgpool input")
        shape = rx.shape(xin)
        axes = sorted(int(a) % len(shape) for a in mean.attrs.axis) if mean.attrs.axis \
            is not None else list(range(len(shape)))
        if axes != [2, 3] or len(shape) != 4 or not bool(mean.attrs.keepdims):
            # normalize rewrites every mean over H and/or W of a 4-D tensor into a pool
            raise Unsupported(f"mean over axes {tuple(axes)} of a {len(shape)}-D tensor: only a "
                              "mean over H, W or both of an NCHW tensor is an average pool on "
                              "VTA (over channels or the batch: not lowered)")
        c, h, w = shape[1], shape[2], shape[3]
        qp = QParams(kind="avgpool", x=x, y=y, w_scale=np.full(c, 1.0 / (h * w)),
                     bias=np.zeros(c, np.int32), lo=y.qmin, hi=y.qmax,
                     key=f"avgpool_{c}x{h}x{w}_{_fingerprint(np.array([x.scale, y.scale]))}",
                     label="global average pool")
        return qp, [index(xin)], {"hw": (h, w)}
    if kind == "avgpool2d":
        return _avgpool_params(bs, y, index, producer)
    if kind == "add":
        add = rx.find_calls(bs, "relax.add")[0]
        rank = len(rx.shape(rx.find_calls(bs, "relax.quantize")[-1]))
        for arg in add.args:
            if producer(arg).args[0] not in params:
                raise Unsupported(f"an Add of a constant to a {rank}-D tensor "
                                  f"(only per-channel constants of NCHW tensors become "
                                  f"depthwise convs: vtabench.graph.onnx_affine)")
        a, qa = _tensor_q(producer(add.args[0]), "add input")
        b, qb = _tensor_q(producer(add.args[1]), "add input")
        lo, hi = _act_bounds(bs, y)
        qp = QParams(kind="add", x=qa, res=qb, y=y, lo=lo, hi=hi, key="add",
                     integer_exact=False)
        return qp, [index(a), index(b)], {}
    if kind == "mul":
        return _mul_params(bs, y, index, producer)
    xin, x = _tensor_q(rx.find_calls(bs, "relax.dequantize")[0], f"{kind} input")
    same = x == y
    if kind == "hardswish":
        c = rx.shape(xin)[1]
        if x.zero_stored:
            raise Unsupported("a HardSwish input with a zero point in its stored form (the "
                              "product multiplies the loaded input as it is stored)")
        qp = QParams(kind="hardswish", x=x, y=y, w_scale=np.ones(c), bias=np.zeros(c, np.int32),
                     lo=y.qmin, hi=y.qmax,
                     key=f"hardswish_{_fingerprint(np.array([x.scale, y.scale]))}")
        return qp, [index(xin), index(xin)], {}
    if kind == "leaky" and rx.find_calls(bs, "relax.nn.prelu"):
        c = rx.shape(xin)[1]
        slopes = _prelu_slopes(rx.find_calls(bs, "relax.nn.prelu")[0], producer, c)
        qp = QParams(kind="leaky", x=x, y=y, slopes=slopes, w_scale=np.ones(c),
                     bias=np.zeros(c, np.int32), lo=y.qmin, hi=y.qmax,
                     key=f"prelu_{_fingerprint(slopes, np.array([x.scale, y.scale]))}")
        return qp, [index(xin), index(xin)], {}
    if kind == "leaky":
        alpha = float(rx.find_calls(bs, "relax.nn.leakyrelu")[0].attrs.alpha)
        if not 0 <= alpha <= 1:
            raise Unsupported(f"LeakyReLU slope {alpha} outside [0, 1]")
        c = rx.shape(xin)[1]
        qp = QParams(kind="leaky", x=x, y=y, alpha=alpha, w_scale=np.ones(c),
                     bias=np.zeros(c, np.int32), lo=y.qmin, hi=y.qmax,
                     key=f"leaky_{alpha}_{_fingerprint(np.array([x.scale, y.scale]))}")
        return qp, [index(xin), index(xin)], {}
    if kind == "act":
        lo, hi = _act_bounds(bs, y)
        qp = QParams(kind="act", x=x, y=y, lo=lo, hi=hi, key=f"act_{lo}_{hi}",
                     integer_exact=same)
        return qp, [index(xin)], {}
    if kind == "reshape":
        r = rx.find_calls(bs, "relax.reshape")[0]
        return (QParams(kind="reshape", x=x, y=y, key="reshape", integer_exact=same),
                [index(xin)], {"shape": rx.shape(r)})
    if kind == "maxpool":
        mp = rx.find_calls(bs, "relax.nn.max_pool2d")[0]
        return (QParams(kind="maxpool", x=x, y=y, key="maxpool", integer_exact=same),
                [index(xin)], {"attrs": mp.attrs})
    if kind == "resize":
        rz = rx.find_calls(bs, "relax.image.resize2d")[0]
        scales = resize_scales(rz.attrs, rx.shape(xin), rx.shape(rz))
        return (QParams(kind="resize", x=x, y=y, key=f"resize_{scales[0]}x{scales[1]}",
                        integer_exact=same), [index(xin)], {"scales": scales})
    raise Unsupported(f"unknown composite {kind}")
