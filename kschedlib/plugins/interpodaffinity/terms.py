"""Affinity-term helpers shared by InterPodAffinity's Filter and Score: namespace-selector
unrolling, term matching and per-topology counters."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType

import attrs

from kschedlib.api.node import Namespace
from kschedlib.api.pod import Pod
from kschedlib.api.selectors import NOTHING, Selector
from kschedlib.framework.interface import ObjectStore
from kschedlib.framework.types import AffinityTerm, WeightedAffinityTerm

NAME = "InterPodAffinity"

NO_LABELS: Mapping[str, str] = MappingProxyType({})
"""Namespace labels for matching the incoming pod's own terms: their namespaceSelector is
unrolled (Nothing) or empty (matches all), so no lookup is needed (a nil labels.Set in Go)."""

TopologyCounts = dict[str, dict[str, int]]
"""topology key -> topology value -> count; no zero entries, no empty inner dicts."""


def namespace_labels(objects: ObjectStore, namespace: str) -> Mapping[str, str]:
    """The labels of the pod's namespace, or none when it is unknown
    (GetNamespaceLabelsSnapshot)."""
    ns = objects.get_namespace(namespace)
    return dict(ns.metadata.labels) if ns is not None else NO_LABELS


def merge_term_namespaces(term: AffinityTerm, namespaces: Iterable[Namespace]) -> AffinityTerm:
    """Unroll a non-empty namespaceSelector into the term's namespace set and drop the
    selector (mergeAffinityTermNamespacesIfNotEmpty); an empty selector still matches all."""
    sel = term.namespace_selector
    if not isinstance(sel, Selector) or sel.is_empty():
        return term
    names = {ns.metadata.name for ns in namespaces if sel.matches(ns.metadata.labels)}
    return attrs.evolve(term, namespaces=term.namespaces | names, namespace_selector=NOTHING)


def merge_terms(terms: Sequence[AffinityTerm], objects: ObjectStore) -> tuple[AffinityTerm, ...]:
    """merge_term_namespaces over the incoming pod's terms, listing namespaces only if needed."""
    if not any(
        isinstance(t.namespace_selector, Selector) and not t.namespace_selector.is_empty()
        for t in terms
    ):
        return tuple(terms)
    namespaces = [ns for ns in objects.list_objects("Namespace") if isinstance(ns, Namespace)]
    return tuple(merge_term_namespaces(t, namespaces) for t in terms)


def merge_weighted_terms(
    terms: Sequence[WeightedAffinityTerm], objects: ObjectStore
) -> tuple[WeightedAffinityTerm, ...]:
    merged = merge_terms([w.term for w in terms], objects)
    return tuple(
        w if m is w.term else WeightedAffinityTerm(m, w.weight)
        for w, m in zip(terms, merged, strict=True)
    )


def pod_matches_all_affinity_terms(terms: Sequence[AffinityTerm], pod: Pod) -> bool:
    """Whether ``pod`` matches every one of the incoming pod's (merged) terms; False if none."""
    if not terms:
        return False
    return all(t.matches(pod, NO_LABELS) for t in terms)


def add_count(counts: TopologyCounts, key: str, value: str, delta: int) -> None:
    """counts[key][value] += delta, dropping entries that reach zero."""
    inner = counts.get(key)
    if inner is None:
        if delta == 0:
            return
        inner = counts[key] = {}
    n = inner.get(value, 0) + delta
    if n == 0:
        inner.pop(value, None)
        if not inner:
            del counts[key]
    else:
        inner[value] = n


def clone_counts(counts: TopologyCounts) -> TopologyCounts:
    return {k: dict(v) for k, v in counts.items()}
