"""PodTopologySpread PreFilter/Filter: count matching pods per topology domain once per pod,
then check each node's skew against the global minimum (podtopologyspread/filtering.go)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.framework.status import Code, Status
from kschedlib.framework.types import NodeInfo
from kschedlib.plugins.nodeaffinity.node_affinity import RequiredNodeAffinity
from kschedlib.plugins.podtopologyspread.common import (
    NAME,
    SpreadConstraint,
    count_pods_match_selector,
    node_labels_match_spread_constraints,
)
from kschedlib.plugins.podtopologyspread.counting import SpreadCounter

MAX_INT32 = (1 << 31) - 1
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
MISSING_LABEL = Status(Code.UnschedulableAndUnresolvable, (ERR_REASON_NODE_LABEL_NOT_MATCH,), NAME)
SKEW_TOO_BIG = Status(Code.Unschedulable, (ERR_REASON_CONSTRAINTS_NOT_MATCH,), NAME)


class CriticalPaths:
    """The two topology values with the fewest matching pods, kept as kube-scheduler keeps
    them: slot 0 always holds the minimum; slot 1 is at least that, not always the 2nd."""

    __slots__ = ("values", "nums")

    def __init__(self) -> None:
        self.values = ["", ""]
        self.nums = [MAX_INT32, MAX_INT32]

    def copy(self) -> CriticalPaths:
        c = CriticalPaths.__new__(CriticalPaths)
        c.values = list(self.values)
        c.nums = list(self.nums)
        return c

    def update(self, value: str, num: int) -> None:
        values, nums = self.values, self.nums
        if value == values[0]:
            i = 0
        elif value == values[1]:
            i = 1
        else:
            i = -1
        if i >= 0:
            nums[i] = num
            if nums[0] > nums[1]:
                values.reverse()
                nums.reverse()
        elif num < nums[0]:
            values[1], nums[1] = values[0], nums[0]
            values[0], nums[0] = value, num
        elif num < nums[1]:
            values[1], nums[1] = value, num

    def __repr__(self) -> str:
        return f"CriticalPaths({list(zip(self.values, self.nums, strict=True))})"


class PreFilterState:
    """Per constraint: matching pods per topology value and the critical paths; plus whether
    the incoming pod matches each constraint's selector (its own +1).

    ``checks`` holds, per constraint, (topology key, matching pods per value, limit): a node
    passes the constraint when its value's count is at most the limit, maxSkew + global
    minimum - self match (Filter's ``count + self - min <= maxSkew``, rearranged); it is
    rebuilt whenever the counts change. The count dicts are shared copy-on-write between a
    state and its clones."""

    __slots__ = (
        "constraints",
        "critical_paths",
        "tp_value_to_match_num",
        "self_match",
        "checks",
        "_shared",
    )

    def __init__(
        self,
        constraints: Sequence[SpreadConstraint] = (),
        critical_paths: list[CriticalPaths] | None = None,
        tp_value_to_match_num: list[dict[str, int]] | None = None,
        self_match: tuple[int, ...] = (),
    ) -> None:
        self.constraints = tuple(constraints)
        self.critical_paths = critical_paths if critical_paths is not None else []
        self.tp_value_to_match_num = (
            tp_value_to_match_num if tp_value_to_match_num is not None else []
        )
        self.self_match = self_match
        self._shared = False
        self.checks: tuple[tuple[str, dict[str, int], int], ...] = ()
        self.refresh_checks()

    def refresh_checks(self) -> None:
        """Recompute ``checks`` from the counts and critical paths."""
        self.checks = tuple(
            (
                c.topology_key,
                self.tp_value_to_match_num[i],
                c.max_skew + self.min_match_num(i, c.min_domains) - self.self_match[i],
            )
            for i, c in enumerate(self.constraints)
        )

    def clone(self) -> PreFilterState:
        c = PreFilterState.__new__(PreFilterState)
        c.constraints = self.constraints
        c.critical_paths = [p.copy() for p in self.critical_paths]
        c.tp_value_to_match_num = self.tp_value_to_match_num
        c.self_match = self.self_match
        c.checks = self.checks
        # Both copy the count dicts before their next change.
        c._shared = self._shared = True
        return c

    def min_match_num(self, i: int, min_domains: int) -> int:
        """The global minimum of constraint ``i``, 0 when it has fewer domains than minDomains."""
        if len(self.tp_value_to_match_num[i]) < min_domains:
            return 0
        return self.critical_paths[i].nums[0]

    def update_with_pod(
        self, updated_pod: Pod, preemptor_pod: Pod, node: Node | None, delta: int
    ) -> None:
        """Count a pod added to (delta 1) or removed from (delta -1) ``node``."""
        if updated_pod.metadata.namespace != preemptor_pod.metadata.namespace or node is None:
            return
        labels = node.metadata.labels
        if not node_labels_match_spread_constraints(labels, self.constraints):
            return
        required = RequiredNodeAffinity.of(preemptor_pod)
        pod_labels = updated_pod.metadata.labels
        changed = False
        for i, c in enumerate(self.constraints):
            if not c.selector.matches(pod_labels):
                continue
            if not c.match_node_inclusion_policies(preemptor_pod, node, required):
                continue
            if self._shared:
                self.tp_value_to_match_num = [dict(m) for m in self.tp_value_to_match_num]
                self._shared = False
            v = labels[c.topology_key]
            counts = self.tp_value_to_match_num[i]
            n = counts.get(v, 0) + delta
            counts[v] = n
            self.critical_paths[i].update(v, n)
            changed = True
        if changed:
            self.refresh_checks()


def cal_pre_filter_state(
    pod: Pod,
    constraints: Sequence[SpreadConstraint],
    all_nodes: Sequence[NodeInfo],
    counter: SpreadCounter | None = None,
    lister: Any = None,
) -> PreFilterState:
    """Count, per constraint and topology value, the pods matching the constraint's selector
    on the nodes that carry every topology key and pass the inclusion policies (taken from
    ``counter``, kept up to date across cycles, when given; ``lister`` is the node lister
    ``all_nodes`` comes from, for its change log)."""
    if not constraints:
        return PreFilterState()
    if counter is not None:
        totals = counter.totals(pod, constraints, all_nodes, True, lister)
        if totals is not None:
            return _state_from_counts(pod, constraints, [dict(m) for m in totals])
    ns = pod.metadata.namespace
    required = RequiredNodeAffinity.of(pod)
    counts: list[dict[str, int]] = [{} for _ in constraints]
    for ni in all_nodes:
        node = ni.node
        if node is None:
            continue
        labels = node.metadata.labels
        if not node_labels_match_spread_constraints(labels, constraints):
            continue
        for i, c in enumerate(constraints):
            if not c.match_node_inclusion_policies(pod, node, required):
                continue
            v = labels[c.topology_key]
            n = count_pods_match_selector(ni.pods, c.selector, ns)
            m = counts[i]
            m[v] = m.get(v, 0) + n
    return _state_from_counts(pod, constraints, counts)


def _state_from_counts(
    pod: Pod, constraints: Sequence[SpreadConstraint], counts: list[dict[str, int]]
) -> PreFilterState:
    paths: list[CriticalPaths] = []
    for m in counts:
        p = CriticalPaths()
        for value, num in m.items():
            p.update(value, num)
        paths.append(p)
    pod_labels = pod.metadata.labels
    self_match = tuple(1 if c.selector.matches(pod_labels) else 0 for c in constraints)
    return PreFilterState(constraints, paths, counts, self_match)


def filter_node(s: PreFilterState, node: Node) -> Status | None:
    """Reject the node if it lacks a topology key or if placing the pod there would push a
    DoNotSchedule constraint's skew over maxSkew (computed as kube-scheduler writes it; the
    plugin's Filter reads ``s.checks`` instead, with the same verdicts)."""
    constraints = s.constraints
    if not constraints:
        return None
    labels = node.metadata.labels
    for i, c in enumerate(constraints):
        v = labels.get(c.topology_key)
        if v is None:
            return MISSING_LABEL
        match_num = s.tp_value_to_match_num[i].get(v, 0)
        skew = match_num + s.self_match[i] - s.min_match_num(i, c.min_domains)
        if skew > c.max_skew:
            return SKEW_TOO_BIG
    return None
