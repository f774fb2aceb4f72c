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
* ``("shift", s)``: requantize by a rounding right shift, ``(x + 2^(s-1)) >> s`` (two stages:
  ADD imm, SHR imm);
* ``("relu",)``: ``max(x, 0)``; ``("clip", lo, hi)``: ``min(max(x, lo), hi)``;
* ``("residual",)``: add an int8 tensor of the output's shape, loaded with LOAD ACC_8BIT;
* ``("mul",)``: multiply elementwise by an int8 tensor of the output's shape (ACC_8BIT, ALU MUL).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tvm import te, tirx

from vtabench.spec.config import IMM_BITS, PAD_BITS

if TYPE_CHECKING:
    from vtabench.spec.config import Config


class CompileError(ValueError):
    """An operator cannot be compiled for a configuration (shape not a multiple of the block,
    a layer that cannot be tiled into the on-chip buffers, ...)."""


EPILOGUE_OPS = {"bias": 0, "shift": 1, "relu": 0, "clip": 2, "residual": 0, "mul": 0}


#: Limits of the instruction fields the compiler fills from operator parameters.
IMM_MIN, IMM_MAX = -(1 << (IMM_BITS - 1)), (1 << (IMM_BITS - 1)) - 1
PAD_MAX = (1 << PAD_BITS) - 1


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
        out.append(op)
    return tuple(out)


@dataclass(frozen=True)
class Conv2dSpec:
    """conv2d, NCHW sizes in elements (channels are multiples of the block)."""

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

    @property
    def out_h(self) -> int:
        return (self.h + 2 * self.pad - self.k) // self.stride + 1

    @property
    def out_w(self) -> int:
        return (self.w + 2 * self.pad - self.k) // self.stride + 1

    @property
    def macs(self) -> int:
        return self.n * self.o * self.out_h * self.out_w * self.c * self.k * self.k

    def check(self, cfg: Config) -> None:
        for what, v, b in (("batch", self.n, cfg.batch), ("input channels", self.c, cfg.block_in),
                           ("output channels", self.o, cfg.block_out)):
            if v % b:
                raise CompileError(f"{self.name}: {what} {v} is not a multiple of {b} "
                                   f"({cfg.name})")
        if self.out_h < 1 or self.out_w < 1:
            raise CompileError(f"{self.name}: empty output")
        if self.pad > PAD_MAX:
            raise CompileError(f"{self.name}: pad {self.pad} above the LOAD pad fields "
                               f"({PAD_BITS} bits, at most {PAD_MAX})")
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
        for what, v, b in (("batch", self.n, cfg.batch), ("reduction", self.k, cfg.block_in),
                           ("outputs", self.m, cfg.block_out)):
            if v % b:
                raise CompileError(f"{self.name}: {what} {v} is not a multiple of {b} "
                                   f"({cfg.name})")
        _check_epilogue(self.epilogue)


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
        if kind == "bias":
            bias = te.placeholder(bias_shape, "int32", name=f"bias{k}")
            inputs.append(bias)
            acc_inputs.append((bias.op.name, f"ep{k}_bias"))

            def fb(i, prev=prev, bias=bias):
                bi = [0] * rank
                bi[chan_axis] = i[chan_axis]
                bi[-2] = i[-2]
                bi[-1] = i[-1]
                return prev(*i) + bias(*bi)
            x = _ew(out_shape, fb, f"ep{k}_bias")
            stages.append(x.op.name)
        elif kind == "shift":
            s = op[1]
            if s > 0:
                x = _ew(out_shape, lambda i, prev=prev, s=s: prev(*i) + (1 << (s - 1)),
                        f"ep{k}_round")
                stages.append(x.op.name)
                prev2 = x
                x = _ew(out_shape, lambda i, prev2=prev2, s=s: prev2(*i) >> s, f"ep{k}_shr")
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
        elif kind in ("residual", "mul"):
            t = te.placeholder(out_shape, "int8", name=f"{kind}{k}")
            inputs.append(t)
            # The int8 tensor is cached into the accumulator scope as is (LOAD ACC_8BIT sign-
            # extends it); the stage reads it through a cast.
            if kind == "residual":
                x = _ew(out_shape, lambda i, prev=prev, t=t: prev(*i) + t(*i).astype("int32"),
                        f"ep{k}_add")
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
    Ho, Wo = spec.out_h, spec.out_w
    data = te.placeholder((N, C, H, W, B, BI), "int8", name="data")
    wgt = te.placeholder((O, C, K, K, BO, BI), "int8", name="weight")
    if P:
        src = te.compute(
            (N, C, H + 2 * P, W + 2 * P, B, BI),
            lambda n, c, h, w, b, i: te.if_then_else(
                te.all(h >= P, h < H + P, w >= P, w < W + P), data[n, c, h - P, w - P, b, i],
                tirx.const(0, "int8")), name="pad")
    else:
        src = data
    ic = te.reduce_axis((0, C), "ic")
    kh = te.reduce_axis((0, K), "kh")
    kw = te.reduce_axis((0, K), "kw")
    ii = te.reduce_axis((0, BI), "ii")
    out_shape = (N, O, Ho, Wo, B, BO)
    acc = te.compute(out_shape, lambda n, o, h, w, b, j: te.sum(
        src[n, ic, h * S + kh, w * S + kw, b, ii].astype("int32")
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


def op_te(spec: Conv2dSpec | DenseSpec, cfg: Config) -> OpTE:
    if isinstance(spec, Conv2dSpec):
        return conv2d_te(spec, cfg)
    if isinstance(spec, DenseSpec):
        return dense_te(spec, cfg)
    raise CompileError(f"unknown operator spec {spec!r}")
