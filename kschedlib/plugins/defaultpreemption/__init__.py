"""DefaultPreemption: the PostFilter plugin that evicts lower-priority pods for a pod that fits
nowhere, with kube-scheduler v1.35's preemption evaluator."""

from kschedlib.plugins.defaultpreemption.args import (
    DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE,
    DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE,
    DefaultPreemptionArgs,
)
from kschedlib.plugins.defaultpreemption.default_preemption import (
    NAME,
    NO_VICTIMS_FOUND,
    NOT_ELIGIBLE_NEVER,
    NOT_ELIGIBLE_TERMINATING,
    PLUGINS,
    DefaultPreemption,
    filter_pods_with_pdb_violation,
    more_important_pod,
    new,
    pod_terminating_by_preemption,
)
from kschedlib.plugins.defaultpreemption.evaluator import (
    NO_CANDIDATE_NODE,
    PREEMPTION_NOT_HELPFUL,
    Candidate,
    Evaluator,
    PreemptionInterface,
    Victims,
    aggregate_error_message,
    earliest_pod_start_time,
    lower_priority_nominated_pods,
    pod_start_time,
)
from kschedlib.plugins.defaultpreemption.go_sort import sort_slice

__all__ = [
    "DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE",
    "DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE",
    "NAME",
    "NOT_ELIGIBLE_NEVER",
    "NOT_ELIGIBLE_TERMINATING",
    "NO_CANDIDATE_NODE",
    "NO_VICTIMS_FOUND",
    "PLUGINS",
    "PREEMPTION_NOT_HELPFUL",
    "Candidate",
    "DefaultPreemption",
    "DefaultPreemptionArgs",
    "Evaluator",
    "Victims",
    "filter_pods_with_pdb_violation",
    "lower_priority_nominated_pods",
    "more_important_pod",
    "new",
    "pod_start_time",
    "pod_terminating_by_preemption",
    "sort_slice",
    "PreemptionInterface",
    "aggregate_error_message",
    "earliest_pod_start_time",
]
