"""Tiling choice and s_tir schedules that map the TE operators onto the VTA core.

The schedule (per operator) does what upstream VTA's TE schedules did, in s_tir:

* tiles the output to the configured BATCH x BLOCK tensor tiles (the packed layout's two inner
  axes) and splits the outer axes by the chosen tiling (:class:`Tiling`): tile loops outside,
  one reduction chunk loop, the per-chunk loops inside;
* puts the accumulator (``set_scope(..., "local.acc_buffer")``) and every epilogue stage in the
  accumulator scope at the tile loop (``reverse_compute_at``), marks them ``vta.alu``;
* caches the activation (or its zero-padded copy, the ``pad`` stage) into ``local.inp_buffer``
  and the weights into ``local.wgt_buffer`` at the chunk loop (``compute_at``), int32 / int8
  epilogue inputs into ``local.acc_buffer`` at the tile loop; marks the copies ``vta.dma``;
* decomposes the reduction and tensorizes the GEMM and its reset with the intrinsics of
  :mod:`vtabench.compiler.intrin`;
* annotates the tile loop with ``vta.virtual_threads`` (2 = double buffering: consecutive
  allocations of each on-chip buffer alternate between two copies, so loads of one tile overlap
  compute and store of the previous one; 1 = off).

The tiling is chosen per layer and configuration (:func:`choose_conv_tiling`,
:func:`choose_dense_tiling`) so that every on-chip buffer holds its tiles (times two with double
buffering) and the micro-op kernels fit; weights or activations larger than a buffer are split
along output channels, spatial rows/columns and reduction chunks. Convs and max pools may get
ragged last tiles (rows / columns that do not divide the output, :mod:`vtabench.compiler.ragged`)
where they win over the best dividing tiling. A layer with no valid tiling raises
:class:`CompileError` naming the buffer and the sizes.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tvm import s_tir, te

from vtabench.compiler import ragged
from vtabench.compiler.intrin import intrin_names
from vtabench.compiler.ops import (
    CHANNEL_OPERANDS,
    FULL_OPERANDS,
    PAD_MAX,
    CompileError,
    Conv2dSpec,
    ConvTransposeSpec,
    DenseSpec,
    MaxPoolSpec,
    OpTE,
    UpsampleSpec,
)
from vtabench.compiler.ragged import divisors, tile_classes, tile_sizes

if TYPE_CHECKING:
    from vtabench.spec.config import Config

ACC = "local.acc_buffer"
INP = "local.inp_buffer"
WGT = "local.wgt_buffer"

#: A GEMM micro-op kernel may use at most this share of the micro-op buffer (several kernels
#: stay resident and are reused across tiles).
UOP_SHARE = 4


@dataclass(frozen=True)
class Tiling:
    """Tile sizes in tensor tiles: ``oc`` output-channel blocks, ``h`` x ``w`` output pixels (conv)
    or ``n`` batch blocks (dense), ``ic`` input-channel blocks per reduction chunk; ``kh``
    kernel rows per reduction chunk (blockwise conv; 0: the whole kernel), for kernels whose
    weights or input rows do not fit the buffers at once (a global average pool over a 12 x 96
    map)."""

    oc: int
    ic: int
    h: int = 1
    w: int = 1
    n: int = 1
    kh: int = 0


@dataclass(frozen=True)
class Footprint:
    inp: int
    wgt: int
    acc: int
    uops: int


def uop_count(extents: list[int]) -> int:
    """Micro-ops of a kernel over these loops (two largest become the hardware loops)."""
    ext = sorted((e for e in extents if e > 1), reverse=True)
    n = 1
    for e in ext[2:]:
        n *= e
    return n


def _extra_acc(ep: tuple) -> tuple[int, int]:
    """(number of full-tile int32 acc buffers, number of per-channel bias buffers) the epilogue
    needs besides the accumulator."""
    full = sum(1 for op in ep if op[0] in FULL_OPERANDS)
    bias = sum(1 for op in ep if op[0] in (*CHANNEL_OPERANDS, "residual_mul",
                                            "residual_max", "mul_chan"))
    return full, bias


def conv_footprint(spec: Conv2dSpec, t: Tiling) -> Footprint:
    kh = t.kh or spec.k
    ih = (t.h - 1) * spec.stride + kh
    iw = (t.w - 1) * spec.s_w + spec.k_w
    full, bias = _extra_acc(spec.epilogue)
    return Footprint(
        inp=(t.oc if spec.blockwise else t.ic) * ih * iw,
        wgt=t.oc * t.ic * kh * spec.k_w,
        acc=t.oc * t.h * t.w * (1 + full) + t.oc * bias,
        uops=uop_count([t.oc, t.h, t.w, t.ic, kh, spec.k_w]))


def dense_footprint(spec: DenseSpec, t: Tiling) -> Footprint:
    full, bias = _extra_acc(spec.epilogue)
    return Footprint(inp=t.n * t.ic, wgt=t.oc * t.ic, acc=t.n * t.oc * (1 + full) + t.oc * bias,
                     uops=uop_count([t.n, t.oc, t.ic]))


def _fits(cfg: Config, fp: Footprint, slots: int) -> str | None:
    """None if the footprint fits, else a message naming the first buffer that overflows."""
    for buf, need, depth in (("input", fp.inp, cfg.inp_depth), ("weight", fp.wgt, cfg.wgt_depth),
                             ("accumulator", fp.acc, cfg.acc_depth)):
        if need * slots > depth:
            return (f"{buf} buffer: a tile needs {need} elements x {slots} "
                    f"buffer{'s' if slots > 1 else ''} = {need * slots}, the buffer holds {depth}")
    if fp.uops > cfg.uop_depth // UOP_SHARE:
        return (f"micro-op buffer: a kernel needs {fp.uops} micro-ops, at most "
                f"{cfg.uop_depth // UOP_SHARE} of the {cfg.uop_depth} entries may go to one")
    return None


def choose_conv_tiling(spec: Conv2dSpec, cfg: Config, double_buffer: bool = True,
                       ragged_tiles: bool = True) -> Tiling:
    """The cheapest tiling by :func:`_conv_cost` among those whose rows and columns divide the
    output; with ``ragged_tiles``, one whose rows or columns do not (a smaller last tile)
    instead where :func:`_options` prefers it."""
    even, ragged_ = _conv_options(spec, cfg, double_buffer, ragged_tiles)
    return ragged_ or even


#: ``cands(sizes, below)`` of :func:`_options`.
Candidates = Callable[[Callable[[int], list[int]], int | None],
                      Iterator[tuple[float, int, Tiling]]]


def _conv_options(spec: Conv2dSpec, cfg: Config, double_buffer: bool,
                  ragged_tiles: bool) -> tuple[Tiling, Tiling | None]:
    spec.check(cfg)
    slots = 2 if double_buffer else 1
    O, C = spec.o // cfg.block_out, spec.c // cfg.block_in
    # the whole kernel per chunk, or (only when that fits nowhere, and for a blockwise conv:
    # a global average pool over a large map) fewer of its rows
    rows = [d for d in reversed(divisors(spec.k)) if d < spec.k] if spec.blockwise else []
    for kh in [0] + rows:
        def cands(sizes: Callable[[int], list[int]], below: int | None,
                  kh: int = kh) -> Iterator[tuple[float, int, Tiling]]:
            for to, tc, th, tw in itertools.product(divisors(O), [1] if spec.blockwise else
                                                    divisors(C), sizes(spec.out_h),
                                                    sizes(spec.out_w)):
                t = Tiling(oc=to, ic=tc, h=th, w=tw, kh=kh)
                tiles = O // to * _pixel_tiles(spec, t)
                if below is not None and not _ragged_candidate(spec, t, tiles, below):
                    continue
                fp = conv_footprint(spec, t)
                if _fits(cfg, fp, slots) is None:
                    yield _conv_cost(spec, cfg, t, fp), tiles, t
        options = _options(cands, ragged_tiles)
        if options is not None:
            return options
    t = Tiling(oc=1, ic=1, h=1, w=1)
    why = _fits(cfg, conv_footprint(spec, t), slots)
    raise CompileError(f"{spec.name}: no tiling fits {cfg.name}: even the smallest tile "
                       f"(1 output block, 1 input block, 1x1 pixels) overflows the {why}")


def _pixel_tiles(spec: Conv2dSpec | MaxPoolSpec, t: Tiling) -> int:
    return -(-spec.out_h // t.h) * -(-spec.out_w // t.w)


def _ragged_candidate(spec: Conv2dSpec | MaxPoolSpec, t: Tiling, tiles: int, below: int) -> bool:
    return is_ragged(spec, t) and tiles < below and _ragged_pad_fits(spec, t)


def _options(cands: Candidates, ragged_tiles: bool) -> tuple[Tiling, Tiling | None] | None:
    """``cands(sizes, below)`` yields (cost, tiles, tiling) of the tilings that fit, in
    enumeration order, with rows / columns from ``sizes``; with ``below``, only ragged ones of
    fewer tiles. Returns the cheapest tiling whose rows and columns divide the output (the
    first of equal costs) and a ragged one that is strictly cheaper *and* needs fewer tiles, or
    None; None when nothing fits. Ragged tiles are for dimensions whose divisors force small
    tiles (a prime size); a ragged tiling with as many tiles only reshapes them, and leaving
    those out keeps the programs of layers that tile evenly as they were. Only the model's
    cheapest ragged tiling is offered (compile_op then checks it on the real program)."""
    even = min(cands(divisors, None), key=lambda c: c[0], default=None)
    if even is None:
        return None
    if not ragged_tiles:
        return even[2], None
    ragged_ = min((c for c in cands(tile_sizes, even[1]) if c[0] < even[0]),
                  key=lambda c: c[0], default=None)
    return even[2], None if ragged_ is None else ragged_[2]


def is_ragged(spec: Conv2dSpec | DenseSpec | MaxPoolSpec | UpsampleSpec | ConvTransposeSpec,
              t: Tiling) -> bool:
    """Whether the tiling's rows or columns leave a smaller last tile (convs and max pools)."""
    if not isinstance(spec, (Conv2dSpec, MaxPoolSpec)):
        return False
    return spec.out_h % t.h != 0 or spec.out_w % t.w != 0


