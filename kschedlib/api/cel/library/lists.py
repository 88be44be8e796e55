"""Kubernetes' lists library (isSorted, sum, min, max) and cel-go's sets extension."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kschedlib.api.cel.errors import CELError
from kschedlib.api.cel.library.functions import Impl, define
from kschedlib.api.cel.library.standard import _add
from kschedlib.api.cel.library.values import cel_compare, cel_equal, no_overload, size_of


def _list_recv(name: str, lst: Any, *args: Any) -> list[Any]:
    if type(lst) is not list:
        raise no_overload(name, lst, *args)
    return list(lst)


def _is_sorted(lst: Any) -> bool:
    items = _list_recv("isSorted", lst)
    return all(cel_compare("isSorted", a, b) in (-1, 0)
               for a, b in zip(items, items[1:], strict=False))


def _sum(lst: Any) -> Any:
    items = _list_recv("sum", lst)
    if not items:
        return 0
    total = items[0]
    for x in items[1:]:
        total = _add(total, x)
    return total


def _min_max(name: str, want: int) -> Impl:
    def call(lst: Any) -> Any:
        items = _list_recv(name, lst)
        if not items:
            raise CELError(f"{name} called on empty list")
        best = items[0]
        for x in items[1:]:
            if cel_compare(name, x, best) == want:
                best = x
        return best

    return call


def _cost_list(args: Sequence[Any]) -> int:
    return 1 + size_of(args[0])


def _sets(name: str, fn: Callable[[list[Any], list[Any]], bool]) -> Impl:
    def call(a: Any, b: Any) -> bool:
        if type(a) is not list or type(b) is not list:
            raise no_overload(f"sets.{name}", a, b)
        return fn(a, b)

    return call


define("isSorted", ["list(A).isSorted() -> bool"], _is_sorted, _cost_list)
define("sum", ["list(A).sum() -> A"], _sum, _cost_list)
define("min", ["list(A).min() -> A"], _min_max("min", -1), _cost_list)
define("max", ["list(A).max() -> A"], _min_max("max", 1), _cost_list)
define("sets.contains", ["sets.contains(list(A), list(A)) -> bool"],
       _sets("contains", lambda a, b: all(any(cel_equal(x, y) for y in a) for x in b)),
       lambda args: 1 + size_of(args[0]) * size_of(args[1]))
define("sets.equivalent", ["sets.equivalent(list(A), list(A)) -> bool"],
       _sets("equivalent", lambda a, b: all(any(cel_equal(x, y) for y in b) for x in a)
             and all(any(cel_equal(x, y) for y in a) for x in b)),
       lambda args: 1 + size_of(args[0]) * size_of(args[1]))
define("sets.intersects", ["sets.intersects(list(A), list(A)) -> bool"],
       _sets("intersects", lambda a, b: any(cel_equal(x, y) for x in a for y in b)),
       lambda args: 1 + size_of(args[0]) * size_of(args[1]))
