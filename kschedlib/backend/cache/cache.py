"""Cache: the scheduler's live, pod-centred view of the cluster (backend/cache/cache.go).

NodeInfos sit in a doubly linked list ordered by generation (most recently changed first),
so ``update_snapshot`` copies only what changed since the snapshot was taken.
"""

from __future__ import annotations

import time
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.backend.cache.node_tree import NodeTree
from kschedlib.errors import CacheError
from kschedlib.framework.types import (
    HostPortInfo,
    ImageStateSummary,
    NodeInfo,
    PodInfo,
    clone_extensions,
    next_generation,
    pod_with_affinity,
    pod_with_required_anti_affinity,
)

if TYPE_CHECKING:
    from kschedlib.backend.snapshot import Snapshot

__all__ = ["Cache", "Clock", "Dump", "InconsistentSnapshotError"]


class Clock(Protocol):
    def now(self) -> float: ...


class _WallClock:
    __slots__ = ()

    def now(self) -> float:
        return time.time()


class InconsistentSnapshotError(CacheError):
    """The snapshot was out of step with the cache; it has been repaired, but this cycle fails."""


class _ImageState:
    """One image across the cluster: its size (from the first node reporting it) and nodes."""

    __slots__ = ("size", "nodes", "_summary")

    def __init__(self, size: int) -> None:
        self.size = size
        self.nodes: set[str] = set()
        self._summary: ImageStateSummary | None = None

    def summary(self) -> ImageStateSummary:
        """The summary as a snapshot sees it now (NumNodes counted at copy time, as Go does)."""
        s = self._summary
        if s is None or s.num_nodes != len(self.nodes):
            s = self._summary = ImageStateSummary(self.size, len(self.nodes))
        return s


class _NodeItem:
    """A NodeInfo in the most-recently-updated list, with the image names of its node."""

    __slots__ = ("name", "info", "next", "prev", "images")

    def __init__(self, name: str) -> None:
        self.name = name
        self.info = NodeInfo()
        self.next: _NodeItem | None = None
        self.prev: _NodeItem | None = None
        self.images: tuple[str, ...] = ()


class _PodState:
    __slots__ = ("pod", "deadline", "binding_finished")

    def __init__(self, pod: Pod) -> None:
        self.pod = pod
        self.deadline: float | None = None
        self.binding_finished = False


_MISSING: Any = object()


class _Journal:
    """What a cache looked like before the first change of each node, pod and image after a
    savepoint (:meth:`Cache.savepoint`): enough to roll back in O(changes)."""

    __slots__ = ("items", "pod_states", "assumed", "tree", "images")

    def __init__(self) -> None:
        # name -> (item, NodeInfo, image names) at the savepoint; item None: no such node.
        self.items: dict[str, tuple[_NodeItem | None, NodeInfo | None, tuple[str, ...]]] = {}
        self.pod_states: dict[str, Any] = {}
        self.assumed: dict[str, bool] = {}
        self.tree: NodeTree | None = None
        self.images: dict[str, tuple[int, set[str]] | None] = {}


@attrs.define(slots=True, frozen=True)
class Dump:
    """A debugging copy of the cache: every NodeInfo (ghosts included) and the assumed keys."""

    nodes: dict[str, NodeInfo]
    assumed_pods: frozenset[str]


def _pod_ref(pod: Pod) -> str:
    """``uid(ns/name)`` as kube-scheduler prints a pod, or just ``ns/name`` without a UID."""
    key = pod.uid
    ref = pod.key
    return ref if key == ref else f"{key}({ref})"


