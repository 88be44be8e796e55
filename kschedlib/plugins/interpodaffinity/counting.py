"""InterPodAffinity's PreFilter counts and PreScore weights kept up to date across cycles.

Each node's share of the per-topology-pair counts depends only on what is counted (the
incoming pod's merged terms, or its namespace, labels and namespace labels) and on the
NodeInfo. Shares are kept per such key with the NodeInfo generation they were taken at; a
cycle recounts only the nodes whose generation changed (or that joined or left the list)
and moves the totals by the difference. Counts are unordered maps with zero entries
dropped, so the totals equal a recount.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

from kschedlib.api.pod import Pod
from kschedlib.framework.seen_keys import SeenKeys
from kschedlib.framework.types import AffinityTerm, NodeInfo, WeightedAffinityTerm
from kschedlib.plugins.interpodaffinity.filtering import (
    existing_anti_affinity_counts,
    incoming_affinity_anti_affinity_counts,
)
from kschedlib.plugins.interpodaffinity.scoring import compute_topology_score
from kschedlib.plugins.interpodaffinity.terms import TopologyCounts, add_count, clone_counts

Share = tuple[tuple[tuple[str, str, int], ...], ...]
"""Per counter, the node's (topology key, value, count) entries."""

MAX_ENTRIES = 8


def _entries(counts: TopologyCounts) -> tuple[tuple[str, str, int], ...]:
    return tuple((k, v, n) for k, inner in counts.items() for v, n in inner.items())


class _Table:
    __slots__ = ("shares", "totals")

    def __init__(self, k: int) -> None:
        self.shares: dict[str, tuple[int, Share]] = {}
        self.totals: list[TopologyCounts] = [{} for _ in range(k)]

    def update(self, nodes: Sequence[NodeInfo], share_of: Callable[[NodeInfo], Share]) -> None:
        shares = self.shares
        totals = self.totals
        added = False
        for ni in nodes:
            name = ni.name
            e = shares.get(name)
            gen = ni.generation
            if e is not None and e[0] == gen:
                continue
            new = share_of(ni)
            if e is None:
                added = True
            else:
                for counts, old in zip(totals, e[1], strict=True):
                    for key, v, n in old:
                        add_count(counts, key, v, -n)
            for counts, entries in zip(totals, new, strict=True):
                for key, v, n in entries:
                    add_count(counts, key, v, n)
            shares[name] = (gen, new)
        if added or len(shares) > len(nodes):  # some node may have left the list
            present = {ni.name for ni in nodes}
            for name in [n for n in shares if n not in present]:
                for counts, old in zip(totals, shares.pop(name)[1], strict=True):
                    for key, v, n in old:
                        add_count(counts, key, v, -n)


class AffinityCounter:
    """The tables per key, the least recently used dropped beyond MAX_ENTRIES."""

    __slots__ = ("_seen", "_tables")

    def __init__(self) -> None:
        self._tables: dict[Hashable, _Table] = {}
        self._seen = SeenKeys()

    def _table(self, key: Hashable, k: int) -> _Table:
        tables = self._tables
        t = tables.pop(key, None)
        if t is None:
            t = _Table(k)
            if len(tables) >= MAX_ENTRIES:
                del tables[next(iter(tables))]
        tables[key] = t
        return t

    def existing_anti_affinity_counts(
        self, pod: Pod, ns_labels: Mapping[str, str], nodes: Sequence[NodeInfo]
    ) -> TopologyCounts:
        """existing_anti_affinity_counts, kept across cycles (a fresh copy each call)."""
        meta = pod.metadata
        key = ("existing", meta.namespace, tuple(sorted(meta.labels.items())),
               tuple(sorted(ns_labels.items())))
        if key not in self._tables and self._seen.first_sight(key):
            return existing_anti_affinity_counts(pod, ns_labels, nodes)
        t = self._table(key, 1)

        def share(ni: NodeInfo) -> Share:
            return (_entries(existing_anti_affinity_counts(pod, ns_labels, (ni,))),)

        t.update(nodes, share)
        return clone_counts(t.totals[0])

    def incoming_counts(
        self,
        affinity_terms: Sequence[AffinityTerm],
        anti_affinity_terms: Sequence[AffinityTerm],
        all_nodes: Sequence[NodeInfo],
    ) -> tuple[TopologyCounts, TopologyCounts]:
        """incoming_affinity_anti_affinity_counts, kept across cycles (fresh copies)."""
        if not affinity_terms and not anti_affinity_terms:
            return {}, {}
        key = ("incoming", tuple(affinity_terms), tuple(anti_affinity_terms))
        if key not in self._tables and self._seen.first_sight(key):
            return incoming_affinity_anti_affinity_counts(
                affinity_terms, anti_affinity_terms, all_nodes
            )
        t = self._table(key, 2)

        def share(ni: NodeInfo) -> Share:
            a, b = incoming_affinity_anti_affinity_counts(affinity_terms, anti_affinity_terms, (ni,))
            return (_entries(a), _entries(b))

        t.update(all_nodes, share)
        return clone_counts(t.totals[0]), clone_counts(t.totals[1])


