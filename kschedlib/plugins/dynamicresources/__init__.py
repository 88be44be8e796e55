"""DynamicResources: DRA's extension points for pods without resource claims."""

from kschedlib.plugins.dynamicresources.dynamic_resources import (
    MSG_ALLOCATION_UNSUPPORTED,
    MSG_NO_CLAIMS_TO_DEALLOCATE,
    MSG_STILL_NOT_SCHEDULABLE,
    NAME,
    PLUGINS,
    STATE_KEY,
    DynamicResources,
    StateData,
    extended_resource_claim,
    new,
    pod_claims,
)

__all__ = [
    "MSG_ALLOCATION_UNSUPPORTED",
    "MSG_NO_CLAIMS_TO_DEALLOCATE",
    "MSG_STILL_NOT_SCHEDULABLE",
    "NAME",
    "PLUGINS",
    "STATE_KEY",
    "DynamicResources",
    "StateData",
    "extended_resource_claim",
    "new",
    "pod_claims",
]
