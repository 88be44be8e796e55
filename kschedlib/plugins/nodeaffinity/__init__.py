"""NodeAffinity: nodeSelector and node affinity (required filters, preferred scores)."""

from kschedlib.plugins.nodeaffinity.args import NodeAffinityArgs
from kschedlib.plugins.nodeaffinity.node_affinity import (
    ERR_REASON_CONFLICT,
    ERR_REASON_ENFORCED,
    ERR_REASON_POD,
    NAME,
    PLUGINS,
    PRE_FILTER_STATE_KEY,
    PRE_SCORE_STATE_KEY,
    NodeAffinity,
    PreScoreState,
    RequiredNodeAffinity,
    get_pod_preferred_node_affinity,
    new,
)

__all__ = [
    "ERR_REASON_CONFLICT",
    "ERR_REASON_ENFORCED",
    "ERR_REASON_POD",
    "NAME",
    "PLUGINS",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "NodeAffinity",
    "NodeAffinityArgs",
    "RequiredNodeAffinity",
    "new",
    "PreScoreState",
    "get_pod_preferred_node_affinity",
]
