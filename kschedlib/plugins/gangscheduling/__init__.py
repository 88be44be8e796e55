"""GangScheduling: all-or-nothing scheduling of Workload pod groups (alpha in v1.35)."""

from kschedlib.plugins.gangscheduling.gangscheduling import (
    MSG_WAITING_AT_PERMIT,
    MSG_WAITING_FOR_QUORUM,
    NAME,
    PLUGINS,
    GangScheduling,
    is_schedulable_after_pod_added,
    is_schedulable_after_workload_added,
    missing_pod_group,
    new,
    waiting_for_workload,
)

__all__ = [
    "MSG_WAITING_AT_PERMIT",
    "MSG_WAITING_FOR_QUORUM",
    "NAME",
    "PLUGINS",
    "GangScheduling",
    "is_schedulable_after_pod_added",
    "is_schedulable_after_workload_added",
    "missing_pod_group",
    "new",
    "waiting_for_workload",
]
