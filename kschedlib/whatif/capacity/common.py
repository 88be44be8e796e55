"""Plugin sets and constants the batched capacity loop shares."""

from __future__ import annotations

from typing import Any

NODE_LOCAL_PLUGINS = frozenset(
    {
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
        # Node-local for pods without PVC or generic ephemeral volumes (checked per pod).
        "VolumeRestrictions",
        "VolumeZone",
        "NodeVolumeLimits",
        "VolumeBinding",
        "DynamicResources",
    }
)
"""In-tree plugins whose Filter verdict and raw Score for a pod on a node depend only on the
pod's spec and that node's NodeInfo (for pods without claims: see ``fast_eligible``)."""

# Filters whose verdict on a node depends only on their PreFilter state and the node's
# values of the topology keys that state names (see topology_keys).
SIGNATURE_FILTERS = frozenset({"PodTopologySpread", "InterPodAffinity"})
SMALL = 64
GONE: Any = object()

