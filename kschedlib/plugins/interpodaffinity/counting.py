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
from kschedlib.plugins.interpodaffinity.index import PodIndex
from kschedlib.plugins.interpodaffinity.scoring import compute_topology_score
from kschedlib.plugins.interpodaffinity.terms import TopologyCounts, add_count, clone_counts

Share = tuple[tuple[tuple[str, str, int], ...], ...]
"""Per counter, the node's (topology key, value, count) entries."""

MAX_ENTRIES = 8


def _index_is_cheaper(candidates: int, nodes: Sequence[NodeInfo]) -> bool:
    """Whether checking ``candidates`` in full each cycle is cheap enough not to build a
    table (a pass over every node computing its share) for the key."""
    return candidates <= 64 or candidates * 50 <= len(nodes)


def _entries(counts: TopologyCounts) -> tuple[tuple[str, str, int], ...]:
    return tuple((k, v, n) for k, inner in counts.items() for v, n in inner.items())


def _changed_infos(
    serial: int, index: PodIndex | None
) -> list[tuple[str, NodeInfo | None]] | None:
    """The (name, NodeInfo or None when gone) of the nodes the index re-read since sync
    number ``serial`` (-1: never), or None when a full pass is needed."""
    if index is None or serial < 0:
        return None
    names = index.changes_since(serial)
    if names is None:
        return None
    infos = index.infos
    return [(name, infos.get(name)) for name in names]


class _Table:
    __slots__ = ("serial", "shares", "totals")

    def __init__(self, k: int) -> None:
        self.shares: dict[str, tuple[int, Share]] = {}
        self.totals: list[TopologyCounts] = [{} for _ in range(k)]
        self.serial = -1
        """The index sync the shares are at (-1: unknown, a full pass comes next)."""

    def _move(self, share: Share, sign: int) -> None:
        for counts, entries in zip(self.totals, share, strict=True):
            for key, v, n in entries:
                add_count(counts, key, v, sign * n)

    def update(
        self,
        nodes: Sequence[NodeInfo],
        share_of: Callable[[NodeInfo], Share],
        index: PodIndex | None = None,
    ) -> None:
        """Bring the totals to ``nodes``: with an ``index`` synced to the whole node list
        (``nodes`` being those of it whose share may be non-empty), only the nodes it
        re-read since the last update are looked at."""
        shares = self.shares
        changed = _changed_infos(self.serial, index)
        self.serial = index.serial if index is not None else -1
        if changed is not None:
            for name, ni in changed:
                e = shares.pop(name, None)
                if e is not None:
                    self._move(e[1], -1)
                if ni is not None:
                    new = share_of(ni)
                    if any(new):
                        self._move(new, 1)
                        shares[name] = (ni.generation, new)
            return
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
                self._move(e[1], -1)
            self._move(new, 1)
            shares[name] = (gen, new)
        if added or len(shares) > len(nodes):  # some node may have left the list
            present = {ni.name for ni in nodes}
            for name in [n for n in shares if n not in present]:
                self._move(shares.pop(name)[1], -1)


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
        self,
        pod: Pod,
        ns_labels: Mapping[str, str],
        nodes: Sequence[NodeInfo],
        index: PodIndex | None = None,
    ) -> TopologyCounts:
        """existing_anti_affinity_counts, kept across cycles (a fresh copy each call). With
        an ``index`` synced to the whole node list (``nodes`` being the nodes with required
        anti-affinity pods), a key seldom seen, or with few candidates, is answered by it."""
        meta = pod.metadata
        key = ("existing", meta.namespace, tuple(sorted(meta.labels.items())),
               tuple(sorted(ns_labels.items())))
        if key not in self._tables and (
            self._seen.first_sight(key)
            or (index is not None and _index_is_cheaper(index.anti_candidate_count(pod), nodes))
        ):
            if index is not None:
                return index.existing_anti_affinity_counts(pod, ns_labels)
            return existing_anti_affinity_counts(pod, ns_labels, nodes)
        t = self._table(key, 1)

        def share(ni: NodeInfo) -> Share:
            return (_entries(existing_anti_affinity_counts(pod, ns_labels, (ni,))),)

        t.update(nodes, share, index)
        return clone_counts(t.totals[0])

    def incoming_counts(
        self,
        affinity_terms: Sequence[AffinityTerm],
        anti_affinity_terms: Sequence[AffinityTerm],
        all_nodes: Sequence[NodeInfo],
        index: PodIndex | None = None,
    ) -> tuple[TopologyCounts, TopologyCounts]:
        """incoming_affinity_anti_affinity_counts, kept across cycles (fresh copies); an
        ``index`` synced to ``all_nodes`` answers keys seldom seen or with few candidates."""
        if not affinity_terms and not anti_affinity_terms:
            return {}, {}
        key = ("incoming", tuple(affinity_terms), tuple(anti_affinity_terms))
        if key not in self._tables and (
            self._seen.first_sight(key)
            or (
                index is not None
                and _index_is_cheaper(
                    index.terms_candidate_count(affinity_terms, anti_affinity_terms), all_nodes
                )
            )
        ):
            if index is not None:
                return index.incoming_counts(affinity_terms, anti_affinity_terms)
            return incoming_affinity_anti_affinity_counts(
                affinity_terms, anti_affinity_terms, all_nodes
            )
        t = self._table(key, 2)

        def share(ni: NodeInfo) -> Share:
            a, b = incoming_affinity_anti_affinity_counts(affinity_terms, anti_affinity_terms, (ni,))
            return (_entries(a), _entries(b))

        t.update(all_nodes, share, index)
        return clone_counts(t.totals[0]), clone_counts(t.totals[1])


