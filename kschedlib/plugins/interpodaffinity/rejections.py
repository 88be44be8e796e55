"""InterPodAffinity's Filter verdicts by node name, for the framework's filter loop.

Filter rejects a node when a counted topology value of the node's labels has a positive
count (or, with required affinity, when no matching pod shares the node's domain). The
label index keeps the nodes carrying each value of the topology keys asked about, so the
rejected nodes come out of the counted values without a look at every node; and from one
cycle to the next, for the same incoming pod kind, only the nodes sharing a topology value
with a node the index re-read can change verdict (see RejectionCache).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from itertools import repeat

from kschedlib.framework.status import Status
from kschedlib.plugins.interpodaffinity.filtering import (
    AFFINITY_NOT_MATCH,
    PreFilterState,
    compile_checks,
    filter_labels,
)
from kschedlib.plugins.interpodaffinity.index import PodIndex


def _counted(inner: Mapping[str, int]) -> Sequence[str] | Mapping[str, int]:
    """The values with a positive count."""
    if min(inner.values()) > 0:  # the usual case: counters drop their zero entries
        return inner
    return [v for v, n in inner.items() if n > 0]


def _nodes_with_values(
    index: PodIndex, key: str, values: Sequence[str] | Mapping[str, int]
) -> set[str] | None:
    """The names of the indexed nodes whose ``key`` label has one of ``values`` (None:
    the key is not tracked)."""
    by_value = index.track_key(key)
    if by_value is None:
        return None
    single = index.single_node[key]
    if len(single) == len(by_value):  # every value on one node (a hostname)
        out: set[str | None] = set(map(single.get, values))
        out.discard(None)  # values no node carries
        return out  # type: ignore[return-value]
    return set().union(*[d for v in values if (d := by_value.get(v)) is not None])


def _affinity_passing(s: PreFilterState, index: PodIndex) -> set[str] | None:
    """The names of the indexed nodes satisfy_pod_affinity accepts (None: a key is not
    tracked)."""
    counts = s.affinity_counts
    if not counts:
        if not s.self_affine:
            return set()
        out: set[str] | None = None  # the nodes with every key
        for t in s.required_affinity_terms:
            by_value = index.track_key(t.topology_key)
            if by_value is None:
                return None
            if index.key_nodes[t.topology_key] == len(index.infos):
                continue
            having = set().union(*by_value.values())
            out = having if out is None else out & having
        return set(index.infos) if out is None else out
    found: set[str] | None = None  # the nodes where every term's value has a matching pod
    for t in s.required_affinity_terms:
        inner = counts.get(t.topology_key)
        if not inner:
            return set()
        with_pods = _nodes_with_values(index, t.topology_key, _counted(inner))
        if with_pods is None:
            return None
        found = with_pods if found is None else found & with_pods
    return set() if found is None else found


def rejected_nodes(s: PreFilterState, index: PodIndex) -> dict[str, Status] | None:
    """The status Filter gives each node of ``index`` (synced to the cycle's snapshot) that
    it rejects, by node name; every other node passes. Taken from the nodes carrying each
    counted topology value, without a look at every node. None when a key is not tracked."""
    checks = s.checks
    if checks is None:
        checks = s.checks = compile_checks(s)
    lookups, affinity = checks
    out: dict[str, Status] = {}
    for key, inner, status in reversed(lookups):  # the first lookup's status wins
        if not inner:
            continue
        names = _nodes_with_values(index, key, _counted(inner))
        if names is None:
            return None
        out.update(zip(names, repeat(status)))
    if affinity:
        passing = _affinity_passing(s, index)
        if passing is None:
            return None
        if len(passing) != len(index.infos):
            out.update(zip(index.infos.keys() - passing, repeat(AFFINITY_NOT_MATCH)))
    return out




def _shape(s: PreFilterState) -> tuple[object, ...]:
    """What Filter's verdict depends on besides the counts at the node's own values: the
    lookups (key and status, in order) and whether and how the affinity check runs."""
    checks = s.checks
    if checks is None:
        checks = s.checks = compile_checks(s)
    lookups, affinity = checks
    return (
        tuple((key, status) for key, _, status in lookups),
        affinity,
        tuple(t.topology_key for t in s.required_affinity_terms),
        bool(s.affinity_counts),
        s.self_affine,
    )


def _positive(s: PreFilterState, key: str, value: str) -> tuple[bool, bool, bool]:
    """Whether each of the three counters is positive at (key, value): all Filter reads
    of a count."""
    out = []
    for counts in (s.existing_anti_affinity_counts, s.affinity_counts, s.anti_affinity_counts):
        inner = counts.get(key)
        out.append(inner is not None and inner.get(value, 0) > 0)
    return out[0], out[1], out[2]


class RejectionCache:
    """rejected_nodes kept from one cycle to the next while the incoming pod kind (``key``:
    what the counts depend on besides the nodes) and the lookups stay the same. A count at
    a topology value changes only when a node carrying that value changed, and Filter reads
    a count only as positive or not: so only the nodes the index re-read since, and the
    nodes sharing a value (of a key Filter looks at) whose count turned positive or back,
    are looked at again. A node added, removed or relabelled means a full pass."""

    __slots__ = ("_key", "_out", "_serial", "_shape", "_state")

    def __init__(self) -> None:
        self._key: Hashable = None
        self._shape: tuple[object, ...] | None = None
        self._serial = -1
        self._out: dict[str, Status] | None = None
        self._state: PreFilterState | None = None
        """The state ``_out`` answers for (its counts are compared with the next one's)."""

    def rejections(
        self, key: Hashable, s: PreFilterState, index: PodIndex
    ) -> dict[str, Status] | None:
        """rejected_nodes(s, index) for a PreFilterState ``s`` as PreFilter wrote it (no
        AddPod/RemovePod since) of an incoming pod of kind ``key``."""
        shape = _shape(s)
        out = self._out
        old = self._state
        if (
            out is not None
            and old is not None
            and not old.modified
            and key == self._key
            and shape == self._shape
            and index.relabel_serial <= self._serial
        ):
            names = index.changes_since(self._serial)
            if names is not None and self._refresh(out, names, old, s, index, shape):
                self._hand_over(s, index)
                return out
        out = rejected_nodes(s, index)
        self._key, self._shape, self._out = key, shape, out
        if out is not None:
            self._hand_over(s, index)
        return out

    def _hand_over(self, s: PreFilterState, index: PodIndex) -> None:
        old = self._state
        if old is not None and old is not s:
            old.rejections = None  # the dict now answers for ``s``
        self._state = s
        self._serial = index.serial

    @staticmethod
    def _refresh(
        out: dict[str, Status],
        names: set[str],
        old: PreFilterState,
        s: PreFilterState,
        index: PodIndex,
        shape: tuple[object, ...],
    ) -> bool:
        """Update ``out`` (``old``'s rejections) to ``s`` for the nodes re-read (``names``)
        and those sharing a value with them whose count flipped; False when a key is not
        tracked."""
        if not names:
            return True
        lookups = shape[0]
        keys = {k for k, _ in lookups}  # type: ignore[attr-defined]
        keys.update(shape[2])  # type: ignore[arg-type]
        node_labels = index.node_labels
        affected = set(names)
        for key in keys:
            by_value = index.track_key(key)
            if by_value is None:
                return False
            flipped: set[str] = set()
            for name in names:
                labels = node_labels.get(name)
                if labels is None:
                    return False
                v = labels.get(key)
                if (
                    v is not None
                    and v not in flipped
                    and _positive(old, key, v) != _positive(s, key, v)
                ):
                    flipped.add(v)
                    affected.update(by_value[v])
        for name in affected:
            st = filter_labels(s, node_labels[name])
            if st is None:
                out.pop(name, None)
            else:
                out[name] = st
        return True
