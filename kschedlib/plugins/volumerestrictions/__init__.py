"""VolumeRestrictions: inline disk conflicts on a node and ReadWriteOncePod exclusivity."""

from kschedlib.plugins.volumerestrictions.volume_restrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,
    NAME,
    PLUGINS,
    PRE_FILTER_STATE_KEY,
    PreFilterState,
    VolumeRestrictions,
    is_volume_conflict,
    needs_restrictions_check,
    new,
    satisfy_volume_conflicts,
)

__all__ = [
    "ERR_REASON_DISK_CONFLICT",
    "ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT",
    "NAME",
    "PLUGINS",
    "PRE_FILTER_STATE_KEY",
    "PreFilterState",
    "VolumeRestrictions",
    "is_volume_conflict",
    "new",
    "needs_restrictions_check",
    "satisfy_volume_conflicts",
]