def counter_enabled(handle: Any) -> bool:
    """Whether the framework reuses results across cycles (the Scheduler's switch)."""
    return getattr(handle, "node_local_cache", None) is not None


class _ScoreTable:
    """Per node its share of the PreScore weights; totals per pair as [weight, nodes]."""

    __slots__ = ("shares", "totals")

    def __init__(self) -> None:
        self.shares: dict[str, tuple[int, tuple[tuple[str, str, int], ...]]] = {}
        self.totals: dict[str, dict[str, list[int]]] = {}

    def _apply(self, entries: tuple[tuple[str, str, int], ...], sign: int) -> None:
        totals = self.totals
        for key, v, w in entries:
            inner = totals.get(key)
            if inner is None:
                inner = totals[key] = {}
            cell = inner.get(v)
            if cell is None:
                cell = inner[v] = [0, 0]
            cell[0] += sign * w
            cell[1] += sign
            if cell[1] == 0:
                del inner[v]
                if not inner:
                    del totals[key]

    def update(
        self, nodes: Sequence[NodeInfo], share_of: Callable[[NodeInfo], tuple[tuple[str, str, int], ...]]
    ) -> None:
        shares = self.shares
        added = False
        for ni in nodes:
            name = ni.name
            e = shares.get(name)
            gen = ni.generation
            if e is not None and e[0] == gen:
                continue
            new = share_of(ni)
            if e is None:
                added = True
            else:
                self._apply(e[1], -1)
            self._apply(new, 1)
            shares[name] = (gen, new)
        if added or len(shares) > len(nodes):  # some node may have left the list
            present = {ni.name for ni in nodes}
            for name in [n for n in shares if n not in present]:
                self._apply(shares.pop(name)[1], -1)

    def scores(self) -> TopologyCounts:
        return {k: {v: cell[0] for v, cell in inner.items()} for k, inner in self.totals.items()}


class TopologyScoreCounter:
    """InterPodAffinity's PreScore weights per topology pair, kept across cycles: what
    compute_topology_score gives (a pair is present when some node's share touched it)."""

    __slots__ = ("_seen", "_tables")

    def __init__(self) -> None:
        self._tables: dict[Hashable, _ScoreTable] = {}
        self._seen = SeenKeys()

    def compute_topology_score(
        self,
        incoming: Pod,
        preferred_affinity: Sequence[WeightedAffinityTerm],
        preferred_anti_affinity: Sequence[WeightedAffinityTerm],
        ns_labels: Mapping[str, str],
        hard_pod_affinity_weight: int,
        nodes: Sequence[NodeInfo],
        all_pods: bool,
    ) -> TopologyCounts:
        meta = incoming.metadata
        key = (meta.namespace, tuple(sorted(meta.labels.items())),
               tuple(sorted(ns_labels.items())), tuple(preferred_affinity),
               tuple(preferred_anti_affinity), hard_pod_affinity_weight, all_pods)
        tables = self._tables
        if key not in tables and self._seen.first_sight(key):
            return compute_topology_score(
                incoming, preferred_affinity, preferred_anti_affinity, ns_labels,
                hard_pod_affinity_weight, nodes, all_pods,
            )
        t = tables.pop(key, None)
        if t is None:
            t = _ScoreTable()
            if len(tables) >= MAX_ENTRIES:
                del tables[next(iter(tables))]
        tables[key] = t

        def share(ni: NodeInfo) -> tuple[tuple[str, str, int], ...]:
            return _entries(compute_topology_score(
                incoming, preferred_affinity, preferred_anti_affinity, ns_labels,
                hard_pod_affinity_weight, (ni,), all_pods,
            ))

        t.update(nodes, share)
        return t.scores()
