"""Matching-pod counts per topology value over all nodes, kept up to date incrementally.

PreFilter and PreScore add up, over every node of the snapshot, the pods matching each
constraint's selector per topology value. Each node's share depends only on the pod's
namespace, constraints, required node affinity and tolerations, and on the NodeInfo; so the
shares are kept per such key with the NodeInfo generation they were taken at, and from one
cycle to the next only the nodes whose generation changed are counted again. The totals come
out as recounting gives them, keys in the same (first seen) order. Which nodes changed comes
from the snapshot's change log when it can tell (Snapshot.changed_since), else from comparing
every node's generation; when nodes come or go, the shares of the nodes still listed with the
same NodeInfo and generation are kept.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from operator import attrgetter, itemgetter
from typing import Any

from kschedlib.api.pod import Pod
from kschedlib.framework.node_local_cache import gone_positions
from kschedlib.framework.seen_keys import SeenKeys
from kschedlib.framework.types import NodeInfo
from kschedlib.plugins.nodeaffinity.node_affinity import RequiredNodeAffinity
from kschedlib.plugins.podtopologyspread.common import (
    SpreadConstraint,
    count_pods_match_selector,
    node_labels_match_spread_constraints,
)

Share = tuple[tuple[str, int] | None, ...] | None
"""A node's share: None when the node counts for no constraint, else per constraint the
(topology value, matching pods) or None when the inclusion policies leave the node out."""

MAX_ENTRIES = 8
_name_of = attrgetter("name")
_generation_of = attrgetter("generation")


def node_share(
    pod: Pod,
    constraints: Sequence[SpreadConstraint],
    required: RequiredNodeAffinity,
    namespace: str,
    ni: NodeInfo,
    require_all: bool,
) -> Share:
    node = ni.node
    if node is None:
        return None
    labels = node.metadata.labels
    if require_all and not node_labels_match_spread_constraints(labels, constraints):
        return None
    out: list[tuple[str, int] | None] = []
    for c in constraints:
        if not c.match_node_inclusion_policies(pod, node, required):
            out.append(None)
            continue
        out.append(
            (labels.get(c.topology_key, ""), count_pods_match_selector(ni.pods, c.selector, namespace))
        )
    return tuple(out)


def _same_domains(a: Share, b: Share) -> bool:
    """Whether two shares count into the same topology values (only the numbers differ)."""
    if a is None or b is None:
        return a is b
    for x, y in zip(a, b, strict=True):
        if x is None or y is None:
            if x is not y:
                return False
        elif x[0] != y[0]:
            return False
    return True


def _totals(shares: Sequence[Share], k: int) -> list[dict[str, int]]:
    totals: list[dict[str, int]] = [{} for _ in range(k)]
    for share in shares:
        if share is None:
            continue
        for i, x in enumerate(share):
            if x is not None:
                m = totals[i]
                v = x[0]
                m[v] = m.get(v, 0) + x[1]
    return totals


_LEAF = 32


def changed_indices(a: Sequence[Any], b: Sequence[Any]) -> list[int]:
    """The indices, in increasing order, where two equally long sequences differ (``!=``;
    identity for objects without ``__eq__``). Halves are compared as slices, at C speed, so
    a few changes among many entries cost little more than one comparison of the lists."""
    out: list[int] = []
    if a == b:
        return out
    a = list(a)
    b = list(b)
    stack = [(0, len(a))]
    while stack:
        lo, hi = stack.pop()
        if hi - lo <= _LEAF:
            out.extend(i for i in range(lo, hi) if a[i] != b[i])
            continue
        mid = (lo + hi) >> 1
        # Right half pushed first: the left one is taken first, so indices come out sorted.
        if a[mid:hi] != b[mid:hi]:
            stack.append((mid, hi))
        if a[lo:mid] != b[lo:mid]:
            stack.append((lo, mid))
    return out


class _Entry:
    __slots__ = (
        "nodes", "gens", "shares", "totals", "source", "snapshot", "seen", "positions", "exact"
    )

    def __init__(
        self, nodes: list[NodeInfo], gens: list[int], shares: list[Share], totals: list[dict[str, int]]
    ) -> None:
        self.nodes = nodes
        self.gens = gens
        self.shares = shares
        self.totals = totals
        # The node list, snapshot and snapshot generation the entry is up to date with.
        self.source: object = None
        self.snapshot: Any = None
        self.seen = 0
        # Node name -> position in ``nodes``, a hint checked before use (None: none kept).
        self.positions: dict[str, int] | None = None
        # False: totals may hold emptied domains at 0 and keys out of recount order.
        self.exact = True


def _changed_from_log(
    entry: _Entry, all_nodes: list[NodeInfo], snapshot: Any
) -> list[int] | None:
    """The positions of the nodes changed since the entry was brought up to date, from the
    snapshot's change log; None when the log cannot tell (another snapshot or node list,
    a log that does not reach back that far)."""
    if snapshot is None or entry.snapshot is not snapshot or entry.source is not all_nodes:
        return None
    changed_since = getattr(snapshot, "changed_since", None)
    if changed_since is None or snapshot.list() is not all_nodes:
        return None
    names = changed_since(entry.seen)
    if names is None:
        return None
    pos = snapshot.positions
    refs, gens = entry.nodes, entry.gens
    out: list[int] = []
    for i in sorted({pos[name] for name in names if name in pos}):
        ni = all_nodes[i]
        if ni.generation != gens[i] or ni is not refs[i]:
            out.append(i)
    return out


def _only_removed(
    entry: _Entry, where: dict[str, int], nodes: list[NodeInfo],
    recount: Callable[[NodeInfo], Share],
) -> _Entry | None:
    """The entry for ``nodes`` when every one of them is listed in ``entry`` under its name
    (nodes went, none came): the removed nodes' shares are subtracted from the totals, the
    nodes listed with another NodeInfo or generation are counted again (``recount``) and
    their change applied, the others keep their share (totals left inexact, see
    SpreadCounter.totals). None when some node is new. The checks run at C speed (map over
    the lists)."""
    names = list(map(_name_of, nodes))
    at = list(map(where.get, names))
    if None in at:
        return None
    old_nodes = entry.nodes
    try:
        olds = list(map(old_nodes.__getitem__, at))  # type: ignore[arg-type]
    except IndexError:
        return None
    if list(map(_name_of, olds)) != names:  # a stale position hint
        return None
    gens = list(map(_generation_of, nodes))
    changed = changed_indices(gens, list(map(entry.gens.__getitem__, at)))  # type: ignore[arg-type]
    if olds != nodes:  # NodeInfos replaced (identity: NodeInfo has no __eq__)
        changed = sorted(set(changed).union(changed_indices(nodes, olds)))
    old_shares = entry.shares
    totals = entry.totals
    for j in set(range(len(old_nodes))).difference(at):
        _apply(totals, old_shares[j], -1)
    shares = list(map(old_shares.__getitem__, at))  # type: ignore[arg-type]
    for i in changed:
        new_share = recount(nodes[i])
        _apply(totals, shares[i], -1)
        _apply(totals, new_share, 1)
        shares[i] = new_share
    new = _Entry(nodes, gens, shares, totals)
    new.exact = False
    return new


def _removed_from_log(
    entry: _Entry, all_nodes: list[NodeInfo], snapshot: Any,
    recount: Callable[[NodeInfo], Share],
) -> _Entry | None:
    """_only_removed told by the snapshot: the nodes gone are those of the entry's positions
    missing from the snapshot's, the nodes changed are those of its change log since the
    entry was brought up to date (every other node has the NodeInfo and generation it had);
    None when the snapshot cannot tell (another snapshot or node list, no positions, a log
    that does not reach back that far) or a node came."""
    where = entry.positions
    if where is None or snapshot is None or entry.snapshot is not snapshot:
        return None
    changed_since = getattr(snapshot, "changed_since", None)
    now = getattr(snapshot, "positions", None)
    if changed_since is None or not isinstance(now, dict) or snapshot.list() is not all_nodes:
        return None
    if len(now) != len(all_nodes):
        return None
    names = changed_since(entry.seen)
    if names is None:
        return None
    if len(now) < 2:
        return None
    survivors = getattr(snapshot, "survivors_of", None)
    if survivors is not None:
        # (the answer the position marks ask for too, worked out once)
        at = survivors(where)
        if at is None:
            return None
    else:
        try:
            at = itemgetter(*now)(where)  # the snapshot's names, in list order
        except KeyError:
            return None  # a node came
    old_shares = entry.shares
    totals = entry.totals
    for j in gone_positions(at, len(where)):
        _apply(totals, old_shares[j], -1)
    pick = itemgetter(*at)  # (one C loop per list)
    shares = list(pick(old_shares))
    # A node the log does not name has the generation the entry noted for it (no NodeInfo
    # is touched for it); the named ones are noted again.
    gens = list(pick(entry.gens))
    nodes = list(all_nodes)
    for name in set(names):
        i = now.get(name)
        if i is None:
            continue  # changed, then removed
        ni = nodes[i]
        gens[i] = ni.generation
        new_share = recount(ni)
        _apply(totals, shares[i], -1)
        _apply(totals, new_share, 1)
        shares[i] = new_share
    new = _Entry(nodes, gens, shares, totals)
    new.exact = False
    return new


def _apply(totals: list[dict[str, int]], share: Share, sign: int) -> None:
    """Add (sign 1) or subtract (sign -1) a node's share to or from the totals."""
    if share is None:
        return
    for i, x in enumerate(share):
        if x is not None and x[1]:
            m = totals[i]
            m[x[0]] = m.get(x[0], 0) + sign * x[1]


