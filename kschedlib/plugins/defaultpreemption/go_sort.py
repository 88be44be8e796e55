"""Go's sort.Slice (pattern-defeating quicksort), comparison for comparison: it is not stable,
so kube-scheduler's order of equally important victims is the order this algorithm leaves."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

_MAX_INSERTION = 12
_UNKNOWN_HINT, _INCREASING_HINT, _DECREASING_HINT = 0, 1, 2
_MASK64 = (1 << 64) - 1


class _Data:
    """lessSwap over a Python list."""

    __slots__ = ("items", "less")

    def __init__(self, items: list[T], less: Callable[[T, T], bool]) -> None:
        self.items: list[object] = items  # type: ignore[assignment]
        self.less: Callable[[object, object], bool] = less  # type: ignore[assignment]

    def lt(self, i: int, j: int) -> bool:
        return self.less(self.items[i], self.items[j])

    def swap(self, i: int, j: int) -> None:
        items = self.items
        items[i], items[j] = items[j], items[i]


def sort_slice(items: list[T], less: Callable[[T, T], bool]) -> None:
    """Sort ``items`` in place exactly as Go's ``sort.Slice(items, less)`` does."""
    n = len(items)
    _pdqsort(_Data(items, less), 0, n, n.bit_length())


def _insertion_sort(d: _Data, a: int, b: int) -> None:
    for i in range(a + 1, b):
        j = i
        while j > a and d.lt(j, j - 1):
            d.swap(j, j - 1)
            j -= 1


def _sift_down(d: _Data, lo: int, hi: int, first: int) -> None:
    root = lo
    while True:
        child = 2 * root + 1
        if child >= hi:
            return
        if child + 1 < hi and d.lt(first + child, first + child + 1):
            child += 1
        if not d.lt(first + root, first + child):
            return
        d.swap(first + root, first + child)
        root = child


def _heap_sort(d: _Data, a: int, b: int) -> None:
    first, lo, hi = a, 0, b - a
    for i in range((hi - 1) // 2, -1, -1):
        _sift_down(d, i, hi, first)
    for i in range(hi - 1, -1, -1):
        d.swap(first, first + i)
        _sift_down(d, lo, i, first)


def _pdqsort(d: _Data, a: int, b: int, limit: int) -> None:
    was_balanced = True
    was_partitioned = True
    while True:
        length = b - a
        if length <= _MAX_INSERTION:
            _insertion_sort(d, a, b)
            return
        if limit == 0:
            _heap_sort(d, a, b)
            return
        if not was_balanced:
            _break_patterns(d, a, b)
            limit -= 1
        pivot, hint = _choose_pivot(d, a, b)
        if hint == _DECREASING_HINT:
            _reverse_range(d, a, b)
            pivot = (b - 1) - (pivot - a)
            hint = _INCREASING_HINT
        if (
            was_balanced
            and was_partitioned
            and hint == _INCREASING_HINT
            and _partial_insertion_sort(d, a, b)
        ):
            return
        if a > 0 and not d.lt(a - 1, pivot):
            a = _partition_equal(d, a, b, pivot)
            continue
        mid, already = _partition(d, a, b, pivot)
        was_partitioned = already
        left_len, right_len = mid - a, b - mid
        balance_threshold = length // 8
        if left_len < right_len:
            was_balanced = left_len >= balance_threshold
            _pdqsort(d, a, mid, limit)
            a = mid + 1
        else:
            was_balanced = right_len >= balance_threshold
            _pdqsort(d, mid + 1, b, limit)
            b = mid


def _partition(d: _Data, a: int, b: int, pivot: int) -> tuple[int, bool]:
    d.swap(a, pivot)
    i, j = a + 1, b - 1
    while i <= j and d.lt(i, a):
        i += 1
    while i <= j and not d.lt(j, a):
        j -= 1
    if i > j:
        d.swap(j, a)
        return j, True
    d.swap(i, j)
    i += 1
    j -= 1
    while True:
        while i <= j and d.lt(i, a):
            i += 1
        while i <= j and not d.lt(j, a):
            j -= 1
        if i > j:
            break
        d.swap(i, j)
        i += 1
        j -= 1
    d.swap(j, a)
    return j, False


def _partition_equal(d: _Data, a: int, b: int, pivot: int) -> int:
    d.swap(a, pivot)
    i, j = a + 1, b - 1
    while True:
        while i <= j and not d.lt(a, i):
            i += 1
        while i <= j and d.lt(a, j):
            j -= 1
        if i > j:
            break
        d.swap(i, j)
        i += 1
        j -= 1
    return i


def _partial_insertion_sort(d: _Data, a: int, b: int) -> bool:
    max_steps, shortest_shifting = 5, 50
    i = a + 1
    for _ in range(max_steps):
        while i < b and not d.lt(i, i - 1):
            i += 1
        if i == b:
            return True
        if b - a < shortest_shifting:
            return False
        d.swap(i, i - 1)
        if i - a >= 2:
            j = i - 1
            while j >= 1:
                if not d.lt(j, j - 1):
                    break
                d.swap(j, j - 1)
                j -= 1
        if b - i >= 2:
            j = i + 1
            while j < b:
                if not d.lt(j, j - 1):
                    break
                d.swap(j, j - 1)
                j += 1
    return False


def _break_patterns(d: _Data, a: int, b: int) -> None:
    length = b - a
    if length >= 8:
        r = length
        modulus = 1 << length.bit_length()
        idx = a + (length // 4) * 2 - 1
        while idx <= a + (length // 4) * 2 + 1:
            r ^= (r << 13) & _MASK64
            r ^= r >> 7
            r ^= (r << 17) & _MASK64
            other = r & (modulus - 1)
            if other >= length:
                other -= length
            d.swap(idx, a + other)
            idx += 1


def _choose_pivot(d: _Data, a: int, b: int) -> tuple[int, int]:
    shortest_ninther, max_swaps = 50, 4 * 3
    n = b - a
    swaps = [0]
    i = a + n // 4 * 1
    j = a + n // 4 * 2
    k = a + n // 4 * 3
    if n >= 8:
        if n >= shortest_ninther:
            i = _median(d, i - 1, i, i + 1, swaps)
            j = _median(d, j - 1, j, j + 1, swaps)
            k = _median(d, k - 1, k, k + 1, swaps)
        j = _median(d, i, j, k, swaps)
    if swaps[0] == 0:
        return j, _INCREASING_HINT
    if swaps[0] == max_swaps:
        return j, _DECREASING_HINT
    return j, _UNKNOWN_HINT


def _order2(d: _Data, a: int, b: int, swaps: list[int]) -> tuple[int, int]:
    if d.lt(b, a):
        swaps[0] += 1
        return b, a
    return a, b


def _median(d: _Data, a: int, b: int, c: int, swaps: list[int]) -> int:
    a, b = _order2(d, a, b, swaps)
    b, c = _order2(d, b, c, swaps)
    a, b = _order2(d, a, b, swaps)
    return b


def _reverse_range(d: _Data, a: int, b: int) -> None:
    i, j = a, b - 1
    while i < j:
        d.swap(i, j)
        i += 1
        j -= 1
