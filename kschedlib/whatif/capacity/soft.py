"""Scores of soft rules kept from replica to replica: PodTopologySpread's ScheduleAnyway
constraints (the pod's own or the system defaults) and InterPodAffinity's preferred terms.

Their raw score on a node depends on a few things of the node (its topology values, its own
matching pods for hostname constraints, its InterPodAffinity weight for keys whose values
are (nearly) unique per node) and on quantities shared by all nodes (matching pods per
topology value, the summed weights per topology pair, and each constraint's weight, which
depends on the window's domains). So each position gets a small id, the *soft key*, for
what it reads of its node; nodes with equal keys get equal raw scores and, since both
normalizations depend only on the set of raw scores in the window (PodTopologySpread: the
lowest and highest not ignored, InterPodAffinity: the lowest and highest), equal normalized
scores. A replica's window is then scored per distinct key present, not per node: the
matching pods per topology value are counted once and each placed replica added where it
counts, InterPodAffinity's weights are the carried PreScore state
(``window.AffinityScores``), and a position's key is recomputed only when its node changed
or a placed replica changed one of its per-node weights. ``keyed`` goes one step further:
with the node-local total (and raw scores of value-wise normalized node-local plugins) in
the key, the node is chosen per distinct key of the window."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import repeat
from operator import add, attrgetter, is_, is_not, or_
from typing import Any

from kschedlib.api.pod import Pod
from kschedlib.framework.interface import MAX_NODE_SCORE, MIN_NODE_SCORE
from kschedlib.framework.types import PodInfo
from kschedlib.plugins.nodeaffinity.node_affinity import RequiredNodeAffinity
from kschedlib.plugins.podtopologyspread.common import (
    HONOR,
    LABEL_HOSTNAME,
    SpreadConstraint,
    count_pods_match_selector,
)
from kschedlib.plugins.podtopologyspread.scoring import go_round, topology_normalizing_weight
from kschedlib.whatif.capacity.common import SMALL

_MAX_INT64 = (1 << 63) - 1
LocalColumn = tuple[list[int], Callable[[list[int]], "list[int] | None"], int]
"""A normalized node-local plugin's raw scores per position, its NormalizeScore over a list of
raw scores (None: an error), and its weight."""
_node_of = attrgetter("node")


class SpreadTerms:
    """PodTopologySpread's ScheduleAnyway constraints of the replicas and, per constraint,
    the matching pods per topology value over all nodes (what PreScore's count_domains adds
    up, as ``counting.node_share`` shares them out) and, for hostname constraints, each
    node's own matching pods (what Score counts). Counted once, then kept up to date with
    each placed replica (``placed``): a replica matches a constraint's selector or not
    (replicas share labels and namespace) and counts where the node does."""

    __slots__ = (
        "constraints", "require_all", "keys", "host", "skews", "totals", "memo", "rounded",
        "values", "included", "own", "ignored", "adds", "seen", "counts", "uses", "pod",
        "required", "trivial", "ns", "selectors",
    )

    def __init__(
        self, constraints: tuple[SpreadConstraint, ...], require_all: bool, pod: Pod,
        nodes: list[Any], labels: Any,
    ) -> None:
        self.constraints = constraints
        self.require_all = require_all
        self.keys = tuple(c.topology_key for c in constraints)
        self.host = tuple(k == LABEL_HOSTNAME for k in self.keys)
        self.skews = tuple(float(c.max_skew - 1) for c in constraints)
        self.memo: dict[int, float] = {}
        """A constraint's weight per number of domains."""
        self.rounded: dict[float, int] = {}
        """go_round's result per summed score."""
        self.seen: dict[frozenset[int], Any] = {}
        """Per set of spread parts of a window: the ignored ones, the counted ones and each
        constraint's number of domains among them (parts never change: ids are kept)."""
        ns = self.ns = pod.metadata.namespace
        required = self.required = RequiredNodeAffinity.of(pod)
        self.pod = pod
        replica = (PodInfo.of(pod),)
        self.adds = tuple(count_pods_match_selector(replica, c.selector, ns) for c in constraints)
        """What a placed replica adds to each constraint's matching pods (0 or 1)."""
        n = len(nodes)
        self.values: list[list[str | None]] = [labels.get(key) for key in self.keys]
        """Per constraint, each position's value of its key (None: no such label)."""
        # Nodes missing a key are left out (of counts and scores) when every key is required.
        ignored = [False] * n
        if require_all:
            for col in self.values:
                ignored = list(map(or_, ignored, map(is_, col, repeat(None))))
        self.ignored = ignored
        self.counts: list[list[int]] = []
        """Per distinct selector, each position's matching pods."""
        self.uses: list[int] = []
        """Per constraint, the index of its selector's counts."""
        self.selectors: list[Any] = []
        """The distinct selectors, in the order of ``counts``."""
        by_selector: dict[Any, int] = {}
        self.included: list[list[bool]] = []
        """Per constraint, whether each position counts into its topology value."""
        self.own: list[list[int] | None] = []
        """Per hostname constraint, each position's own matching pods (its selector's
        counts; None otherwise)."""
        self.totals: list[dict[str, int]] = []
        self.trivial: list[bool] = []
        """Per constraint, whether ``included`` depends only on ``ignored``."""
        counted = [not x for x in ignored]  # (shared by the constraints it is enough for)
        for c, col, host in zip(constraints, self.values, self.host, strict=True):
            trivial = (
                c.node_affinity_policy != HONOR
                or (required.label_selector is None and required.node_selector is None)
            ) and c.node_taints_policy != HONOR
            self.trivial.append(trivial)
            if trivial:
                included = counted
            else:
                included = [
                    not skip and c.match_node_inclusion_policies(pod, ni.node, required)
                    for ni, skip in zip(nodes, ignored, strict=True)
                ]
            self.included.append(included)
            at = by_selector.get(c.selector)
            if at is None:
                at = by_selector[c.selector] = len(self.counts)
                self.selectors.append(c.selector)
                self.counts.append(
                    [count_pods_match_selector(ni.pods, c.selector, ns) for ni in nodes]
                )
            self.uses.append(at)
            found = self.counts[at]
            self.own.append(found if host else None)
            totals: dict[str, int] = {}
            for value, cnt, inc in zip(col, found, included, strict=True):
                if cnt and inc:
                    v = "" if value is None else value
                    totals[v] = totals.get(v, 0) + cnt
            self.totals.append(totals)

    def placed(self, p: int) -> None:
        """A replica was placed on the node at position ``p``."""
        bumped: set[int] = set()
        for i, one in enumerate(self.adds):
            if not one:
                continue
            at = self.uses[i]
            if at not in bumped:
                bumped.add(at)
                self.counts[at][p] += one
            if self.included[i][p]:
                value = self.values[i][p]
                v = "" if value is None else value
                totals = self.totals[i]
                totals[v] = totals.get(v, 0) + one

    def _take(self, p: int, sign: int) -> None:
        """Take position ``p``'s matching pods out of the totals (``sign`` -1) or put them
        back in (+1)."""
        for i, totals in enumerate(self.totals):
            if not self.included[i][p]:
                continue
            cnt = self.counts[self.uses[i]][p]
            if cnt:
                value = self.values[i][p]
                v = "" if value is None else value
                totals[v] = totals.get(v, 0) + sign * cnt

    def follow(self, pick: Callable[[list[Any]], Any], removed: Iterable[int]) -> None:
        """The node list lost the nodes at ``removed`` (old positions): their pods leave
        the totals, and every column follows its node (``pick`` takes the survivors in
        their new order from an old column). The value columns are the label columns'
        lists, which the caller picks (``values`` is then set by ``relabel``)."""
        for r in removed:
            self._take(r, -1)
        self.ignored = list(pick(self.ignored))
        picked: dict[int, list[bool]] = {}  # (a list shared by constraints stays shared)
        for col in self.included:
            if id(col) not in picked:
                picked[id(col)] = list(pick(col))
        self.included = [picked[id(col)] for col in self.included]
        self.counts = [list(pick(col)) for col in self.counts]
        self.own = [
            self.counts[at] if host else None
            for at, host in zip(self.uses, self.host, strict=True)
        ]

    def relabel(self, labels: Any) -> None:
        """Take the value columns from ``labels`` (after ``follow``)."""
        self.values = [labels.get(key) for key in self.keys]

    def recount(self, p: int, ni: Any) -> None:
        """The node at position ``p`` changed otherwise than by a replica of this loop
        (its labels did not: the caller checked): recount its matching pods and, where
        the inclusion policies read the node, whether it counts."""
        self._take(p, -1)
        ns = self.ns
        for counts, sel in zip(self.counts, self.selectors, strict=True):
            counts[p] = count_pods_match_selector(ni.pods, sel, ns)
        for i, c in enumerate(self.constraints):
            if not self.trivial[i]:
                self.included[i][p] = not self.ignored[p] and c.match_node_inclusion_policies(
                    self.pod, ni.node, self.required
                )
        self._take(p, 1)

    def part(self, p: int) -> tuple[bool, tuple[Any, ...]]:
        """What score_node reads of the node at position ``p``: whether it is ignored (a
        topology key missing while every key is required), and per constraint the node's
        value, or for hostname constraints its own matching pods (None: no such label)."""
        if self.ignored[p]:
            return (True, ())
        return (False, tuple(
            col[p] if own is None or col[p] is None else own[p]
            for col, own in zip(self.values, self.own, strict=True)
        ))

    def parts(self) -> list[tuple[bool, tuple[Any, ...]]]:
        """``part`` of every position."""
        cols = [
            col if own is None else [None if v is None else c for v, c in zip(col, own, strict=True)]
            for col, own in zip(self.values, self.own, strict=True)
        ]
        ignored_part = (True, ())
        return [
            ignored_part if skip else (False, vals)
            for skip, vals in zip(self.ignored, zip(*cols, strict=True), strict=True)
        ]

    def normalized(
        self, parts: dict[int, tuple[bool, tuple[Any, ...]]], ignored_nodes: Any, k: int
    ) -> dict[int, int]:
        """Per spread part of the window (``k`` nodes, ``ignored_nodes()`` of them ignored):
        PodTopologySpread's Score then NormalizeScore, as PreScore on the window sets them
        up (each constraint weighted by its number of domains in the window)."""
        seen = self.seen
        ids = frozenset(parts)
        got = seen.get(ids)
        if got is None:
            if len(seen) > _MAX_SEEN:
                seen.clear()
            ign = [i for i, part in parts.items() if part[0]]
            cnt = [(i, part[1]) for i, part in parts.items() if not part[0]]
            # A node without the key counts in the domain "" (only when keys are not all
            # required: otherwise it is ignored).
            domains = tuple(
                0 if host else len({"" if vals[ci] is None else vals[ci] for _i, vals in cnt})
                for ci, host in enumerate(self.host)
            )
            got = seen[ids] = (ign, cnt, domains)
        ignored, counted, domains = got
        memo = self.memo
        plan = []
        for host, skew, totals, size in zip(self.host, self.skews, self.totals, domains, strict=True):
            if host:
                size = k - (ignored_nodes() if ignored else 0)
            w = memo.get(size)
            if w is None:
                w = memo[size] = topology_normalizing_weight(size)
            plan.append((host, w, skew, totals))
        rounded = self.rounded
        if len(rounded) > _MAX_ROUNDED:
            rounded.clear()
        raws: dict[int, int] = {}
        for i, vals in counted:
            score = 0.0
            for v, (host, w, skew, totals) in zip(vals, plan, strict=True):
                if v is None:
                    continue
                score += (v if host else totals.get(v, 0)) * w + skew
            r = rounded.get(score)
            if r is None:
                r = rounded[score] = int(go_round(score))
            raws[i] = r
        # normalize_scores: the lowest counted score gets 100, the highest in proportion.
        out = dict.fromkeys(ignored, 0)
        if not raws:
            return out
        min_score = min(raws.values())
        max_score = max(0, max(raws.values()))
        if max_score == 0:
            out.update(dict.fromkeys(raws, MAX_NODE_SCORE))
            return out
        top = max_score + min_score
        for i, r in raws.items():
            out[i] = MAX_NODE_SCORE * (top - r) // max_score
        return out


