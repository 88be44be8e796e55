"""PodTopologySpread: spread a workload's pods evenly over zones, nodes or any topology."""

from kschedlib.plugins.podtopologyspread.args import (
    LIST_DEFAULTING,
    SYSTEM_DEFAULT_CONSTRAINTS,
    SYSTEM_DEFAULTING,
    PodTopologySpreadArgs,
)
from kschedlib.plugins.podtopologyspread.common import NAME, SpreadConstraint
from kschedlib.plugins.podtopologyspread.filtering import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    CriticalPaths,
    PreFilterState,
)
from kschedlib.plugins.podtopologyspread.plugin import (
    PLUGINS,
    PRE_FILTER_STATE_KEY,
    PRE_SCORE_STATE_KEY,
    PodTopologySpread,
    new,
)
from kschedlib.plugins.podtopologyspread.scoring import PreScoreState

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "LIST_DEFAULTING",
    "NAME",
    "PLUGINS",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "SYSTEM_DEFAULTING",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "PodTopologySpread",
    "PodTopologySpreadArgs",
    "SpreadConstraint",
    "new",
    "CriticalPaths",
    "PreFilterState",
    "PreScoreState",
]
