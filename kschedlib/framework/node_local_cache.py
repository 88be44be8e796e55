"""Exact reuse of node-local Filter verdicts and raw Scores across scheduling cycles.

A plugin is *node-local* (``node_local = True``) when its Filter status and raw Score for a
node depend only on the fragment its ``sign_pod(pod)`` returns and on the NodeInfo. Such
results are kept per (plugins' fragments, node name) together with the NodeInfo generation
they were computed at; every NodeInfo change takes a fresh, process-wide generation, so a
stored result is used only for the very NodeInfo content it was computed from. This goes
beyond kube-scheduler (which recomputes), and gives bit-for-bit what recomputation gives.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Collection, Hashable, Sequence
from itertools import compress
from operator import is_, itemgetter
from struct import pack
from typing import Any

Table = dict[str, tuple[int, Any]]
"""node name -> (NodeInfo generation, stored result)."""


DEFAULT_MAX_TABLES = 32


def _all_zero(column: array[int]) -> bool:
    raw = column.tobytes()
    return raw.count(0) == len(raw)


def pick_array(column: array[int], pick: Callable[[Any], tuple[Any, ...]]) -> array[int]:
    """``array(column.typecode, pick(column))``: the same array, packed at C speed for
    ``"q"`` columns (the entries came from such an array, so each fits)."""
    got = pick(column)
    if column.typecode == "q":
        return array("q", pack(f"{len(got)}q", *got))
    return array(column.typecode, got)


def gone_positions(at: Sequence[int], n_old: int) -> Collection[int]:
    """The old positions (of ``range(n_old)``) missing from ``at``, the distinct old positions
    of the nodes kept (Snapshot.survivors_of): for one node gone, the one the sums tell (no
    set built)."""
    if n_old - len(at) == 1:
        return (n_old * (n_old - 1) // 2 - sum(at),)
    return set(range(n_old)).difference(at)


def follow_positions(
    positions: set[int], at: Sequence[int], old: Sequence[Any], now: dict[str, int]
) -> set[int]:
    """Where the nodes at ``positions`` of the old node list ``old`` stand in the new one
    (those gone are dropped): ``at`` gives each new position's old one (survivors_of),
    ``now`` the new positions by name."""
    if len(positions) * 4 > len(at):  # many: one membership test per survivor, at C speed
        return set(compress(range(len(at)), map(positions.__contains__, at)))
    out: set[int] = set()  # few: each node looked up where it is now
    for p in positions:
        q = now.get(old[p].name)
        if q is not None:
            out.add(q)
    return out


class PositionMarks:
    """Positions of a snapshot's node list whose node is unchanged since a result was noted
    for it (``values``, per position); the others are ``dirty``. Which nodes changed comes
    from the snapshot's change log (Snapshot.changed_since): a node the cache updated becomes
    dirty; a new snapshot, node list or a log that does not reach back makes all dirty.
    ``windows`` keeps round-robin runs of the node list as list objects (by start position),
    handed out again while the log shows that none of their entries was replaced."""

    __slots__ = (
        "snapshot", "nodes", "seen", "dirty", "values", "extra", "windows", "_wide", "_where",
    )

    def __init__(self) -> None:
        self.snapshot: Any = None
        self.nodes: Any = None
        self.seen = 0
        self.dirty: set[int] = set()
        self.values: Any = array("q")
        self.extra: dict[int, Any] = {}
        """What a user keeps for some positions only (valid for positions not dirty)."""
        self.windows: dict[int, tuple[list[Any], int]] = {}
        self._wide = False
        # The snapshot's positions (node name -> index) of ``nodes`` (None: not taken).
        self._where: dict[str, int] | None = None

    def sync(self, snapshot: Any, nodes: Sequence[Any]) -> bool:
        """Mark dirty the positions of the nodes changed since the last sync; False (nothing
        usable) when ``nodes`` is not the list of a snapshot that keeps a change log."""
        changed_since = getattr(snapshot, "changed_since", None)
        if changed_since is None or snapshot.list() is not nodes:
            return False
        names = None
        if self.snapshot is snapshot:
            names = changed_since(self.seen)
            if names is not None and self.nodes is not nodes:
                names = self._follow(snapshot, nodes, names)
        if names is None:
            self.snapshot = snapshot
            self.nodes = nodes
            self.dirty = set(range(len(nodes)))
            self.values = array("q", bytes(8 * len(nodes)))
            self.extra = {}
            self.windows = {}
            self._wide = True
            self._where = getattr(snapshot, "positions", None)
        elif names:
            pos = snapshot.positions
            dirty = self.dirty
            for name in names:
                p = pos.get(name)
                if p is not None:
                    dirty.add(p)
        if self._wide and len(self.dirty) <= 256:
            # A set keeps the table it grew to: iterating a few members left in a table
            # sized for every node would scan it all.
            self.dirty = set(self.dirty)
            self._wide = False
        self.seen = snapshot.generation
        return True

    def _follow(self, snapshot: Any, nodes: Sequence[Any], names: list[str]) -> list[str] | None:
        """Carry the marks over to ``nodes``, a node list the snapshot rebuilt after nodes
        went and none came (Snapshot.survivors_of): each position's mark, value and extra
        move with its node (by name), kept windows are dropped; ``names`` (the log since the
        last sync) is given back for the caller to mark. None when the list did not come so
        (the caller then starts over)."""
        old, where = self.nodes, self._where
        survivors = getattr(snapshot, "survivors_of", None)
        if survivors is None or where is None or old is None or len(where) != len(old):
            return None
        at = survivors(where)
        if at is None or len(self.values) != len(old):
            return None
        pos = snapshot.positions
        moved = follow_positions(self.dirty, at, old, pos)
        if self.extra:
            extra: dict[int, Any] = {}
            for p, v in self.extra.items():
                q = pos.get(old[p].name)
                if q is not None:
                    extra[q] = v
            self.extra = extra
        self.dirty = moved
        self._wide = len(moved) > 256
        self.nodes = nodes
        self._remap(itemgetter(*at))
        self._where = pos
        self.windows = {}
        return names

    def _remap(self, pick: Callable[[Any], tuple[Any, ...]]) -> None:
        """The per-position columns after the list changed: ``pick(column)`` gives the new
        column's entries in order (``self.nodes`` is already the new list)."""
        vals = self.values
        if not (vals and vals[0]) and _all_zero(vals):  # (marks that keep no values)
            self.values = array(vals.typecode, bytes(vals.itemsize * len(self.nodes)))
        else:
            self.values = pick_array(vals, pick)

    def dirty_offsets(self, start: int, count: int) -> list[int]:
        """The offsets (ascending) within the round-robin window of ``count`` positions from
        ``start`` of the dirty positions."""
        dirty = self.dirty
        if not dirty:
            return []
        n = len(self.nodes)
        if count >= n:
            return sorted([(p - start) % n for p in dirty])  # the window is every position
        if len(dirty) <= 64 or 4 * len(dirty) <= count:
            # Fewer dirty positions than window positions: walk the dirty ones.
            offsets = [(p - start) % n for p in dirty]
            return sorted([o for o in offsets if o < count])
        end = start + count
        hit = dirty.intersection(range(start, min(end, n)))
        if end > n:
            hit.update(dirty.intersection(range(end - n)))
        if len(hit) == count:  # the whole window (as after a reset): no sort needed
            return list(range(count))
        return sorted((p - start) % n for p in hit)

    def _unchanged(self, start: int, lst: list[Any], seen: int) -> bool:
        """Whether every entry of the window ``lst`` (from ``start``) that the log shows
        changed since ``seen`` is still the NodeInfo listed at its position."""
        names = self.snapshot.changed_since(seen)
        if names is None:
            return False
        if names:
            nodes = self.nodes
            pos = self.snapshot.positions
            n = len(nodes)
            count = len(lst)
            for name in names:
                p = pos.get(name)
                if p is not None:
                    o = (p - start) % n
                    if o < count and lst[o] is not nodes[p]:
                        return False
        return True

    def window(self, start: int, count: int) -> list[Any]:
        """The ``count`` nodes from position ``start`` in round-robin order, as a list object
        that is kept and handed out again (callers must not change it)."""
        w = self.windows.get(start)
        if w is not None and len(w[0]) == count and self._unchanged(start, w[0], w[1]):
            if w[1] != self.seen:
                self.windows[start] = (w[0], self.seen)
            return w[0]
        nodes = self.nodes
        n = len(nodes)
        end = start + count
        lst = list(nodes[start:end]) if end <= n else [*nodes[start:], *nodes[: end - n]]
        self._keep(start, lst)
        return lst

    def is_window(self, start: int, lst: list[Any]) -> bool:
        """Whether ``lst`` holds the nodes from position ``start`` in round-robin order (each
        the very NodeInfo listed there); a list found so is remembered, and checked again
        through the log only, while callers do not change it."""
        w = self.windows.get(start)
        if w is not None and w[0] is lst and self._unchanged(start, lst, w[1]):
            if w[1] != self.seen:
                self.windows[start] = (lst, self.seen)
            return True
        nodes = self.nodes
        n = len(nodes)
        count = len(lst)
        if count > n:
            return False
        end = start + count
        run = nodes[start:end] if end <= n else [*nodes[start:], *nodes[: end - n]]
        if not all(map(is_, lst, run)):
            return False
        self._keep(start, lst)
        return True

    def _keep(self, key: int, lst: list[Any]) -> None:
        windows = self.windows
        if len(windows) >= 64 and key not in windows:
            windows.clear()
        windows[key] = (lst, self.seen)


