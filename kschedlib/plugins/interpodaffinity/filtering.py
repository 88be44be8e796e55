"""InterPodAffinity PreFilter/Filter: count, per topology pair, existing pods whose required
anti-affinity selects the incoming pod and existing pods that its required (anti-)affinity
selects; Filter then looks the node's pairs up (interpodaffinity/filtering.go)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.framework.status import Code, Status
from kschedlib.framework.types import AffinityTerm, NodeInfo, PodInfo
from kschedlib.plugins.interpodaffinity.terms import (
    NAME,
    NO_LABELS,
    TopologyCounts,
    add_count,
    clone_counts,
    pod_matches_all_affinity_terms,
)

ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = (
    "node(s) didn't satisfy existing pods anti-affinity rules"
)
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"

AFFINITY_NOT_MATCH = Status(
    Code.UnschedulableAndUnresolvable, (ERR_REASON_AFFINITY_RULES_NOT_MATCH,), NAME
)
_ANTI_AFFINITY_NOT_MATCH = Status(
    Code.Unschedulable, (ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,), NAME
)
_EXISTING_ANTI_AFFINITY_NOT_MATCH = Status(
    Code.Unschedulable, (ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,), NAME
)


def update_with_affinity_terms(
    counts: TopologyCounts, terms: Sequence[AffinityTerm], pod: Pod, node: Node, delta: int
) -> None:
    """Count ``pod`` on each term's topology pair of ``node`` if it matches all the terms."""
    if pod_matches_all_affinity_terms(terms, pod):
        labels = node.metadata.labels
        for t in terms:
            v = labels.get(t.topology_key)
            if v is not None:
                add_count(counts, t.topology_key, v, delta)


def update_with_anti_affinity_terms(
    counts: TopologyCounts,
    terms: Sequence[AffinityTerm],
    pod: Pod,
    ns_labels: Mapping[str, str],
    node: Node,
    delta: int,
) -> None:
    """Count ``pod`` on the topology pair of ``node`` of every term it matches."""
    labels = node.metadata.labels
    for t in terms:
        if t.matches(pod, ns_labels):
            v = labels.get(t.topology_key)
            if v is not None:
                add_count(counts, t.topology_key, v, delta)


class PreFilterState:
    """The three per-topology-pair counters, the incoming pod's merged required terms and
    its namespace labels."""

    __slots__ = (
        "existing_anti_affinity_counts",
        "affinity_counts",
        "anti_affinity_counts",
        "pod",
        "required_affinity_terms",
        "required_anti_affinity_terms",
        "namespace_labels",
        "self_affine",
        "checks",
        "rejections",
        "modified",
    )

    def __init__(
        self,
        pod: Pod,
        required_affinity_terms: tuple[AffinityTerm, ...],
        required_anti_affinity_terms: tuple[AffinityTerm, ...],
        namespace_labels: Mapping[str, str],
        existing_anti_affinity_counts: TopologyCounts | None = None,
        affinity_counts: TopologyCounts | None = None,
        anti_affinity_counts: TopologyCounts | None = None,
    ) -> None:
        self.pod = pod
        self.required_affinity_terms = required_affinity_terms
        self.required_anti_affinity_terms = required_anti_affinity_terms
        self.namespace_labels = namespace_labels
        self.existing_anti_affinity_counts: TopologyCounts = existing_anti_affinity_counts or {}
        self.affinity_counts: TopologyCounts = affinity_counts or {}
        self.anti_affinity_counts: TopologyCounts = anti_affinity_counts or {}
        self.self_affine = pod_matches_all_affinity_terms(required_affinity_terms, pod)
        self.checks: Checks | None = None
        """filter_node's lookups, compiled from the counters (None: not yet, or stale)."""
        self.rejections: dict[str, Status] | None = None
        """Filter's status per node it rejects (rejected_nodes; None: not yet, or stale)."""
        self.modified = False
        """Whether AddPod/RemovePod changed the counts since PreFilter (or the clone)."""

    def clone(self) -> PreFilterState:
        c = PreFilterState(
            self.pod,
            self.required_affinity_terms,
            self.required_anti_affinity_terms,
            self.namespace_labels,
            clone_counts(self.existing_anti_affinity_counts),
            clone_counts(self.affinity_counts),
            clone_counts(self.anti_affinity_counts),
        )
        c.modified = self.modified
        return c

    def update_with_pod(self, pod_info: PodInfo, node: Node | None, delta: int) -> None:
        """Count a pod added to (delta 1) or removed from (delta -1) ``node``."""
        if node is None:
            return
        self.checks = None
        self.rejections = None
        self.modified = True
        update_with_anti_affinity_terms(
            self.existing_anti_affinity_counts,
            pod_info.required_anti_affinity_terms,
            self.pod,
            self.namespace_labels,
            node,
            delta,
        )
        update_with_affinity_terms(
            self.affinity_counts, self.required_affinity_terms, pod_info.pod, node, delta
        )
        update_with_anti_affinity_terms(
            self.anti_affinity_counts,
            self.required_anti_affinity_terms,
            pod_info.pod,
            NO_LABELS,
            node,
            delta,
        )


