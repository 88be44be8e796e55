"""The attempt-duration histogram finds its bucket by bisection: the same counts as a
linear scan of the bucket bounds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.floats(0, 3, allow_nan=False),
                          st.sampled_from([0.0005, 0.001, 0.1, 1.0, 1.0000001])), max_size=30))
def test_histogram_buckets_as_a_linear_scan(samples: list[float]) -> None:
    from kschedlib.results import Histogram

    h = Histogram()
    want = [0] * 11
    for x in samples:
        h.observe(x)
        for i, b in enumerate(h.buckets):
            if x <= b:
                want[i] += 1
                break
        else:
            want[-1] += 1
    assert h.counts == want and h.count == len(samples)
