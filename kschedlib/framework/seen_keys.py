"""A small recency set of keys: reuse structures are built only for keys seen before."""

from __future__ import annotations

from collections.abc import Hashable


class SeenKeys:
    """Remembers the last ``size`` keys. ``first_sight(key)`` says whether the key is new
    (and remembers it): a result kept across cycles pays off only for a key that comes back,
    so the first time the caller computes directly."""

    __slots__ = ("_keys", "size")

    def __init__(self, size: int = 64) -> None:
        self._keys: dict[Hashable, None] = {}
        self.size = size

    def first_sight(self, key: Hashable) -> bool:
        keys = self._keys
        if key in keys:
            return False
        if len(keys) >= self.size:
            del keys[next(iter(keys))]
        keys[key] = None
        return True