def copy_node_info(dst: NodeInfo, src: NodeInfo) -> None:
    """Overwrite ``dst`` in place with a snapshot copy of ``src`` (PodInfos and allocatable are
    shared, the other aggregates copied), so references to ``dst`` stay valid. Image states
    are not copied."""
    dst.node = src.node
    dst.name = src.name
    dst.pods = src.pods.copy()
    dst.pods_with_affinity = src.pods_with_affinity.copy()
    dst.pods_with_required_anti_affinity = src.pods_with_required_anti_affinity.copy()
    ports = src.used_ports
    if ports:
        dst.used_ports = ports.copy()
    else:
        dst.used_ports = HostPortInfo()
    dst.requested = src.requested.clone()
    dst.non_zero_requested = src.non_zero_requested.clone()
    # Shared: allocatable is replaced (set_node), never changed in place.
    dst.allocatable = src.allocatable
    dst.pvc_ref_counts = src.pvc_ref_counts.copy()
    dst.generation = src.generation
    dst.extensions = clone_extensions(src.extensions)


# Slots copy_node_info fills, plus image_states filled by the cache; a test checks that this
# covers NodeInfo.__slots__ so a new NodeInfo field cannot be silently left out of snapshots.
COPIED_NODE_INFO_SLOTS = frozenset(
    (
        "node",
        "name",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "used_ports",
        "requested",
        "non_zero_requested",
        "allocatable",
        "pvc_ref_counts",
        "generation",
        "image_states",
        "extensions",
    )
)


_MAX_GONE = 64
"""Removed node names a cache keeps as a hint for snapshots (then it starts over)."""


