"""Operator specifications and their TE compute definitions (packed layouts).

Layouts (upstream VTA's): activations NCHW{n}{c} = ``(N/BATCH, C/BLOCK_IN, H, W, BATCH,
BLOCK_IN)`` int8; conv weights ``(O/BLOCK_OUT, C/BLOCK_IN, KH, KW, BLOCK_OUT, BLOCK_IN)`` int8;
dense activations ``(N/BATCH, K/BLOCK_IN, BATCH, BLOCK_IN)``, dense weights ``(M/BLOCK_OUT,
K/BLOCK_IN, BLOCK_OUT, BLOCK_IN)``; outputs int8 in the activation layout of the output.

Epilogue operations (applied in order to the int32 accumulator, each one TE stage, each one ALU
instruction group on the device; the last result is narrowed to int8 by truncation, as the ISA's
STORE does, so clip first to saturate):

* ``("bias",)``: add an int32 per-output-channel bias, shape ``(1, O/BO, 1, 1, BATCH, BO)`` for
  conv (``(1, M/BO, BATCH, BO)`` for dense), loaded with LOAD ACC;
* ``("bias_map",)``: add an int32 tensor of the output's shape (LOAD ACC of a full tile: a
  bias that differs per pixel, e.g. zero-point corrections at padded borders); ``("map_mul",)``:
  multiply by such a tensor (LOAD ACC, ALU MUL: an average pool's ``L / count`` per pixel when
  the padding is not counted);
* ``("shift", s)``: requantize by a rounding right shift, ``floor((x + 2^(s-1)) / 2^s)``: ADD
  imm 2^(s-1), SHR imm s while 2^(s-1) fits the immediate, else SHR s-1, ADD 1, SHR 1 (the same
  value: ``floor((x + 2^(s-1)) / 2^s) == floor((floor(x / 2^(s-1)) + 1) / 2)``);
* ``("mul_imm", m)``: multiply by an immediate (ALU MUL imm); ``("chan_mul",)``: multiply by an
  int32 per-output-channel tensor shaped like the bias (LOAD ACC, ALU MUL): requantization
  multipliers, one per tensor or one per channel; ``("chan_max",)``, ``("chan_min",)``: the
  maximum / minimum with such a tensor (bounds beyond the 16-bit immediates);
* ``("add_imm", c)``: add an immediate (output zero points);
* ``("relu",)``: ``max(x, 0)``; ``("clip", lo, hi)``: ``min(max(x, lo), hi)``;
* ``("residual",)``: add an int8 tensor of the output's shape, loaded with LOAD ACC_8BIT;
  ``("residual_mul",)``: add that tensor times an int32 per-output-channel multiplier (a second
  input shaped like the bias; ALU MUL of the loaded tile by the loaded multipliers, then ADD): a
  residual Add whose operands have different scales; ``("residual_max",)``: the maximum with that
  product instead of the sum (a LeakyReLU: ``max(a * ma, a * mb)``);
* ``("mul",)``: multiply elementwise by an int8 tensor of the output's shape (ACC_8BIT, ALU MUL);
  ``("mul_chan",)``: multiply by an int8 per-output-channel tensor shaped like the bias (an
  activation of one pixel, e.g. a squeeze-and-excitation block's gate, LOAD ACC_8BIT), broadcast
  over the pixels by the ALU's micro-op loops (factor 0 on the pixel axes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from tvm import te, tirx

from vtabench.spec.isa.layout import IMM_BITS, PAD_BITS, STRIDE_BITS

if TYPE_CHECKING:
    from vtabench.spec.config import Config


class CompileError(ValueError):
    """An operator cannot be compiled for a configuration (shape not a multiple of the block,
    a layer that cannot be tiled into the on-chip buffers, ...)."""


EPILOGUE_OPS = {"bias": 0, "bias_map": 0, "map_mul": 0, "shift": 1, "mul_imm": 1, "chan_mul": 0,
                "chan_max": 0, "chan_min": 0, "add_imm": 1, "relu": 0, "clip": 2,
                "residual": 0, "residual_mul": 0, "residual_max": 0, "mul": 0, "mul_chan": 0}
#: Epilogue ops that take an int32 per-output-channel tensor, and those that take a tensor of the
#: output's shape (int8 for residual, residual_mul, residual_max and mul; int32 for bias_map and
#: map_mul).
#: residual_mul and residual_max also take per-channel multipliers.
CHANNEL_OPERANDS = ("bias", "chan_mul", "chan_max", "chan_min")
FULL_OPERANDS = ("bias_map", "map_mul", "residual", "residual_mul", "residual_max", "mul")


#: Limits of the instruction fields the compiler fills from operator parameters.
IMM_MIN, IMM_MAX = -(1 << (IMM_BITS - 1)), (1 << (IMM_BITS - 1)) - 1
PAD_MAX = (1 << PAD_BITS) - 1
STRIDE_MAX = (1 << STRIDE_BITS) - 1


def _check_epilogue(ep: tuple) -> tuple:
    out = []
    for op in ep:
        op = tuple(op) if isinstance(op, (tuple, list)) else (op,)
        if op[0] not in EPILOGUE_OPS or len(op) != 1 + EPILOGUE_OPS[op[0]]:
            raise CompileError(f"bad epilogue op {op!r}; known: {sorted(EPILOGUE_OPS)}")
        if op[0] == "shift" and not 0 <= op[1] <= 31:
            raise CompileError(f"shift amount {op[1]} outside [0, 31]")
        if op[0] == "clip" and not (IMM_MIN <= op[1] <= op[2] <= IMM_MAX):
            raise CompileError(f"clip bounds {op[1:]} must be ordered {IMM_BITS}-bit immediates")
        if op[0] in ("mul_imm", "add_imm") and not IMM_MIN <= op[1] <= IMM_MAX:
            raise CompileError(f"{op[0]} {op[1]} is not a {IMM_BITS}-bit immediate")
        out.append(op)
    return tuple(out)


def _check_multiples(name: str, cfg: Config, *sizes: tuple[str, int, int]) -> None:
    """Each ``(what, size, block)``: the size a multiple of the block, else a CompileError."""
    for what, v, b in sizes:
        if v % b:
            raise CompileError(f"{name}: {what} {v} is not a multiple of {b} ({cfg.name})")


def _check_channel_strides(name: str, *planes: tuple[str, int, int]) -> None:
    """Each ``(what, channel blocks, plane)`` of a tensor with more than one channel block: the
    blocks, ``plane`` vectors apart, within the LOAD/STORE x_stride field."""
    for what, blocks, plane in planes:
        if blocks > 1 and plane > STRIDE_MAX:
            raise CompileError(f"{name}: {what} channel blocks {plane} vectors apart, "
                               f"beyond the LOAD/STORE x_stride field ({STRIDE_BITS} bits)")


@dataclass(frozen=True)
class Conv2dSpec:
    """conv2d, NCHW sizes in elements (channels are multiples of the block).

    ``blockwise``: each output-channel block reads only the input-channel block of the same
    index (``c == o``; weights ``(O/BO, 1, K, K, BO, BI)``): a depthwise convolution or a global
    average pool with diagonal weight blocks, one GEMM per block instead of one per pair of
    blocks.

    ``k`` and ``stride`` are the kernel height and the vertical stride; ``kernel_w`` and
    ``stride_w`` (0: the same) the width and horizontal stride of a rectangular kernel (a
    global average pool over a 12 x 96 map) or stride (PaddleOCR's (2, 1))."""

    n: int
    c: int
    h: int
    w: int
    o: int
    k: int
    stride: int = 1
    pad: int = 0
    epilogue: tuple = field(default=())
    name: str = "conv2d"
    blockwise: bool = False
    kernel_w: int = 0
    stride_w: int = 0

    @property
    def k_w(self) -> int:
        return self.kernel_w or self.k

    @property
    def s_w(self) -> int:
        return self.stride_w or self.stride

    @property
    def out_h(self) -> int:
        return (self.h + 2 * self.pad - self.k) // self.stride + 1

    @property
    def out_w(self) -> int:
        return (self.w + 2 * self.pad - self.k_w) // self.s_w + 1

    @property
    def macs(self) -> int:
        """Multiply-accumulates of the operator (a blockwise conv: one input channel per
        output channel, not the zeros of its diagonal blocks)."""
        cin = 1 if self.blockwise else self.c
        return self.n * self.o * self.out_h * self.out_w * cin * self.k * self.k_w

    def check(self, cfg: Config) -> None:
        _check_multiples(self.name, cfg, ("batch", self.n, cfg.batch),
                         ("input channels", self.c, cfg.block_in),
                         ("output channels", self.o, cfg.block_out))
        if self.blockwise and (self.c != self.o or cfg.block_in != cfg.block_out):
            raise CompileError(f"{self.name}: a blockwise conv needs as many output as input "
                               f"channels and square blocks")
        if self.out_h < 1 or self.out_w < 1:
            raise CompileError(f"{self.name}: empty output")
        if self.pad > PAD_MAX:
            raise CompileError(f"{self.name}: pad {self.pad} above the LOAD pad fields "
                               f"({PAD_BITS} bits, at most {PAD_MAX})")
        _check_channel_strides(self.name, ("input", self.c // cfg.block_in, self.h * self.w),
                               ("output", self.o // cfg.block_out, self.out_h * self.out_w))
        _check_epilogue(self.epilogue)


@dataclass(frozen=True)
class DenseSpec:
    """dense: out[n, m] = sum_k data[n, k] * weight[m, k]."""

    n: int
    k: int
    m: int
    epilogue: tuple = field(default=())
    name: str = "dense"

    @property
    def macs(self) -> int:
        return self.n * self.k * self.m

    def check(self, cfg: Config) -> None:
        _check_multiples(self.name, cfg, ("batch", self.n, cfg.batch),
                         ("reduction", self.k, cfg.block_in), ("outputs", self.m, cfg.block_out))
        _check_epilogue(self.epilogue)


@dataclass(frozen=True)
class MaxPoolSpec:
    """Max pooling of an int8 activation, NCHW sizes in elements (channels a multiple of the
    block): a ``k`` x ``k`` window, stride, zero padding: ``pad`` rows / columns before (top,
    left), ``pad_end`` after (bottom, right; None: ``pad``), each below ``k`` (exact when every
    input is at least 0). On the ALU: LOAD ACC_8BIT of the padded input tile, a GEMM reset of
    the output tile (the maximum starts at 0), then one MAX per window position. ``signed``:
    inputs may be negative: the loaded tile's interior is moved up by 128 first and the result
    back down. Without padding that is an ALU ADD of 128; with padding the padding must stay 0
    (the minimum of the moved range), so a tensor of ones (:data:`POOL_ONES`, ``(1, 1, H, W)``
    blocks) is loaded with the same padding (1 inside, 0 in the padding), multiplied by 128
    (ALU MUL, on its own tile) and added to every channel block (ALU ADD, factor 0 on the
    channel blocks)."""

    n: int
    c: int
    h: int
    w: int
    k: int
    stride: int = 1
    pad: int = 0
    name: str = "maxpool"
    signed: bool = False
    epilogue: tuple = field(default=())
    pad_end: int | None = None

    @property
    def pad_after(self) -> int:
        """Rows (bottom) and columns (right) of padding after the input."""
        return self.pad if self.pad_end is None else self.pad_end

    @property
    def out_h(self) -> int:
        return (self.h + self.pad + self.pad_after - self.k) // self.stride + 1

    @property
    def out_w(self) -> int:
        return (self.w + self.pad + self.pad_after - self.k) // self.stride + 1

    @property
    def macs(self) -> int:
        return 0

    def check(self, cfg: Config) -> None:
        _check_multiples(self.name, cfg, ("batch", self.n, cfg.batch),
                         ("channels", self.c, cfg.block_in))
        if cfg.block_in != cfg.block_out:
            raise CompileError(f"{self.name}: max pooling needs square blocks")
        if self.out_h < 1 or self.out_w < 1:
            raise CompileError(f"{self.name}: empty output")
        for what, p in (("pad", self.pad), ("pad_end", self.pad_after)):
            if p > PAD_MAX:
                raise CompileError(f"{self.name}: {what} {p} above the LOAD pad fields "
                                   f"({PAD_BITS} bits, at most {PAD_MAX})")
            if not 0 <= p < self.k:
                raise CompileError(f"{self.name}: {what} {p} outside [0, {self.k}) (a window "
                                   f"entirely in the padding)")


@dataclass(frozen=True)
class ConvTransposeSpec:
    """A transposed convolution whose kernel equals its stride (``s x s``, no padding: the
    upsampling head of a DBNet), NCHW sizes in elements (channels multiples of the block):
    ``out[o, y s + a, x s + b] = sum_c in[c, y, x] w[o, c, a, b]``. The kernel taps do not
    overlap, so each output pixel is one tap's dot product: the output, ``(N, O, H * s,
    W * s)``, is computed as ``(N, O, H, s, W, s)`` (the same bytes), one GEMM per input pixel
    and tap whose micro-op loops step the accumulator by ``s`` and the input by 1; weights
    packed like a conv's (``(O/BO, C/BI, s, s, BO, BI)``, ``w[o, c, a, b]``: ONNX's
    ``W[c, o, a, b]``). Any epilogue, its full-shape operands of the output's shape."""

    n: int
    c: int
    h: int
    w: int
    o: int
    stride: int
    epilogue: tuple = field(default=())
    name: str = "conv_transpose"

    @property
    def out_h(self) -> int:
        return self.h * self.stride

    @property
    def out_w(self) -> int:
        return self.w * self.stride

    @property
    def macs(self) -> int:
        return self.n * self.o * self.c * self.h * self.w * self.stride * self.stride

    def check(self, cfg: Config) -> None:
        _check_multiples(self.name, cfg, ("batch", self.n, cfg.batch),
                         ("input channels", self.c, cfg.block_in),
                         ("output channels", self.o, cfg.block_out))
        if self.stride < 1 or self.h < 1 or self.w < 1:
            raise CompileError(f"{self.name}: empty input or a stride below 1")
        _check_channel_strides(self.name, ("input", self.c // cfg.block_in, self.h * self.w),
                               ("output", self.o // cfg.block_out, self.out_h * self.out_w))
        _check_epilogue(self.epilogue)


@dataclass(frozen=True)
class UpsampleSpec:
    """Nearest-neighbour upsampling of an int8 activation by integer factors, NCHW sizes in
    elements (channels a multiple of the block): ``out[y, x] = in[y // scale, x // scale_w]``
    (ONNX ``Resize``, mode nearest, integer scales). The output, ``(N, C, H * scale, W *
    scale_w)``, is computed as ``(N, C, H, scale, W, scale_w)``: the same bytes, an affine index
    of every output pixel. On the ALU: LOAD ACC_8BIT of the input tile, a GEMM reset of the
    output tile, one ALU ADD that adds input pixel (y, x) to each of its ``scale x scale_w``
    output pixels (the micro-op loops step the destination by ``scale``, the source by 1), a
    STORE of the output tile: a copy, exact."""

    n: int
    c: int
    h: int
    w: int
    scale: int
    scale_w: int = 0
    name: str = "upsample"
    epilogue: tuple = field(default=())

    @property
    def s_w(self) -> int:
        return self.scale_w or self.scale

    @property
    def out_h(self) -> int:
        return self.h * self.scale

    @property
    def out_w(self) -> int:
        return self.w * self.s_w

    @property
    def macs(self) -> int:
        return 0

    def check(self, cfg: Config) -> None:
        _check_multiples(self.name, cfg, ("batch", self.n, cfg.batch),
                         ("channels", self.c, cfg.block_in))
        if cfg.block_in != cfg.block_out:
            raise CompileError(f"{self.name}: upsampling needs square blocks")
        if self.scale < 1 or self.s_w < 1 or self.h < 1 or self.w < 1:
            raise CompileError(f"{self.name}: empty input or a scale below 1")
        if self.epilogue:
            raise CompileError(f"{self.name}: upsampling takes no epilogue")
        _check_channel_strides(self.name,
                               ("output", self.c // cfg.block_out, self.out_h * self.out_w))


@dataclass
class OpTE:
    """The TE definition of an operator: inputs in call order (data, weight, then the epilogue's
    extra tensors in order), the int8 output, and block names the schedule needs."""

    inputs: list[te.Tensor]
    output: te.Tensor
    main: str  # the GEMM stage
    pad: str | None  # the zero-padding stage (conv with pad > 0)
    alu_stages: list[str]  # epilogue stages, in order
    acc_inputs: list[tuple[str, str]]  # (input name, consuming stage) extra inputs into acc

    @property
    def func_args(self) -> list[te.Tensor]:
        return [*self.inputs, self.output]


def _ew(shape: tuple[int, ...], fn, name: str) -> te.Tensor:
    """An elementwise stage; ``fn`` takes the index tuple."""
    return te.compute(shape, lambda *i: fn(i), name=name)


def _epilogue(acc: te.Tensor, ep: tuple, bias_shape: tuple[int, ...], out_shape: tuple[int, ...],
              chan_axis: int) -> tuple[te.Tensor, list[te.Tensor], list[str],
                                       list[tuple[str, str]]]:
    inputs: list[te.Tensor] = []
    stages: list[str] = []
    acc_inputs: list[tuple[str, str]] = []
    x = acc
    rank = len(out_shape)
    for k, op in enumerate(_check_epilogue(ep)):
        kind = op[0]
        prev = x
        if kind in CHANNEL_OPERANDS:
            t = te.placeholder(bias_shape, "int32", name=f"{kind}{k}")
            inputs.append(t)
            acc_inputs.append((t.op.name, f"ep{k}_{kind}"))

            def fb(i, prev=prev, t=t, kind=kind):
                bi = [0] * rank
                bi[chan_axis] = i[chan_axis]
                bi[-2] = i[-2]
                bi[-1] = i[-1]
                a, b = prev(*i), t(*bi)
                return {"bias": lambda: a + b, "chan_mul": lambda: a * b,
                        "chan_max": lambda: te.max(a, b), "chan_min": lambda: te.min(a, b)
                        }[kind]()
            x = _ew(out_shape, fb, f"ep{k}_{kind}")
            stages.append(x.op.name)
        elif kind == "mul_chan":
            t = te.placeholder(bias_shape, "int8", name=f"{kind}{k}")
            inputs.append(t)

            def fc(i, prev=prev, t=t):
                bi = [0] * rank
                bi[chan_axis] = i[chan_axis]
                bi[-2] = i[-2]
                bi[-1] = i[-1]
                return prev(*i) * t(*bi).astype("int32")
            x = _ew(out_shape, fc, f"ep{k}_mul_chan")
            acc_inputs.append((t.op.name, x.op.name))
            stages.append(x.op.name)
        elif kind in ("bias_map", "map_mul"):
            t = te.placeholder(out_shape, "int32", name=f"{kind}{k}")
            inputs.append(t)
            if kind == "bias_map":
                x = _ew(out_shape, lambda i, prev=prev, t=t: prev(*i) + t(*i), f"ep{k}_{kind}")
            else:
                x = _ew(out_shape, lambda i, prev=prev, t=t: prev(*i) * t(*i), f"ep{k}_{kind}")
            acc_inputs.append((t.op.name, x.op.name))
            stages.append(x.op.name)
        elif kind == "shift":
            s = op[1]
            # (x + 2^(s-1)) >> s; when 2^(s-1) is not an immediate, ((x >> (s-1)) + 1) >> 1
            steps: list[tuple[str, int]] = []
            if s > 0 and (1 << (s - 1)) <= IMM_MAX:
                steps = [("round", 1 << (s - 1)), ("shr", s)]
            elif s > 0:
                steps = [("shr", s - 1), ("round", 1), ("shr", 1)]
            for j, (step, v) in enumerate(steps):
                if step == "round":
                    x = _ew(out_shape, lambda i, p=x, v=v: p(*i) + v, f"ep{k}_round{j}")
                else:
                    x = _ew(out_shape, lambda i, p=x, v=v: p(*i) >> v, f"ep{k}_shr{j}")
                stages.append(x.op.name)
        elif kind in ("mul_imm", "add_imm"):
            v = op[1]
            if kind == "mul_imm":
                x = _ew(out_shape, lambda i, prev=prev, v=v: prev(*i) * v, f"ep{k}_mul_imm")
            else:
                x = _ew(out_shape, lambda i, prev=prev, v=v: prev(*i) + v, f"ep{k}_add_imm")
            stages.append(x.op.name)
        elif kind == "relu":
            x = _ew(out_shape, lambda i, prev=prev: te.max(prev(*i), 0), f"ep{k}_relu")
            stages.append(x.op.name)
        elif kind == "clip":
            lo, hi = op[1], op[2]
            x = _ew(out_shape, lambda i, prev=prev, lo=lo: te.max(prev(*i), lo), f"ep{k}_max")
            stages.append(x.op.name)
            prev2 = x
            x = _ew(out_shape, lambda i, prev2=prev2, hi=hi: te.min(prev2(*i), hi), f"ep{k}_min")
            stages.append(x.op.name)
        elif kind in ("residual", "residual_mul", "residual_max", "mul"):
            t = te.placeholder(out_shape, "int8", name=f"{kind}{k}")
            inputs.append(t)
            # The int8 tensor is cached into the accumulator scope as is (LOAD ACC_8BIT sign-
            # extends it); the stage reads it through a cast.
            if kind == "residual":
                x = _ew(out_shape, lambda i, prev=prev, t=t: prev(*i) + t(*i).astype("int32"),
                        f"ep{k}_add")
            elif kind in ("residual_mul", "residual_max"):
                # one stage; the emitter multiplies the loaded tile in place, then adds / maxes
                m = te.placeholder(bias_shape, "int32", name=f"rscale{k}")
                inputs.append(m)

                def fm(i, prev=prev, t=t, m=m, add=kind == "residual_mul"):
                    bi = [0] * rank
                    bi[chan_axis] = i[chan_axis]
                    bi[-2] = i[-2]
                    bi[-1] = i[-1]
                    scaled = t(*i).astype("int32") * m(*bi)
                    return prev(*i) + scaled if add else te.max(prev(*i), scaled)
                x = _ew(out_shape, fm, f"ep{k}_{kind}")
                acc_inputs.append((m.op.name, x.op.name))
            else:
                x = _ew(out_shape, lambda i, prev=prev, t=t: prev(*i) * t(*i).astype("int32"),
                        f"ep{k}_mul")
            acc_inputs.append((t.op.name, x.op.name))
            stages.append(x.op.name)
    return x, inputs, stages, acc_inputs


def conv2d_te(spec: Conv2dSpec, cfg: Config) -> OpTE:
    spec.check(cfg)
    B, BI, BO = cfg.batch, cfg.block_in, cfg.block_out
    N, C, O = spec.n // B, spec.c // BI, spec.o // BO
    H, W, K, S, P = spec.h, spec.w, spec.k, spec.stride, spec.pad
    KW, SW = spec.k_w, spec.s_w
    Ho, Wo = spec.out_h, spec.out_w
    data = te.placeholder((N, C, H, W, B, BI), "int8", name="data")
    CW = 1 if spec.blockwise else C  # input-channel blocks per output block
    wgt = te.placeholder((O, CW, K, KW, BO, BI), "int8", name="weight")
    if P:
        src = te.compute(
            (N, C, H + 2 * P, W + 2 * P, B, BI),
            lambda n, c, h, w, b, i: te.if_then_else(
                te.all(h >= P, h < H + P, w >= P, w < W + P), data[n, c, h - P, w - P, b, i],
                tirx.const(0, "int8")), name="pad")
    else:
        src = data
    ic = te.reduce_axis((0, CW), "ic")
    kh = te.reduce_axis((0, K), "kh")
    kw = te.reduce_axis((0, KW), "kw")
    ii = te.reduce_axis((0, BI), "ii")
    out_shape = (N, O, Ho, Wo, B, BO)
    acc = te.compute(out_shape, lambda n, o, h, w, b, j: te.sum(
        src[n, o + ic if spec.blockwise else ic, h * S + kh, w * SW + kw, b, ii].astype("int32")
        * wgt[o, ic, kh, kw, j, ii].astype("int32"), axis=[ic, kh, kw, ii]), name="conv")
    x, extra, stages, acc_inputs = _epilogue(acc, spec.epilogue, (1, O, 1, 1, B, BO),
                                                    out_shape, 1)
    out = te.compute(out_shape, lambda *i: x(*i).astype("int8"), name="out")
    return OpTE([data, wgt, *extra], out, "conv", "pad" if P else None, stages, acc_inputs)


def dense_te(spec: DenseSpec, cfg: Config) -> OpTE:
    spec.check(cfg)
    B, BI, BO = cfg.batch, cfg.block_in, cfg.block_out
    N, K, M = spec.n // B, spec.k // BI, spec.m // BO
    data = te.placeholder((N, K, B, BI), "int8", name="data")
    wgt = te.placeholder((M, K, BO, BI), "int8", name="weight")
    k = te.reduce_axis((0, K), "k")
    ii = te.reduce_axis((0, BI), "ii")
    out_shape = (N, M, B, BO)
    acc = te.compute(out_shape, lambda n, m, b, j: te.sum(
        data[n, k, b, ii].astype("int32") * wgt[m, k, j, ii].astype("int32"), axis=[k, ii]),
        name="dense")
    x, extra, stages, acc_inputs = _epilogue(acc, spec.epilogue, (1, M, B, BO), out_shape, 1)
    out = te.compute(out_shape, lambda *i: x(*i).astype("int8"), name="out")
    return OpTE([data, wgt, *extra], out, "dense", None, stages, acc_inputs)


#: The input name of a signed padded max pool's tensor of ones (:class:`MaxPoolSpec`).
POOL_ONES = "ones"


def pool_ones(shape: tuple[int, ...]) -> np.ndarray:
    """The value of a signed padded max pool's :data:`POOL_ONES` input of ``shape``."""
    return np.ones(shape, np.int8)


def maxpool_te(spec: MaxPoolSpec, cfg: Config) -> OpTE:
    spec.check(cfg)
    B, BI = cfg.batch, cfg.block_in
    N, C = spec.n // B, spec.c // BI
    H, W, K, S, P, Q = spec.h, spec.w, spec.k, spec.stride, spec.pad, spec.pad_after
    data = te.placeholder((N, C, H, W, B, BI), "int8", name="data")
    inputs = [data]

    def padded(t: te.Tensor, name: str) -> te.Tensor:
        return te.compute(
            (t.shape[0], t.shape[1], H + P + Q, W + P + Q, B, BI),
            lambda n, c, h, w, b, i: te.if_then_else(
                te.all(h >= P, h < H + P, w >= P, w < W + P), t[n, c, h - P, w - P, b, i],
                tirx.const(0, "int8")), name=name)

    src = padded(data, "pad") if P or Q else data
    stages = []
    if spec.signed and (P or Q):  # the interior to [0, 255], the padding stays 0
        ones = te.placeholder((1, 1, H, W, B, BI), "int8", name=POOL_ONES)
        inputs.append(ones)
        inside = padded(ones, "pad_ones")
        # scaled on its own tile first: a scale inside the ADD would be applied once per
        # channel block (the ones are broadcast over them)
        lift = te.compute(inside.shape, lambda *i: inside(*i).astype("int32") * 128,
                          name="ones_lift")
        x = src
        src = te.compute(x.shape, lambda n, c, h, w, b, i: x[n, c, h, w, b, i].astype("int32")
                         + lift[0, 0, h, w, b, i], name="shift_in")
        stages += ["ones_lift", "shift_in"]
    elif spec.signed:  # move every input to [0, 255]
        x = src
        src = te.compute(x.shape, lambda *i: x(*i).astype("int32") + 128, name="shift_in")
        stages.append("shift_in")
    kh = te.reduce_axis((0, K), "kh")
    kw = te.reduce_axis((0, K), "kw")
    # identity 0: the inputs are non-negative (the init is the GEMM reset)
    vmax = te.comm_reducer(lambda a, b: te.max(a, b), lambda t: tirx.const(0, t), name="vmax")
    out_shape = (N, C, spec.out_h, spec.out_w, B, BI)
    acc = te.compute(out_shape, lambda n, c, h, w, b, i: vmax(
        src[n, c, h * S + kh, w * S + kw, b, i].astype("int32"), axis=[kh, kw]), name="pool")
    if spec.signed:
        pooled = acc
        acc = te.compute(out_shape, lambda *i: pooled(*i) - 128, name="shift_out")
        stages.append("shift_out")
    out = te.compute(out_shape, lambda *i: acc(*i).astype("int8"), name="out")
    return OpTE(inputs, out, "pool", "pad" if P or Q else None, stages, [])


def conv_transpose_te(spec: ConvTransposeSpec, cfg: Config) -> OpTE:
    spec.check(cfg)
    B, BI, BO = cfg.batch, cfg.block_in, cfg.block_out
    N, C, O, S = spec.n // B, spec.c // BI, spec.o // BO, spec.stride
    data = te.placeholder((N, C, spec.h, spec.w, B, BI), "int8", name="data")
    wgt = te.placeholder((O, C, S, S, BO, BI), "int8", name="weight")
    ic = te.reduce_axis((0, C), "ic")
    ii = te.reduce_axis((0, BI), "ii")
    out_shape = (N, O, spec.h, S, spec.w, S, B, BO)
    acc = te.compute(out_shape, lambda n, o, h, a, w, bw, b, j: te.sum(
        data[n, ic, h, w, b, ii].astype("int32") * wgt[o, ic, a, bw, j, ii].astype("int32"),
        axis=[ic, ii]), name="conv_transpose")
    x, extra, stages, acc_inputs = _epilogue(acc, spec.epilogue, (1, O, 1, 1, 1, 1, B, BO),
                                             out_shape, 1)
    out = te.compute(out_shape, lambda *i: x(*i).astype("int8"), name="out")
    return OpTE([data, wgt, *extra], out, "conv_transpose", None, stages, acc_inputs)


def upsample_te(spec: UpsampleSpec, cfg: Config) -> OpTE:
    spec.check(cfg)
    B, BI = cfg.batch, cfg.block_in
    N, C = spec.n // B, spec.c // BI
    data = te.placeholder((N, C, spec.h, spec.w, B, BI), "int8", name="data")
    # a reduction of one term: its init is the GEMM reset, its update the ALU ADD
    r = te.reduce_axis((0, 1), "r")
    out_shape = (N, C, spec.h, spec.scale, spec.w, spec.s_w, B, BI)
    acc = te.compute(out_shape, lambda n, c, h, a, w, b, bb, i: te.sum(
        data[n, c, h + r, w, bb, i].astype("int32"), axis=[r]), name="upsample")
    out = te.compute(out_shape, lambda *i: acc(*i).astype("int8"), name="out")
    return OpTE([data], out, "upsample", None, [], [])


def op_te(spec: Conv2dSpec | DenseSpec | MaxPoolSpec | UpsampleSpec | ConvTransposeSpec,
          cfg: Config) -> OpTE:
    if isinstance(spec, Conv2dSpec):
        return conv2d_te(spec, cfg)
    if isinstance(spec, DenseSpec):
        return dense_te(spec, cfg)
    if isinstance(spec, MaxPoolSpec):
        return maxpool_te(spec, cfg)
    if isinstance(spec, UpsampleSpec):
        return upsample_te(spec, cfg)
    if isinstance(spec, ConvTransposeSpec):
        return conv_transpose_te(spec, cfg)
    raise CompileError(f"unknown operator spec {spec!r}")