class ScoreKeyTable(dict[int, Any]):
    """What Score reads of a node per NodeInfo generation (see scoring._score_key), with the
    position marks its user keeps over the snapshot's node list (None until used)."""

    __slots__ = ("marks",)

    def __init__(self) -> None:
        super().__init__()
        self.marks: Any = None


class SpreadCounter:
    """Per (pod key, constraints) the node shares and their totals; see the module doc."""

    __slots__ = ("_entries", "_seen", "last", "_score_keys")

    def __init__(self) -> None:
        self._entries: dict[Hashable, _Entry] = {}
        # Per (namespace, constraints): what Score reads of a node, per NodeInfo generation.
        self._score_keys: dict[Hashable, ScoreKeyTable] = {}
        self._seen = SeenKeys()
        # The entry the last totals() call returned the totals of (None: it returned None).
        self.last: _Entry | None = None

    def totals(
        self,
        pod: Pod,
        constraints: Sequence[SpreadConstraint],
        all_nodes: Sequence[NodeInfo],
        require_all: bool,
        snapshot: Any = None,
        exact: bool = True,
    ) -> list[dict[str, int]] | None:
        """Per constraint, matching pods per topology value over ``all_nodes`` (shared
        dicts: copy before changing them); None the first time a key is seen (count
        directly then: keeping counts pays off only for a key that comes back).

        ``exact=False`` is for callers that only look values up: the totals may then hold
        domains left without nodes (at 0) and keys in another order than a recount's, which
        lets node removals subtract the removed nodes' shares instead of adding up all.

        ``snapshot``, the lister ``all_nodes`` comes from, tells through its change log
        (``changed_since``) which nodes changed, so that not every NodeInfo is looked at;
        without it, or when the log cannot tell, every node's generation is compared."""
        ns = pod.metadata.namespace
        spec = pod.spec
        aff = spec.affinity
        key = (
            ns,
            tuple(constraints),
            require_all,
            tuple(sorted(spec.node_selector.items())),
            aff.node_affinity if aff is not None else None,
            spec.tolerations,
        )
        entries = self._entries
        self.last = None
        if key not in entries and self._seen.first_sight(key):
            return None
        required = RequiredNodeAffinity.of(pod)
        k = len(constraints)
        if not isinstance(all_nodes, list):
            all_nodes = list(all_nodes)
        entry = entries.pop(key, None)
        if entry is not None and len(entry.nodes) == len(all_nodes):
            refs, gens, shares, totals = entry.nodes, entry.gens, entry.shares, entry.totals
            changed = _changed_from_log(entry, all_nodes, snapshot)
            if changed is None:
                now = [ni.generation for ni in all_nodes]
                changed = changed_indices(now, gens)
                if refs != all_nodes:  # NodeInfos replaced (unshared copies, a rebuilt list)
                    changed = sorted(set(changed).union(changed_indices(all_nodes, refs)))
            rebuild = False
            for i in changed:
                ni = all_nodes[i]
                new = node_share(pod, constraints, required, ns, ni, require_all)
                old = shares[i]
                if not rebuild and _same_domains(old, new):
                    if new is not None and old is not None:
                        for j, x in enumerate(new):
                            if x is not None:
                                y = old[j]
                                assert y is not None
                                if x[1] != y[1]:
                                    totals[j][x[0]] += x[1] - y[1]
                else:
                    rebuild = True
                shares[i] = new
                refs[i] = ni
                gens[i] = ni.generation
            if rebuild:
                entry.totals = _totals(shares, k)
                entry.exact = True
        elif entry is not None:
            # Nodes came or went (the list was rebuilt): a node still listed with the same
            # NodeInfo at the same generation keeps its share; the others are counted.
            # The entry's node positions by name (the snapshot's, when the entry was brought
            # up to date from it) only point the way: a share is kept after checking that
            # the node at that position is the same NodeInfo at the same generation.
            where = entry.positions
            if where is None:
                where = {ni.name: i for i, ni in enumerate(entry.nodes)}
            old_nodes, old_gens, old_shares = entry.nodes, entry.gens, entry.shares
            n_old = len(old_nodes)
            nodes = list(all_nodes)
            kept_entry = None
            if not exact and 0 < len(nodes) < n_old:

                def recount(ni: NodeInfo) -> Share:
                    return node_share(pod, constraints, required, ns, ni, require_all)

                kept_entry = _removed_from_log(entry, all_nodes, snapshot, recount)
                if kept_entry is None:
                    kept_entry = _only_removed(entry, where, nodes, recount)
            shares = []
            for ni in nodes if kept_entry is None else ():
                at = where.get(ni.name)
                if (
                    at is not None and at < n_old and old_nodes[at] is ni
                    and old_gens[at] == ni.generation
                ):
                    shares.append(old_shares[at])
                else:
                    shares.append(node_share(pod, constraints, required, ns, ni, require_all))
            if kept_entry is not None:
                entry = kept_entry
            else:
                entry = _Entry(nodes, [ni.generation for ni in nodes], shares, _totals(shares, k))
        if entry is None:
            nodes = list(all_nodes)
            shares = [node_share(pod, constraints, required, ns, ni, require_all) for ni in nodes]
            entry = _Entry(nodes, [ni.generation for ni in nodes], shares, _totals(shares, k))
            if len(entries) >= MAX_ENTRIES:
                del entries[next(iter(entries))]
        if exact and not entry.exact:
            entry.totals = _totals(entry.shares, k)
            entry.exact = True
        entry.source = all_nodes
        entry.snapshot = snapshot
        entry.positions = None
        if snapshot is not None and getattr(snapshot, "list", None) is not None:
            pos = getattr(snapshot, "positions", None)
            if isinstance(pos, dict) and snapshot.list() is all_nodes:
                entry.positions = pos
        entry.seen = getattr(snapshot, "generation", 0)
        entries[key] = entry
        self.last = entry
        return entry.totals

    def score_keys(
        self, namespace: str, constraints: Sequence[SpreadConstraint]
    ) -> ScoreKeyTable:
        """The table Score keeps per NodeInfo generation for pods of ``namespace`` with
        ``constraints`` (what it reads of a node depends on nothing else)."""
        key = (namespace, tuple(constraints))
        tables = self._score_keys
        table = tables.pop(key, None)
        if table is None:
            table = ScoreKeyTable()
            if len(tables) >= MAX_ENTRIES:
                del tables[next(iter(tables))]
        tables[key] = table
        return table

    def node_shares(self) -> NodeShares | None:
        """The node shares behind the last totals() result, when they can be looked up by
        node name (the entry was brought up to date from a snapshot); None otherwise."""
        entry = self.last
        if entry is None or entry.positions is None:
            return None
        return NodeShares(entry.positions, entry.nodes, entry.gens, entry.shares)


class NodeShares:
    """Per-node shares a counter entry holds, looked up by name and checked (same NodeInfo,
    same generation) before use: a share found is what node_share gives for the node now."""

    __slots__ = ("positions", "nodes", "gens", "shares")

    def __init__(
        self, positions: dict[str, int], nodes: list[NodeInfo], gens: list[int],
        shares: list[Share],
    ) -> None:
        self.positions = positions
        self.nodes = nodes
        self.gens = gens
        self.shares = shares

    def count(self, ni: NodeInfo, i: int) -> int | None:
        """Constraint ``i``'s matching pods on ``ni`` from the kept share; None when the share
        is not kept for this NodeInfo and generation or leaves the node out of constraint i."""
        j = self.positions.get(ni.name)
        if j is None or j >= len(self.nodes) or self.nodes[j] is not ni:
            return None
        if self.gens[j] != ni.generation:
            return None
        share = self.shares[j]
        if share is None:
            return None
        x = share[i]
        return None if x is None else x[1]


def counter_enabled(handle: Any) -> bool:
    """Whether the framework reuses results across cycles (the Scheduler's switch)."""
    return getattr(handle, "node_local_cache", None) is not None
