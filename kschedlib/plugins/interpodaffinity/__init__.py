"""InterPodAffinity: place pods near, or away from, pods with given labels in a topology."""

from kschedlib.plugins.interpodaffinity.args import (
    DEFAULT_HARD_POD_AFFINITY_WEIGHT,
    InterPodAffinityArgs,
)
from kschedlib.plugins.interpodaffinity.filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    PreFilterState,
)
from kschedlib.plugins.interpodaffinity.plugin import (
    PLUGINS,
    PRE_FILTER_STATE_KEY,
    PRE_SCORE_STATE_KEY,
    InterPodAffinity,
    new,
)
from kschedlib.plugins.interpodaffinity.scoring import PreScoreState
from kschedlib.plugins.interpodaffinity.terms import NAME

__all__ = [
    "DEFAULT_HARD_POD_AFFINITY_WEIGHT",
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "NAME",
    "PLUGINS",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "InterPodAffinity",
    "InterPodAffinityArgs",
    "new",
    "PreFilterState",
    "PreScoreState",
]
