"""The hazard tracker's access history (vtabench.runtime.hazards._Painted) against the plain list
of every access it replaced: the latest instruction that touched any address of a range (an
empty range touches nothing)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vtabench.runtime.hazards import _Painted

_RANGE = st.tuples(st.integers(0, 64), st.integers(0, 24)).map(lambda t: (t[0], t[0] + t[1]))


@settings(max_examples=300, deadline=None)
@given(st.lists(_RANGE, max_size=40), st.lists(_RANGE, min_size=1, max_size=10))
def test_latest_equals_the_newest_overlapping_access(painted: list[tuple[int, int]],
                                                       queries: list[tuple[int, int]]) -> None:
    hist = _Painted()
    for index, (lo, hi) in enumerate(painted):
        hist.paint(lo, hi, index)
        assert hist.starts == sorted(hist.starts)
        assert all(e <= s for e, s in zip(hist.ends, hist.starts[1:]))  # disjoint
        assert all(s < e for s, e in zip(hist.starts, hist.ends))  # none empty
    for lo, hi in queries:
        want = max((i for i, (a, b) in enumerate(painted)
                    if a < hi and lo < b and a < b and lo < hi), default=-1)
        assert hist.latest(lo, hi) == want


def test_a_network_of_many_weight_chunks_stays_linear() -> None:
    """Thirty thousand disjoint chunks (a large dense layer's weights) keep one segment each,
    and a lookup of a small range sees only the segments it overlaps."""
    hist = _Painted()
    for i in range(30_000):
        hist.paint(i * 64, i * 64 + 48, i)
    assert len(hist.starts) == 30_000
    assert hist.latest(64 * 100 + 50, 64 * 101 + 10) == 101
    assert hist.latest(64 * 100 + 50, 64 * 100 + 60) == -1