def counter_enabled(handle: Any) -> bool:
    """Whether the framework reuses results across cycles (the Scheduler's switch)."""
    return getattr(handle, "node_local_cache", None) is not None


class _ScoreTable:
    """Per node its share of the PreScore weights; totals per pair as [weight, nodes]."""

    __slots__ = ("serial", "shares", "totals", "weights")

    def __init__(self) -> None:
        self.shares: dict[str, tuple[int, tuple[tuple[str, str, int], ...]]] = {}
        self.totals: dict[str, dict[str, list[int]]] = {}
        self.weights: TopologyCounts = {}
        """The totals' weights alone (what scores() copies)."""
        self.serial = -1

    def _apply(self, entries: tuple[tuple[str, str, int], ...], sign: int) -> None:
        totals = self.totals
        weights = self.weights
        for key, v, w in entries:
            inner = totals.get(key)
            if inner is None:
                inner = totals[key] = {}
                weights[key] = {}
            cell = inner.get(v)
            if cell is None:
                cell = inner[v] = [0, 0]
            cell[0] += sign * w
            cell[1] += sign
            if cell[1] == 0:
                del inner[v]
                del weights[key][v]
                if not inner:
                    del totals[key]
                    del weights[key]
            else:
                weights[key][v] = cell[0]

    def update(
        self,
        nodes: Sequence[NodeInfo],
        share_of: Callable[[NodeInfo], tuple[tuple[str, str, int], ...]],
        index: PodIndex | None = None,
    ) -> None:
        """As _Table.update."""
        shares = self.shares
        changed = _changed_infos(self.serial, index)
        self.serial = index.serial if index is not None else -1
        if changed is not None:
            for name, ni in changed:
                e = shares.pop(name, None)
                if e is not None:
                    self._apply(e[1], -1)
                if ni is not None:
                    new = share_of(ni)
                    if new:
                        self._apply(new, 1)
                        shares[name] = (ni.generation, new)
            return
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
        return clone_counts(self.weights)


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
        index: PodIndex | None = None,
    ) -> TopologyCounts:
        """compute_topology_score kept across cycles; an ``index`` synced to the whole node
        list answers keys seldom seen or with few candidates."""
        meta = incoming.metadata
        key = (meta.namespace, tuple(sorted(meta.labels.items())),
               tuple(sorted(ns_labels.items())), tuple(preferred_affinity),
               tuple(preferred_anti_affinity), hard_pod_affinity_weight, all_pods)
        tables = self._tables
        if not all_pods and (preferred_affinity or preferred_anti_affinity):
            index = None  # the index assumes every pod is looked at when these are given
        if key not in tables and (
            self._seen.first_sight(key)
            or (
                index is not None
                and _index_is_cheaper(
                    index.score_candidate_count(preferred_affinity, preferred_anti_affinity),
                    nodes,
                )
            )
        ):
            if index is not None:
                return index.topology_score(
                    incoming, preferred_affinity, preferred_anti_affinity, ns_labels,
                    hard_pod_affinity_weight,
                )
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

        t.update(nodes, share, index)
        return t.scores()
