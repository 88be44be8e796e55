"""LeastAllocated: favour nodes with more unrequested capacity (the default strategy)."""

from __future__ import annotations

from kschedlib.api.resource import wrap64
from kschedlib.plugins.noderesources.resource_allocation import WeightedMean, go_div

MAX_NODE_SCORE = 100
_NO_OVERFLOW = ((1 << 63) - 1) // MAX_NODE_SCORE


def least_requested_score(requested: int, capacity: int) -> int:
    """(capacity - requested) on a 0..100 scale; 0 when the node is over-requested."""
    if capacity <= 0 or requested > capacity:
        return 0 if capacity == 0 or requested > capacity else go_div(
            wrap64(wrap64(capacity - requested) * MAX_NODE_SCORE), capacity
        )
    if requested < 0 or capacity > _NO_OVERFLOW:  # Go int64: the product may wrap
        return go_div(wrap64(wrap64(capacity - requested) * MAX_NODE_SCORE), capacity)
    return (capacity - requested) * MAX_NODE_SCORE // capacity  # both operands >= 0


least_resource_scorer = WeightedMean(least_requested_score)
"""Weighted mean of least_requested_score over the node's resources (integer division)."""
