"""Verdicts of PodTopologySpread and InterPodAffinity kept per tuple of topology values."""

from __future__ import annotations

from typing import Any

from kschedlib.api.pod import Pod
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.status import Code
from kschedlib.plugins.interpodaffinity.filtering import PreFilterState as AffinityPreFilterState
from kschedlib.plugins.podtopologyspread.filtering import PreFilterState as SpreadPreFilterState
from kschedlib.whatif.capacity.common import SMALL, label_column


def topology_keys(state: CycleState, names: list[str]) -> tuple[str, ...] | None:
    """The node label keys the signature filters read, None when a state is unknown."""
    keys: set[str] = set()
    for name in names:
        s = state.get("PreFilter" + name)
        if name == "PodTopologySpread" and isinstance(s, SpreadPreFilterState):
            keys.update(c.topology_key for c in s.constraints)
        elif name == "InterPodAffinity" and isinstance(s, AffinityPreFilterState):
            keys.update(t.topology_key for t in s.required_affinity_terms)
            keys.update(t.topology_key for t in s.required_anti_affinity_terms)
            keys.update(s.existing_anti_affinity_counts)
            keys.update(s.affinity_counts)
            keys.update(s.anti_affinity_counts)
        else:
            return None
    return tuple(sorted(keys))


def global_fingerprint(state: CycleState, names: list[str]) -> tuple[Any, ...]:
    """What the signature filters read beyond the counts of a node's own topology pairs:
    the spread constraints' limits (from the global minimum), and which keys the affinity
    counters hold and whether any pod matches the affinity terms."""
    out: list[Any] = []
    for name in names:
        s = state.get("PreFilter" + name)
        if isinstance(s, SpreadPreFilterState):
            out.append(tuple(limit for _k, _c, limit in s.checks))
        elif isinstance(s, AffinityPreFilterState):
            out.append((
                not s.affinity_counts, s.self_affine,
                tuple(sorted(s.affinity_counts)), tuple(sorted(s.anti_affinity_counts)),
                tuple(sorted(s.existing_anti_affinity_counts)),
            ))
    return tuple(out)


