"""Concrete stores behind the Handle: cluster objects, host hooks, clocks."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kschedlib.api.node import Namespace
from kschedlib.api.pod import Pod
from kschedlib.clock import FakeClock, RealClock
from kschedlib.framework.interface import SharedLister, WaitingPod

# The clocks live in kschedlib.clock; they are re-exported here for older imports.
__all__ = ["BasicHandle", "FakeClock", "NoopHostHooks", "ObjectStore", "RealClock"]


class ObjectStore:
    """Cluster objects other than pods and nodes, by kind and key (informer caches)."""

    __slots__ = ("_objects", "generation")

    def __init__(self) -> None:
        self._objects: dict[str, dict[str, Any]] = {}
        self.generation = 0

    def copy_from(self, other: ObjectStore) -> None:
        """Hold the same (immutable) objects as ``other``, independently of it (forks)."""
        self._objects = {kind: dict(bucket) for kind, bucket in other._objects.items()}
        self.generation = other.generation

    @staticmethod
    def key_of(obj: Any) -> str:
        meta = obj.metadata
        return f"{meta.namespace}/{meta.name}" if meta.namespace else meta.name

    def upsert(self, obj: Any) -> Any | None:
        """Add or replace an object (kind from ``obj.kind``); returns the previous version."""
        bucket = self._objects.setdefault(obj.kind, {})
        key = self.key_of(obj)
        old = bucket.get(key)
        bucket[key] = obj
        self.generation += 1
        return old

    def delete(self, obj: Any) -> Any | None:
        bucket = self._objects.get(obj.kind, {})
        old = bucket.pop(self.key_of(obj), None)
        self.generation += 1
        return old

    def get_object(self, kind: str, key: str) -> Any | None:
        return self._objects.get(kind, {}).get(key)

    def list_objects(self, kind: str) -> Iterable[Any]:
        return list(self._objects.get(kind, {}).values())

    def get_namespace(self, name: str) -> Namespace | None:
        ns = self.get_object("Namespace", name)
        return ns if isinstance(ns, Namespace) else None


class NoopHostHooks:
    """Host hooks that only record what plugins asked for."""

    def __init__(self) -> None:
        self.deleted: list[tuple[Pod, str]] = []
        self.cleared_nominations: list[Pod] = []
        self.amended: list[Pod] = []

    def delete_pod(self, pod: Pod, reason: str) -> None:
        self.deleted.append((pod, reason))

    def clear_nominated_node_name(self, pod: Pod) -> None:
        self.cleared_nominations.append(pod)

    def amend_assumed_pod(self, pod: Pod, annotations: Mapping[str, str]) -> Pod:
        """The pod with ``annotations`` added (nothing else to update without a scheduler)."""
        new = pod.with_annotations(annotations)
        self.amended.append(new)
        return new


class BasicHandle:
    """A Handle over a snapshot, an object store and host hooks (no waiting pods).

    The scheduler's Framework provides the full Handle; this one serves plugin tests and
    one-shot use.
    """

    def __init__(
        self,
        snapshot: SharedLister,
        objects: ObjectStore | None = None,
        clock: Any = None,
        host: Any = None,
        feature_gates: Any = None,
    ) -> None:
        from kschedlib.features import FeatureGates, PluginFeatures

        self.feature_gates = FeatureGates.of(feature_gates)
        self.features = PluginFeatures.from_gates(self.feature_gates)
        self._snapshot = snapshot
        self._objects = objects if objects is not None else ObjectStore()
        self._clock = clock if clock is not None else FakeClock()
        self._host = host if host is not None else NoopHostHooks()

    def snapshot_shared_lister(self) -> SharedLister:
        return self._snapshot

    def set_snapshot(self, snapshot: SharedLister) -> None:
        self._snapshot = snapshot

    def iterate_over_waiting_pods(self, callback: Callable[[WaitingPod], None]) -> None:
        return None

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return None

    def reject_waiting_pod(self, uid: str) -> bool:
        return False

    def activate(self, pods: Any) -> None:
        """Handle.Activate: nothing to move without a queue."""
        return None

    @property
    def clock(self) -> Any:
        return self._clock

    @property
    def objects(self) -> ObjectStore:
        return self._objects

    @property
    def host(self) -> Any:
        return self._host
