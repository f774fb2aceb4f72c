"""Channel shuffles folded into convolution weights (graph pass :func:`fold_channel_shuffles`).

ShuffleNet mixes the groups of its grouped convolutions with a channel shuffle, exported as
``Reshape (N, C, H, W) -> (N, g, C/g, H, W)``, ``Transpose (0, 2, 1, 3, 4)``, ``Reshape (N, C, H,
W)``; onnxruntime quantizes each of the three with the same scale and zero point, so the chain
moves int8 values and changes none: output channel ``j * g + i`` is input channel
``i * C/g + j``, a permutation ``p`` of the channels (``y[c] = x[p[c]]``). No data needs to
move: the convolution that produces ``x`` computes its output channels in the order ``p``
instead (its weight rows, weight scales and bias permuted), through any per-channel operators
between it and the shuffle (depthwise convolutions, including the depthwise 1x1 convs that stand
for batch norms, ReLU / Clip and max pools: they are permuted along); or, when that producer
chain is not available, every consumer of ``y`` is a dense convolution and reads its input
channels in the order ``p`` (weight columns permuted: ``W'[:, c] = W[:, p^-1[c]]``). A grouped
producer or consumer becomes the dense convolution of its block-diagonal weight first
(:func:`vtabench.graph.pack.expand_groups`; ``QParams.expanded_groups`` keeps the group count so
that MAC counts stay the model's): a permuted group structure is no longer one of contiguous
groups. Every node on the chain must feed only the next one (nothing else may see the permuted
order), and none may carry a fused residual (its other operand would need permuting too).
Neither way possible: the shuffle stays where it is (its transpose runs on the CPU).
"""

from __future__ import annotations

import numpy as np

from vtabench.graph import relax_exprs as rx
from vtabench.graph.ir import Graph, Node, TensorQ
from vtabench.graph.pack import expand_groups


