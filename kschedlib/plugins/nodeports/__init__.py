"""NodePorts: a node must have the pod's host ports free."""

from kschedlib.plugins.nodeports.node_ports import (
    ERR_REASON,
    NAME,
    PLUGINS,
    PRE_FILTER_STATE_KEY,
    NodePorts,
    PreFilterState,
    fits,
    fits_ports,
    get_host_ports,
    is_schedulable_after_pod_deleted,
    new,
)

__all__ = [
    "ERR_REASON",
    "NAME",
    "PLUGINS",
    "PRE_FILTER_STATE_KEY",
    "NodePorts",
    "fits",
    "fits_ports",
    "get_host_ports",
    "new",
    "PreFilterState",
    "is_schedulable_after_pod_deleted",
]
