"""What compiled CEL runs on: the evaluation frame and its cost charging, library calls,
indexing, the device variable's maps and the comprehension loops of the macros."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kschedlib.api.cel.errors import CELError
from kschedlib.api.cel.library import (
    LIST_CREATE_BASE_COST,
    Function,
    UInt,
    cel_type_name,
    map_lookup,
)
from kschedlib.api.cel.tree import one_line


class _CostExceeded(Exception):  # noqa: N818 - cel-go's condition, not a bug
    """The evaluation went over its cost limit (never absorbed by && or ||)."""


class _Frame:
    __slots__ = ("cost", "limit", "vars")

    def __init__(self, variables: dict[str, Any], limit: int) -> None:
        self.vars = variables
        self.cost = 0
        self.limit = limit


Eval = Callable[[_Frame], Any]


def _charge(fr: _Frame, n: int) -> None:
    fr.cost += n
    if fr.cost > fr.limit:
        raise _CostExceeded


def _call_runtime(fn: Function, args: list[Any], fr: _Frame) -> Any:
    cost = fn.cost(args) if fn.cost is not None else 1
    fr.cost += cost
    if fr.cost > fr.limit:
        raise _CostExceeded
    try:
        return fn.impl(*args)
    except CELError:
        raise
    except (TypeError, ValueError, KeyError, IndexError, ArithmeticError, AttributeError) as exc:
        raise CELError(one_line(str(exc)) or f"no such overload: {fn.name}") from None


_UNSET: Any = object()


def _restore(vs: dict[str, Any], name: str, saved: Any) -> None:
    if saved is _UNSET:
        vs.pop(name, None)
    else:
        vs[name] = saved


def _index(v: Any, k: Any) -> Any:
    if type(v) is list:
        if type(k) is float:
            if not k.is_integer():
                raise CELError(f"unsupported index value {k} in list")
            k = int(k)
        if type(k) not in (int, UInt):
            raise CELError(f"no such overload: _[_](list, {cel_type_name(k)})")
        if not 0 <= k < len(v):
            raise CELError(f"index out of range: {k}")
        return v[k]
    if isinstance(v, dict):
        found, w = map_lookup(v, k)
        if found:
            return w
        if isinstance(v, DomainMap):
            return v[k]
        raise CELError(f"no such key: {k if type(k) is not bool else str(k).lower()}")
    raise CELError(f"no such overload: _[_]({cel_type_name(v)}, {cel_type_name(k)})")


class DomainMap(dict):  # type: ignore[type-arg]
    """device.attributes / device.capacity: a missing domain is an empty map (and present
    for has())."""

    __slots__ = ()

    def __missing__(self, key: Any) -> Any:
        return {}


def _short_circuit_loop(stop_on: bool, cost: int, op: str) -> Callable[..., Any]:
    """all() (stops on false, ``_&&_``) or exists() (stops on true, ``_||_``): an error is
    kept and raised only if no element decides the result, as cel-go's logical operators."""

    def loop(fr: _Frame, pairs: list[tuple[Any, Any]], v1: str, v2: str | None,
             vs: dict[str, Any], pred: Eval, step: Eval, _: bool) -> Any:
        err: CELError | None = None
        for a, b in pairs:
            _charge(fr, cost)  # loop condition and accumulator step, as cel-go charges them
            vs[v1] = a
            if v2:
                vs[v2] = b
            try:
                r = pred(fr)
            except CELError as exc:
                err = err or exc
                continue
            if r is stop_on:
                return stop_on
            if r is not (not stop_on):
                err = err or CELError(f"no such overload: {op}(bool, {cel_type_name(r)})")
        if err is not None:
            raise err
        return not stop_on

    return loop


_loop_all = _short_circuit_loop(False, 3, "_&&_")
_loop_exists = _short_circuit_loop(True, 4, "_||_")


def _loop_exists_one(fr: _Frame, pairs: list[tuple[Any, Any]], v1: str, v2: str | None,
                     vs: dict[str, Any], pred: Eval, step: Eval, _: bool) -> Any:
    n = 0
    for a, b in pairs:
        _charge(fr, 2)
        vs[v1] = a
        if v2:
            vs[v2] = b
        r = pred(fr)
        if r is True:
            n += 1
        elif r is not False:
            raise CELError(f"no such overload: _?_:_({cel_type_name(r)}, ...)")
    return n == 1


def _loop_map(fr: _Frame, pairs: list[tuple[Any, Any]], v1: str, v2: str | None,
              vs: dict[str, Any], pred: Eval, step: Eval, filtered: bool) -> Any:
    out = []
    for a, b in pairs:
        _charge(fr, 1)
        vs[v1] = a
        if v2:
            vs[v2] = b
        if filtered:
            keep = pred(fr)
            if type(keep) is not bool:
                raise CELError(f"no such overload: _?_:_({cel_type_name(keep)}, ...)")
            if not keep:
                continue
        _charge(fr, LIST_CREATE_BASE_COST + 2)
        out.append(step(fr))
    return out


def _loop_filter(fr: _Frame, pairs: list[tuple[Any, Any]], v1: str, v2: str | None,
                 vs: dict[str, Any], pred: Eval, step: Eval, _: bool) -> Any:
    out = []
    for a, _b in pairs:
        _charge(fr, 1)
        vs[v1] = a
        keep = pred(fr)
        if type(keep) is not bool:
            raise CELError(f"no such overload: _?_:_({cel_type_name(keep)}, ...)")
        if keep:
            _charge(fr, LIST_CREATE_BASE_COST + 3)
            out.append(a)
    return out


def _loop_transform_map(fr: _Frame, pairs: list[tuple[Any, Any]], v1: str, v2: str | None,
                        vs: dict[str, Any], pred: Eval, step: Eval, filtered: bool) -> Any:
    out: dict[Any, Any] = {}
    for a, b in pairs:
        _charge(fr, 2)
        vs[v1] = a
        if v2:
            vs[v2] = b
        if filtered and pred(fr) is not True:
            continue
        out[a] = step(fr)
    return out


_LOOPS: dict[str, Callable[..., Any]] = {
    "all": _loop_all, "exists": _loop_exists, "exists_one": _loop_exists_one,
    "existsOne": _loop_exists_one, "map": _loop_map, "filter": _loop_filter,
    "transformList": _loop_map, "transformMap": _loop_transform_map,
}