class GenerationTable(dict[int, Any]):
    """A table keyed by NodeInfo generation, with the PositionMarks its user keeps over the
    snapshot's node list (None until used)."""

    __slots__ = ("marks",)

    def __init__(self) -> None:
        super().__init__()
        self.marks: PositionMarks | None = None


class NodeLocalCache:
    """Result tables per signature key, the least recently used dropped beyond ``max_tables``."""

    __slots__ = ("_tables", "max_tables", "max_entries")

    def __init__(self, max_tables: int = DEFAULT_MAX_TABLES, max_entries: int = 4096) -> None:
        self._tables: dict[Hashable, Any] = {}
        self.max_tables = max_tables
        self.max_entries = max_entries

    def table(self, key: Hashable, factory: Callable[[], Any] = dict) -> Any:
        """The table stored under ``key`` (a new ``factory()`` when there is none)."""
        tables = self._tables
        t = tables.pop(key, None)
        if t is None:
            t = factory()
            if len(tables) >= self.max_tables:
                del tables[next(iter(tables))]
        tables[key] = t  # most recently used last
        return t

    def generation_table(self, key: Hashable, live: Callable[[], set[int]]) -> GenerationTable:
        """A table keyed by NodeInfo generation (unique per NodeInfo content, so a hit is
        always current). Entries of generations no NodeInfo has any more are pruned when the
        table outgrows ``max_entries``: ``live()`` gives the generations still in use. Pruning
        replaces the table (copy on write): an entry is never changed nor removed from a dict
        once handed out, so an explanation may keep the dict and read its entries later."""
        t: GenerationTable = self.table(key, GenerationTable)
        if len(t) > self.max_entries:
            keep = live()
            pruned = GenerationTable()
            pruned.update({g: v for g, v in t.items() if g in keep})
            pruned.marks = t.marks  # positions marked as fitting keep live generations only
            t = self._tables[key] = pruned
            if len(t) > self.max_entries // 2:
                self.max_entries = 2 * len(t)
        return t

    def clear(self) -> None:
        self._tables.clear()

    def __len__(self) -> int:
        return len(self._tables)


def local_fragment(plugin: Any, pod: Any) -> Hashable | None:
    """What a node-local plugin's results depend on besides the NodeInfo: its
    ``node_local_fragment(pod)`` when it has one (e.g. adding a cluster-wide count), else its
    ``sign_pod(pod)``; None when the plugin is not node-local or does not sign the pod."""
    if not getattr(plugin, "node_local", False):
        return None
    fn = getattr(plugin, "node_local_fragment", None)
    if fn is None:
        fn = getattr(plugin, "sign_pod", None)
    return None if fn is None else fn(pod)


def node_local_fragments(plugins: Sequence[Any], pod: Any) -> list[tuple[str, Hashable]]:
    """The (name, fragment) of the leading node-local plugins that sign ``pod``: the run of
    ``plugins`` whose results can be stored, stopping at the first that cannot."""
    out: list[tuple[str, Hashable]] = []
    for pl in plugins:
        fragment = local_fragment(pl, pod)
        if fragment is None:
            break
        out.append((pl.name, fragment))
    return out