def shuffle_permutation(groups: int, channels: int) -> np.ndarray:
    """``p`` with ``y[c] = x[p[c]]`` for the shuffle of ``channels`` in ``groups`` groups."""
    return np.arange(channels).reshape(groups, channels // groups).T.reshape(-1)


def fold_channel_shuffles(g: Graph) -> int:
    """Fold every channel shuffle the graph allows (see the module docstring); the number
    folded."""
    count = 0
    for name in list(g.order):
        n = g.nodes.get(name)
        if n is None:
            continue
        found = _match(g, n)
        if found is None:
            continue
        chain, perm = found
        x, y = n.inputs[0], chain[-1]
        if _fold_back(g, x, perm):
            _relabel(g, x, y)
        elif not _fold_forward(g, y, perm):
            continue
        g.replace_uses(y, x)
        for m in chain:
            g.remove(m)
        count += 1
    return count


def _only_consumer(g: Graph, name: str, op: str) -> Node | None:
    users = g.consumers(name)
    if len(users) != 1 or name in g.outputs or g.nodes[users[0]].op != op:
        return None
    return g.nodes[users[0]]


def _expr_q(n: Node) -> TensorQ | None:
    """The per-tensor (scale, zero point, int dtype) of a Relax quantize / dequantize node."""
    e = n.expr
    try:
        s, z = rx.const(e.args[1]), rx.const(e.args[2])
    except AttributeError:
        return None
    if s.size != 1 or z.size != 1:
        return None
    dtype = str(e.attrs.out_dtype) if n.op == "relax.quantize" else rx.dtype(e.args[0])
    return TensorQ(float(s.reshape(-1)[0]), int(z.reshape(-1)[0]), dtype)


def _match(g: Graph, r1: Node) -> tuple[list[str], np.ndarray] | None:
    """The chain ``reshape -> dequantize -> permute_dims -> quantize -> reshape`` starting at
    ``r1`` when it is a channel shuffle that keeps every value: (its nodes, the permutation)."""
    if r1.op != "reshape" or not r1.integer or len(r1.inputs) != 1:
        return None
    src = g.nodes[r1.inputs[0]].shape
    mid = tuple(r1.shape)
    if len(src) != 4 or len(mid) != 5 or mid[0] != src[0] or mid[1] * mid[2] != src[1] \
            or mid[3:] != tuple(src[2:]):
        return None
    dq = _only_consumer(g, r1.name, "relax.dequantize")
    tr = dq and _only_consumer(g, dq.name, "relax.permute_dims")
    q = tr and _only_consumer(g, tr.name, "relax.quantize")
    r2 = q and _only_consumer(g, q.name, "reshape")
    if r2 is None or not r2.integer or tuple(r2.shape) != tuple(src):
        return None
    axes = tr.expr.attrs.axes
    if axes is None or [int(a) for a in axes] != [0, 2, 1, 3, 4]:
        return None
    if not (_expr_q(dq) == r1.q.y == _expr_q(q) == r2.q.x == r2.q.y == r1.q.x):
        return None
    return [r1.name, dq.name, tr.name, q.name, r2.name], shuffle_permutation(mid[1], src[1])


def _per_channel(n: Node) -> bool:
    """An operator that maps channel ``c`` to channel ``c`` and may be permuted along."""
    if n.op in ("act", "maxpool"):
        return n.integer
    return (n.op == "conv2d" and n.integer and not n.q.residual and n.q.groups > 1
            and n.q.groups == n.q.weight.shape[0] and n.q.weight.shape[1] == 1)


def _dense(n: Node) -> bool:
    """A convolution whose weight can take any channel order (grouped ones once expanded)."""
    return n.op == "conv2d" and n.integer and not n.q.residual and not _per_channel(n)


def _expand(n: Node) -> None:
    if n.q.groups > 1:
        n.q.weight = expand_groups(n.q.weight, n.q.groups)
        n.q.expanded_groups, n.q.groups = n.q.groups, 1


def _permute_out(n: Node, perm: np.ndarray) -> None:
    """Node ``n`` computes its output channels in the order ``perm`` (its ONNX tensor's
    channels ``perm``: ``Node.onnx_perm``)."""
    q = n.q
    if q.weight is not None:
        q.weight = np.ascontiguousarray(q.weight[perm])
        q.w_scale = np.asarray(q.w_scale)[perm]
        q.bias = np.asarray(q.bias)[perm]
    q.key = f"{q.key}+shuffled"
    n.onnx_perm = perm if n.onnx_perm is None else n.onnx_perm[perm]


def _fold_back(g: Graph, x: str, perm: np.ndarray) -> bool:
    """Permute the producer chain of ``x`` (per-channel nodes, then a dense conv)."""
    chain: list[Node] = []
    cur = x
    while True:
        n = g.nodes[cur]
        if len(g.consumers(cur)) != 1 or cur in g.outputs:
            return False
        if _dense(n):
            break
        if not _per_channel(n):
            return False
        chain.append(n)
        cur = n.inputs[0]
    _expand(n)
    for m in [n, *chain]:
        _permute_out(m, perm)
    return True


def _relabel(g: Graph, x: str, y: str) -> None:
    """``x`` (folded backward) now holds the shuffle's output ``y``: its ONNX tensor."""
    n, out = g.nodes[x], g.nodes[y]
    if out.onnx:
        n.onnx, n.onnx_perm = out.onnx, None


def _fold_forward(g: Graph, y: str, perm: np.ndarray) -> bool:
    """Every consumer of ``y`` is a dense conv reading it as its data: permute their input
    channels."""
    users = [g.nodes[u] for u in g.consumers(y)]
    if not users or y in g.outputs or not all(
            _dense(u) and u.inputs[0] == y and y not in u.inputs[1:] for u in users):
        return False
    inv = np.argsort(perm)
    for u in users:
        _expand(u)
        u.q.weight = np.ascontiguousarray(u.q.weight[:, inv])
        u.q.key = f"{u.q.key}+shuffled"
    return True