def ragged_pad_columns(spec: Conv2dSpec | MaxPoolSpec, t: Tiling) -> int:
    """Right padding columns of the last column tile's padded copy (0 without a pad stage or
    when the columns divide). The copy keeps the full tile's width on chip, so the input
    columns past the padded input are padding too: at most ``PAD_MAX`` (the LOAD's field)."""
    if spec.pad == 0 or spec.out_w % t.w == 0:
        return 0
    k_w, s_w = (spec.k_w, spec.s_w) if isinstance(spec, Conv2dSpec) else (spec.k, spec.stride)
    first = (spec.out_w // t.w) * t.w * s_w  # padded column where the last tile starts
    return max(0, first + (t.w - 1) * s_w + k_w - (spec.w + spec.pad))


def _ragged_pad_fits(spec: Conv2dSpec | MaxPoolSpec, t: Tiling) -> bool:
    return ragged_pad_columns(spec, t) <= PAD_MAX


def check_tiling(spec: Conv2dSpec | DenseSpec | MaxPoolSpec | UpsampleSpec | ConvTransposeSpec,
                 t: Tiling) -> None:
    """Refuse, naming the reason, a given tiling whose ragged last column tile needs more
    padding than the LOAD's pad field holds."""
    if is_ragged(spec, t) and not _ragged_pad_fits(spec, t):
        raise CompileError(f"{spec.name}: tiling {t}: the last column tile's padded copy needs "
                           f"{ragged_pad_columns(spec, t)} padding columns on the right, the "
                           f"LOAD pad field holds at most {PAD_MAX}")


def _conv_cost(spec: Conv2dSpec, cfg: Config, t: Tiling, fp: Footprint) -> float:
    """Estimated cycles: DRAM traffic (8 bytes/cycle), a fixed cost per instruction, and the
    GEMM work (fixed); lower is better. Summed over the classes of tiles (the full ones and
    ragged last rows / columns: one STORE per row where a tile is narrower than the on-chip
    rows)."""
    O, C = spec.o // cfg.block_out, spec.c // cfg.block_in
    kh = t.kh or spec.k
    inp_blocks = t.oc if spec.blockwise else t.ic
    inp_bytes = wgt_bytes = out_bytes = uop_bytes = insns = 0
    for h, nh in tile_classes(spec.out_h, t.h):
        for w, nw in tile_classes(spec.out_w, t.w):
            tiles = (O // t.oc) * nh * nw * (spec.n // cfg.batch)
            chunks = tiles * (1 if spec.blockwise else C // t.ic) * (spec.k // kh)
            ih = (h - 1) * spec.stride + kh
            inp_bytes += chunks * inp_blocks * ih * ((w - 1) * spec.s_w + spec.k_w) \
                * cfg.inp_elem_bytes
            wgt_bytes += chunks * fp.wgt * cfg.wgt_elem_bytes
            out_bytes += tiles * t.oc * h * w * cfg.out_elem_bytes
            load_rows = chunks * (inp_blocks * ih + t.oc)
            insns += chunks * 4 + tiles * (4 + len(spec.epilogue) * 2) + load_rows
            if w < t.w:
                insns += tiles * t.oc * h
            uop_bytes += chunks * uop_count([t.oc, h, w, t.ic, kh, spec.k_w]) * 4
    transfer = (inp_bytes + wgt_bytes + out_bytes + uop_bytes) / 8
    gemm_macs = spec.macs * (cfg.block_in if spec.blockwise else 1)
    compute = gemm_macs / cfg.macs_per_cycle
    # With double buffering transfers overlap compute; without, they add up.
    return max(transfer, compute) + 0.25 * min(transfer, compute) + insns * 20


def choose_dense_tiling(spec: DenseSpec, cfg: Config, double_buffer: bool = True) -> Tiling:
    spec.check(cfg)
    slots = 2 if double_buffer else 1
    N, K, M = spec.n // cfg.batch, spec.k // cfg.block_in, spec.m // cfg.block_out
    best = None
    for tn, tm, tk in itertools.product(divisors(N), divisors(M), divisors(K)):
        t = Tiling(oc=tm, ic=tk, n=tn)
        fp = dense_footprint(spec, t)
        if _fits(cfg, fp, slots) is not None:
            continue
        tiles = (N // tn) * (M // tm)
        chunks = tiles * (K // tk)
        transfer = (chunks * (fp.inp * cfg.inp_elem_bytes + fp.wgt * cfg.wgt_elem_bytes)) / 8
        cost = transfer + chunks * 100 + tiles * 100
        if best is None or cost < best[0]:
            best = (cost, t)
    if best is None:
        t = Tiling(oc=1, ic=1, n=1)
        why = _fits(cfg, dense_footprint(spec, t), slots)
        raise CompileError(f"{spec.name}: no tiling fits {cfg.name}: even the smallest tile "
                           f"overflows the {why}")
    return best[1]


def choose_pool_tiling(spec: MaxPoolSpec, cfg: Config, double_buffer: bool = True,
                       ragged_tiles: bool = True) -> Tiling:
    """Channel blocks and output rows / columns per tile; the padded input tile and the output
    tile both live in the accumulator buffer. Like a conv's: ragged rows / columns where
    :func:`_options` prefers them."""
    even, ragged_ = _pool_options(spec, cfg, double_buffer, ragged_tiles)
    return ragged_ or even


def _pool_options(spec: MaxPoolSpec, cfg: Config, double_buffer: bool,
                  ragged_tiles: bool) -> tuple[Tiling, Tiling | None]:
    spec.check(cfg)
    slots = 2 if double_buffer else 1
    C, Ho, Wo = spec.c // cfg.block_in, spec.out_h, spec.out_w

    def cands(sizes: Callable[[int], list[int]],
              below: int | None) -> Iterator[tuple[float, int, Tiling]]:
        for tc, th, tw in itertools.product(divisors(C), sizes(Ho), sizes(Wo)):
            t = Tiling(oc=tc, ic=1, h=th, w=tw)
            tiles = C // tc * _pixel_tiles(spec, t)
            if below is not None and not _ragged_candidate(spec, t, tiles, below):
                continue
            ih, iw = (th - 1) * spec.stride + spec.k, (tw - 1) * spec.stride + spec.k
            ones = ih * iw if spec.signed and (spec.pad or spec.pad_after) else 0
            fp = Footprint(inp=0, wgt=0, acc=tc * (ih * iw + th * tw) + ones,
                           uops=uop_count([tc, th, tw]))
            if _fits(cfg, fp, slots) is not None:
                continue
            cost = 0
            for h, nh in tile_classes(Ho, th):
                for w, nw in tile_classes(Wo, tw):
                    ih = (h - 1) * spec.stride + spec.k
                    iw = (w - 1) * spec.stride + spec.k
                    rows = tc * h if w < tw else 0  # one STORE per row of a narrower tile
                    cost += (C // tc) * nh * nw * (tc * ih * iw * cfg.acc_elem_bytes // 4 + 100
                                                   + 20 * (tc * ih + rows))
            yield cost, tiles, t

    options = _options(cands, ragged_tiles)
    if options is None:
        raise CompileError(f"{spec.name}: no tiling fits {cfg.name}: a one-pixel tile's "
                           f"{spec.k}x{spec.k} window overflows the accumulator buffer")
    return options


def choose_upsample_tiling(spec: UpsampleSpec, cfg: Config,
                           double_buffer: bool = True) -> Tiling:
    """Channel blocks and input rows / columns per tile; the input tile and its upsampled
    output tile both live in the accumulator buffer."""
    spec.check(cfg)
    slots = 2 if double_buffer else 1
    C, f = spec.c // cfg.block_in, spec.scale * spec.s_w
    best = None
    for tc, th, tw in itertools.product(divisors(C), divisors(spec.h), divisors(spec.w)):
        fp = Footprint(inp=0, wgt=0, acc=tc * th * tw * (1 + f),
                       uops=uop_count([tc, th, spec.scale, tw, spec.s_w]))
        if _fits(cfg, fp, slots) is not None:
            continue
        tiles = (C // tc) * (spec.h // th) * (spec.w // tw)
        cost = tiles * (100 + 20 * tc * th * (1 + spec.scale)) + tc * th * tw * f
        if best is None or cost < best[0]:
            best = (cost, Tiling(oc=tc, ic=1, h=th, w=tw))
    if best is None:
        raise CompileError(f"{spec.name}: no tiling fits {cfg.name}: a one-pixel tile's "
                           f"{spec.scale}x{spec.s_w} output overflows the accumulator buffer")
    return best[1]


def choose_conv_transpose_tiling(spec: ConvTransposeSpec, cfg: Config,
                                 double_buffer: bool = True) -> Tiling:
    """Output-channel blocks, input-channel blocks per reduction chunk and input rows /
    columns per tile (each input pixel makes ``s x s`` output pixels)."""
    spec.check(cfg)
    slots = 2 if double_buffer else 1
    O, C, S = spec.o // cfg.block_out, spec.c // cfg.block_in, spec.stride
    full, bias = _extra_acc(spec.epilogue)
    best = None
    for to, tc, th, tw in itertools.product(divisors(O), divisors(C), divisors(spec.h),
                                            divisors(spec.w)):
        fp = Footprint(inp=tc * th * tw, wgt=to * tc * S * S,
                       acc=to * th * tw * S * S * (1 + full) + to * bias,
                       uops=uop_count([to, th, S, tw, S, tc]))
        if _fits(cfg, fp, slots) is not None:
            continue
        tiles = (O // to) * (spec.h // th) * (spec.w // tw)
        chunks = tiles * (C // tc)
        transfer = (chunks * (fp.inp * cfg.inp_elem_bytes + fp.wgt * cfg.wgt_elem_bytes)
                    + tiles * to * th * tw * S * S * cfg.out_elem_bytes) / 8
        cost = transfer + 20 * (4 * chunks + tiles * (4 + 2 * len(spec.epilogue)))
        if best is None or cost < best[0]:
            best = (cost, Tiling(oc=to, ic=tc, h=th, w=tw))
    if best is None:
        raise CompileError(f"{spec.name}: no tiling fits {cfg.name}: even the smallest tile "
                           f"overflows the buffers")
    return best[1]


def choose_tiling(spec: Conv2dSpec | DenseSpec | MaxPoolSpec | UpsampleSpec | ConvTransposeSpec,
                  cfg: Config, double_buffer: bool = True, ragged_tiles: bool = True) -> Tiling:
    """The tiling of an operator; ``ragged_tiles=False`` keeps to tiles that divide (only
    convs and max pools have ragged ones)."""
    return tiling_options(spec, cfg, double_buffer, ragged_tiles)[0]


def tiling_options(spec: Conv2dSpec | DenseSpec | MaxPoolSpec | UpsampleSpec | ConvTransposeSpec,
                   cfg: Config, double_buffer: bool = True,
                   ragged_tiles: bool = True) -> tuple[Tiling, Tiling]:
    """(the chosen tiling, the best one whose tiles divide): the same tiling twice unless the
    choice is ragged. Computed once per operator spec up to its name and its epilogue's values
    (the footprints and costs see only the epilogue's kinds; the legality check and the compile
    ask for the same spec; DenseNet-121's 604 layers have 358 such specs); the spec's own
    check runs every time."""
    spec.check(cfg)
    plain = dataclasses.replace(spec, name="")
    if hasattr(spec, "epilogue"):
        plain = dataclasses.replace(plain, epilogue=tuple(e[0] for e in spec.epilogue))
    key = (plain, cfg, double_buffer, ragged_tiles)
    if key not in _options_of:
        _options_of[key] = _tiling_options(spec, cfg, double_buffer, ragged_tiles)
    return _options_of[key]


#: (spec without its name and its epilogue's values, configuration, double buffering, ragged
#: tiles) -> tiling_options.
_options_of: dict[tuple[Any, ...], tuple[Tiling, Tiling]] = {}


def _tiling_options(spec: Conv2dSpec | DenseSpec | MaxPoolSpec | UpsampleSpec |
                    ConvTransposeSpec, cfg: Config, double_buffer: bool,
                    ragged_tiles: bool) -> tuple[Tiling, Tiling]:
    if isinstance(spec, Conv2dSpec):
        even, ragged_ = _conv_options(spec, cfg, double_buffer, ragged_tiles)
        return ragged_ or even, even
    if isinstance(spec, MaxPoolSpec):
        even, ragged_ = _pool_options(spec, cfg, double_buffer, ragged_tiles)
        return ragged_ or even, even
    if isinstance(spec, UpsampleSpec):
        t = choose_upsample_tiling(spec, cfg, double_buffer)
    elif isinstance(spec, ConvTransposeSpec):
        t = choose_conv_transpose_tiling(spec, cfg, double_buffer)
    else:
        t = choose_dense_tiling(spec, cfg, double_buffer)
    return t, t


# ---------------------------------------------------------------------------------------------
# Schedules
# ---------------------------------------------------------------------------------------------

def _read_index(sch: s_tir.Schedule, block: s_tir.SBlockRV, name: str) -> int:
    for i, region in enumerate(sch.get(block).reads):
        buf = region.source if hasattr(region, "source") else region.buffer
        if buf.name == name:
            return i
    raise CompileError(f"block {sch.get(block).name_hint} does not read {name}")


def _epilogue_schedule(sch: s_tir.Schedule, op: OpTE, tile_loop: s_tir.LoopRV) -> None:
    for name in op.alu_stages:
        blk = sch.get_sblock(name)
        sch.set_scope(blk, 0, ACC)
        sch.reverse_compute_at(blk, tile_loop)
        sch.annotate(blk, "vta.alu", 1)
    out = sch.get_sblock("out")
    sch.reverse_compute_at(out, tile_loop)
    sch.annotate(out, "vta.dma", 1)
    # Extra inputs of the epilogue (int32 biases and multipliers, int8 residuals) are cached
    # into the accumulator scope at the tile loop: LOAD ACC, or LOAD ACC_8BIT for int8.
    for inp_name, stage in op.acc_inputs:
        blk = sch.get_sblock(stage)
        cr = sch.cache_read(blk, _read_index(sch, blk, inp_name), ACC)
        sch.compute_at(cr, tile_loop)
        sch.annotate(cr, "vta.dma", 1)


def _tensorize(sch: s_tir.Schedule, cfg: Config, block: s_tir.SBlockRV, chunk: s_tir.LoopRV,
               b_loop: s_tir.LoopRV, j_loop: s_tir.LoopRV) -> None:
    gemm, reset = intrin_names(cfg.batch, cfg.block_in, cfg.block_out)
    init = sch.decompose_reduction(block, chunk)
    sch.tensorize(j_loop if cfg.batch == 1 else b_loop, gemm)
    iloops = sch.get_loops(init)
    sch.tensorize(iloops[-1] if cfg.batch == 1 else iloops[-2], reset)


def _extent(sch: s_tir.Schedule, loop: s_tir.LoopRV) -> int:
    return int(sch.get(loop).extent)


def op_kernel_rows(op: OpTE) -> int:
    """The kernel height of a conv's TE (its weight's third axis)."""
    return int(op.inputs[1].shape[2])


def schedule_conv(op: OpTE, cfg: Config, t: Tiling,
                  double_buffer: bool = True) -> s_tir.Schedule:
    func = te.create_prim_func(op.func_args)
    sch = s_tir.Schedule(func)
    cb = sch.get_sblock(op.main)
    sch.set_scope(cb, 0, ACC)
    n, o, h, w, b, j, ic, kh, kw, ii = sch.get_loops(cb)
    oo, oi = sch.split(o, [None, t.oc])
    ho, hi = ragged.split(sch, h, _extent(sch, h), t.h)
    wo, wi = ragged.split(sch, w, _extent(sch, w), t.w)
    ico, ici = sch.split(ic, [None, t.ic])
    chunk = ico
    if t.kh and t.kh < op_kernel_rows(op):
        kho, kh = sch.split(kh, [None, t.kh])
        sch.reorder(n, oo, ho, wo, ico, kho, oi, hi, wi, ici, kh, kw, b, j, ii)
        chunk = kho
    else:
        sch.reorder(n, oo, ho, wo, ico, oi, hi, wi, ici, kh, kw, b, j, ii)
    sch.annotate(wo, "vta.virtual_threads", 2 if double_buffer else 1)
    _epilogue_schedule(sch, op, wo)
    if op.pad:
        pb = sch.get_sblock(op.pad)
        sch.set_scope(pb, 0, INP)
    else:
        pb = sch.cache_read(cb, 0, INP)
    sch.compute_at(pb, chunk)
    sch.annotate(pb, "vta.dma", 1)
    wb = sch.cache_read(cb, 1, WGT)
    sch.compute_at(wb, chunk)
    sch.annotate(wb, "vta.dma", 1)
    _tensorize(sch, cfg, cb, ico, b, j)
    return sch


def schedule_dense(op: OpTE, cfg: Config, t: Tiling,
                   double_buffer: bool = True) -> s_tir.Schedule:
    func = te.create_prim_func(op.func_args)
    sch = s_tir.Schedule(func)
    db = sch.get_sblock(op.main)
    sch.set_scope(db, 0, ACC)
    n, m, b, j, k, ii = sch.get_loops(db)
    no, ni = sch.split(n, [None, t.n])
    mo, mi = sch.split(m, [None, t.oc])
    ko, ki = sch.split(k, [None, t.ic])
    sch.reorder(no, mo, ko, ni, mi, ki, b, j, ii)
    sch.annotate(mo, "vta.virtual_threads", 2 if double_buffer else 1)
    _epilogue_schedule(sch, op, mo)
    ib = sch.cache_read(db, 0, INP)
    sch.compute_at(ib, ko)
    sch.annotate(ib, "vta.dma", 1)
    wb = sch.cache_read(db, 1, WGT)
    sch.compute_at(wb, ko)
    sch.annotate(wb, "vta.dma", 1)
    _tensorize(sch, cfg, db, ko, b, j)
    return sch


def schedule_pool(op: OpTE, cfg: Config, t: Tiling,
                  double_buffer: bool = True) -> s_tir.Schedule:
    """Tiles of (channel blocks, rows, columns); the (padded) input tile is copied into the
    accumulator scope at the tile loop (LOAD ACC_8BIT), the reduction's init is the GEMM reset,
    its update one ALU MAX per window position."""
    func = te.create_prim_func(op.func_args)
    sch = s_tir.Schedule(func)
    pb = sch.get_sblock(op.main)
    sch.set_scope(pb, 0, ACC)
    n, c, h, w, b, i, kh, kw = sch.get_loops(pb)
    co, ci = sch.split(c, [None, t.oc])
    ho, hi = ragged.split(sch, h, _extent(sch, h), t.h)
    wo, wi = ragged.split(sch, w, _extent(sch, w), t.w)
    sch.reorder(n, co, ho, wo, kh, kw, ci, hi, wi, b, i)
    sch.annotate(wo, "vta.virtual_threads", 2 if double_buffer else 1)
    if "shift_out" in op.alu_stages:
        post = sch.get_sblock("shift_out")
        sch.set_scope(post, 0, ACC)
        sch.reverse_compute_at(post, wo)
        sch.annotate(post, "vta.alu", 1)
    out = sch.get_sblock("out")
    sch.reverse_compute_at(out, wo)
    sch.annotate(out, "vta.dma", 1)
    reader = pb
    if "shift_in" in op.alu_stages:  # the loaded tile moved up in place
        reader = sch.get_sblock("shift_in")
        sch.set_scope(reader, 0, ACC)
        sch.compute_at(reader, wo)
        sch.annotate(reader, "vta.alu", 1)
    if "ones_lift" in op.alu_stages:  # a signed padded pool's ones, times 128 in place
        lift = sch.get_sblock("ones_lift")
        sch.set_scope(lift, 0, ACC)
        sch.compute_at(lift, wo)
        sch.annotate(lift, "vta.alu", 1)
    copies = [sch.get_sblock(op.pad)] if op.pad else [sch.cache_read(reader, 0, ACC)]
    if "ones_lift" in op.alu_stages:  # the ones, padded as the input (LOAD ACC_8BIT)
        copies.append(sch.get_sblock("pad_ones"))
    for src in copies:
        sch.set_scope(src, 0, ACC)
        sch.compute_at(src, wo)
        sch.annotate(src, "vta.dma", 1)
    _, reset = intrin_names(cfg.batch, cfg.block_in, cfg.block_out)
    init = sch.decompose_reduction(pb, kh)
    iloops = sch.get_loops(init)
    sch.tensorize(iloops[-1] if cfg.batch == 1 else iloops[-2], reset)
    sch.annotate(pb, "vta.alu", 1)
    return sch


def schedule_upsample(op: OpTE, cfg: Config, t: Tiling,
                      double_buffer: bool = True) -> s_tir.Schedule:
    """Tiles of (channel blocks, input rows, input columns); the input tile is copied into the
    accumulator scope at the tile loop (LOAD ACC_8BIT), the one-term reduction's init is the
    GEMM reset of the output tile, its update one ALU ADD over (rows, row copies, columns,
    column copies) whose source index does not depend on the copies."""
    func = te.create_prim_func(op.func_args)
    sch = s_tir.Schedule(func)
    ub = sch.get_sblock(op.main)
    sch.set_scope(ub, 0, ACC)
    n, c, h, a, w, b, bb, i, r = sch.get_loops(ub)
    co, ci = sch.split(c, [None, t.oc])
    ho, hi = sch.split(h, [None, t.h])
    wo, wi = sch.split(w, [None, t.w])
    sch.reorder(n, co, ho, wo, r, ci, hi, a, wi, b, bb, i)
    sch.annotate(wo, "vta.virtual_threads", 2 if double_buffer else 1)
    out = sch.get_sblock("out")
    sch.reverse_compute_at(out, wo)
    sch.annotate(out, "vta.dma", 1)
    src = sch.cache_read(ub, 0, ACC)
    sch.compute_at(src, wo)
    sch.annotate(src, "vta.dma", 1)
    _, reset = intrin_names(cfg.batch, cfg.block_in, cfg.block_out)
    init = sch.decompose_reduction(ub, r)
    iloops = sch.get_loops(init)
    sch.tensorize(iloops[-1] if cfg.batch == 1 else iloops[-2], reset)
    sch.annotate(ub, "vta.alu", 1)
    return sch


def schedule_conv_transpose(op: OpTE, cfg: Config, t: Tiling,
                            double_buffer: bool = True) -> s_tir.Schedule:
    """A conv's schedule over the input pixels and the taps: tiles of (output-channel blocks,
    input rows, input columns), reduction chunks of input-channel blocks; the GEMM nest runs
    over (output blocks, rows, tap rows, columns, tap columns, input blocks)."""
    func = te.create_prim_func(op.func_args)
    sch = s_tir.Schedule(func)
    cb = sch.get_sblock(op.main)
    sch.set_scope(cb, 0, ACC)
    n, o, h, a, w, bw, b, j, ic, ii = sch.get_loops(cb)
    oo, oi = sch.split(o, [None, t.oc])
    ho, hi = sch.split(h, [None, t.h])
    wo, wi = sch.split(w, [None, t.w])
    ico, ici = sch.split(ic, [None, t.ic])
    sch.reorder(n, oo, ho, wo, ico, oi, hi, a, wi, bw, ici, b, j, ii)
    sch.annotate(wo, "vta.virtual_threads", 2 if double_buffer else 1)
    _epilogue_schedule(sch, op, wo)
    pb = sch.cache_read(cb, 0, INP)
    sch.compute_at(pb, ico)
    sch.annotate(pb, "vta.dma", 1)
    wb = sch.cache_read(cb, 1, WGT)
    sch.compute_at(wb, ico)
    sch.annotate(wb, "vta.dma", 1)
    _tensorize(sch, cfg, cb, ico, b, j)
    return sch


def schedule_op(op: OpTE,
                spec: Conv2dSpec | DenseSpec | MaxPoolSpec | UpsampleSpec | ConvTransposeSpec,
                cfg: Config, t: Tiling,
                double_buffer: bool = True) -> s_tir.Schedule:
    if isinstance(spec, Conv2dSpec):
        return schedule_conv(op, cfg, t, double_buffer)
    if isinstance(spec, MaxPoolSpec):
        return schedule_pool(op, cfg, t, double_buffer)
    if isinstance(spec, UpsampleSpec):
        return schedule_upsample(op, cfg, t, double_buffer)
    if isinstance(spec, ConvTransposeSpec):
        return schedule_conv_transpose(op, cfg, t, double_buffer)
    return schedule_dense(op, cfg, t, double_buffer)
