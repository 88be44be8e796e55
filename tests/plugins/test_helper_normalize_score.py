"""DefaultNormalizeScore, table from kube-scheduler's normalize_score_test.go."""

from __future__ import annotations

import pytest

from kschedlib.framework.interface import MAX_NODE_SCORE, NodeScore
from kschedlib.plugins.helper import default_normalize_score


@pytest.mark.parametrize(
    ("reverse", "scores", "expected"),
    [
        (False, [1, 2, 3, 4], [25, 50, 75, 100]),
        (True, [1, 2, 3, 4], [75, 50, 25, 0]),
        (False, [1000, 10, 20, 30], [100, 1, 2, 3]),
        (True, [1000, 10, 20, 30], [0, 99, 98, 97]),
        (False, [1, 1, 1, 1], [100, 100, 100, 100]),
        (False, [1000, 1, 1, 1], [100, 0, 0, 0]),
        (True, [0, 1, 1, 1], [100, 0, 0, 0]),
        (False, [0, 0, 0, 0], [0, 0, 0, 0]),
        (True, [0, 0, 0, 0], [100, 100, 100, 100]),
        # TaintToleration in taints-017: 0-3 untolerated PreferNoSchedule taints.
        (True, [0, 1, 2, 3], [100, 67, 34, 0]),
    ],
)
def test_default_normalize_score(reverse: bool, scores: list[int], expected: list[int]) -> None:
    ns = [NodeScore(f"n{i}", s) for i, s in enumerate(scores)]
    assert default_normalize_score(MAX_NODE_SCORE, reverse, ns) is None
    assert [n.score for n in ns] == expected
    assert [n.name for n in ns] == [f"n{i}" for i in range(len(scores))]


def test_negative_scores_truncate_toward_zero_like_go() -> None:
    ns = [NodeScore("a", -1), NodeScore("b", 3)]
    default_normalize_score(MAX_NODE_SCORE, False, ns)
    assert [n.score for n in ns] == [-33, 100]


def test_empty_list() -> None:
    assert default_normalize_score(MAX_NODE_SCORE, True, []) is None
