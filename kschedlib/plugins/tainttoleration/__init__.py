"""TaintToleration: NoSchedule/NoExecute taints filter, PreferNoSchedule taints score."""

from kschedlib.plugins.tainttoleration.taint_toleration import (
    ERR_REASON_UNTOLERATED,
    NAME,
    PLUGINS,
    PRE_SCORE_STATE_KEY,
    PreScoreState,
    TaintToleration,
    do_not_schedule_taints_filter,
    is_schedulable_after_node_change,
    is_schedulable_after_pod_toleration_change,
    new,
)

__all__ = [
    "ERR_REASON_UNTOLERATED",
    "NAME",
    "PLUGINS",
    "PRE_SCORE_STATE_KEY",
    "TaintToleration",
    "do_not_schedule_taints_filter",
    "new",
    "PreScoreState",
    "is_schedulable_after_node_change",
    "is_schedulable_after_pod_toleration_change",
]
