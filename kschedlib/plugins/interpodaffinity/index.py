"""Existing pods and their affinity terms indexed by label, kept up to date across cycles.

A cycle's PreFilter/PreScore counts need only the existing pods an incoming term selects and
the existing terms that select the incoming pod. The index keeps, per ``(label key, value)``,
the pods carrying that label and the existing terms whose selector requires it (its first
``In`` requirement), so a query looks at the candidates only and checks each one in full: the
counts equal a scan over every pod. It follows the node list by NodeInfo generation: only
nodes whose generation changed are re-read (named by the snapshot's change log when it can
tell, else found by a C-level comparison of the generation lists), what they held before is
dropped and what they hold now is added. For the topology keys Filter asked about, it also
keeps which nodes carry each value, so that the nodes a cycle's counts reject come out
without a look at every node.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kschedlib.api.pod import Pod
from kschedlib.api.selectors import NOTHING, Selector
from kschedlib.framework.types import AffinityTerm, NodeInfo, WeightedAffinityTerm
from kschedlib.plugins.interpodaffinity.scoring import _process_term
from kschedlib.plugins.interpodaffinity.terms import NO_LABELS, TopologyCounts, add_count

PodRec = tuple[Pod, str]
"""An existing pod and its node's name."""

TermRec = tuple[AffinityTerm, str]
"""An existing pod's required anti-affinity term and its node's name."""

ScoreRec = tuple[
    tuple[AffinityTerm, ...],
    tuple[WeightedAffinityTerm, ...],
    tuple[WeightedAffinityTerm, ...],
    str,
]
"""An existing pod's required affinity, preferred affinity and preferred anti-affinity terms
and its node's name (pods with affinity having at least one of them)."""

_Reg = tuple[dict[int, Any], int]

LOG_SIZE = 64
"""How many syncs' changes are remembered for the counters' tables."""

MAX_TRACKED_KEYS = 8
"""How many topology keys the index keeps the nodes per value of."""


def _index_key(selector: object) -> tuple[str, frozenset[str]] | None:
    """The first ``In`` requirement of a selector: every pod it matches has one of these
    values for this key."""
    if type(selector) is Selector:
        for key, op, values in selector.requirements:
            if op == "In":
                return key, values
    return None


_NOTHING_TYPE = type(NOTHING)


def _never_matches(selector: object) -> bool:
    return type(selector) is _NOTHING_TYPE


_CHUNK = 128


def _differing(a: list[int], b: list[int], out: list[int]) -> None:
    """Append the positions where equal-length ``a`` and ``b`` differ, comparing chunks
    first (slice comparisons run in C: with few changes, little runs in Python)."""
    n = len(a)
    for lo in range(0, n, _CHUNK):
        hi = lo + _CHUNK
        if a[lo:hi] != b[lo:hi]:
            out.extend(i for i in range(lo, min(hi, n)) if a[i] != b[i])


