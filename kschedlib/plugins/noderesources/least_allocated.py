"""LeastAllocated: favour nodes with more unrequested capacity (the default strategy)."""

from __future__ import annotations

from collections.abc import Sequence

from kschedlib.plugins.noderesources.resource_allocation import go_div

MAX_NODE_SCORE = 100


def least_requested_score(requested: int, capacity: int) -> int:
    """(capacity - requested) on a 0..100 scale; 0 when the node is over-requested."""
    if capacity == 0 or requested > capacity:
        return 0
    return go_div((capacity - requested) * MAX_NODE_SCORE, capacity)


def least_resource_scorer(
    requested: Sequence[int], allocatable: Sequence[int], weights: Sequence[int]
) -> int:
    """Weighted mean of least_requested_score over the node's resources (integer division)."""
    node_score = weight_sum = 0
    for r, a, w in zip(requested, allocatable, weights, strict=True):
        if a == 0:
            continue
        node_score += least_requested_score(r, a) * w
        weight_sum += w
    if weight_sum == 0:
        return 0
    return go_div(node_score, weight_sum)
