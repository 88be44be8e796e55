"""The compiled form of a pod's topology spread constraints and the helpers that Filter and
Score share (podtopologyspread/common.go)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

import attrs

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod, TopologySpreadConstraint
from kschedlib.api.selectors import Selector, selector_from, selector_from_set
from kschedlib.api.taints import find_untolerated_taint
from kschedlib.framework.types import PodInfo
from kschedlib.plugins.nodeaffinity.node_affinity import RequiredNodeAffinity
from kschedlib.plugins.tainttoleration.taint_toleration import do_not_schedule_taints_filter

NAME = "PodTopologySpread"
HONOR = "Honor"
IGNORE = "Ignore"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"


class LabelMatcher(Protocol):
    """A compiled label selector (``Selector``) or the selector that matches nothing."""

    def matches(self, labels: Mapping[str, str]) -> bool: ...


@attrs.define(slots=True, frozen=True)
class SpreadConstraint:
    """A TopologySpreadConstraint with its selector compiled and its policies defaulted."""

    max_skew: int
    topology_key: str
    selector: LabelMatcher
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE
    comparison_operators: bool = False
    """TaintTolerationComparisonOperators, for nodeTaintsPolicy: Honor."""

    @property
    def selector_empty(self) -> bool:
        """labels.Selector.Empty(): true for the match-everything selector only."""
        return isinstance(self.selector, Selector) and self.selector.is_empty()

    def match_node_inclusion_policies(
        self, pod: Pod, node: Node, required: RequiredNodeAffinity
    ) -> bool:
        """Whether the node counts as a domain member under nodeAffinityPolicy and
        nodeTaintsPolicy (a node the pod could not land on is left out when Honor)."""
        if self.node_affinity_policy == HONOR and not required.match(node):
            return False
        return not (
            self.node_taints_policy == HONOR
            and find_untolerated_taint(
                node.spec.taints,
                pod.spec.tolerations,
                do_not_schedule_taints_filter,
                self.comparison_operators,
            )
            is not None
        )


def merge_label_set_with_selector(
    match_labels: Mapping[str, str], selector: LabelMatcher
) -> LabelMatcher:
    """The selector ANDed with key=value requirements (a nil selector stays nil)."""
    if not isinstance(selector, Selector):
        return selector
    return selector_from_set(match_labels).add(*selector.requirements)


def filter_topology_spread_constraints(
    constraints: Iterable[TopologySpreadConstraint],
    pod_labels: Mapping[str, str],
    action: str,
    match_label_keys: bool = True,
    comparison_operators: bool = False,
) -> list[SpreadConstraint]:
    """Compile the constraints whose whenUnsatisfiable is ``action``, merging matchLabelKeys
    from the pod's labels into the selector (MatchLabelKeysInPodTopologySpread gate)."""
    result: list[SpreadConstraint] = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        selector: LabelMatcher = selector_from(c.label_selector)
        if match_label_keys and c.match_label_keys:
            match_labels = {k: pod_labels[k] for k in c.match_label_keys if k in pod_labels}
            if match_labels:
                selector = merge_label_set_with_selector(match_labels, selector)
        result.append(
            SpreadConstraint(
                max_skew=c.max_skew,
                topology_key=c.topology_key,
                selector=selector,
                min_domains=1 if c.min_domains is None else c.min_domains,
                node_affinity_policy=c.node_affinity_policy or HONOR,
                node_taints_policy=c.node_taints_policy or IGNORE,
                comparison_operators=comparison_operators,
            )
        )
    return result


def node_labels_match_spread_constraints(
    node_labels: Mapping[str, str], constraints: Sequence[SpreadConstraint]
) -> bool:
    """Whether the node carries every constraint's topology key."""
    return all(c.topology_key in node_labels for c in constraints)


def count_pods_match_selector(
    pod_infos: Iterable[PodInfo], selector: LabelMatcher, namespace: str
) -> int:
    """The pods of ``namespace`` selected by ``selector``, terminating pods excluded; an empty
    selector counts nothing."""
    if isinstance(selector, Selector) and selector.is_empty():
        return 0
    count = 0
    for pi in pod_infos:
        meta = pi.pod.metadata
        if meta.deletion_timestamp is not None or meta.namespace != namespace:
            continue
        if selector.matches(meta.labels):
            count += 1
    return count


def pod_labels_match_spread_constraints(
    constraints: Sequence[SpreadConstraint], labels: Mapping[str, str]
) -> bool:
    """Whether any constraint's selector matches the labels."""
    return any(c.selector.matches(labels) for c in constraints)
