"""A keyed binary heap with Go's container/heap sift rules, so ties break as in kube-scheduler."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class Heap(Generic[T]):
    """pkg/scheduler/backend/heap.Heap: items indexed by key, ordered by ``less``; sifting follows
    container/heap exactly, so equal items come out in Go's order."""

    __slots__ = ("_items", "_keys", "_index", "_key_fn", "_less", "on_change")

    def __init__(self, key_fn: Callable[[T], str], less: Callable[[T, T], bool]) -> None:
        self._items: list[T] = []
        self._keys: list[str] = []
        self._index: dict[str, int] = {}
        self._key_fn = key_fn
        self._less = less
        self.on_change: Callable[[str], None] | None = None
        """Called with the key of an item added, removed or replaced (the queue's memo)."""

    # --- container/heap primitives ---

    def _swap(self, i: int, j: int) -> None:
        items, keys = self._items, self._keys
        items[i], items[j] = items[j], items[i]
        keys[i], keys[j] = keys[j], keys[i]
        self._index[keys[i]] = i
        self._index[keys[j]] = j

    def _up(self, j: int) -> None:
        # Hole sifting: the same moves as container/heap's swaps, each item written once.
        less, items, keys, index = self._less, self._items, self._keys, self._index
        item = items[j]
        key = keys[j]
        j0 = j
        while j > 0:
            i = (j - 1) // 2
            parent = items[i]
            if not less(item, parent):
                break
            items[j] = parent
            pk = keys[j] = keys[i]
            index[pk] = j
            j = i
        if j != j0:
            items[j] = item
            keys[j] = key
            index[key] = j

    def _down(self, i0: int, n: int) -> bool:
        # Hole sifting: the same moves as container/heap's swaps, each item written once.
        less, items, keys, index = self._less, self._items, self._keys, self._index
        item = items[i0]
        key = keys[i0]
        i = i0
        while True:
            j1 = 2 * i + 1
            if j1 >= n:
                break
            j = j1
            child = items[j1]
            j2 = j1 + 1
            if j2 < n:
                other = items[j2]
                if less(other, child):
                    j = j2
                    child = other
            if not less(child, item):
                break
            items[i] = child
            ck = keys[i] = keys[j]
            index[ck] = i
            i = j
        if i != i0:
            items[i] = item
            keys[i] = key
            index[key] = i
        return i > i0

    def _pop_last(self) -> T:
        item = self._items.pop()
        key = self._keys.pop()
        del self._index[key]
        if self.on_change is not None:
            self.on_change(key)
        return item

    def _remove_at(self, i: int) -> T:
        n = len(self._items) - 1
        if n != i:
            self._swap(i, n)
            if not self._down(i, n):
                self._up(i)
        return self._pop_last()

    # --- public API ---

    def replace(self, key: str, obj: T) -> None:
        """Put ``obj`` in the place of the item with ``key`` (an equal copy: no reordering)."""
        self._items[self._index[key]] = obj
        if self.on_change is not None:
            self.on_change(key)

    def copy_from(self, other: Heap[T], copy_item: Callable[[T], T]) -> None:
        """Replace the content by ``other``'s, each item passed through ``copy_item`` (forks);
        the heap layout is kept, so pops come out in the same order."""
        self._items = [copy_item(x) for x in other._items]
        self._keys = list(other._keys)
        self._index = dict(other._index)

    def add_or_update(self, obj: T) -> None:
        """Insert ``obj``, or replace the item with the same key and restore heap order."""
        key = self._key_fn(obj)
        if self.on_change is not None:
            self.on_change(key)
        idx = self._index.get(key)
        if idx is not None:
            self._items[idx] = obj
            if not self._down(idx, len(self._items)):
                self._up(idx)
            return
        self._index[key] = len(self._items)
        self._items.append(obj)
        self._keys.append(key)
        self._up(len(self._items) - 1)

    def delete(self, obj: T) -> T | None:
        """Remove the item with ``obj``'s key; returns it, or None when absent."""
        idx = self._index.get(self._key_fn(obj))
        if idx is None:
            return None
        return self._remove_at(idx)

    def delete_key(self, key: str) -> T | None:
        idx = self._index.get(key)
        if idx is None:
            return None
        return self._remove_at(idx)

    def peek(self) -> T | None:
        return self._items[0] if self._items else None

    def pop(self) -> T | None:
        """Remove and return the head, or None when empty."""
        if not self._items:
            return None
        n = len(self._items) - 1
        self._swap(0, n)
        self._down(0, n)
        return self._pop_last()

    def get(self, obj: T) -> T | None:
        return self.get_by_key(self._key_fn(obj))

    def get_by_key(self, key: str) -> T | None:
        idx = self._index.get(key)
        return None if idx is None else self._items[idx]

    def has(self, obj: T) -> bool:
        return self._key_fn(obj) in self._index

    def has_key(self, key: str) -> bool:
        return key in self._index

    def items(self) -> list[T]:
        """Items in heap-array order (as Go's List)."""
        return list(self._items)

    def keys(self) -> list[str]:
        return list(self._keys)

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[T]:
        return iter(list(self._items))

    def check(self) -> None:
        """Assert the heap property and the key index (for tests)."""
        n = len(self._items)
        assert len(self._keys) == n == len(self._index)
        for i, k in enumerate(self._keys):
            assert self._index[k] == i and self._key_fn(self._items[i]) == k
            if i > 0:
                assert not self._less(self._items[i], self._items[(i - 1) // 2])