class Signatures:
    """Verdicts of the signature filters per distinct tuple of topology values, and the
    mask of positions passing every filter (the node-local verdicts given)."""

    def __init__(self) -> None:
        self.keys: tuple[str, ...] | None = None
        self.code = b""
        """Each position's signature, one byte each, when there are few signatures."""
        self.code2 = b""
        """Twice ``code``: plus a node-local verdict, a byte the verdict table translates."""
        self.comb = bytearray()
        self.rep: list[int] = []
        self.members: list[list[int]] = []
        self.by_pair: dict[tuple[str, str], list[int]] = {}
        self.verdict = bytearray()
        self.ok = bytearray()
        self.final = bytearray()
        self.full = True
        """The combined mask must be rebuilt from scratch."""
        self.flipped: list[int] = []
        """Signatures whose verdict changed since the mask was last combined."""
        self.fingerprint: tuple[Any, ...] | None = None
        self.touched: list[Any] = []
        self.unsupported = False

    def _build(self, nodes: list[Any], keys: tuple[str, ...]) -> None:
        n = len(nodes)
        # Each position's tuple of values, the distinct tuples in first-seen order, and the
        # first position holding each (its representative): built at C speed.
        sigs: list[tuple[str | None, ...]] = (
            list(zip(*(label_column(nodes, k) for k in keys), strict=True)) if keys else [()] * n
        )
        uniq = list(dict.fromkeys(sigs))
        first = dict(zip(reversed(sigs), range(n - 1, -1, -1), strict=True))
        ids = {sig: i for i, sig in enumerate(uniq)}
        sig_of = list(map(ids.__getitem__, sigs))
        self.rep = list(map(first.__getitem__, uniq))
        self.by_pair = {}
        for sid, sig in enumerate(uniq):
            for k, v in zip(keys, sig, strict=True):
                if v is not None:
                    self.by_pair.setdefault((k, v), []).append(sid)
        self.members = []
        if len(uniq) > SMALL:  # members are read only where verdicts are kept per position
            self.members = [[] for _ in uniq]
            for p, sid in enumerate(sig_of):
                self.members[sid].append(p)
        self.keys = keys
        small = len(self.rep) <= SMALL
        self.code = bytes(sig_of) if small else b""
        self.code2 = bytes(2 * c for c in sig_of) if small else b""
        self.verdict = bytearray(len(self.rep))
        self.ok = bytearray(len(nodes))
        self.fingerprint = None
        self.full = True

    def update(
        self, state: CycleState, pod: Pod, nodes: list[Any], filters: list[tuple[str, Any]]
    ) -> bool:
        """Bring the verdicts up to date; False to take the ordinary path (``unsupported``
        set when that will not change)."""
        names = [name for name, _fn in filters]
        fingerprint = global_fingerprint(state, names)
        if fingerprint == self.fingerprint and self.keys is not None:
            keys: tuple[str, ...] | None = self.keys  # the keys follow from the fingerprint
        else:
            keys = topology_keys(state, names)
        if keys is None:
            self.unsupported = True
            return False
        if keys != self.keys:
            self._build(nodes, keys)
        if fingerprint != self.fingerprint:
            todo: Any = range(len(self.rep))
        else:
            dirty: set[int] = set()
            by_pair = self.by_pair
            for ni in self.touched:
                labels = ni.node.metadata.labels if ni.node is not None else {}
                for k in keys:
                    v = labels.get(k)
                    if v is not None:
                        dirty.update(by_pair.get((k, v), ()))
            todo = dirty
        self.touched = []
        self.fingerprint = fingerprint
        run = self.run_filters
        verdict, members, ok, rep = self.verdict, self.members, self.ok, self.rep
        small = bool(self.code)
        flipped = self.flipped
        for sid in todo:
            good = run(state, pod, nodes[rep[sid]], filters)
            if good is None:
                self.fingerprint = None  # recompute every signature next time
                self.full = True
                return False
            if good != verdict[sid]:
                verdict[sid] = good
                if not small:
                    for p in members[sid]:
                        ok[p] = good
                    flipped.append(sid)
        return True

    def mask(self, loc: bytearray, loc_changed: Any) -> bytes | bytearray:
        """One byte per position: 1 where the node-local verdict ``loc`` and the signature
        filters pass. ``loc_changed`` lists the positions whose ``loc`` changed since the
        last call (None: any)."""
        if self.code:
            comb = self.comb
            if self.full or loc_changed is None or len(comb) != len(loc):
                comb = self.comb = bytearray(map(int.__add__, self.code2, loc))
            else:
                code2 = self.code2
                for p in loc_changed:
                    comb[p] = code2[p] + loc[p]
            self.full = False
            table = bytearray(256)
            table[1 : 2 * len(self.verdict) : 2] = self.verdict
            return comb.translate(table)
        ok, final = self.ok, self.final
        if self.full or loc_changed is None or len(final) != len(loc):
            self.final = final = bytearray(
                (int.from_bytes(loc, "little") & int.from_bytes(ok, "little")).to_bytes(
                    len(loc), "little"
                )
            )
        else:
            for p in loc_changed:
                final[p] = loc[p] & ok[p]
            members = self.members
            for sid in self.flipped:
                for p in members[sid]:
                    final[p] = loc[p] & ok[p]
        self.flipped = []
        self.full = False
        return final

    @staticmethod
    def run_filters(
        state: CycleState, pod: Pod, ni: Any, filters: list[tuple[str, Any]]
    ) -> int | None:
        for _name, fn in filters:
            try:
                st = fn(state, pod, ni)
            except Exception:
                return None  # the ordinary path reports the plugin's error
            if st is not None and st.code != Code.Success:
                if not st.is_rejected():
                    return None
                return 0
        return 1
