"""VolumeBinding: PVC/PV binding decisions in the scheduling cycle, plus the storage helpers
the other volume plugins share."""

from kschedlib.plugins.volumebinding.args import (
    DEFAULT_BIND_TIMEOUT_SECONDS,
    DEFAULT_STORAGE_CAPACITY_SHAPE,
    VolumeBindingArgs,
)
from kschedlib.plugins.volumebinding.binder import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
    BinderError,
    BindingInfo,
    PodVolumeClaims,
    PodVolumes,
    VolumeBinder,
)
from kschedlib.plugins.volumebinding.volume_binding import (
    ERR_REASON_UNBOUND_IMMEDIATE,
    NAME,
    PLUGINS,
    STATE_KEY,
    StateData,
    VolumeBinding,
    new,
)

__all__ = [
    "DEFAULT_BIND_TIMEOUT_SECONDS",
    "DEFAULT_STORAGE_CAPACITY_SHAPE",
    "ERR_REASON_BIND_CONFLICT",
    "ERR_REASON_NODE_CONFLICT",
    "ERR_REASON_NOT_ENOUGH_SPACE",
    "ERR_REASON_PV_NOT_EXIST",
    "ERR_REASON_UNBOUND_IMMEDIATE",
    "NAME",
    "PLUGINS",
    "STATE_KEY",
    "BinderError",
    "BindingInfo",
    "PodVolumeClaims",
    "PodVolumes",
    "StateData",
    "VolumeBinder",
    "VolumeBinding",
    "VolumeBindingArgs",
    "new",
]
