"""The function registry: each library function's declared overloads (for the type checker),
its runtime implementation and cost, and the argument checks the libraries share."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kschedlib.api.cel.errors import CELError
from kschedlib.api.cel.library.cel_types import (
    _A,
    _B,
    _K,
    _V,
    BOOL,
    BYTES,
    CIDR,
    DOUBLE,
    DURATION,
    DYN,
    INT,
    IP,
    NULL,
    QUANTITY,
    SEMVER,
    STRING,
    TIMESTAMP,
    UINT,
    URL,
    CelType,
    list_of,
    map_of,
    optional_of,
    type_of,
)
from kschedlib.api.cel.library.values import (
    INT64_MAX,
    INT64_MIN,
    UINT64_MAX,
    UInt,
    no_overload,
    size_of,
    traversal,
)

Impl = Callable[..., Any]
Cost = Callable[[Sequence[Any]], int]


class Overload:
    """One declared signature of a function (for the checker)."""

    __slots__ = ("member", "params", "result")

    def __init__(self, member: bool, params: tuple[CelType, ...], result: CelType) -> None:
        self.member = member
        self.params = params
        self.result = result


class Function:
    """A library function: declared overloads, one runtime implementation, its cost."""

    __slots__ = ("cost", "impl", "name", "overloads")

    def __init__(self, name: str, impl: Impl, cost: Cost | None,
                 overloads: list[Overload]) -> None:
        self.name = name
        self.impl = impl
        self.cost = cost
        self.overloads = overloads


FUNCTIONS: dict[str, Function] = {}

_TYPE_WORDS: dict[str, CelType] = {
    "bool": BOOL, "int": INT, "uint": UINT, "double": DOUBLE, "string": STRING,
    "bytes": BYTES, "null": NULL, "dyn": DYN, "Quantity": QUANTITY, "Semver": SEMVER,
    "IP": IP, "CIDR": CIDR, "URL": URL, "Timestamp": TIMESTAMP, "Duration": DURATION, "A": _A, "B": _B, "K": _K, "V": _V,
}


def _parse_type(s: str) -> CelType:
    s = s.strip()
    for prefix, ctor in (("list(", list_of), ("optional(", optional_of), ("type(", type_of)):
        if s.startswith(prefix):
            return ctor(_parse_type(s[len(prefix):-1]))
    if s.startswith("map("):
        k, v = s[4:-1].split(",", 1)
        return map_of(_parse_type(k), _parse_type(v))
    return _TYPE_WORDS[s]


def _split_args(s: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += {"(": 1, ")": -1}.get(ch, 0)
        cur += ch
    if cur.strip():
        out.append(cur)
    return out


def define(name: str, sigs: Sequence[str], impl: Impl, cost: Cost | None = None) -> None:
    """Declare ``name`` with signatures like ``"string.find(string) -> string"`` (member)
    or ``"quantity(string) -> Quantity"`` (global)."""
    overloads = []
    for sig in sigs:
        head, result = sig.split("->")
        head = head.strip()
        recv, dot, call = head.partition(f".{name}(")
        if dot:
            args = [recv, *_split_args(call[:-1])]
            member = True
        else:
            args = _split_args(head[len(name) + 1:-1])
            member = False
        overloads.append(Overload(member, tuple(_parse_type(a) for a in args), _parse_type(result)))
    if name in FUNCTIONS:
        raise ValueError(f"CEL function {name} declared twice")
    FUNCTIONS[name] = Function(name, impl, cost, overloads)


def _want(v: Any, cls: type | tuple[type, ...], name: str, *args: Any) -> Any:
    if not isinstance(v, cls) or (cls is int and isinstance(v, bool)):
        raise no_overload(name, *args)
    return v


def _check_int(v: int) -> int:
    if not INT64_MIN <= v <= INT64_MAX:
        raise CELError("integer overflow")
    return v


def _check_uint(v: int) -> UInt:
    if not 0 <= v <= UINT64_MAX:
        raise CELError("unsigned integer overflow")
    return UInt(v)


def _str_recv(name: str, s: Any, *args: Any) -> str:
    if type(s) is not str:
        raise no_overload(name, s, *args)
    return str(s)


def _cost_recv(args: Sequence[Any]) -> int:
    return max(1, traversal(size_of(args[0])))