_MAX_ROUNDED = 4096
_MAX_SEEN = 1024
_BYTE_KEYS = 256
"""While there are at most this many combined keys, each position's is one byte."""


def _intern(parts: Any) -> tuple[dict[Any, int], list[Any], list[int]]:
    """Small ids for the distinct parts (in first-seen order), the parts by id, and each
    part's id."""
    parts = list(parts)
    ids = {part: i for i, part in enumerate(dict.fromkeys(parts))}
    return ids, list(ids), list(map(ids.__getitem__, parts))


class SoftScores:
    """The soft keys of every position and the state their scores are worked out from (see
    the module docstring). ``spread`` is set from PodTopologySpread's ScheduleAnyway
    constraints once read (they are the same for every replica); the InterPodAffinity part
    follows the carried state ``affinity.scores``. A soft key is a pair of a spread part
    and an affinity part, each with its own small id."""

    def __init__(self, nodes: list[Any]) -> None:
        self.nodes = nodes
        self.supported = not any(map(is_, map(_node_of, nodes), repeat(None)))
        self.spread: SpreadTerms | None = None
        self.spread_skips = False
        """PodTopologySpread's PreScore skipped (it does for every replica)."""
        self.aff_scores: dict[str, dict[str, int]] | None = None
        self.coarse: tuple[str, ...] = ()
        """The InterPodAffinity keys with few values: a node's values of these are kept in
        its affinity part; the weights of the other (fine) keys, summed, are kept instead."""
        self.fine: dict[str, dict[str, list[int]]] = {}
        """Per fine key: value -> positions holding it."""
        self.nkeys = 0
        self.built: tuple[Any, ...] | None = None
        """What the soft keys were built for: the spread terms and the affinity weights."""
        self.col: list[int] = []
        self.ids: dict[tuple[int, int], int] = {}
        self.pairs: list[tuple[int, int]] = []
        self.sids: dict[Any, int] = {}
        self.sparts: list[Any] = []
        self.aids: dict[Any, int] = {}
        self.aparts: list[Any] = []
        self.dirty: set[int] | None = None
        """Positions whose soft key must be recomputed (None: all)."""
        self.ccol: bytearray | list[int] = bytearray()
        self.cids: dict[tuple[int, tuple[int, ...], int], int] = {}
        self.cpairs: list[tuple[int, tuple[int, ...], int]] = []
        self.cdirty: set[int] | None = None
        """Positions whose combined key (local total, soft key) must be recomputed."""
        self.local_cols: tuple[list[int], ...] = ()
        """The normalized node-local columns the combined keys were built with."""

    def follow(
        self, nodes: list[Any], pick: Callable[[Any], Any], follow_set: Callable[[set[int]], set[int]],
        columns: dict[int, list[int]], labels: Any,
    ) -> bool:
        """The node list lost some nodes (``pick`` takes an old column's survivors in their
        new order, ``follow_set`` maps a set of old positions): every position's key
        follows its node. ``columns`` maps the old node-local columns (by id) to the new
        ones. False when these keys cannot follow (per-node affinity weights are kept by
        position): the caller starts them over."""
        if self.fine or not self.supported:
            return False
        self.nodes = nodes
        if self.spread is not None:
            self.spread.relabel(labels)
        self.col = list(pick(self.col))
        if self.dirty is not None:
            self.dirty = follow_set(self.dirty)
        ccol = self.ccol
        if len(ccol):
            self.ccol = bytearray(pick(ccol)) if type(ccol) is bytearray else list(pick(ccol))
        if self.cdirty is not None:
            self.cdirty = follow_set(self.cdirty)
        cols = tuple(columns.get(id(c)) for c in self.local_cols)
        if any(c is None for c in cols):
            self.local_cols, self.cdirty = (), None
        else:
            self.local_cols = cols  # type: ignore[assignment]
        return True

    def rescored(self, positions: Any) -> None:
        """The node-local totals of these positions were recomputed."""
        if self.cdirty is not None:
            self.cdirty.update(positions)

    def changed(self, positions: Any) -> None:
        """The nodes at these positions changed (the cache said so): their keys are
        recomputed. (In the replica loop a node changes only by a replica placed on it,
        which ``placed_on`` counts, or on the ordinary path, after which the loop starts
        over with new soft scores.)"""
        if self.dirty is not None:
            self.dirty.update(positions)

    def placed_on(self, p: int, affinity: bool) -> None:
        """A replica was placed on position ``p`` (and ``affinity``: InterPodAffinity's
        carried weights took it): the spread counts take it, and the positions sharing its
        fine pairs read new weights."""
        if self.spread is not None:
            self.spread.placed(p)
        dirty = self.dirty
        if dirty is None:
            return
        dirty.add(p)
        if not affinity or not self.fine:
            return
        labels = self.nodes[p].node.metadata.labels
        for key, by_value in self.fine.items():
            v = labels.get(key)
            if v is not None:
                dirty.update(by_value.get(v, ()))

    def _build(self, aff: dict[str, dict[str, int]] | None, labels: Any) -> None:
        """Start over: new soft keys for every position (built column by column)."""
        self.aff_scores = aff
        coarse: list[str] = []
        self.fine = {}
        n = len(self.nodes)
        fine_sum: list[int] = [0] * n
        for key in aff or ():
            col = labels.get(key)
            if key != LABEL_HOSTNAME and len(set(col)) <= SMALL:
                coarse.append(key)
                continue
            by_value: dict[str, list[int]] = {}
            for p, v in enumerate(col):
                if v is not None:
                    by_value.setdefault(v, []).append(p)
            self.fine[key] = by_value
            assert aff is not None
            # A node without the key reads None, never a key of the weights.
            fine_sum = list(map(add, fine_sum, map(aff[key].get, col, repeat(0))))
        self.coarse = tuple(coarse)
        self.nkeys = 0 if aff is None else len(aff)
        self.built = (self.spread, aff)
        sp = self.spread
        if sp is not None:
            sp.seen.clear()  # the spread parts get new ids
        spread_parts: Any = repeat(None, n) if sp is None else sp.parts()
        aff_parts: Any = (
            repeat(None, n) if aff is None
            else fine_sum if not coarse
            else list(zip(fine_sum, *map(labels.get, coarse), strict=True))
        )
        self.sids, self.sparts, scol = _intern(spread_parts)
        self.aids, self.aparts, acol = _intern(aff_parts)
        self.ids, self.pairs, self.col = _intern(zip(scol, acol, strict=True))
        self.dirty = set()
        self.cdirty = None

    def _affinity_part(self, p: int) -> Any:
        """The summed weights of the node's fine pairs, then its values of the coarse keys."""
        aff = self.aff_scores
        if aff is None:
            return None
        labels = self.nodes[p].node.metadata.labels
        fine = 0
        for key in self.fine:
            v = labels.get(key)
            if v is not None:
                fine += aff[key].get(v, 0)
        if not self.coarse:
            return fine
        return (fine, *map(labels.get, self.coarse))

    def refresh(self, aff: dict[str, dict[str, int]] | None, labels: Any) -> None:
        """Bring every position's soft key up to date (``aff``: InterPodAffinity's carried
        weights when it scores through this path, else None)."""
        built = self.built
        if (
            built is None
            or aff is not built[1]
            or built[0] is not self.spread
            or (aff is not None and len(aff) != self.nkeys)
        ):
            self._build(aff, labels)
        dirty = self.dirty
        if not dirty:
            return
        col, ids, pairs = self.col, self.ids, self.pairs
        sids, sparts, aids, aparts = self.sids, self.sparts, self.aids, self.aparts
        sp = self.spread
        spread_part = None if sp is None else sp.part
        affinity_part = self._affinity_part
        for p in dirty:
            part = None if spread_part is None else spread_part(p)
            s = sids.get(part)
            if s is None:
                s = sids[part] = len(sparts)
                sparts.append(part)
            part = affinity_part(p)
            a = aids.get(part)
            if a is None:
                a = aids[part] = len(aparts)
                aparts.append(part)
            pair = (s, a)
            i = ids.get(pair)
            if i is None:
                i = ids[pair] = len(pairs)
                pairs.append(pair)
            col[p] = i
        if self.cdirty is not None:
            self.cdirty.update(dirty)
        self.dirty = set()

    def scores(
        self, aff: dict[str, dict[str, int]] | None, labels: Any, pick: Any, k: int,
        spread_weight: int, affinity_weight: int,
    ) -> list[int] | None:
        """The weighted normalized scores of the soft-key plugins on the window's nodes
        (``pick`` takes the window's positions from a column); None when every node of the
        window gets the same (no effect on the choice of the node)."""
        self.refresh(aff, labels)
        ids: Sequence[int] = pick(self.col)
        present = list(set(ids))
        if len(present) == 1:
            return None
        pairs = self.pairs

        def ignored_nodes() -> int:
            sparts = self.sparts
            return sum(ids.count(i) for i in present if sparts[pairs[i][0]][0])

        table = self._table(present, ignored_nodes, k, spread_weight, affinity_weight)
        return list(map(table.__getitem__, ids))

    def keyed(
        self, aff: dict[str, dict[str, int]] | None, labels: Any, tot: list[int], pick: Any,
        k: int, spread_weight: int, affinity_weight: int, local: list[LocalColumn], limit: int,
    ) -> tuple[Sequence[int], dict[int, int]] | None:
        """Each window node's combined key (its node-local total ``tot``, its raw scores of
        the ``local`` normalized columns, and its soft key) and each present key's total
        score: nodes with equal keys get equal totals. None when the window holds more than
        ``limit`` distinct keys (the columns are then cheaper) or a normalized score is out
        of range (the columns report it)."""
        self.refresh(aff, labels)
        cols = tuple(c for c, _n, _w in local)
        if len(cols) != len(self.local_cols) or any(map(is_not, cols, self.local_cols)):
            self.local_cols = cols
            self.cdirty = None
        cdirty = self.cdirty
        if cdirty is None:
            self._combine_all(tot, cols)
        elif cdirty:
            col, ccol, cids, cpairs = self.col, self.ccol, self.cids, self.cpairs
            for p in cdirty:
                key = (tot[p], tuple(c[p] for c in cols) if cols else (), col[p])
                c = cids.get(key)
                if c is None:
                    c = cids[key] = len(cpairs)
                    cpairs.append(key)
                    if c >= _BYTE_KEYS and type(ccol) is bytearray:
                        self._combine_all(tot, cols)  # new ids for the keys still held
                        break
                ccol[p] = c
        self.cdirty = set()
        ccol, cpairs = self.ccol, self.cpairs
        keys: Sequence[int] = pick(ccol)
        present = list(set(keys))
        if len(present) > limit:
            return None
        cp = [cpairs[c] for c in present]
        totals = [t for t, _r, _i in cp]
        for m, (_col, normalize, w) in enumerate(local):
            raws = list({r[m] for _t, r, _i in cp})
            normed = normalize(raws)
            if normed is None or min(normed) < MIN_NODE_SCORE or max(normed) > MAX_NODE_SCORE:
                return None
            by_raw = dict(zip(raws, normed, strict=True))
            totals = [t + w * by_raw[r[m]] for t, (_t, r, _i) in zip(totals, cp, strict=True)]
        soft_ids = list({i for _t, _r, i in cp})
        if len(soft_ids) > 1 and (spread_weight or affinity_weight):
            pairs = self.pairs

            def ignored_nodes() -> int:
                sparts = self.sparts
                return sum(keys.count(c) for c, (_t, _r, i) in zip(present, cp, strict=True)
                           if sparts[pairs[i][0]][0])

            table = self._table(soft_ids, ignored_nodes, k, spread_weight, affinity_weight)
            totals = [t + table[i] for t, (_t, _r, i) in zip(totals, cp, strict=True)]
        # (One soft key in the window: the same soft score on every node, no effect.)
        return keys, dict(zip(present, totals, strict=True))

    def _combine_all(self, tot: list[int], cols: tuple[list[int], ...]) -> None:
        """Every position's combined key, ids given afresh: one byte each while there are
        at most 256 (the window's keys are then sliced, counted and found at C speed)."""
        col = self.col
        raws: Any = zip(*cols, strict=True) if cols else [()] * len(col)
        keys = list(zip(tot, raws, col, strict=True))
        cids = {key: i for i, key in enumerate(dict.fromkeys(keys))}
        ids = list(map(cids.__getitem__, keys))
        self.cids, self.cpairs = cids, list(cids)
        self.ccol = bytearray(ids) if len(cids) <= _BYTE_KEYS else ids

    def _table(
        self, present: list[int], ignored_nodes: Any, k: int, spread_weight: int,
        affinity_weight: int,
    ) -> dict[int, int]:
        """Per soft key present in the window: the weighted normalized soft scores."""
        pairs = self.pairs
        pp = [pairs[i] for i in present]
        snorm: dict[int, int] = {}
        anorm: dict[int, int] = {}
        if spread_weight:
            sp = self.spread
            assert sp is not None
            sparts = self.sparts
            snorm = sp.normalized({s: sparts[s] for s, _a in pp}, ignored_nodes, k)
        if affinity_weight:
            anorm = self._affinity_normalized({a for _s, a in pp})
        return {
            i: spread_weight * snorm.get(s, 0) + affinity_weight * anorm.get(a, 0)
            for i, (s, a) in zip(present, pp, strict=True)
        }

    def _affinity_normalized(self, aids: set[int]) -> dict[int, int]:
        """Per affinity part: InterPodAffinity's Score (the summed weights of the node's
        pairs) then NormalizeScore (min-max scaled to [0, 100])."""
        aff = self.aff_scores
        assert aff is not None
        aparts = self.aparts
        coarse = self.coarse
        raws: dict[int, int] = {}
        if not coarse:
            for a in aids:
                raws[a] = aparts[a]
        else:
            tables = [aff[key] for key in coarse]
            for a in aids:
                part = aparts[a]
                r = part[0]
                for table, v in zip(tables, part[1:], strict=True):
                    if v is not None:
                        r += table.get(v, 0)
                raws[a] = r
        if not aff:
            return raws
        lo, hi = min(raws.values()), max(raws.values())
        diff = hi - lo
        if diff <= 0:
            return dict.fromkeys(raws, 0)
        return {a: int(float(MAX_NODE_SCORE) * ((r - lo) / diff)) for a, r in raws.items()}