class PodIndex:
    """Pods, required anti-affinity terms and scoring terms of existing pods, by label."""

    __slots__ = (
        "_gens",
        "_ids",
        "_names",
        "_log",
        "_regs",
        "_seen",
        "_snapshot",
        "_source",
        "key_nodes",
        "nodes_by_value",
        "relabel_serial",
        "single_node",
        "anti_by_label",
        "anti_unindexed",
        "node_labels",
        "pods",
        "pods_by_label",
        "infos",
        "scoring",
        "serial",
    )

    def __init__(self) -> None:
        self._gens: list[int] = []
        self._names: list[str] = []
        self._regs: dict[str, tuple[int, list[_Reg]]] = {}
        self._ids = itertools.count()
        self.node_labels: dict[str, Mapping[str, str]] = {}
        self.pods: dict[int, PodRec] = {}
        self.pods_by_label: dict[tuple[str, str], dict[int, PodRec]] = {}
        self.anti_by_label: dict[tuple[str, str], dict[int, TermRec]] = {}
        self.anti_unindexed: dict[int, TermRec] = {}
        self.scoring: dict[int, ScoreRec] = {}
        self.infos: dict[str, NodeInfo] = {}
        """The NodeInfo read per node name (nodes without a node object left out)."""
        self.serial = 0
        """How many syncs changed something."""
        self.relabel_serial = 0
        """The last sync that changed a node's labels, or added or removed a node."""
        self._log: deque[tuple[int, list[str]]] = deque(maxlen=LOG_SIZE)
        # The snapshot, its node list and its generation at the last sync (change log use).
        self._snapshot: Any = None
        self._source: Sequence[NodeInfo] | None = None
        self._seen = 0
        self.nodes_by_value: dict[str, dict[str, dict[str, None]]] = {}
        """Per tracked topology key: value -> the names of the nodes with that label."""
        self.single_node: dict[str, dict[str, str]] = {}
        """Per tracked topology key: value -> its node, for the values only one node has."""
        self.key_nodes: dict[str, int] = {}
        """Per tracked topology key: how many indexed nodes have it."""

    # --- keeping up with the node list ---

    def sync(self, nodes: Sequence[NodeInfo], snapshot: Any = None) -> None:
        """Bring the index in line with ``nodes`` (what a scan of them would see).
        ``snapshot``, the lister ``nodes`` comes from, names the changed nodes through its
        change log (``changed_since``) when it can tell, else every generation is compared."""
        if (
            snapshot is not None
            and snapshot is self._snapshot
            and nodes is self._source
            and self._sync_from_log(nodes, snapshot)
        ):
            return
        self._sync_all(nodes)
        changed_since = getattr(snapshot, "changed_since", None)
        if changed_since is not None and snapshot.list() is nodes:
            self._snapshot, self._source = snapshot, nodes
            self._seen = snapshot.generation
        else:
            self._snapshot = self._source = None

    def _sync_from_log(self, nodes: Sequence[NodeInfo], snapshot: Any) -> bool:
        """sync through the snapshot's change log; False (nothing done) when it cannot tell:
        another node list, a log that does not reach back, a node not where it was."""
        if snapshot.list() is not nodes:
            return False
        names = snapshot.changed_since(self._seen)
        if names is None:
            return False
        gens = self._gens
        if len(gens) != len(nodes):
            return False
        pos = snapshot.positions
        regs = self._regs
        found: list[tuple[int, NodeInfo]] = []
        for name in set(names):
            i = pos.get(name)
            if i is None or i >= len(nodes):
                return False
            ni = nodes[i]
            if ni.name != name or self._names[i] != name:
                return False
            found.append((i, ni))
        touched: list[str] = []
        relabeled = False
        for i, ni in found:
            gen = ni.generation
            gens[i] = gen
            e = regs.get(ni.name)
            if e is None or e[0] != gen:
                relabeled |= self._reread(ni)
                touched.append(ni.name)
        self._seen = snapshot.generation
        if touched:
            self._logged(touched, relabeled)
        return True

    def _reread(self, ni: NodeInfo) -> bool:
        """Drop what the index held for the node and add what it holds now; whether its
        labels changed (or it came)."""
        name = ni.name
        old = self.node_labels.get(name)
        self._drop(name)
        self._add(ni)
        new = self.node_labels.get(name)
        return old is not new and old != new

    def _logged(self, touched: list[str], relabeled: bool) -> None:
        self.serial += 1
        self._log.append((self.serial, touched))
        if relabeled:
            self.relabel_serial = self.serial

    def _sync_all(self, nodes: Sequence[NodeInfo]) -> None:
        """sync by comparing every node's generation with the last sync's."""
        gens = [ni.generation for ni in nodes]
        prev = self._gens
        if gens == prev:
            return
        names = self._names
        changed: list[int] = []
        if len(gens) != len(prev):
            changed.extend(range(len(gens)))
            moved = True
        else:
            _differing(gens, prev, changed)
            moved = False
        regs = self._regs
        touched: list[str] = []
        relabeled = False
        for i in changed:
            ni = nodes[i]
            name = ni.name
            if not moved and names[i] != name:
                moved = True
            e = regs.get(name)
            if e is None or e[0] != ni.generation:
                relabeled |= self._reread(ni)
                touched.append(name)
        self._gens = gens
        if moved:
            self._names = [ni.name for ni in nodes]
            present = set(self._names)
            for name in [n for n in regs if n not in present]:
                self._drop(name)
                touched.append(name)
                relabeled = True
        self._logged(touched, relabeled)

    def changes_since(self, serial: int) -> set[str] | None:
        """The names of the nodes re-read (or gone) since sync number ``serial``; None when
        that is too long ago to tell."""
        if serial == self.serial:
            return set()
        log = self._log
        if not log or log[0][0] > serial + 1:
            return None
        out: set[str] = set()
        for s, names in log:
            if s > serial:
                out.update(names)
        return out

    def _drop(self, name: str) -> None:
        e = self._regs.pop(name, None)
        if e is None:
            return
        for d, i in e[1]:
            del d[i]
        labels = self.node_labels.pop(name, None)
        self.infos.pop(name, None)
        if labels is not None and self.nodes_by_value:
            for key, by_value in self.nodes_by_value.items():
                v = labels.get(key)
                if v is not None:
                    self._untrack(key, by_value, v, name)

    def _add(self, ni: NodeInfo) -> None:
        name = ni.name
        regs: list[_Reg] = []
        node = ni.node
        # Several NodeInfos without a node may share the name "": they hold nothing here.
        self._regs[name] = (ni.generation, regs)
        if node is None:
            return
        labels = node.metadata.labels
        self.node_labels[name] = labels
        self.infos[name] = ni
        if self.nodes_by_value:
            for key, by_value in self.nodes_by_value.items():
                v = labels.get(key)
                if v is not None:
                    self._track(key, by_value, v, name)
        ids = self._ids
        pods = self.pods
        by_label = self.pods_by_label
        for pi in ni.pods:
            p = pi.pod
            rec = (p, name)
            i = next(ids)
            pods[i] = rec
            regs.append((pods, i))
            for kv in p.metadata.labels.items():
                d = by_label.get(kv)
                if d is None:
                    d = by_label[kv] = {}
                d[i] = rec
                regs.append((d, i))
        for pi in ni.pods_with_required_anti_affinity:
            for t in pi.required_anti_affinity_terms:
                if _never_matches(t.selector):
                    continue
                trec = (t, name)
                i = next(ids)
                ik = _index_key(t.selector)
                if ik is None:
                    self.anti_unindexed[i] = trec
                    regs.append((self.anti_unindexed, i))
                    continue
                key, values = ik
                for v in values:
                    td = self.anti_by_label.get((key, v))
                    if td is None:
                        td = self.anti_by_label[(key, v)] = {}
                    td[i] = trec
                    regs.append((td, i))
        for pi in ni.pods_with_affinity:
            if pi.required_affinity_terms or pi.preferred_affinity_terms or (
                pi.preferred_anti_affinity_terms
            ):
                i = next(ids)
                self.scoring[i] = (
                    pi.required_affinity_terms,
                    pi.preferred_affinity_terms,
                    pi.preferred_anti_affinity_terms,
                    name,
                )
                regs.append((self.scoring, i))

    def _track(self, key: str, by_value: dict[str, dict[str, None]], v: str, name: str) -> None:
        d = by_value.get(v)
        single = self.single_node[key]
        self.key_nodes[key] += 1
        if d is None:
            by_value[v] = {name: None}
            single[v] = name
        else:
            d[name] = None
            single.pop(v, None)

    def _untrack(self, key: str, by_value: dict[str, dict[str, None]], v: str, name: str) -> None:
        d = by_value[v]
        del d[name]
        single = self.single_node[key]
        self.key_nodes[key] -= 1
        if not d:
            del by_value[v]
            del single[v]
        elif len(d) == 1:
            single[v] = next(iter(d))

    def track_key(self, key: str) -> dict[str, dict[str, None]] | None:
        """value -> the names of the indexed nodes with that ``key`` label, kept up to date
        from now on; None beyond MAX_TRACKED_KEYS keys."""
        by_value = self.nodes_by_value.get(key)
        if by_value is None:
            if len(self.nodes_by_value) >= MAX_TRACKED_KEYS:
                return None
            by_value = self.nodes_by_value[key] = {}
            self.single_node[key] = {}
            self.key_nodes[key] = 0
            for name, labels in self.node_labels.items():
                v = labels.get(key)
                if v is not None:
                    self._track(key, by_value, v, name)
        return by_value

    # --- queries ---

    def candidates(self, selector: object) -> Iterable[PodRec]:
        """Pods that may match ``selector``: all the pods it matches (and maybe others)."""
        if _never_matches(selector):
            return ()
        ik = _index_key(selector)
        if ik is None:
            return self.pods.values()
        key, values = ik
        by_label = self.pods_by_label
        if len(values) == 1:
            for v in values:
                d = by_label.get((key, v))
                return d.values() if d is not None else ()
        return itertools.chain.from_iterable(
            d.values() for v in values if (d := by_label.get((key, v))) is not None
        )

    def candidate_count(self, selector: object) -> int:
        """An upper bound of len(candidates(selector)), cheap to get."""
        if _never_matches(selector):
            return 0
        ik = _index_key(selector)
        if ik is None:
            return len(self.pods)
        key, values = ik
        by_label = self.pods_by_label
        return sum(len(d) for v in values if (d := by_label.get((key, v))) is not None)

    def anti_candidate_count(self, pod: Pod) -> int:
        """How many existing required anti-affinity terms a query for ``pod`` checks."""
        by_label = self.anti_by_label
        n = len(self.anti_unindexed)
        for kv in pod.metadata.labels.items():
            d = by_label.get(kv)
            if d:
                n += len(d)
        return n

    def terms_candidate_count(
        self, affinity_terms: Sequence[AffinityTerm], anti_affinity_terms: Sequence[AffinityTerm]
    ) -> int:
        """How many pods incoming_counts checks (at most)."""
        n = min((self.candidate_count(t.selector) for t in affinity_terms), default=0)
        return n + sum(self.candidate_count(t.selector) for t in anti_affinity_terms)

    def score_candidate_count(
        self,
        preferred_affinity: Sequence[WeightedAffinityTerm],
        preferred_anti_affinity: Sequence[WeightedAffinityTerm],
    ) -> int:
        """How many pods and scoring pods topology_score checks (at most)."""
        n = len(self.scoring)
        for terms in (preferred_affinity, preferred_anti_affinity):
            n += sum(self.candidate_count(w.term.selector) for w in terms)
        return n

    def existing_anti_affinity_counts(
        self, pod: Pod, ns_labels: Mapping[str, str]
    ) -> TopologyCounts:
        """filtering.existing_anti_affinity_counts over every indexed node."""
        counts: TopologyCounts = {}
        node_labels = self.node_labels
        by_label = self.anti_by_label
        groups: list[Iterable[TermRec]] = [self.anti_unindexed.values()]
        for kv in pod.metadata.labels.items():
            d = by_label.get(kv)
            if d:
                groups.append(d.values())
        for group in groups:
            for t, name in group:
                if t.matches(pod, ns_labels):
                    key = t.topology_key
                    v = node_labels[name].get(key)
                    if v is not None:
                        add_count(counts, key, v, 1)
        return counts

    def incoming_counts(
        self, affinity_terms: Sequence[AffinityTerm], anti_affinity_terms: Sequence[AffinityTerm]
    ) -> tuple[TopologyCounts, TopologyCounts]:
        """filtering.incoming_affinity_anti_affinity_counts over every indexed node."""
        affinity: TopologyCounts = {}
        anti: TopologyCounts = {}
        node_labels = self.node_labels
        if affinity_terms:
            best = min(affinity_terms, key=lambda t: self.candidate_count(t.selector))
            compiled = [
                (bool(t.namespace_selector.matches(NO_LABELS)), t.namespaces, t.selector)  # type: ignore[attr-defined]
                for t in affinity_terms
            ]
            keys = [t.topology_key for t in affinity_terms]
            for p, name in self.candidates(best.selector):
                meta = p.metadata
                ns = meta.namespace
                pod_labels = meta.labels
                for all_ns, namespaces, selector in compiled:
                    if not ((all_ns or ns in namespaces) and selector.matches(pod_labels)):  # type: ignore[attr-defined]
                        break
                else:
                    labels = node_labels[name]
                    for key in keys:
                        v = labels.get(key)
                        if v is not None:
                            add_count(affinity, key, v, 1)
        for t in anti_affinity_terms:
            all_ns = bool(t.namespace_selector.matches(NO_LABELS))  # type: ignore[attr-defined]
            namespaces = t.namespaces
            selector = t.selector
            key = t.topology_key
            for p, name in self.candidates(selector):
                meta = p.metadata
                if (all_ns or meta.namespace in namespaces) and selector.matches(meta.labels):  # type: ignore[attr-defined]
                    v = node_labels[name].get(key)
                    if v is not None:
                        add_count(anti, key, v, 1)
        return affinity, anti

    def topology_score(
        self,
        incoming: Pod,
        preferred_affinity: Sequence[WeightedAffinityTerm],
        preferred_anti_affinity: Sequence[WeightedAffinityTerm],
        ns_labels: Mapping[str, str],
        hard_pod_affinity_weight: int,
    ) -> TopologyCounts:
        """scoring.compute_topology_score over every indexed node (``all_pods`` is implied:
        pods without terms of their own add only through the incoming pod's terms)."""
        scores: TopologyCounts = {}
        node_labels = self.node_labels
        for weighted, multiplier in ((preferred_affinity, 1), (preferred_anti_affinity, -1)):
            for w in weighted:
                term = w.term
                weight = w.weight * multiplier
                for p, name in self.candidates(term.selector):
                    labels = node_labels[name]
                    if labels:
                        _process_term(scores, term, weight, p, NO_LABELS, labels)
        hard = hard_pod_affinity_weight > 0
        for required, pref, pref_anti, name in self.scoring.values():
            if not (pref or pref_anti or (hard and required)):
                continue
            labels = node_labels[name]
            if not labels:
                continue
            if hard:
                for t in required:
                    _process_term(scores, t, hard_pod_affinity_weight, incoming, ns_labels, labels)
            for w in pref:
                _process_term(scores, w.term, w.weight, incoming, ns_labels, labels)
            for w in pref_anti:
                _process_term(scores, w.term, -w.weight, incoming, ns_labels, labels)
        return scores
