"""PodTopologySpread PreScore/Score/NormalizeScore: prefer nodes whose domains hold fewer
matching pods, each constraint weighted by log(number of its domains + 2)
(podtopologyspread/scoring.go)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from kschedlib.api.pod import Pod
from kschedlib.framework.interface import MAX_NODE_SCORE, NodeScore
from kschedlib.framework.types import NodeInfo
from kschedlib.plugins.nodeaffinity.node_affinity import RequiredNodeAffinity
from kschedlib.plugins.podtopologyspread.common import (
    LABEL_HOSTNAME,
    SpreadConstraint,
    count_pods_match_selector,
    node_labels_match_spread_constraints,
)
from kschedlib.plugins.podtopologyspread.counting import SpreadCounter

INVALID_SCORE = -1

_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_HALF_SQRT2 = 7.07106781186547524401e-01
_L1 = 6.666666666666735130e-01
_L2 = 3.999999999940941908e-01
_L3 = 2.857142874366239149e-01
_L4 = 2.222219843214978396e-01
_L5 = 1.818357216161805012e-01
_L6 = 1.531383769920937332e-01
_L7 = 1.479819860511658591e-01


def go_log(x: float) -> float:
    """Go's math.Log, bit for bit (the FreeBSD algorithm Go runs on amd64); the C library's
    log differs in the last bit for some inputs, e.g. 3."""
    if not (x > 0.0 and math.isfinite(x)):
        return math.log(x) if x > 0.0 else (-math.inf if x == 0.0 else math.nan)
    f1, ki = math.frexp(x)
    if f1 < _HALF_SQRT2:
        f1 *= 2.0
        ki -= 1
    f = f1 - 1.0
    k = float(ki)
    s = f / (2.0 + f)
    s2 = s * s
    s4 = s2 * s2
    t1 = s2 * (_L1 + s4 * (_L3 + s4 * (_L5 + s4 * _L7)))
    t2 = s4 * (_L2 + s4 * (_L4 + s4 * _L6))
    r = t1 + t2
    hfsq = 0.5 * f * f
    return k * _LN2_HI - ((hfsq - (s * (hfsq + r) + k * _LN2_LO)) - f)


def topology_normalizing_weight(size: int) -> float:
    """The weight of a constraint with ``size`` domains: log(size + 2), so that counts in
    small topologies are not watered down by big ones."""
    return go_log(float(size + 2))


def go_round(x: float) -> float:
    """math.Round: half away from zero."""
    t = float(math.trunc(x))
    if abs(x - t) >= 0.5:
        t += math.copysign(1.0, x)
    return t


class PreScoreState:
    """The ScheduleAnyway constraints, the filtered nodes left out of scoring (missing a
    topology key), matching pods per topology value and each constraint's weight."""

    __slots__ = ("constraints", "ignored_nodes", "tp_value_to_pod_counts", "weights")

    def __init__(
        self,
        constraints: Sequence[SpreadConstraint],
        ignored_nodes: set[str],
        tp_value_to_pod_counts: list[dict[str, int]],
        weights: list[float],
    ) -> None:
        self.constraints = tuple(constraints)
        self.ignored_nodes = ignored_nodes
        self.tp_value_to_pod_counts = tp_value_to_pod_counts
        self.weights = weights

    def clone(self) -> PreScoreState:
        return self


def init_pre_score_state(
    constraints: Sequence[SpreadConstraint],
    filtered_nodes: Sequence[NodeInfo],
    require_all_topologies: bool,
) -> PreScoreState:
    """Note the filtered nodes to ignore and the topology values of the scored ones, and
    weigh each constraint by its number of domains among them."""
    ignored: set[str] = set()
    counts: list[dict[str, int]] = [{} for _ in constraints]
    for ni in filtered_nodes:
        node = ni.node
        if node is None:
            continue
        labels = node.metadata.labels
        if require_all_topologies and not node_labels_match_spread_constraints(labels, constraints):
            ignored.add(node.metadata.name)
            continue
        for i, c in enumerate(constraints):
            if c.topology_key == LABEL_HOSTNAME:
                continue  # per-node counts are taken at Score
            counts[i].setdefault(labels.get(c.topology_key, ""), 0)
    weights: list[float] = []
    for i, c in enumerate(constraints):
        size = len(counts[i])
        if c.topology_key == LABEL_HOSTNAME:
            size = len(filtered_nodes) - len(ignored)
        weights.append(topology_normalizing_weight(size))
    return PreScoreState(constraints, ignored, counts, weights)


def count_domains(
    s: PreScoreState,
    pod: Pod,
    all_nodes: Sequence[NodeInfo],
    require_all_topologies: bool,
    counter: SpreadCounter | None = None,
    lister: Any = None,
) -> None:
    """Add up, over all nodes, the matching pods of the topology values being scored (from
    ``counter``'s totals, kept up to date across cycles, when given)."""
    constraints = s.constraints
    totals = (
        None if counter is None
        else counter.totals(pod, constraints, all_nodes, require_all_topologies, lister)
    )
    if totals is not None:
        for counts, total in zip(s.tp_value_to_pod_counts, totals, strict=True):
            for value in counts:
                counts[value] += total.get(value, 0)
        return
    ns = pod.metadata.namespace
    required = RequiredNodeAffinity.of(pod)
    for ni in all_nodes:
        node = ni.node
        if node is None:
            continue
        labels = node.metadata.labels
        if require_all_topologies and not node_labels_match_spread_constraints(labels, constraints):
            continue
        for i, c in enumerate(constraints):
            if not c.match_node_inclusion_policies(pod, node, required):
                continue
            counts = s.tp_value_to_pod_counts[i]
            value = labels.get(c.topology_key, "")
            current = counts.get(value)
            if current is None:
                continue
            counts[value] = current + count_pods_match_selector(ni.pods, c.selector, ns)


def score_node(s: PreScoreState, pod: Pod, node_info: NodeInfo) -> int:
    """The weighted matching-pod count of the node's domains (lower is better)."""
    node = node_info.node
    if node is None or node.metadata.name in s.ignored_nodes:
        return 0
    labels = node.metadata.labels
    score = 0.0
    weights = s.weights
    for i, c in enumerate(s.constraints):
        value = labels.get(c.topology_key)
        if value is None:
            continue
        if c.topology_key == LABEL_HOSTNAME:
            cnt = count_pods_match_selector(node_info.pods, c.selector, pod.metadata.namespace)
        else:
            cnt = s.tp_value_to_pod_counts[i].get(value, 0)
        score += cnt * weights[i] + float(c.max_skew - 1)
    return int(go_round(score))


def normalize_scores(s: PreScoreState, scores: list[NodeScore]) -> None:
    """Map the lowest score to 100 and the others down in proportion; ignored nodes get 0."""
    ignored = s.ignored_nodes
    min_score = (1 << 63) - 1
    max_score = 0
    for ns in scores:
        if ns.name in ignored:
            ns.score = INVALID_SCORE
            continue
        if ns.score < min_score:
            min_score = ns.score
        if ns.score > max_score:
            max_score = ns.score
    for ns in scores:
        if ns.score == INVALID_SCORE:
            ns.score = 0
        elif max_score == 0:
            ns.score = MAX_NODE_SCORE
        else:
            ns.score = MAX_NODE_SCORE * (max_score + min_score - ns.score) // max_score
