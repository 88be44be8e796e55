"""Plugin sets and constants the batched capacity loop shares."""

from __future__ import annotations

from operator import attrgetter, methodcaller
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



_labels_of = attrgetter("node.metadata.labels")


def label_column(nodes: list[Any], key: str) -> list[str | None]:
    """Each node's value of label ``key`` in node-list order (None: no such label)."""
    try:
        return list(map(methodcaller("get", key), map(_labels_of, nodes)))
    except AttributeError:  # a NodeInfo without its node
        return [None if ni.node is None else ni.node.metadata.labels.get(key) for ni in nodes]
