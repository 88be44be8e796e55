"""MostAllocated: favour nodes with more requested capacity (bin packing)."""

from __future__ import annotations

from kschedlib.api.resource import wrap64
from kschedlib.plugins.noderesources.resource_allocation import WeightedMean, go_div

MAX_NODE_SCORE = 100


def most_requested_score(requested: int, capacity: int) -> int:
    """requested on a 0..100 scale, capped at capacity (defaulted requests may exceed it)."""
    if capacity == 0:
        return 0
    if requested > capacity:
        requested = capacity
    return go_div(wrap64(requested * MAX_NODE_SCORE), capacity)  # Go int64 product


most_resource_scorer = WeightedMean(most_requested_score)
"""Weighted mean of most_requested_score over the node's resources (integer division)."""
