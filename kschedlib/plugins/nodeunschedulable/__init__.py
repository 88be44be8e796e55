"""NodeUnschedulable: cordoned nodes take only pods tolerating the unschedulable taint."""

from kschedlib.plugins.nodeunschedulable.node_unschedulable import (
    ERR_REASON_UNSCHEDULABLE,
    NAME,
    PLUGINS,
    TAINT_NODE_UNSCHEDULABLE,
    NodeUnschedulable,
    is_schedulable_after_node_change,
    is_schedulable_after_pod_toleration_change,
    new,
    tolerates_unschedulable,
)

__all__ = [
    "ERR_REASON_UNSCHEDULABLE",
    "NAME",
    "PLUGINS",
    "TAINT_NODE_UNSCHEDULABLE",
    "NodeUnschedulable",
    "new",
    "is_schedulable_after_node_change",
    "is_schedulable_after_pod_toleration_change",
    "tolerates_unschedulable",
]
