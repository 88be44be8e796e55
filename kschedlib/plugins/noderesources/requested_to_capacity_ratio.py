"""RequestedToCapacityRatio: score each resource's utilization with a user-given broken-line
shape (helper.BuildBrokenLinearFunction), then take the rounded weighted mean."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kschedlib.plugins.noderesources.args import MAX_CUSTOM_PRIORITY_SCORE, UtilizationShapePoint
from kschedlib.plugins.noderesources.resource_allocation import WeightedMean, go_div

MAX_NODE_SCORE = 100
MAX_UTILIZATION = 100


def build_broken_linear_function(shape: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """f(p) through the (utilization, score) points, flat before the first and after the last."""
    points = tuple(shape)
    if not points:
        raise ValueError("a broken linear function needs at least one shape point")

    def f(p: int) -> int:
        for i, (u, s) in enumerate(points):
            if p <= u:
                if i == 0:
                    return s
                pu, ps = points[i - 1]
                return ps + go_div((s - ps) * (p - pu), u - pu)
        return points[-1][1]

    return f


def requested_to_capacity_ratio_scorer(shape: Sequence[UtilizationShapePoint]) -> WeightedMean:
    """The scorer for a shape whose scores (0..10) are scaled to 0..MAX_NODE_SCORE."""
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    raw = build_broken_linear_function([(p.utilization, p.score * scale) for p in shape])
    # Utilization is an integer percentage: tabulate the usual 0..100 range once.
    table = tuple(raw(p) for p in range(MAX_UTILIZATION + 1))
    at_max = table[MAX_UTILIZATION]

    def resource_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return at_max
        p = go_div(requested * MAX_UTILIZATION, capacity)
        return table[p] if 0 <= p <= MAX_UTILIZATION else raw(p)

    return WeightedMean(resource_score, positive_only=True, rounded=True)
