"""TaintToleration: NoSchedule/NoExecute taints filter, PreferNoSchedule taints score."""

from typing import Any

from kschedlib.features import features_of
from kschedlib.framework.registry import PluginSpec
from kschedlib.plugins.tainttoleration.comparison import ComparisonTaintToleration
from kschedlib.plugins.tainttoleration.taint_toleration import (
    ERR_REASON_UNTOLERATED,
    NAME,
    PRE_SCORE_STATE_KEY,
    PreScoreState,
    TaintToleration,
    do_not_schedule_taints_filter,
    is_schedulable_after_node_change,
    is_schedulable_after_pod_toleration_change,
)


def new(args: Any, handle: Any) -> TaintToleration:
    """Factory: the comparison-operator variant when the handle's gate is on."""
    if features_of(handle).enable_taint_toleration_comparison_operators:
        return ComparisonTaintToleration()
    return TaintToleration()


PLUGINS: tuple[PluginSpec, ...] = (PluginSpec(NAME, new),)


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
