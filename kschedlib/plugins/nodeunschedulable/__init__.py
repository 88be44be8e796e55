"""NodeUnschedulable: cordoned nodes take only pods tolerating the unschedulable taint."""

from kschedlib.plugins.nodeunschedulable.node_unschedulable import (
    ERR_REASON_UNSCHEDULABLE,
    NAME,
    PLUGINS,
    TAINT_NODE_UNSCHEDULABLE,
    NodeUnschedulable,
    new,
)

__all__ = [
    "ERR_REASON_UNSCHEDULABLE",
    "NAME",
    "PLUGINS",
    "TAINT_NODE_UNSCHEDULABLE",
    "NodeUnschedulable",
    "new",
]
