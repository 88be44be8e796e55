"""NodeVolumeLimits: per-driver CSI attach limits on nodes (CSILimits)."""

from kschedlib.plugins.nodevolumelimits.csi import (
    ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,
    NAME,
    PLUGINS,
    PRE_FILTER_STATE_KEY,
    CSILimits,
    csi_attach_limit_key,
    new,
    volume_limits,
)

__all__ = [
    "ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED",
    "NAME",
    "PLUGINS",
    "PRE_FILTER_STATE_KEY",
    "CSILimits",
    "csi_attach_limit_key",
    "new",
    "volume_limits",
]
