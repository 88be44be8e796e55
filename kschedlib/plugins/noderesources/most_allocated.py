"""MostAllocated: favour nodes with more requested capacity (bin packing)."""

from __future__ import annotations

from collections.abc import Sequence

from kschedlib.plugins.noderesources.resource_allocation import go_div

MAX_NODE_SCORE = 100


def most_requested_score(requested: int, capacity: int) -> int:
    """requested on a 0..100 scale, capped at capacity (defaulted requests may exceed it)."""
    if capacity == 0:
        return 0
    if requested > capacity:
        requested = capacity
    return go_div(requested * MAX_NODE_SCORE, capacity)


def most_resource_scorer(
    requested: Sequence[int], allocatable: Sequence[int], weights: Sequence[int]
) -> int:
    """Weighted mean of most_requested_score over the node's resources (integer division)."""
    node_score = weight_sum = 0
    for r, a, w in zip(requested, allocatable, weights, strict=True):
        if a == 0:
            continue
        node_score += most_requested_score(r, a) * w
        weight_sum += w
    if weight_sum == 0:
        return 0
    return go_div(node_score, weight_sum)
