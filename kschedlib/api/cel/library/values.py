"""CEL runtime values beyond Python's own (uint, type, Kubernetes' Quantity, Semver, IP,
CIDR and URL, optional), their names in errors, equality, ordering and sizes (cel-go's
cost factors)."""

from __future__ import annotations

import datetime as _dt
import ipaddress
import math
import re
from typing import Any
from urllib.parse import urlsplit

from kschedlib.api.cel.errors import CELError
from kschedlib.api.quantity import Quantity

STRING_TRAVERSAL_COST_FACTOR = 0.1
REGEX_STRING_LENGTH_COST_FACTOR = 0.25
LIST_CREATE_BASE_COST = 10
MAP_CREATE_BASE_COST = 30
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
UINT64_MAX = 2**64 - 1


class UInt(int):
    """A CEL uint (a distinct type from int)."""

    __slots__ = ()


class TypeValue:
    """A CEL type as a value (``type(x)``, ``int``...)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TypeValue) and self.name == other.name

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return self.name


class SemverValue:
    """A semantic version (k8s.io/apiserver/pkg/cel/library semver)."""

    __slots__ = ("major", "minor", "patch", "pre", "text")

    _RE = re.compile(
        r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
        r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
        r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
    )

    def __init__(self, text: str, normalize: bool = False) -> None:
        if normalize:
            text = _normalize_semver(text)
        m = self._RE.match(text)
        if m is None:
            raise CELError(f"Invalid version: {text}" if text else "Version string empty")
        self.text = text
        self.major, self.minor, self.patch = int(m.group(1)), int(m.group(2)), int(m.group(3))
        self.pre: tuple[Any, ...] = tuple(
            int(p) if p.isdigit() else p for p in (m.group(4) or "").split(".") if p
        )

    def compare(self, other: SemverValue) -> int:
        a = (self.major, self.minor, self.patch)
        b = (other.major, other.minor, other.patch)
        if a != b:
            return -1 if a < b else 1
        if self.pre == other.pre:
            return 0
        if not self.pre:
            return 1
        if not other.pre:
            return -1
        for x, y in zip(self.pre, other.pre, strict=False):
            if x == y:
                continue
            if isinstance(x, int) and isinstance(y, int):
                return -1 if x < y else 1
            if isinstance(x, int):
                return -1
            if isinstance(y, int):
                return 1
            return -1 if x < y else 1
        return -1 if len(self.pre) < len(other.pre) else 1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SemverValue) and self.compare(other) == 0

    def __hash__(self) -> int:
        return hash((self.major, self.minor, self.patch, self.pre))

    def __repr__(self) -> str:
        return f"semver({self.text!r})"


def _normalize_semver(text: str) -> str:
    """``semver(s, true)``: a leading ``v`` is dropped, missing minor/patch become 0 and
    leading zeros are removed (the apiserver semver library's normalization)."""
    s = text[1:] if text.startswith("v") else text
    core, sep, rest = s.partition("-")
    if not sep:
        core, sep, rest = s.partition("+")
    parts = core.split(".")
    if len(parts) > 3 or not all(p.isdigit() for p in parts):
        return text
    parts = [str(int(p)) for p in parts] + ["0"] * (3 - len(parts))
    return ".".join(parts) + (sep + rest if sep else "")


class QuantityValue:
    """A resource.Quantity (k8s.io/apiserver/pkg/cel/library quantity)."""

    __slots__ = ("q",)

    def __init__(self, q: Quantity) -> None:
        self.q = q

    def __eq__(self, other: object) -> bool:
        return isinstance(other, QuantityValue) and self.q.cmp(other.q) == 0

    def __hash__(self) -> int:
        return hash(str(self.q))

    def __repr__(self) -> str:
        return f"quantity({str(self.q)!r})"


class IPValue:
    """A net.IP of the apiserver IP library."""

    __slots__ = ("addr",)

    def __init__(self, addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
        self.addr = addr

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IPValue) and self.addr == other.addr

    def __hash__(self) -> int:
        return hash(self.addr)


class CIDRValue:
    """A net.CIDR of the apiserver CIDR library (address plus prefix length)."""

    __slots__ = ("iface",)

    def __init__(self, iface: ipaddress.IPv4Interface | ipaddress.IPv6Interface) -> None:
        self.iface = iface

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CIDRValue) and self.iface == other.iface

    def __hash__(self) -> int:
        return hash(self.iface)


