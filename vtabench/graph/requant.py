"""Requantization by an integer multiplier and shifts: the arithmetic that VTA's ALU runs and the
CPU reference repeats (docs/graph.md, "Requantization").

A QDQ operator scales its int32 accumulator ``acc`` by a real ``r`` (per output channel ``o``:
``r[o] = s_x * s_w[o] / s_y``) and rounds. The integer form is

    v  = rshift(acc, pre)
    v  = clip(v, -clamp, clamp)                                      (when clamp is set)
    rq = rshift(v * mult[o], shift)
    rshift(v, 0) = v,   rshift(v, s) = floor((v + 2^(s-1)) / 2^s)       (round half up)

with ``mult[o] ~ r[o] * 2^(pre + shift)``. Every intermediate stays in int32. Without a clamp
that must hold for every accumulator the operator can produce, ``|acc[o]| <= bound[o]`` (from
the weights, the input's range and the bias): ``(ceil(bound / 2^pre) + 1) * mult +
2^(shift-1) < 2^31``. The worst case is far above what matters: any ``|rq| > ymax`` (the
largest output distance from the zero point that is not saturated, plus one) saturates, so
clamping ``v`` to ``clamp = ceil((ymax + 1) * 2^shift / mult)`` changes no output and bounds the
product by about ``(ymax + 1) * 2^shift``: two more ALU operations (MAX, MIN with immediates)
for a multiplier with many more bits. Among the choices of (pre, shift, clamp or not) that
keep int32, :func:`choose` takes the one with the smallest worst-case
error in output steps (the pre-shift's rounding, ``r * 2^pre / 2``, plus the multiplier's
relative error ``|mult / 2^(pre+shift) - r| / r`` times the largest output that matters),
preferring fewer
operations on ties. A multiplier or bound shared by every channel that fits 16 bits is an ALU
immediate; others (per-channel multipliers included) are int32 tensors of one value per output
channel, loaded into the accumulator buffer (``chan_mul``, ``chan_max``, ``chan_min``).

A power-of-two ``r = 2^-s`` gives ``pre = 0``, ``mult = 1``, ``shift = s``: the exact rounding
shift of the power-of-two scheme.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vtabench.compiler.ops import IMM_MAX

INT32_MAX = (1 << 31) - 1
#: Output magnitude (steps) beyond which every value saturates: the multiplier's error matters
#: up to here.
OUT_RANGE = 256


@dataclass(frozen=True)
class Requant:
    """``rshift(clip(rshift(acc, pre), -clamp, clamp) * mult, shift)``; ``mult`` and ``clamp``
    one value, or one per channel; no clip when ``clamp`` is empty."""

    pre: int
    mult: tuple[int, ...]
    shift: int
    clamp: tuple[int, ...] = ()
    error: float = 0.0  # worst-case deviation from acc * r, in output steps

    def ops(self) -> list[tuple[tuple, np.ndarray | None]]:
        """The operator compiler's epilogue ops, each with its per-channel int32 operand (the
        multiplier / bound values, to broadcast over the channels) or None."""
        out: list[tuple[tuple, np.ndarray | None]] = []
        if self.pre:
            out.append((("shift", self.pre), None))
        if self.clamp:
            lim = np.asarray(self.clamp, np.int64)
            if lim.size == 1 and lim[0] <= IMM_MAX:
                out.append((("clip", -int(lim[0]), int(lim[0])), None))
            else:
                out += [(("chan_max",), -lim), (("chan_min",), lim)]
        if len(self.mult) > 1 or self.mult[0] > IMM_MAX:
            out.append((("chan_mul",), np.asarray(self.mult, np.int64)))
        elif self.mult[0] != 1:
            out.append((("mul_imm", self.mult[0]), None))
        if self.shift:
            out.append((("shift", self.shift), None))
        return out

    def apply(self, acc: np.ndarray, chan_axis: int = 1) -> np.ndarray:
        """The same arithmetic in numpy (int64)."""
        def per_chan(t: tuple[int, ...], ndim: int) -> np.ndarray:
            a = np.asarray(t, np.int64)
            shape = [1] * ndim
            if a.size > 1:
                shape[chan_axis] = a.size
            return a.reshape(shape)

        v = rshift(np.asarray(acc, np.int64), self.pre)
        if self.clamp:
            lim = per_chan(self.clamp, v.ndim)
            v = np.clip(v, -lim, lim)
        return rshift(v * per_chan(self.mult, v.ndim), self.shift)


def rshift(v: np.ndarray, s: int) -> np.ndarray:
    """floor((v + 2^(s-1)) / 2^s), v for s = 0."""
    return v if s == 0 else (v + (1 << (s - 1))) >> s


def _power_of_two(r: np.ndarray) -> int | None:
    """s when every r is 2^-s with 0 <= s <= 31."""
    if r.size == 0 or np.any(r <= 0) or np.any(r != r.flat[0]):
        return None
    s = -np.log2(float(r.flat[0]))
    if s != round(s) or not 0 <= s <= 31:
        return None
    return int(round(s))


def choose(r: np.ndarray, bound: np.ndarray, ymax: int = 256) -> Requant:
    """The requantization of reals ``r`` (per channel, or one) for accumulators bounded by
    ``bound`` (per channel) whose outputs saturate beyond ``ymax`` steps. ValueError when no
    choice keeps int32."""
    r = np.atleast_1d(np.asarray(r, np.float64))
    bound = np.broadcast_to(np.atleast_1d(np.asarray(bound, np.int64)), r.shape)
    if np.any(~np.isfinite(r)) or np.any(r < 0):
        raise ValueError(f"requantization scale {r.min()} is not a finite positive number")
    s = _power_of_two(r)
    if s is not None and np.all((bound + (1 << max(s - 1, 0))) <= INT32_MAX):
        return Requant(0, (1,), s)
    shared = bool(np.all(r == r.flat[0]))
    y_range = np.minimum(bound * r, ymax + 1)
    rpos = np.where(r > 0, r, 1.0)
    # the best (error, ops, pre, shift, multipliers, clamp); the Requant is built once, for it.
    # Per pre-shift, the 32 shifts' multipliers and checks at once (the same arithmetic, element
    # by element, as one shift at a time); the candidates are then weighed in order.
    best: tuple[float, int, int, int, np.ndarray, np.ndarray] | None = None
    shifts = np.arange(32)
    rnd = np.left_shift(1, np.maximum(shifts - 1, 0))[:, None]
    live = r * bound >= 0.5
    for pre in range(32):
        acc_max = -(-bound // (1 << pre)) + 1
        pre_err = 0.5 * r * 2.0 ** pre if pre else 0.0
        scale = 2.0 ** (pre + shifts)[:, None]
        ms = np.rint(r * scale)
        bad = np.any(ms > INT32_MAX, axis=1) | np.any((ms == 0) & live, axis=1)
        wide = np.any(acc_max * ms + rnd > INT32_MAX, axis=1)
        clamps = np.ceil((ymax + 1) * 2.0 ** shifts[:, None] / np.maximum(ms, 1))
        if shared:
            clamps = clamps[:, :1]
        bad |= wide & np.any(clamps * ms + rnd > INT32_MAX, axis=1)
        errs = (pre_err + np.abs(ms / scale - r) / rpos * y_range).max(axis=1)
        for shift in np.flatnonzero(~bad):
            m = ms[shift]
            clamp = clamps[shift] if wide[shift] else np.zeros(0)
            cost = (float(errs[shift]), _op_count(pre, int(shift), m[0] if shared else None, clamp))
            if best is None or cost < best[:2]:
                best = (*cost, pre, int(shift), m, clamp)
    if best is None:
        raise ValueError(f"no integer requantization of scale {float(r.min()):.3g} keeps "
                         f"accumulators up to {int(bound.max())} within int32")
    err, _, pre, shift, m, clamp = best
    mult = (int(m[0]),) if shared else tuple(int(v) for v in m)
    return Requant(pre, mult, shift, tuple(int(v) for v in clamp), err)


def _op_count(pre: int, shift: int, shared_mult: float | None, clamp: np.ndarray) -> int:
    """``len(Requant(...).ops())`` without building the Requant (``shared_mult``: the one
    multiplier, None for one per channel): :func:`choose` weighs 1024 candidates, and building
    each one's per-channel tuples took most of a wide network's compile time (DenseNet-121)."""
    n = int(pre > 0) + int(shift > 0)
    if clamp.size:
        n += 1 if clamp.size == 1 and clamp[0] <= IMM_MAX else 2
    if shared_mult is None or shared_mult != 1:
        n += 1
    return n


def choose_add(ra: float, rb: float, amax: int = 255) -> tuple[int, int, int]:
    """(ma, mb, n) with ``rshift(a * ma + b * mb, n) ~ a * ra + b * rb`` for ``|a|, |b| <=
    amax`` in int32 (int32 multipliers: tensors where they are not 16-bit immediates); the
    smallest n among those with the smallest error."""
    best: tuple[float, int, int, int] | None = None
    for n in range(32):
        ma, mb = round(ra * 2 ** n), round(rb * 2 ** n)
        if amax * (ma + mb) + (1 << max(n - 1, 0)) > INT32_MAX:
            break
        if (ra > 0 and ma == 0) or (rb > 0 and mb == 0):
            continue
        err = (abs(ma / 2 ** n - ra) + abs(mb / 2 ** n - rb)) * amax
        if best is None or err < best[0]:
            best = (err, ma, mb, n)
    if best is None:
        raise ValueError(f"no integer form for an Add with scale ratios {ra:.3g}, {rb:.3g}")
    return best[1], best[2], best[3]
