"""PodTopologySpread's shortcuts for node removals and plain normalization give what the
straightforward computation gives: normalize_values without ignored nodes against
normalize_scores node by node, and the positions of removed nodes from the sums against a set
difference over all positions."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib.framework.interface import NodeScore
from kschedlib.framework.node_local_cache import gone_positions as _gone
from kschedlib.plugins.podtopologyspread.scoring import (
    PreScoreState,
    normalize_scores,
    normalize_values,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=40), max_size=30))
def test_normalize_values_without_ignored_equals_normalize_scores(raw: list[int]) -> None:
    values = list(raw)
    normalize_values(values, ())
    objs = [NodeScore(f"n{i}", v) for i, v in enumerate(raw)]
    normalize_scores(PreScoreState((), set(), [], []), objs)
    assert values == [o.score for o in objs]


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=2, max_value=40), st.data())
def test_gone_equals_the_set_difference(n: int, data: st.DataObject) -> None:
    names = [f"node-{i}" for i in range(n)]
    where = {name: i for i, name in enumerate(names)}
    removed = data.draw(st.sets(st.sampled_from(names), max_size=n - 2))
    kept = data.draw(st.permutations([name for name in names if name not in removed]))
    at = tuple(where[name] for name in kept)  # the kept nodes' old positions, in new order
    assert set(_gone(at, n)) == {where[name] for name in removed}