def existing_anti_affinity_counts(
    pod: Pod, ns_labels: Mapping[str, str], nodes: Sequence[NodeInfo]
) -> TopologyCounts:
    """Per topology pair, the required anti-affinity terms of existing pods that select
    ``pod`` (only nodes hosting pods with required anti-affinity need a look)."""
    counts: TopologyCounts = {}
    for ni in nodes:
        node = ni.node
        if node is None:
            continue
        labels = node.metadata.labels
        for existing in ni.pods_with_required_anti_affinity:
            for t in existing.required_anti_affinity_terms:
                if t.matches(pod, ns_labels):
                    v = labels.get(t.topology_key)
                    if v is not None:
                        add_count(counts, t.topology_key, v, 1)
    return counts


def _compile(terms: Sequence[AffinityTerm]) -> list[tuple[bool, frozenset[str], Any, str]]:
    """(all namespaces, namespaces, selector, topology key) per incoming term: with the
    namespace selector unrolled, its verdict on no labels is fixed."""
    return [
        (
            bool(t.namespace_selector.matches(NO_LABELS)),  # type: ignore[attr-defined]
            t.namespaces,
            t.selector,
            t.topology_key,
        )
        for t in terms
    ]


def incoming_affinity_anti_affinity_counts(
    affinity_terms: Sequence[AffinityTerm],
    anti_affinity_terms: Sequence[AffinityTerm],
    all_nodes: Sequence[NodeInfo],
) -> tuple[TopologyCounts, TopologyCounts]:
    """Per topology pair, the existing pods matching all of the incoming pod's required
    affinity terms, and those matching each of its required anti-affinity terms."""
    affinity: TopologyCounts = {}
    anti: TopologyCounts = {}
    if not affinity_terms and not anti_affinity_terms:
        return affinity, anti
    aff = _compile(affinity_terms)
    anti_c = _compile(anti_affinity_terms)
    for ni in all_nodes:
        pods = ni.pods
        if not pods:
            continue
        node = ni.node
        if node is None:
            continue
        labels = node.metadata.labels
        for existing in pods:
            meta = existing.pod.metadata
            ns = meta.namespace
            pod_labels = meta.labels
            if aff:
                for all_ns, namespaces, selector, _ in aff:
                    if not ((all_ns or ns in namespaces) and selector.matches(pod_labels)):
                        break
                else:
                    for _, _, _, key in aff:
                        v = labels.get(key)
                        if v is not None:
                            add_count(affinity, key, v, 1)
            for all_ns, namespaces, selector, key in anti_c:
                if (all_ns or ns in namespaces) and selector.matches(pod_labels):
                    v = labels.get(key)
                    if v is not None:
                        add_count(anti, key, v, 1)
    return affinity, anti


def satisfy_pod_affinity(s: PreFilterState, labels: Mapping[str, str]) -> bool:
    """Every required affinity term has a matching pod in the node's domain (or the pod is
    the first of a self-affine group and no pod matches yet); the node has every key."""
    pods_exist = True
    counts = s.affinity_counts
    for t in s.required_affinity_terms:
        v = labels.get(t.topology_key)
        if v is None:
            return False
        inner = counts.get(t.topology_key)
        if inner is None or inner.get(v, 0) <= 0:
            pods_exist = False
    return pods_exist or (not counts and s.self_affine)


Checks = tuple[tuple[tuple[str, Mapping[str, int], Status], ...], bool]
"""The (topology key, counts per value, status) lookups that reject a node when the node's
value has a positive count, in filter_node's order, and whether the affinity check runs."""


def compile_checks(s: PreFilterState) -> Checks:
    """filter_node's anti-affinity lookups (terms whose key has no counts dropped)."""
    out: list[tuple[str, Mapping[str, int], Status]] = []
    counts = s.anti_affinity_counts
    if counts:
        for t in s.required_anti_affinity_terms:
            inner = counts.get(t.topology_key)
            if inner is not None:
                out.append((t.topology_key, inner, _ANTI_AFFINITY_NOT_MATCH))
    for key, inner in s.existing_anti_affinity_counts.items():
        out.append((key, inner, _EXISTING_ANTI_AFFINITY_NOT_MATCH))
    return tuple(out), bool(s.required_affinity_terms)


def filter_labels(s: PreFilterState, labels: Mapping[str, str]) -> Status | None:
    """filter_node on the node's labels through the compiled checks."""
    checks = s.checks
    if checks is None:
        checks = s.checks = compile_checks(s)
    lookups, affinity = checks
    if affinity and not satisfy_pod_affinity(s, labels):
        return AFFINITY_NOT_MATCH
    for key, inner, status in lookups:
        v = labels.get(key)
        if v is not None and inner.get(v, 0) > 0:
            return status
    return None


def filter_node(s: PreFilterState, node: Node) -> Status | None:
    """The three checks in kube-scheduler's order, inlined: Filter runs once per node."""
    labels = node.metadata.labels
    if s.required_affinity_terms and not satisfy_pod_affinity(s, labels):
        return AFFINITY_NOT_MATCH
    counts = s.anti_affinity_counts
    if counts:
        for t in s.required_anti_affinity_terms:
            v = labels.get(t.topology_key)
            if v is not None:
                inner = counts.get(t.topology_key)
                if inner is not None and inner.get(v, 0) > 0:
                    return _ANTI_AFFINITY_NOT_MATCH
    for key, inner in s.existing_anti_affinity_counts.items():
        v = labels.get(key)
        if v is not None and inner.get(v, 0) > 0:
            return _EXISTING_ANTI_AFFINITY_NOT_MATCH
    return None
