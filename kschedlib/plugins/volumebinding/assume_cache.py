"""AssumeCache: objects of one kind from the ObjectStore, overlaid by in-memory assumptions
(the PV/PVC assume caches of kube-scheduler's volume binder)."""

from __future__ import annotations

from typing import Any


class AssumeCache:
    """Reads objects of one kind through a handle's ObjectStore; an assumed object hides the
    stored one until the store's object changes (as an informer update replaces it)."""

    __slots__ = ("_handle", "_kind", "_assumed")

    def __init__(self, handle: Any, kind: str) -> None:
        self._handle = handle
        self._kind = kind
        self._assumed: dict[str, tuple[Any, Any]] = {}

    @property
    def kind(self) -> str:
        return self._kind

    def get_api_obj(self, key: str) -> Any | None:
        """The stored object, ignoring assumptions."""
        return self._handle.objects.get_object(self._kind, key)

    def get(self, key: str) -> Any | None:
        base = self._handle.objects.get_object(self._kind, key)
        hit = self._assumed.get(key)
        if hit is None:
            return base
        if hit[0] is base:
            return hit[1]
        del self._assumed[key]  # the store moved on: its object wins
        return base

    def list(self) -> list[Any]:
        """Every stored object, assumed versions in place of the stored ones."""
        objs = list(self._handle.objects.list_objects(self._kind))
        if not self._assumed:
            return objs
        return [self.get(self._key_of(o)) or o for o in objs]

    def clone(self, handle: Any) -> AssumeCache:
        """A copy reading ``handle``'s objects, with the same assumptions (scheduler forks)."""
        new = AssumeCache(handle, self._kind)
        new._assumed = dict(self._assumed)
        return new

    def assume(self, obj: Any) -> None:
        """Make ``obj`` the visible version of the stored object with the same key."""
        key = self._key_of(obj)
        base = self._handle.objects.get_object(self._kind, key)
        if base is None:
            raise KeyError(f"{self._kind} {key!r} is not in the cache")
        self._assumed[key] = (base, obj)

    def restore(self, key: str) -> None:
        """Drop the assumption on ``key`` (a no-op when there is none)."""
        self._assumed.pop(key, None)

    def is_assumed(self, key: str) -> bool:
        return self.get(key) is not self.get_api_obj(key)

    @staticmethod
    def _key_of(obj: Any) -> str:
        meta = obj.metadata
        return f"{meta.namespace}/{meta.name}" if meta.namespace else str(meta.name)
