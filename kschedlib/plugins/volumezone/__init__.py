"""VolumeZone: bound PVs' zone and region labels restrict the nodes a pod fits."""

from kschedlib.plugins.volumezone.volume_zone import (
    ERR_REASON_CONFLICT,
    NAME,
    PLUGINS,
    PRE_FILTER_STATE_KEY,
    TOPOLOGY_LABELS,
    PVTopology,
    StateData,
    VolumeZone,
    new,
    pv_topologies,
)

__all__ = [
    "ERR_REASON_CONFLICT",
    "NAME",
    "PLUGINS",
    "PRE_FILTER_STATE_KEY",
    "TOPOLOGY_LABELS",
    "PVTopology",
    "StateData",
    "VolumeZone",
    "new",
    "pv_topologies",
]