class URLValue:
    """A parsed URL of the apiserver URL library."""

    __slots__ = ("parts", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.parts = urlsplit(text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, URLValue) and self.text == other.text

    def __hash__(self) -> int:
        return hash(self.text)


class OptionalValue:
    """cel-go's optional type (``optional.of(x)``, ``m.?key``, ``orValue``...)."""

    __slots__ = ("value",)
    _EMPTY: Any = object()

    def __init__(self, value: Any = _EMPTY) -> None:
        self.value = value

    @property
    def present(self) -> bool:
        return self.value is not OptionalValue._EMPTY

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, OptionalValue):
            return False
        if not self.present or not other.present:
            return self.present == other.present
        return cel_equal(self.value, other.value)

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return f"optional.of({self.value!r})" if self.present else "optional.none()"


# cel-go's Go type names, used in some runtime errors ("got 'types.Int', expected ...").
_GO_TYPE_NAMES: dict[type, str] = {
    bool: "types.Bool", int: "types.Int", UInt: "types.Uint", float: "types.Double",
    str: "types.String", bytes: "types.Bytes", type(None): "types.Null",
    list: "types.List", dict: "types.Map", SemverValue: "cel.Semver",
    QuantityValue: "cel.Quantity", IPValue: "cel.IP", CIDRValue: "cel.CIDR",
    URLValue: "cel.URL", OptionalValue: "types.Optional", TypeValue: "types.Type",
    _dt.datetime: "types.Timestamp", _dt.timedelta: "types.Duration",
}

_CEL_TYPE_NAMES: dict[type, str] = {
    bool: "bool", int: "int", UInt: "uint", float: "double", str: "string", bytes: "bytes",
    type(None): "null_type", list: "list", dict: "map", SemverValue: "kubernetes.Semver",
    QuantityValue: "kubernetes.Quantity", IPValue: "net.IP", CIDRValue: "net.CIDR",
    URLValue: "kubernetes.URL", OptionalValue: "optional_type", TypeValue: "type",
    _dt.datetime: "google.protobuf.Timestamp", _dt.timedelta: "google.protobuf.Duration",
}


def go_type_name(v: Any) -> str:
    for cls in type(v).__mro__:
        n = _GO_TYPE_NAMES.get(cls)
        if n is not None:
            return n
    return type(v).__name__


def cel_type_name(v: Any) -> str:
    for cls in type(v).__mro__:
        n = _CEL_TYPE_NAMES.get(cls)
        if n is not None:
            return n
    return type(v).__name__


def no_overload(name: str, *args: Any) -> CELError:
    """cel-go's runtime error for a call no overload accepts."""
    return CELError(f"no such overload: {name}({', '.join(cel_type_name(a) for a in args)})")


def _is_num(v: Any) -> bool:
    t = type(v)
    return t is int or t is float or t is UInt


def cel_equal(a: Any, b: Any) -> bool:
    """CEL's heterogeneous equality (numbers compare by value across int, uint, double)."""
    ta, tb = type(a), type(b)
    if ta is tb:
        if ta is list:
            return len(a) == len(b) and all(cel_equal(x, y) for x, y in zip(a, b, strict=True))
        if ta is dict:
            if len(a) != len(b):
                return False
            for k, v in a.items():
                found, w = map_lookup(b, k)
                if not found or not cel_equal(v, w):
                    return False
            return True
        return bool(a == b)
    if _is_num(a) and _is_num(b):
        return bool(a == b)
    if isinstance(a, dict) and isinstance(b, dict):
        return cel_equal(dict(a), dict(b))
    return False


def map_lookup(m: dict[Any, Any], key: Any) -> tuple[bool, Any]:
    """A map entry with CEL's key semantics (numeric keys match across int, uint, double)."""
    tk = type(key)
    if tk is str:
        if key in m:
            return True, m[key]
        return False, None
    if tk is bool:
        for k, v in m.items():
            if type(k) is bool and k == key:
                return True, v
        return False, None
    if _is_num(key):
        for k, v in m.items():
            if _is_num(k) and k == key:
                return True, v
        return False, None
    if key in m:
        return True, m[key]
    return False, None


def cel_compare(name: str, a: Any, b: Any) -> int:
    """-1/0/1 for the ordering operators; ``no such overload`` for unordered types."""
    ta, tb = type(a), type(b)
    if ta is tb and ta in (str, int, float, bytes, bool, UInt, _dt.datetime, _dt.timedelta):
        return -1 if a < b else (1 if a > b else 0)
    if _is_num(a) and _is_num(b):
        if isinstance(a, float) and math.isnan(a) or isinstance(b, float) and math.isnan(b):
            return 2  # unordered: every comparison is false
        return -1 if a < b else (1 if a > b else 0)
    raise no_overload(name, a, b)


def size_of(v: Any) -> int:
    """cel-go's actualSize: length of strings, bytes, lists and maps; 1 otherwise."""
    if isinstance(v, (str, bytes, list, dict)):
        return len(v)
    return 1


def traversal(n: int) -> int:
    return math.ceil(n * STRING_TRAVERSAL_COST_FACTOR)
