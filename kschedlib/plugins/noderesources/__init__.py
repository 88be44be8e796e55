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
    balanced_resource_scorer,
    new_balanced_allocation,
)
from kschedlib.plugins.noderesources.fit import NAME as FIT_NAME
from kschedlib.plugins.noderesources.fit import (
    Fit,
    InsufficientResource,
    compute_pod_resource_request,
    fits,
    fits_request,
    new_fit,
)

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
]
