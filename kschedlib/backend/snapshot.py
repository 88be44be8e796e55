"""Snapshot: the consistent, read-only view of NodeInfos that one scheduling cycle uses."""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Collection, Iterable, Sequence
from operator import attrgetter, itemgetter

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.backend.cache.node_tree import NodeTree
from kschedlib.framework.types import ImageStateSummary, NodeInfo, PodInfo, next_generation

_CHANGE_LOG_MAX = 1 << 14
_MAX_SCANS = 8
_name = attrgetter("name")
_with_affinity = attrgetter("pods_with_affinity")
_with_anti_affinity = attrgetter("pods_with_required_anti_affinity")
_pvc_refs = attrgetter("pvc_ref_counts")


class Snapshot:
    """Implements the shared listers plugins read (node_infos(), storage_infos())."""

    __slots__ = (
        "node_info_map",
        "node_info_list",
        "have_pods_with_affinity_node_info_list",
        "have_pods_with_required_anti_affinity_node_info_list",
        "used_pvc_set",
        "generation",
        "_positions",
        "_scans",
        "shared_generation",
        "_change_log",
        "_change_log_floor",
        "image_names",
        "_names",
        "_survivors",
    )

    def __init__(self) -> None:
        self.node_info_map: dict[str, NodeInfo] = {}
        self.node_info_list: list[NodeInfo] = []
        self.have_pods_with_affinity_node_info_list: list[NodeInfo] = []
        self.have_pods_with_required_anti_affinity_node_info_list: list[NodeInfo] = []
        self.used_pvc_set: set[str] = set()
        self.generation = 0
        # Node name -> index in node_info_list (None: to build on first use, see positions).
        self._positions: dict[str, int] | None = {}
        # Scans of node_info_list made for want of positions since the last rebuild.
        self._scans = 0
        # Entries with a generation at or below this are shared with a fork: the cache
        # replaces them (``unshare``) instead of updating them in place.
        self.shared_generation = 0
        # (generation, node name) of the NodeInfos the cache updated, oldest first: it
        # answers changed_since for generations at or above the floor (None: no log yet).
        self._change_log: list[tuple[int, str]] = []
        self._change_log_floor: int | None = None
        # The image names some node of the snapshot lists (the cache sets it at each update;
        # None: not known, e.g. a shared copy before its first update).
        self.image_names: Collection[str] | None = None
        # (a node list, the names of its nodes in order) noted by the cache when it built
        # that list: positions are built from the names (no NodeInfo touched).
        self._names: tuple[list[NodeInfo], list[str]] | None = None
        # (an earlier positions map, the node list, survivors_of's answer for them).
        self._survivors: tuple[dict[str, int], list[NodeInfo], tuple[int, ...] | None] | None = (
            None
        )

    @classmethod
    def from_objects(cls, pods: Iterable[Pod], nodes: Iterable[Node]) -> Snapshot:
        """Build a snapshot directly (for tests and one-shot use); pods must be assigned.

        Nodes are listed in node-tree order (round-robin across zones, as the cache lists
        them) and image states count the nodes having each image, as a fresh cache snapshot
        would; pods on nodes not given are ignored.
        """
        snap = cls()
        node_map = snap.node_info_map
        tree = NodeTree()
        sizes: dict[str, int] = {}
        holders: dict[str, set[str]] = {}
        node_list = list(nodes)
        for n in node_list:
            name = n.metadata.name
            tree.add_node(n)
            node_map[name] = NodeInfo(n)
            for image in n.status.images:
                for image_name in image.names:
                    sizes.setdefault(image_name, image.size_bytes)
                    holders.setdefault(image_name, set()).add(name)
        for p in pods:
            ni = node_map.get(p.spec.node_name) if p.spec.node_name else None
            if ni is not None:
                ni.add_pod(PodInfo.of(p))
        for n in node_list:
            states = node_map[n.metadata.name].image_states
            for image in n.status.images:
                for image_name in image.names:
                    if image_name not in states:
                        states[image_name] = ImageStateSummary(
                            sizes[image_name], len(holders[image_name])
                        )
        snap.node_info_list = [node_map[name] for name in tree.list()]
        snap.rebuild_lists()
        snap.image_names = set(holders)
        return snap

    @property
    def positions(self) -> dict[str, int]:
        """Node name -> index in node_info_list (built on first use after a list rebuild;
        never changed in place, so a holder may keep it as a hint for that list)."""
        pos = self._positions
        if pos is None:
            lst = self.node_info_list
            names = self._names
            if names is not None and names[0] is lst and len(names[1]) == len(lst):
                pos = dict(zip(names[1], range(len(lst)), strict=True))
            else:
                pos = dict(zip(map(_name, lst), range(len(lst)), strict=True))
            self._positions = pos
        return pos

    @positions.setter
    def positions(self, value: dict[str, int]) -> None:
        self._positions = value

    def survivors_of(self, old: dict[str, int]) -> tuple[int, ...] | None:
        """For each position of node_info_list, the index its node had in ``old``, the
        positions map of an earlier node list of this snapshot, when every node listed was
        listed there (nodes only went, at least two stay); None otherwise. The answer for
        the last map asked is kept."""
        lst = self.node_info_list
        kept = self._survivors
        if kept is not None and kept[0] is old and kept[1] is lst:
            return kept[2]
        now = self.positions
        at: tuple[int, ...] | None = None
        if 1 < len(now) <= len(old):
            try:
                at = itemgetter(*now)(old)  # (one C loop)
            except KeyError:
                at = None  # a node came
        self._survivors = (old, lst, at)
        return at

    def note_names(self, names: list[str]) -> None:
        """The names of node_info_list's nodes, in order (the cache just built the list
        from them; never changed afterwards)."""
        self._names = (self.node_info_list, names)

    def rebuild_lists(
        self, removed: Sequence[NodeInfo] | None = None, affinity: bool = True,
        anti_affinity: bool = True,
    ) -> None:
        """Recompute the positions, affinity lists and used-PVC set from node_info_list.

        ``removed``: the lists were up to date before these NodeInfos went (and others
        changed in place, ``affinity``/``anti_affinity`` telling whether any entered or left
        that list, none changing its PVCs): an affinity list that was empty and that nothing
        entered stays empty, and the used-PVC set stays when no removed node used a PVC."""
        # The same lists the comprehensions give, built at C speed (the node set changes on
        # every node removal, so this runs once per drained node in removable_nodes).
        lst = self.node_info_list
        self._positions = None  # built on first use (a drain's removals may need none)
        self._scans = 0
        if removed is None or affinity or self.have_pods_with_affinity_node_info_list:
            self.have_pods_with_affinity_node_info_list = list(filter(_with_affinity, lst))
        if (
            removed is None or anti_affinity
            or self.have_pods_with_required_anti_affinity_node_info_list
        ):
            self.have_pods_with_required_anti_affinity_node_info_list = list(
                filter(_with_anti_affinity, lst)
            )
        if removed is None or any(map(_pvc_refs, removed)):
            self.used_pvc_set = set().union(*map(_pvc_refs, lst))

    def record_changes(self, since: int, changes: list[tuple[int, str]]) -> None:
        """Note the NodeInfos the cache just updated, as (generation, name) oldest first, on a
        snapshot that was at generation ``since`` (Cache.update_snapshot calls this)."""
        if self._change_log_floor is None:
            self._change_log_floor = since
        log = self._change_log
        log.extend(changes)
        if len(log) > _CHANGE_LOG_MAX:
            cut = len(log) - _CHANGE_LOG_MAX // 2
            self._change_log_floor = log[cut - 1][0]
            del log[:cut]

    def changed_since(self, generation: int) -> list[str] | None:
        """Names (maybe repeated) of the nodes whose NodeInfo the cache updated in this
        snapshot after ``generation``, a generation this snapshot had; None when the log does
        not reach back that far. Node list rebuilds are not covered: they replace
        node_info_list (a new list)."""
        floor = self._change_log_floor
        if floor is None or generation < floor:
            return None
        log = self._change_log
        out: list[str] = []
        i = len(log) - 1
        while i >= 0 and log[i][0] > generation:
            out.append(log[i][1])
            i -= 1
        return out

    def share_into(self, new: Snapshot) -> None:
        """Make ``new`` equal to this snapshot, sharing the NodeInfos copy-on-write (both
        snapshots replace a shared entry instead of writing it: see ``unshare``)."""
        mark = next_generation()
        self.shared_generation = mark
        new.node_info_map = dict(self.node_info_map)
        new.node_info_list = list(self.node_info_list)
        new.have_pods_with_affinity_node_info_list = list(
            self.have_pods_with_affinity_node_info_list
        )
        new.have_pods_with_required_anti_affinity_node_info_list = list(
            self.have_pods_with_required_anti_affinity_node_info_list
        )
        new.used_pvc_set = set(self.used_pvc_set)
        new.generation = self.generation
        new.shared_generation = mark
        new._positions = None if self._positions is None else dict(self._positions)

    def unshare(self, name: str, old: NodeInfo) -> NodeInfo:
        """Replace the shared entry ``old`` of ``name`` by a private shallow copy everywhere it
        is listed, and return the copy (which the caller then updates in place)."""
        new = NodeInfo.__new__(NodeInfo)
        for slot in NodeInfo.__slots__:
            setattr(new, slot, getattr(old, slot))
        self.node_info_map[name] = new
        lst = self.node_info_list
        pos = self._positions
        if pos is None and self._scans >= _MAX_SCANS:
            pos = self.positions  # many replacements since the rebuild: index them all
        i = None if pos is None else pos.get(name)
        if i is None or i >= len(lst) or lst[i] is not old:
            self._scans += 1
            try:
                i = lst.index(old)  # by identity (NodeInfo has no __eq__), at C speed
            except ValueError:
                i = None
        if i is not None:
            lst[i] = new
        for aff in (
            self.have_pods_with_affinity_node_info_list,
            self.have_pods_with_required_anti_affinity_node_info_list,
        ):
            if aff:
                k = self._affinity_index(aff, name, self.positions.get(name), old)
                if k is not None:
                    aff[k] = new
        return new

    def _affinity_index(
        self, aff: list[NodeInfo], name: str, at: int | None, old: NodeInfo
    ) -> int | None:
        """Where ``old`` (node ``name``, at position ``at``) sits in an affinity list, None
        when absent: found by bisection on the node positions (the lists keep node_info_list
        order), else by a scan."""
        pos = self.positions
        if at is not None:
            try:
                k = bisect_left(aff, at, key=lambda n: pos[n.name])
            except KeyError:
                k = -1
            if 0 <= k < len(aff):
                if aff[k] is old:
                    return k
                if aff[k].name != name:
                    return None  # not listed (the node's place holds another node)
            elif k == len(aff):
                return None
        for k, ni in enumerate(aff):
            if ni is old:
                return k
        return None

    def update_affinity_lists(
        self, affinity: list[tuple[NodeInfo, bool]], anti_affinity: list[tuple[NodeInfo, bool]]
    ) -> None:
        """Add (True) or remove (False) NodeInfos to or from the affinity lists, keeping them
        in node_info_list order: what rebuild_lists gives when only these nodes changed."""
        pos = self.positions
        for changes, lst in (
            (affinity, self.have_pods_with_affinity_node_info_list),
            (anti_affinity, self.have_pods_with_required_anti_affinity_node_info_list),
        ):
            for ni, present in changes:
                if present:
                    insort(lst, ni, key=lambda n: pos[n.name])
                else:
                    lst.remove(ni)

    # SharedLister
    def node_infos(self) -> Snapshot:
        return self

    def storage_infos(self) -> Snapshot:
        return self

    # NodeInfoLister
    def list(self) -> Sequence[NodeInfo]:
        return self.node_info_list

    def have_pods_with_affinity_list(self) -> Sequence[NodeInfo]:
        return self.have_pods_with_affinity_node_info_list

    def have_pods_with_required_anti_affinity_list(self) -> Sequence[NodeInfo]:
        return self.have_pods_with_required_anti_affinity_node_info_list

    def get(self, node_name: str) -> NodeInfo:
        ni = self.node_info_map.get(node_name)
        if ni is None or ni.node is None:
            raise KeyError(f'nodeinfo not found for node name "{node_name}"')
        return ni

    # StorageInfoLister
    def is_pvc_used_by_pods(self, key: str) -> bool:
        return key in self.used_pvc_set

    def num_nodes(self) -> int:
        return len(self.node_info_list)