class Cache:
    """Pods (assumed and confirmed) aggregated per node, nodes in a zone-ordered tree, and the
    incremental snapshot machinery. Invalid transitions raise CacheError and change nothing.

    ``ttl`` (seconds) expires assumed pods whose binding finished; 0 means never (the default).
    """

    __slots__ = (
        "_ttl", "_clock", "_assumed", "_pod_states", "_nodes", "_head", "_tree", "_images",
        "_pod_level", "_shared_generation", "_journals", "_uid_by_key", "_image_names",
        "_gone",
    )

    def __init__(
        self, ttl: float = 0.0, clock: Clock | None = None, pod_level_resources: bool = True
    ) -> None:
        if ttl < 0:
            raise ValueError(f"ttl must be >= 0, got {ttl}")
        self._ttl = ttl
        # PodLevelResources gate: whether pod-level requests count in NodeInfo accounting.
        self._pod_level = pod_level_resources
        self._clock: Clock = clock if clock is not None else _WallClock()
        self._assumed: set[str] = set()
        self._pod_states: dict[str, _PodState] = {}
        # namespace/name -> UID of the cached pods: host events by key cost O(1)
        self._uid_by_key: dict[str, str] = {}
        self._nodes: dict[str, _NodeItem] = {}
        self._head: _NodeItem | None = None
        self._tree = NodeTree()
        self._images: dict[str, _ImageState] = {}
        # The names in _images, frozen for snapshots (None: to take again, the names changed).
        self._image_names: frozenset[str] | None = None
        # Names of nodes removed lately (a hint, checked before use: see _remove_deleted_nodes).
        self._gone: set[str] = set()
        # NodeInfos with a generation at or below this are shared with a fork (copy on write).
        self._shared_generation = 0
        # Open savepoints, oldest first (transactions): every change is noted in each.
        self._journals: list[_Journal] = []

    # ---- forks ----------------------------------------------------------------------------

    def _note(self, name: str) -> None:
        """Record node ``name`` as it is, in every open savepoint that has not yet."""
        for j in self._journals:
            if name not in j.items:
                item = self._nodes.get(name)
                j.items[name] = (item, None, ()) if item is None else (item, item.info, item.images)

    def _note_pod(self, key: str) -> None:
        for j in self._journals:
            if key not in j.pod_states:
                j.pod_states[key] = self._pod_states.get(key, _MISSING)
                j.assumed[key] = key in self._assumed

    def _note_images(self, names: tuple[str, ...] | list[str]) -> None:
        for j in self._journals:
            for image_name in names:
                if image_name not in j.images:
                    st = self._images.get(image_name)
                    j.images[image_name] = None if st is None else (st.size, set(st.nodes))

    def _note_tree(self) -> None:
        for j in self._journals:
            if j.tree is None:
                j.tree = self._tree.copy()

    def savepoint(self) -> object:
        """Start recording changes (a transaction's savepoint); :meth:`rollback` to it undoes
        them in O(changes), :meth:`release` keeps them. Savepoints nest."""
        j = _Journal()
        self._journals.append(j)
        # NodeInfos of the savepoint are never written again: a change copies them first.
        self._shared_generation = next_generation()
        return j

    def release(self, token: object) -> None:
        """Keep the changes made since the savepoint ``token`` (the innermost one)."""
        if not self._journals or self._journals[-1] is not token:
            raise CacheError("savepoints must end innermost first")
        self._journals.pop()

    def rollback(self, token: object) -> None:
        """Undo every change since the savepoint ``token`` (the innermost one). The nodes it
        restores get a fresh generation, so snapshots copy them again (and only them)."""
        if not self._journals or self._journals[-1] is not token:
            raise CacheError("savepoints must end innermost first")
        j = self._journals.pop()
        by_key = self._uid_by_key
        for key, old in j.pod_states.items():
            if old is _MISSING:
                gone = self._pod_states.pop(key, None)
                if gone is not None and by_key.get(gone.pod.key) == key:
                    del by_key[gone.pod.key]
        for key, old in j.pod_states.items():
            if old is not _MISSING:
                self._pod_states[key] = old
                by_key[old.pod.key] = key
        for key, was in j.assumed.items():
            if was:
                self._assumed.add(key)
            else:
                self._assumed.discard(key)
        if j.tree is not None:
            self._tree = j.tree
        if j.images:
            self._image_names = None
        for image_name, saved in j.images.items():
            if saved is None:
                self._images.pop(image_name, None)
            else:
                state = self._images[image_name] = _ImageState(saved[0])
                state.nodes = saved[1]
        for name, (item, info, images) in j.items.items():
            current = self._nodes.get(name)
            if current is not None:
                self._unlink(current)
            if item is None or info is None:
                continue
            restored = info.clone()
            restored.generation = next_generation()
            item.info = restored
            item.images = images
            item.prev = item.next = None
            self._nodes[name] = item
            self._move_to_head(item)

    def _own(self, item: _NodeItem) -> NodeInfo:
        """The item's NodeInfo, copied first when a fork still shares it."""
        if self._journals:
            self._note(item.name)
        info = item.info
        if info.generation <= self._shared_generation:
            info = item.info = info.clone()
        return info

    def fork(self, clock: Clock | None = None) -> Cache:
        """An independent cache with the same content. NodeInfos are shared copy-on-write
        (both caches copy one before changing it), so forking costs O(nodes) small objects."""
        mark = next_generation()
        self._shared_generation = mark
        new = Cache.__new__(Cache)
        new._ttl = self._ttl
        new._pod_level = self._pod_level
        new._clock = clock if clock is not None else self._clock
        new._assumed = set(self._assumed)
        new._pod_states = dict(self._pod_states)
        new._uid_by_key = dict(self._uid_by_key)
        new._tree = self._tree.copy()
        new._images = {}
        new._image_names = self._image_names
        new._gone = set()
        for name, st in self._images.items():
            image = _ImageState(st.size)
            image.nodes = set(st.nodes)
            new._images[name] = image
        new._shared_generation = mark
        new._journals = []
        nodes: dict[str, _NodeItem] = {}
        prev: _NodeItem | None = None
        head: _NodeItem | None = None
        item = self._head
        while item is not None:
            c = _NodeItem.__new__(_NodeItem)
            c.name = item.name
            c.info = item.info
            c.images = item.images
            c.prev = prev
            c.next = None
            if prev is None:
                head = c
            else:
                prev.next = c
            nodes[c.name] = c
            prev = c
            item = item.next
        new._nodes = nodes
        new._head = head
        return new

    # ---- most-recently-updated list -------------------------------------------------------

    def _item(self, name: str) -> _NodeItem:
        item = self._nodes.get(name)
        if item is None:
            if self._journals:
                self._note(name)
            item = self._nodes[name] = _NodeItem(name)
        return item

    def _move_to_head(self, item: _NodeItem) -> None:
        head = self._head
        if item is head:
            return
        prev, nxt = item.prev, item.next
        if prev is not None:
            prev.next = nxt
        if nxt is not None:
            nxt.prev = prev
        if head is not None:
            head.prev = item
        item.next = head
        item.prev = None
        self._head = item

    def _unlink(self, item: _NodeItem) -> None:
        if self._journals:
            self._note(item.name)
        prev, nxt = item.prev, item.next
        if prev is not None:
            prev.next = nxt
        if nxt is not None:
            nxt.prev = prev
        if item is self._head:
            self._head = nxt
        item.prev = item.next = None
        del self._nodes[item.name]

    # ---- pods -----------------------------------------------------------------------------

    def _add_pod(self, pod: Pod, assumed: bool, pod_info: PodInfo | None = None) -> None:
        item = self._item(pod.spec.node_name)
        if pod_info is None:
            pod_info = PodInfo.of(pod) if self._pod_level else PodInfo.of(pod, pod_level=False)
        self._own(item).add_pod(pod_info)
        self._move_to_head(item)
        key = pod.uid
        if self._journals:
            self._note_pod(key)
        self._pod_states[key] = _PodState(pod)
        self._uid_by_key[pod.key] = key
        if assumed:
            self._assumed.add(key)

    def _remove_pod(self, cached: Pod) -> None:
        """Remove a cached pod (the object the cache holds) from its node and the cache."""
        item = self._nodes.get(cached.spec.node_name)
        if item is not None:
            info = self._own(item)
            info.remove_pod(cached)
            if not info.pods and info.node is None:
                self._unlink(item)
            else:
                self._move_to_head(item)
        key = cached.uid
        if self._journals:
            self._note_pod(key)
        del self._pod_states[key]
        if self._uid_by_key.get(cached.key) == key:
            del self._uid_by_key[cached.key]
        self._assumed.discard(key)

    def assume_pod(self, pod: Pod) -> None:
        """Account the pod on ``spec.node_name`` at once, before its binding is confirmed."""
        key = pod.uid
        if key in self._pod_states:
            raise CacheError(f"pod {_pod_ref(pod)} is in the cache, so can't be assumed")
        if not pod.spec.node_name:
            raise CacheError(f"pod {_pod_ref(pod)} has no spec.nodeName, so can't be assumed")
        self._add_pod(pod, assumed=True)

    def finish_binding(self, pod: Pod, now: float | None = None) -> None:
        """Mark an assumed pod's binding as finished, starting its TTL (no-op otherwise)."""
        key = pod.uid
        old = self._pod_states.get(key)
        if old is None or key not in self._assumed:
            return
        ps = _PodState(old.pod)
        if self._ttl == 0:
            ps.deadline = None
        else:
            ps.deadline = (self._clock.now() if now is None else now) + self._ttl
        ps.binding_finished = True
        # A fresh state object: a fork may share the old one.
        if self._journals:
            self._note_pod(key)
        self._pod_states[key] = ps

    def forget_pod(self, pod: Pod) -> None:
        """Undo assume_pod: only an assumed pod, and only on the node it was assumed on."""
        key = pod.uid
        ps = self._pod_states.get(key)
        if ps is not None and ps.pod.spec.node_name != pod.spec.node_name:
            raise CacheError(
                f'pod {_pod_ref(pod)} is in the cache on node "{ps.pod.spec.node_name}", '
                f'not on "{pod.spec.node_name}", so it cannot be forgotten'
            )
        if ps is None or key not in self._assumed:
            raise CacheError(f"pod {_pod_ref(pod)} wasn't assumed so cannot be forgotten")
        self._remove_pod(ps.pod)

    def replace_assumed_pod(self, new_pod: Pod) -> None:
        """Swap an assumed pod for a new object of it (same UID and node, e.g. annotations a
        Reserve plugin added); it stays assumed."""
        key = new_pod.uid
        ps = self._pod_states.get(key)
        if ps is None or key not in self._assumed:
            raise CacheError(f"pod {_pod_ref(new_pod)} wasn't assumed so cannot be replaced")
        if ps.pod.spec.node_name != new_pod.spec.node_name:
            raise CacheError(
                f'pod {_pod_ref(new_pod)} is assumed on node "{ps.pod.spec.node_name}", '
                f'not on "{new_pod.spec.node_name}"'
            )
        self._remove_pod(ps.pod)
        self._add_pod(new_pod, assumed=True)

    def add_pod(self, pod: Pod, *, pod_info: PodInfo | None = None) -> None:
        """A bound pod appeared: confirms an assumed pod (taking the new object, even on
        another node) or adds a pod the scheduler did not assume. ``pod_info``: a prepared
        PodInfo of ``pod`` to store (what-if replicas share one computation)."""
        key = pod.uid
        ps = self._pod_states.get(key)
        if ps is not None and key not in self._assumed:
            raise CacheError(f"pod {_pod_ref(pod)} was already in added state")
        if not pod.spec.node_name:
            raise CacheError(f"pod {_pod_ref(pod)} has no spec.nodeName, so can't be added")
        if ps is not None:
            if pod is ps.pod and pod_info is None and self._confirm_in_place(pod):
                return
            self._remove_pod(ps.pod)
        self._add_pod(pod, assumed=False, pod_info=pod_info)

    def _confirm_in_place(self, pod: Pod) -> bool:
        """Confirm an assumed pod whose bound object is the assumed one: when it is the last
        pod of its node and in no affinity list, removing and re-adding it would leave the
        NodeInfo as it is (same pods in the same order, same sums), so only its state changes
        (the NodeInfo keeps its generation and stays shared with the snapshot)."""
        item = self._nodes.get(pod.spec.node_name)
        if item is None:
            return False
        pods = item.info.pods
        if not pods or pods[-1].pod is not pod or pod_with_affinity(pod) or (
            pod_with_required_anti_affinity(pod)
        ):
            return False
        key = pod.uid
        self._pod_states[key] = _PodState(pod)
        self._assumed.discard(key)
        return True

    def update_pod(self, old_pod: Pod, new_pod: Pod) -> None:
        """Replace a confirmed pod by its new version on the same node."""
        key = old_pod.uid
        ps = self._pod_states.get(key)
        if ps is None:
            raise CacheError(
                f"pod {_pod_ref(old_pod)} is not added to scheduler cache, so cannot be updated"
            )
        if key in self._assumed:
            raise CacheError(f"assumed pod {_pod_ref(old_pod)} should not be updated")
        if new_pod.uid != key:
            raise CacheError(
                f"pod {_pod_ref(old_pod)} cannot be updated to pod {_pod_ref(new_pod)}: "
                "the UIDs differ"
            )
        cached_node = ps.pod.spec.node_name
        if new_pod.spec.node_name != cached_node:
            raise CacheError(
                f'pod {_pod_ref(old_pod)} updated on node "{new_pod.spec.node_name}", '
                f'different from the node it was added to ("{cached_node}")'
            )
        self._remove_pod(ps.pod)
        self._add_pod(new_pod, assumed=False)

    def remove_pod(self, pod: Pod) -> None:
        """Remove a pod (confirmed or assumed); an empty spec.nodeName matches any node."""
        key = pod.uid
        ps = self._pod_states.get(key)
        if ps is None:
            raise CacheError(
                f"pod {_pod_ref(pod)} is not found in scheduler cache, so cannot be removed from it"
            )
        cached_node = ps.pod.spec.node_name
        if pod.spec.node_name and pod.spec.node_name != cached_node:
            raise CacheError(
                f'pod {_pod_ref(pod)} is cached on node "{cached_node}", '
                f'not on "{pod.spec.node_name}", so it cannot be removed'
            )
        self._remove_pod(ps.pod)

    def is_assumed_pod(self, pod: Pod) -> bool:
        return pod.uid in self._assumed

    def get_pod(self, pod: Pod) -> Pod:
        """The cached version of the pod (possibly on a node already deleted)."""
        ps = self._pod_states.get(pod.uid)
        if ps is None:
            raise CacheError(f"pod {_pod_ref(pod)} does not exist in scheduler cache")
        return ps.pod

    def find_pod(self, uid_or_key: str) -> Pod | None:
        """The cached pod with this UID, else with this namespace/name (O(1)), or None."""
        ps = self._pod_states.get(uid_or_key)
        if ps is None:
            uid = self._uid_by_key.get(uid_or_key)
            ps = None if uid is None else self._pod_states.get(uid)
        return None if ps is None else ps.pod

    def cleanup_assumed_pods(self) -> list[Pod]:
        """Expire assumed pods past their deadline by the injected clock; returns them."""
        return self.cleanup_expired_assumed_pods(self._clock.now())

    def cleanup_expired_assumed_pods(self, now: float) -> list[Pod]:
        """Remove assumed pods whose binding finished and whose deadline is before ``now``."""
        if self._ttl == 0:
            return []
        expired: list[Pod] = []
        for key in list(self._assumed):
            ps = self._pod_states[key]
            if ps.binding_finished and ps.deadline is not None and now > ps.deadline:
                self._remove_pod(ps.pod)
                expired.append(ps.pod)
        return expired

    # ---- nodes ----------------------------------------------------------------------------

    def _add_images(self, item: _NodeItem, node: Node) -> None:
        table = self._images
        name = item.name
        if self._journals:
            self._note(name)
            self._note_images([n for image in node.status.images for n in image.names])
        names: dict[str, None] = {}
        for image in node.status.images:
            for image_name in image.names:
                state = table.get(image_name)
                if state is None:
                    state = table[image_name] = _ImageState(image.size_bytes)
                    self._image_names = None
                state.nodes.add(name)
                names[image_name] = None
        item.images = tuple(names)

    def _remove_images(self, item: _NodeItem) -> None:
        table = self._images
        if self._journals:
            self._note(item.name)
            self._note_images(item.images)
        for image_name in item.images:
            state = table.get(image_name)
            if state is not None:
                state.nodes.discard(item.name)
                if not state.nodes:
                    del table[image_name]
                    self._image_names = None
        item.images = ()

    def add_node(self, node: Node) -> NodeInfo:
        """Add (or re-add) a node; returns a snapshot copy of its NodeInfo."""
        item = self._item(node.metadata.name)
        self._remove_images(item)
        self._move_to_head(item)
        if self._journals:
            self._note_tree()
        self._tree.add_node(node)
        self._add_images(item, node)
        self._own(item).set_node(node)
        return self._copy(item)

    def update_node(self, old_node: Node | None, new_node: Node) -> NodeInfo:
        """Replace a node's object (moving it in the tree when its zone changed)."""
        name = new_node.metadata.name
        if old_node is not None and old_node.metadata.name != name:
            raise CacheError(
                f'node "{old_node.metadata.name}" cannot be updated to node "{name}": '
                "the names differ"
            )
        item = self._item(name)
        self._remove_images(item)
        self._move_to_head(item)
        if self._journals:
            self._note_tree()
        self._tree.update_node(old_node, new_node)
        self._add_images(item, new_node)
        self._own(item).set_node(new_node)
        return self._copy(item)

    def remove_node(self, node: Node | str) -> None:
        """Remove a node; a NodeInfo without node (a ghost) stays while pods remain on it."""
        name = node if isinstance(node, str) else node.metadata.name
        item = self._nodes.get(name)
        if item is None:
            raise CacheError(f'node "{name}" is not found')
        if name not in self._tree:
            raise CacheError(
                f'node "{name}" is not found: it was already removed '
                f"({len(item.info.pods)} pods are still cached on it)"
            )
        self._own(item).remove_node()
        if item.info.pods:
            self._move_to_head(item)
        else:
            self._unlink(item)
        if self._journals:
            self._note_tree()
        self._tree.remove_node(name)
        self._remove_images(item)
        gone = self._gone
        if len(gone) >= _MAX_GONE:
            gone.clear()
        gone.add(name)

    def get_node(self, name: str) -> NodeInfo:
        """A snapshot copy of a node's NodeInfo (ghosts included); for tests and debugging."""
        item = self._nodes.get(name)
        if item is None:
            raise CacheError(f'node "{name}" does not exist in scheduler cache')
        return self._copy(item)

    def changed_since(self, generation: int) -> list[str]:
        """Names of the NodeInfos (ghosts included) changed after ``generation``, newest first."""
        out: list[str] = []
        item = self._head
        while item is not None and item.info.generation > generation:
            out.append(item.name)
            item = item.next
        return out

    def latest_generation(self) -> int:
        """The generation of the most recent NodeInfo change (0 for an empty cache)."""
        return self._head.info.generation if self._head is not None else 0

    def node_count(self) -> int:
        """NodeInfos in the cache, ghosts included."""
        return len(self._nodes)

    def pod_count(self) -> int:
        """Pods in the cache, including those on ghost nodes."""
        return sum(len(item.info.pods) for item in self._nodes.values())

    def has_node(self, name: str) -> bool:
        """Whether ``name`` is a node of the node tree (a ghost is not)."""
        return name in self._tree

    def node_names(self) -> list[str]:
        """Names of the nodes in the node tree, in snapshot (round-robin by zone) order."""
        return self._tree.list()

    def pods(self) -> list[Pod]:
        """Every pod in the cache (bound and assumed), node by node as :meth:`dump` lists
        them, without copying any NodeInfo."""
        return [pi.pod for item in self._nodes.values() for pi in item.info.pods]

    def dump(self) -> Dump:
        return Dump(
            nodes={name: self._copy(item) for name, item in self._nodes.items()},
            assumed_pods=frozenset(self._assumed),
        )

    # ---- snapshots ------------------------------------------------------------------------

    def _copy(self, item: _NodeItem) -> NodeInfo:
        dst = NodeInfo.__new__(NodeInfo)
        self._copy_into(dst, item)
        return dst

    def _copy_into(self, dst: NodeInfo, item: _NodeItem) -> None:
        copy_node_info(dst, item.info)
        images = item.images
        if images:
            table = self._images
            dst.image_states = {name: table[name].summary() for name in images}
        else:
            dst.image_states = {}

    def update_snapshot(self, snapshot: Snapshot) -> None:
        """Bring ``snapshot`` up to date, copying only NodeInfos changed since its generation.

        Entries are updated in place. The node list is rebuilt (in node-tree order) only when
        the set of nodes changed; the affinity lists and used-PVC set only when they may have.
        Raises InconsistentSnapshotError, after repairing the snapshot, when it was out of step.
        """
        generation = snapshot.generation
        node_map = snapshot.node_info_map
        update_all = update_pvcs = False
        affinity: list[tuple[NodeInfo, bool]] = []  # nodes entering/leaving the affinity lists
        anti_affinity: list[tuple[NodeInfo, bool]] = []
        changes: list[tuple[int, str]] = []  # for Snapshot.changed_since, newest first
        item = self._head
        while item is not None:
            info = item.info
            if info.generation <= generation:
                break
            node = info.node
            if node is not None:
                name = node.metadata.name
                changes.append((info.generation, name))
                existing = node_map.get(name)
                if existing is None:
                    update_all = True
                    existing = node_map[name] = NodeInfo()
                elif existing.generation <= snapshot.shared_generation:
                    existing = snapshot.unshare(name, existing)
                if bool(existing.pods_with_affinity) != bool(info.pods_with_affinity):
                    affinity.append((existing, bool(info.pods_with_affinity)))
                if bool(existing.pods_with_required_anti_affinity) != bool(
                    info.pods_with_required_anti_affinity
                ):
                    anti_affinity.append((existing, bool(info.pods_with_required_anti_affinity)))
                if not update_pvcs:
                    old, new = existing.pvc_ref_counts, info.pvc_ref_counts
                    if len(old) != len(new) or (new and not new.keys() <= old.keys()):
                        update_pvcs = True
                self._copy_into(existing, item)
            item = item.next
        head = self._head
        if head is not None:
            snapshot.generation = head.info.generation
        names = self._image_names
        if names is None:
            names = self._image_names = frozenset(self._images)
        snapshot.image_names = names
        changes.reverse()
        snapshot.record_changes(generation, changes)

        tree = self._tree
        removed: list[NodeInfo] | None = None
        if len(node_map) > tree.num_nodes:
            # Nodes only went (none came): the lists without them need no full rebuild.
            removed = None if update_all else []
            self._remove_deleted_nodes(snapshot, removed)
            update_all = True
        if removed is not None and not update_pvcs:
            self._update_lists(snapshot, True, (removed, bool(affinity), bool(anti_affinity)))
        elif update_all or update_pvcs:
            self._update_lists(snapshot, update_all)
        elif affinity or anti_affinity:
            # Only some nodes entered or left the affinity lists: patch them in place.
            snapshot.update_affinity_lists(affinity, anti_affinity)

        if len(snapshot.node_info_list) != tree.num_nodes:
            msg = (
                "snapshot state is not consistent, length of NodeInfoList="
                f"{len(snapshot.node_info_list)} not equal to length of nodes in tree="
                f"{tree.num_nodes}, length of NodeInfoMap={len(node_map)}, "
                f"length of nodes in cache={len(self._nodes)}, trying to recover"
            )
            self._update_lists(snapshot, True)
            raise InconsistentSnapshotError(msg)

    def _remove_deleted_nodes(
        self, snapshot: Snapshot, removed: list[NodeInfo] | None = None
    ) -> None:
        """Drop the snapshot's entries of nodes no longer cached (appended to ``removed``)."""
        node_map = snapshot.node_info_map
        to_delete = len(node_map) - self._tree.num_nodes
        # Only names outside the node tree can be gone: those of the nodes removed lately
        # when they are all of them, else a set difference at C speed; they are taken in the
        # snapshot's order, as a scan of the whole map would take them. The hint is used
        # only when node_map holds every tree node (then exactly ``to_delete`` names are
        # outside): no node came since the update that listed exactly node_map's nodes.
        in_tree = self._tree.names()
        outside: set[str] = set()
        if (
            removed is not None
            and 0 < to_delete <= len(self._gone)
            and len(snapshot.node_info_list) == len(node_map)
        ):
            outside = {n for n in self._gone if n in node_map and n not in in_tree}
        if len(outside) != to_delete:
            outside = node_map.keys() - in_tree
        if len(outside) > to_delete:
            outside_names = [n for n in node_map if n in outside]
        else:
            outside_names = list(outside)
        for name in outside_names:
            if to_delete <= 0:
                break
            item = self._nodes.get(name)
            if item is None or item.info.node is None:
                gone = node_map.pop(name)
                if removed is not None:
                    removed.append(gone)
                to_delete -= 1

    def _update_lists(
        self, snapshot: Snapshot, update_all: bool,
        removal: tuple[list[NodeInfo], bool, bool] | None = None,
    ) -> None:
        """Rebuild the snapshot's node list (``update_all``) and derived lists; ``removal``:
        (the NodeInfos removed, whether nodes entered or left each affinity list) when nodes
        only went, see Snapshot.rebuild_lists."""
        if update_all:
            node_map = snapshot.node_info_map
            names = self._tree.list()
            try:
                # (one C loop; itemgetter of one name gives the entry, not a tuple)
                infos = (
                    list(itemgetter(*names)(node_map)) if len(names) > 1
                    else [node_map[name] for name in names]
                )
            except KeyError:
                removal = None  # an out-of-step snapshot: rebuild everything
                infos = []
                for name in names:
                    ni = node_map.get(name)
                    if ni is None:
                        # Only a snapshot out of step with this cache lacks a tree node: copy it.
                        ni = node_map[name] = self._copy(self._nodes[name])
                    infos.append(ni)
            snapshot.node_info_list = infos
            snapshot.note_names(names)
        if removal is not None:
            snapshot.rebuild_lists(*removal)
        else:
            snapshot.rebuild_lists()
