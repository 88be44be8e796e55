"""InterPodAffinity PreScore/Score/NormalizeScore: sum, per topology pair, the weights of the
preferred terms (both ways) and of existing pods' required affinity that hold between the
incoming pod and existing pods; min-max normalize (interpodaffinity/scoring.go)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.framework.interface import MAX_NODE_SCORE, NodeScore
from kschedlib.framework.types import AffinityTerm, NodeInfo, PodInfo, WeightedAffinityTerm
from kschedlib.plugins.interpodaffinity.terms import NO_LABELS, TopologyCounts

MAX_INT64 = (1 << 63) - 1
MIN_INT64 = -(1 << 63)


class PreScoreState:
    """topology key -> topology value -> summed weight."""

    __slots__ = ("topology_score",)

    def __init__(self, topology_score: TopologyCounts) -> None:
        self.topology_score = topology_score

    def clone(self) -> PreScoreState:
        return self


def _process_term(
    scores: TopologyCounts,
    term: AffinityTerm,
    weight: int,
    pod: Pod,
    ns_labels: Mapping[str, str],
    node_labels: Mapping[str, str],
) -> None:
    if term.matches(pod, ns_labels):
        v = node_labels.get(term.topology_key)
        if v is not None:
            inner = scores.get(term.topology_key)
            if inner is None:
                inner = scores[term.topology_key] = {}
            inner[v] = inner.get(v, 0) + weight


def _process_terms(
    scores: TopologyCounts,
    terms: Sequence[WeightedAffinityTerm],
    pod: Pod,
    ns_labels: Mapping[str, str],
    node_labels: Mapping[str, str],
    multiplier: int,
) -> None:
    for w in terms:
        _process_term(scores, w.term, w.weight * multiplier, pod, ns_labels, node_labels)


def process_existing_pod(
    scores: TopologyCounts,
    incoming: Pod,
    preferred_affinity: Sequence[WeightedAffinityTerm],
    preferred_anti_affinity: Sequence[WeightedAffinityTerm],
    ns_labels: Mapping[str, str],
    hard_pod_affinity_weight: int,
    existing: PodInfo,
    node: Node,
) -> None:
    """Add the weights one existing pod contributes to its node's topology pairs."""
    node_labels = node.metadata.labels
    if not node_labels:
        return
    p = existing.pod
    # The incoming pod's terms have their namespaceSelector unrolled: no label lookup.
    _process_terms(scores, preferred_affinity, p, NO_LABELS, node_labels, 1)
    _process_terms(scores, preferred_anti_affinity, p, NO_LABELS, node_labels, -1)
    if hard_pod_affinity_weight > 0:
        for t in existing.required_affinity_terms:
            _process_term(scores, t, hard_pod_affinity_weight, incoming, ns_labels, node_labels)
    _process_terms(scores, existing.preferred_affinity_terms, incoming, ns_labels, node_labels, 1)
    _process_terms(
        scores, existing.preferred_anti_affinity_terms, incoming, ns_labels, node_labels, -1
    )


def compute_topology_score(
    incoming: Pod,
    preferred_affinity: Sequence[WeightedAffinityTerm],
    preferred_anti_affinity: Sequence[WeightedAffinityTerm],
    ns_labels: Mapping[str, str],
    hard_pod_affinity_weight: int,
    nodes: Sequence[NodeInfo],
    all_pods: bool,
) -> TopologyCounts:
    """The summed weights per topology pair; a pair some term touched is present even when
    its weights sum to 0 (so an empty result means no term applied anywhere)."""
    scores: TopologyCounts = {}
    for ni in nodes:
        node = ni.node
        if node is None:
            continue
        pods = ni.pods if all_pods else ni.pods_with_affinity
        for existing in pods:
            if not all_pods and not (
                existing.preferred_affinity_terms
                or existing.preferred_anti_affinity_terms
                or (hard_pod_affinity_weight > 0 and existing.required_affinity_terms)
            ):
                continue  # e.g. required anti-affinity only: nothing to score
            process_existing_pod(
                scores,
                incoming,
                preferred_affinity,
                preferred_anti_affinity,
                ns_labels,
                hard_pod_affinity_weight,
                existing,
                node,
            )
    return scores


def score_node(s: PreScoreState, node: Node) -> int:
    labels = node.metadata.labels
    score = 0
    for key, values in s.topology_score.items():
        v = labels.get(key)
        if v is not None:
            score += values.get(v, 0)
    return score


def normalize_scores(s: PreScoreState, scores: list[NodeScore]) -> None:
    """Scale to [0, 100] between the lowest and the highest score (all 0 when equal)."""
    if not s.topology_score:
        return
    min_count = MAX_INT64
    max_count = MIN_INT64
    for ns in scores:
        if ns.score > max_count:
            max_count = ns.score
        if ns.score < min_count:
            min_count = ns.score
    diff = max_count - min_count
    for ns in scores:
        f = 0.0
        if diff > 0:
            f = float(MAX_NODE_SCORE) * ((ns.score - min_count) / diff)
        ns.score = int(f)
