"""The keyed heap's hole sifting gives exactly container/heap's swap-based layout."""

from __future__ import annotations

import random

from kschedlib.backend.queue.heap import Heap


class _SwapHeap:
    """Reference: container/heap's up/down with explicit swaps (Go's Fix/Remove/Pop)."""

    def __init__(self) -> None:
        self.items: list[tuple[int, str]] = []

    @staticmethod
    def less(a: tuple[int, str], b: tuple[int, str]) -> bool:
        return a[0] < b[0]  # ties left to the sift rules

    def up(self, j: int) -> None:
        it = self.items
        while j > 0:
            i = (j - 1) // 2
            if not self.less(it[j], it[i]):
                break
            it[i], it[j] = it[j], it[i]
            j = i

    def down(self, i0: int, n: int) -> bool:
        it = self.items
        i = i0
        while True:
            j1 = 2 * i + 1
            if j1 >= n:
                break
            j = j1
            if j1 + 1 < n and self.less(it[j1 + 1], it[j1]):
                j = j1 + 1
            if not self.less(it[j], it[i]):
                break
            it[i], it[j] = it[j], it[i]
            i = j
        return i > i0

    def index(self, key: str) -> int | None:
        for i, x in enumerate(self.items):
            if x[1] == key:
                return i
        return None

    def add_or_update(self, obj: tuple[int, str]) -> None:
        i = self.index(obj[1])
        if i is not None:
            self.items[i] = obj
            if not self.down(i, len(self.items)):
                self.up(i)
            return
        self.items.append(obj)
        self.up(len(self.items) - 1)

    def remove_at(self, i: int) -> tuple[int, str]:
        it = self.items
        n = len(it) - 1
        if n != i:
            it[i], it[n] = it[n], it[i]
            if not self.down(i, n):
                self.up(i)
        return it.pop()

    def pop(self) -> tuple[int, str] | None:
        if not self.items:
            return None
        return self.remove_at(0)


def test_hole_sifting_matches_swap_sifting_with_ties() -> None:
    rng = random.Random(26)
    for _ in range(30):
        heap: Heap[tuple[int, str]] = Heap(lambda x: x[1], _SwapHeap.less)
        ref = _SwapHeap()
        for _step in range(400):
            op = rng.random()
            key = f"k{rng.randrange(60)}"
            if op < 0.55:
                obj = (rng.randrange(5), key)  # few priorities: many ties
                heap.add_or_update(obj)
                ref.add_or_update(obj)
            elif op < 0.8:
                assert heap.pop() == ref.pop()
            else:
                i = ref.index(key)
                got = heap.delete_key(key)
                assert got == (None if i is None else ref.remove_at(i))
            assert heap.items() == ref.items
            heap.check()
