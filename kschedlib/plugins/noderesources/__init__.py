"""NodeResourcesFit and NodeResourcesBalancedAllocation (kube-scheduler's noderesources)."""

from __future__ import annotations

from kschedlib.framework.registry import PluginSpec
from kschedlib.plugins.noderesources.args import (
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)
from kschedlib.plugins.noderesources.balanced_allocation import NAME as BALANCED_ALLOCATION_NAME
from kschedlib.plugins.noderesources.balanced_allocation import (
    BalancedAllocation,
    balance_score,
    balanced_resource_scorer,
    new_balanced_allocation,
)
from kschedlib.plugins.noderesources.fit import NAME as FIT_NAME
from kschedlib.plugins.noderesources.fit import (
    Fit,
    InsufficientResource,
    PreFilterState,
    PreScoreState,
    compute_pod_resource_request,
    fits,
    fits_request,
    have_any_requested_resources_increased,
    is_fit,
    is_schedulable_after_pod_scale_down,
    new_fit,
)
from kschedlib.plugins.noderesources.least_allocated import least_requested_score
from kschedlib.plugins.noderesources.most_allocated import most_requested_score
from kschedlib.plugins.noderesources.requested_to_capacity_ratio import (
    build_broken_linear_function,
    requested_to_capacity_ratio_scorer,
)
from kschedlib.plugins.noderesources.resource_allocation import ResourceAllocationScorer

PLUGINS: tuple[PluginSpec, ...] = (
    PluginSpec(FIT_NAME, new_fit, NodeResourcesFitArgs),
    PluginSpec(
        BALANCED_ALLOCATION_NAME, new_balanced_allocation, NodeResourcesBalancedAllocationArgs
    ),
)

__all__ = [
    "BALANCED_ALLOCATION_NAME",
    "FIT_NAME",
    "PLUGINS",
    "BalancedAllocation",
    "Fit",
    "InsufficientResource",
    "NodeResourcesBalancedAllocationArgs",
    "NodeResourcesFitArgs",
    "RequestedToCapacityRatioParam",
    "ResourceSpec",
    "ScoringStrategy",
    "UtilizationShapePoint",
    "balanced_resource_scorer",
    "compute_pod_resource_request",
    "fits",
    "fits_request",
    "new_balanced_allocation",
    "new_fit",
    "PreFilterState",
    "PreScoreState",
    "have_any_requested_resources_increased",
    "is_fit",
    "is_schedulable_after_pod_scale_down",
    "balance_score",
    "least_requested_score",
    "most_requested_score",
    "build_broken_linear_function",
    "requested_to_capacity_ratio_scorer",
    "ResourceAllocationScorer",
]
