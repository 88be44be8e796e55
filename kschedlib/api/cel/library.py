"""CEL values, types and the function library Kubernetes gives DRA device selectors.

Values are plain Python objects (bool, int, :class:`UInt`, float, str, bytes, None, list,
dict) plus the Kubernetes types (:class:`QuantityValue`, :class:`SemverValue`,
:class:`IPValue`, :class:`CIDRValue`, :class:`URLValue`) and :class:`OptionalValue`.
Every function has its declarations (for the type checker) and a runtime cost (cel-go's
cost model: one unit per call, string/list traversals by size), charged before the work
is done so that neither time nor memory can run away."""

from __future__ import annotations

import datetime as _dt
import ipaddress
import math
import re
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import parse_qs, urlsplit

from kschedlib.api.cel.errors import CELError
from kschedlib.api.quantity import Quantity, parse_quantity
from kschedlib.errors import QuantityError

_REGEX_CACHE: dict[str, Any] = {}


def _compile_regex(pattern: str) -> Any:
    """RE2 (linear time, as cel-go uses; installed with cel-python), else Python's re."""
    try:
        import re2  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - google-re2 is a dependency of cel-python
        return re.compile(pattern)
    options = re2.Options()
    options.log_errors = False  # the error is the CEL error, not a line on stderr
    return re2.compile(pattern, options)


def _regex(pattern: str) -> Any:
    """The compiled pattern (cached: selectors use constant patterns)."""
    rx = _REGEX_CACHE.get(pattern)
    if rx is None:
        try:
            rx = _compile_regex(pattern)
        except Exception as exc:  # re.error / re2.error
            cause = exc.args[0] if exc.args else exc
            text = cause.decode("utf-8", "replace") if isinstance(cause, bytes) else str(cause)
            raise CELError(f"given regex is invalid: error parsing regexp: "
                           f"{' '.join(text.split())}") from None
        if len(_REGEX_CACHE) > 1024:
            _REGEX_CACHE.clear()
        _REGEX_CACHE[pattern] = rx
    return rx

STRING_TRAVERSAL_COST_FACTOR = 0.1
REGEX_STRING_LENGTH_COST_FACTOR = 0.25
LIST_CREATE_BASE_COST = 10
MAP_CREATE_BASE_COST = 30
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
UINT64_MAX = 2**64 - 1

# ------------------------------------------------------------------ checker types


class CelType:
    """A CEL type as the checker sees it; ``name`` and ``params`` as cel-go prints them."""

    __slots__ = ("fields", "name", "params")

    def __init__(self, name: str, params: tuple[CelType, ...] = (),
                 fields: dict[str, CelType] | None = None) -> None:
        self.name = name
        self.params = params
        self.fields = fields

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CelType) and self.name == other.name and self.params == other.params

    def __hash__(self) -> int:
        return hash((self.name, self.params))

    def __str__(self) -> str:
        if self.name in ("list", "map", "optional_type", "type") and self.params:
            return f"{self.name}({', '.join(str(p) for p in self.params)})"
        return self.name

    __repr__ = __str__

    @property
    def is_param(self) -> bool:
        return len(self.name) == 1 and self.name.isupper()


DYN = CelType("dyn")
BOOL, INT, UINT, DOUBLE = CelType("bool"), CelType("int"), CelType("uint"), CelType("double")
STRING, BYTES, NULL = CelType("string"), CelType("bytes"), CelType("null_type")
ERROR = CelType("*error*")
QUANTITY = CelType("kubernetes.Quantity")
SEMVER = CelType("kubernetes.Semver")
IP = CelType("net.IP")
CIDR = CelType("net.CIDR")
URL = CelType("kubernetes.URL")
TIMESTAMP = CelType("google.protobuf.Timestamp")
DURATION = CelType("google.protobuf.Duration")
_A, _B, _K, _V = CelType("A"), CelType("B"), CelType("K"), CelType("V")


def list_of(t: CelType) -> CelType:
    return CelType("list", (t,))


def map_of(k: CelType, v: CelType) -> CelType:
    return CelType("map", (k, v))


def optional_of(t: CelType) -> CelType:
    return CelType("optional_type", (t,))


def type_of(t: CelType) -> CelType:
    return CelType("type", (t,))


def is_dyn(t: CelType) -> bool:
    return t.name == "dyn" or t.is_param or t is ERROR


def unify(param: CelType, arg: CelType, binding: dict[str, CelType]) -> bool:
    """Whether ``arg`` can be passed where ``param`` is declared (type parameters bind)."""
    if param.is_param:
        bound = binding.get(param.name)
        if bound is None or is_dyn(bound):
            binding[param.name] = arg
            return True
        return is_dyn(arg) or unify(bound, arg, {})
    if is_dyn(param) or is_dyn(arg):
        return True
    if param.name != arg.name or len(param.params) != len(arg.params):
        return False
    return all(unify(p, a, binding) for p, a in zip(param.params, arg.params, strict=True))


def substitute(t: CelType, binding: dict[str, CelType]) -> CelType:
    if t.is_param:
        b = binding.get(t.name)
        return DYN if b is None or b.is_param else b
    if not t.params:
        return t
    return CelType(t.name, tuple(substitute(p, binding) for p in t.params))


# ------------------------------------------------------------------ values


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


# ------------------------------------------------------------------ equality and order


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


# ------------------------------------------------------------------ sizes and costs


def size_of(v: Any) -> int:
    """cel-go's actualSize: length of strings, bytes, lists and maps; 1 otherwise."""
    if isinstance(v, (str, bytes, list, dict)):
        return len(v)
    return 1


def traversal(n: int) -> int:
    return math.ceil(n * STRING_TRAVERSAL_COST_FACTOR)


# ------------------------------------------------------------------ library functions

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


# --- operators -------------------------------------------------------------------------


def _add(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if _dt.timedelta in (ta, tb) and {ta, tb} <= {_dt.datetime, _dt.timedelta}:
        try:
            return _check_time(a + b)
        except OverflowError:
            raise CELError("timestamp overflow") from None
    if ta is tb:
        if ta is int:
            return _check_int(a + b)
        if ta is float or ta is str or ta is bytes:
            return a + b
        if ta is UInt:
            return _check_uint(a + b)
        if ta is list:
            return a + b
    raise no_overload("_+_", a, b)


def _sub(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is _dt.datetime and tb in (_dt.datetime, _dt.timedelta) or (
            ta is _dt.timedelta and tb is _dt.timedelta):
        try:
            return _check_time(a - b)
        except OverflowError:
            raise CELError("timestamp overflow") from None
    if ta is tb:
        if ta is int:
            return _check_int(a - b)
        if ta is float:
            return a - b
        if ta is UInt:
            return _check_uint(a - b)
    raise no_overload("_-_", a, b)


def _mul(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is tb:
        if ta is int:
            return _check_int(a * b)
        if ta is float:
            return a * b
        if ta is UInt:
            return _check_uint(a * b)
    raise no_overload("_*_", a, b)


def _div(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is tb:
        if ta is float:
            return a / b if b else (math.copysign(math.inf, a) * math.copysign(1, b)
                                    if a else math.nan)
        if ta is int or ta is UInt:
            if b == 0:
                raise CELError("division by zero")
            q = abs(a) // abs(b)
            q = q if (a >= 0) == (b >= 0) else -q
            return _check_int(q) if ta is int else UInt(q)
    raise no_overload("_/_", a, b)


def _mod(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is tb and (ta is int or ta is UInt):
        if b == 0:
            raise CELError("modulus by zero")
        r = abs(a) % abs(b)
        return (r if a >= 0 else -r) if ta is int else UInt(r)
    raise no_overload("_%_", a, b)


def _neg(a: Any) -> Any:
    if type(a) is int:
        return _check_int(-a)
    if type(a) is float:
        return -a
    raise no_overload("-_", a)


def _not(a: Any) -> Any:
    if type(a) is bool:
        return not a
    raise no_overload("!_", a)


def _in(x: Any, container: Any) -> bool:
    if type(container) is list:
        return any(cel_equal(x, y) for y in container)
    if isinstance(container, dict):
        return map_lookup(container, x)[0]
    raise no_overload("@in", x, container)


def _size(v: Any) -> int:
    if isinstance(v, str):
        return len(v)
    if isinstance(v, (bytes, list, dict)):
        return len(v)
    raise no_overload("size", v)


def _cost_equality(args: Sequence[Any]) -> int:
    return traversal(min(size_of(args[0]), size_of(args[1])))


def _cost_sum_sizes(args: Sequence[Any]) -> int:
    a, b = args
    if isinstance(a, list) and isinstance(b, list):
        # cel-go concatenates lists without copying (cost 1); here they are copied, so the
        # copy is charged like a traversal to keep memory bounded by the cost limit.
        return 1 + traversal(len(a) + len(b))
    if isinstance(a, (str, bytes)) and isinstance(b, (str, bytes)):
        return traversal(len(a) + len(b))
    return 1


for _op, _fn in (("_<_", lambda a, b: cel_compare("_<_", a, b) == -1),
                 ("_<=_", lambda a, b: cel_compare("_<=_", a, b) in (-1, 0)),
                 ("_>_", lambda a, b: cel_compare("_>_", a, b) == 1),
                 ("_>=_", lambda a, b: cel_compare("_>=_", a, b) in (0, 1))):
    define(_op, [f"{_op}({t}, {u}) -> bool" for t, u in (
        ("bool", "bool"), ("string", "string"), ("bytes", "bytes"), ("int", "int"),
        ("uint", "uint"), ("double", "double"), ("int", "uint"), ("int", "double"),
        ("uint", "int"), ("uint", "double"), ("double", "int"), ("double", "uint"),
        ("Timestamp", "Timestamp"), ("Duration", "Duration"))],
        _fn, _cost_equality)
define("_==_", ["_==_(A, A) -> bool"], cel_equal, _cost_equality)
define("_!=_", ["_!=_(A, A) -> bool"], lambda a, b: not cel_equal(a, b), _cost_equality)
define("_+_", ["_+_(int, int) -> int", "_+_(uint, uint) -> uint", "_+_(double, double) -> double",
               "_+_(Timestamp, Duration) -> Timestamp", "_+_(Duration, Timestamp) -> Timestamp",
               "_+_(Duration, Duration) -> Duration",
               "_+_(string, string) -> string", "_+_(bytes, bytes) -> bytes",
               "_+_(list(A), list(A)) -> list(A)"], _add, _cost_sum_sizes)
define("_-_", ["_-_(int, int) -> int", "_-_(uint, uint) -> uint",
               "_-_(Timestamp, Timestamp) -> Duration", "_-_(Timestamp, Duration) -> Timestamp",
               "_-_(Duration, Duration) -> Duration",
               "_-_(double, double) -> double"], _sub)
define("_*_", ["_*_(int, int) -> int", "_*_(uint, uint) -> uint",
               "_*_(double, double) -> double"], _mul)
define("_/_", ["_/_(int, int) -> int", "_/_(uint, uint) -> uint",
               "_/_(double, double) -> double"], _div)
define("_%_", ["_%_(int, int) -> int", "_%_(uint, uint) -> uint"], _mod)
define("-_", ["-_(int) -> int", "-_(double) -> double"], _neg)
define("!_", ["!_(bool) -> bool"], _not)
define("@in", ["@in(A, list(A)) -> bool", "@in(A, map(A, B)) -> bool"], _in,
       lambda args: size_of(args[1]))
define("size", ["size(string) -> int", "size(bytes) -> int", "size(list(A)) -> int",
                "size(map(A, B)) -> int", "string.size() -> int", "bytes.size() -> int",
                "list(A).size() -> int", "map(A, B).size() -> int"], _size)

# --- conversions -----------------------------------------------------------------------


def _to_int(v: Any) -> int:
    t = type(v)
    if t is int:
        return int(v)
    if t is _dt.datetime:
        return int((v - _EPOCH) // _dt.timedelta(seconds=1))
    if t is UInt:
        return _check_int(int(v))
    if t is float:
        if math.isnan(v) or math.isinf(v) or not -(2.0**63) < v < 2.0**63:
            raise CELError("integer overflow")
        return int(v)
    if t is str:
        try:
            return _check_int(int(v, 10))
        except ValueError:
            raise CELError(f'strconv.ParseInt: parsing "{v}": invalid syntax') from None
    raise no_overload("int", v)


def _to_uint(v: Any) -> UInt:
    t = type(v)
    if t is UInt:
        return UInt(v)
    if t is int:
        return _check_uint(v)
    if t is float:
        if math.isnan(v) or not 0 <= v < 2.0**64:
            raise CELError("unsigned integer overflow")
        return UInt(int(v))
    if t is str:
        try:
            return _check_uint(int(v, 10))
        except ValueError:
            raise CELError(f'strconv.ParseUint: parsing "{v}": invalid syntax') from None
    raise no_overload("uint", v)


def _to_double(v: Any) -> float:
    t = type(v)
    if t is float:
        return float(v)
    if t is int or t is UInt:
        return float(v)
    if t is str:
        try:
            return float(v)
        except ValueError:
            raise CELError(f'strconv.ParseFloat: parsing "{v}": invalid syntax') from None
    raise no_overload("double", v)


def format_double(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    r = repr(v)
    if r.endswith(".0"):
        r = r[:-2]
    return r


def _to_string(v: Any) -> str:
    t = type(v)
    if t is str:
        return str(v)
    if t is bool:
        return "true" if v else "false"
    if t is int or t is UInt:
        return str(int(v))
    if t is float:
        return format_double(v)
    if t is bytes:
        try:
            return str(v.decode("utf-8"))
        except UnicodeDecodeError:
            raise CELError("invalid UTF-8 in bytes, cannot convert to string") from None
    if t is IPValue:
        return str(v.addr)
    if t is CIDRValue:
        return str(v.iface)
    if t is QuantityValue:
        return str(v.q)
    if t is SemverValue:
        return str(v.text)
    if t is URLValue:
        return str(v.text)
    if t is _dt.datetime:
        return _format_timestamp(v)
    if t is _dt.timedelta:
        return _format_duration(v)
    raise no_overload("string", v)


def _to_bytes(v: Any) -> bytes:
    if type(v) is bytes:
        return v
    if type(v) is str:
        return v.encode("utf-8")
    raise no_overload("bytes", v)


def _to_bool(v: Any) -> bool:
    if type(v) is bool:
        return v
    if type(v) is str:
        if v in ("true", "True", "TRUE", "t", "1"):
            return True
        if v in ("false", "False", "FALSE", "f", "0"):
            return False
        raise CELError("type conversion error from 'string' to 'bool'")
    raise no_overload("bool", v)


def _type_fn(v: Any) -> TypeValue:
    return TypeValue(cel_type_name(v))


define("int", ["int(int) -> int", "int(uint) -> int", "int(double) -> int",
               "int(string) -> int", "int(Timestamp) -> int"], _to_int)
define("uint", ["uint(uint) -> uint", "uint(int) -> uint", "uint(double) -> uint",
                "uint(string) -> uint"], _to_uint)
define("double", ["double(double) -> double", "double(int) -> double",
                  "double(uint) -> double", "double(string) -> double"], _to_double)
define("string", ["string(string) -> string", "string(bool) -> string", "string(int) -> string",
                  "string(uint) -> string", "string(double) -> string",
                  "string(bytes) -> string", "string(IP) -> string", "string(CIDR) -> string",
                  "string(Timestamp) -> string", "string(Duration) -> string"],
       _to_string)
define("bytes", ["bytes(bytes) -> bytes", "bytes(string) -> bytes"], _to_bytes,
       lambda args: traversal(size_of(args[0])))
define("bool", ["bool(bool) -> bool", "bool(string) -> bool"], _to_bool)
define("dyn", ["dyn(A) -> dyn"], lambda v: v)
define("type", ["type(A) -> type(A)"], _type_fn)

# --- strings (standard and cel-go's strings extension) ---------------------------------


def _str_recv(name: str, s: Any, *args: Any) -> str:
    if type(s) is not str:
        raise no_overload(name, s, *args)
    return str(s)


def _cost_recv(args: Sequence[Any]) -> int:
    return max(1, traversal(size_of(args[0])))


def _cost_two_strings(args: Sequence[Any]) -> int:
    return traversal(size_of(args[0])) * max(1, traversal(size_of(args[1])))


def _matches(s: Any, pattern: Any) -> bool:
    if type(s) is not str or type(pattern) is not str:
        raise no_overload("matches", s, pattern)
    return _regex(pattern).search(s) is not None


def _cost_regex(args: Sequence[Any]) -> int:
    str_cost = math.ceil((1.0 + size_of(args[0])) * STRING_TRAVERSAL_COST_FACTOR)
    regex_cost = math.ceil(size_of(args[1]) * REGEX_STRING_LENGTH_COST_FACTOR)
    return str_cost * regex_cost


def _code_point_index(s: str, sub: str, start: int = 0) -> int:
    if start < 0 or start > len(s):
        raise CELError(f"index out of range: {start}")
    return s.find(sub, start)


def _index_of(s: Any, sub: Any, *start: Any) -> Any:
    if type(s) is list:  # the Kubernetes lists library
        for i, x in enumerate(s):
            if cel_equal(x, sub):
                return i
        return -1
    _str_recv("indexOf", s, sub, *start)
    if type(sub) is not str:
        raise no_overload("indexOf", s, sub, *start)
    return _code_point_index(s, sub, int(start[0]) if start else 0)


def _last_index_of(s: Any, sub: Any, *end: Any) -> Any:
    if type(s) is list:
        for i in range(len(s) - 1, -1, -1):
            if cel_equal(s[i], sub):
                return i
        return -1
    _str_recv("lastIndexOf", s, sub, *end)
    if type(sub) is not str:
        raise no_overload("lastIndexOf", s, sub, *end)
    if end:
        e = int(end[0])
        if e < 0 or e >= len(s) and len(s) > 0:
            raise CELError(f"index out of range: {e}")
        return s.rfind(sub, 0, e + len(sub))
    return s.rfind(sub)


def _substring(s: Any, a: Any, *b: Any) -> str:
    _str_recv("substring", s, a, *b)
    start = int(a)
    end = int(b[0]) if b else len(s)
    if start < 0 or start > len(s):
        raise CELError(f"index out of range: {start}")
    if end < 0 or end > len(s):
        raise CELError(f"index out of range: {end}")
    if start > end:
        raise CELError(f"invalid substring range. start: {start}, end: {end}")
    return str(s[start:end])


def _char_at(s: Any, i: Any) -> str:
    _str_recv("charAt", s, i)
    i = int(i)
    if i < 0 or i > len(s):
        raise CELError(f"index out of range: {i}")
    return str(s[i:i + 1])


def _replace(s: Any, old: Any, new: Any, *n: Any) -> str:
    _str_recv("replace", s, old, new, *n)
    count = int(n[0]) if n else -1
    return str(s.replace(old, new, count))


def _cost_replace(args: Sequence[Any]) -> int:
    s, old, new = args[0], args[1], args[2]
    if not (type(s) is str and type(old) is str and type(new) is str):
        return 1
    k = s.count(old) if old else len(s) + 1
    if len(args) > 3 and int(args[3]) >= 0:
        k = min(k, int(args[3]))
    return 1 + traversal(len(s) + k * len(new))


def _split(s: Any, sep: Any, *n: Any) -> list[str]:
    _str_recv("split", s, sep, *n)
    limit = int(n[0]) if n else -1
    if limit == 0:
        return []
    if sep == "":
        chars = list(s)
        if limit > 0 and len(chars) > limit:
            chars = chars[:limit - 1] + ["".join(chars[limit - 1:])]
        return chars
    return list(s.split(sep) if limit < 0 else s.split(sep, limit - 1))


def _join(lst: Any, *sep: Any) -> str:
    if type(lst) is not list or not all(type(x) is str for x in lst):
        raise no_overload("join", lst, *sep)
    return str(sep[0] if sep else "").join(lst)


def _cost_join(args: Sequence[Any]) -> int:
    lst = args[0]
    if type(lst) is not list:
        return 1
    sep = size_of(args[1]) if len(args) > 1 else 0
    return 1 + traversal(sum(size_of(x) for x in lst) + sep * len(lst))


def _ascii(name: str, upper: bool) -> Impl:
    def call(s: Any) -> str:
        _str_recv(name, s)
        return "".join((c.upper() if upper else c.lower()) if c.isascii() else c for c in s)

    return call


_WS = " \t\n\v\f\r\u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007" \
      "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def _quote(s: Any) -> str:
    _str_recv("strings.quote", s)
    out = ['"']
    for c in s:
        if c == '"':
            out.append('\\"')
        elif c == "\\":
            out.append("\\\\")
        elif c in "\a\b\f\n\r\t\v":
            out.append({"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
                        "\t": "\\t", "\v": "\\v"}[c])
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def _format_value(verb: str, v: Any, precision: int | None) -> str:
    if verb == "s":
        if type(v) is list:
            return "[" + ", ".join(_format_value("s", x, None) for x in v) + "]"
        if isinstance(v, dict):
            items = sorted(((_format_value("s", k, None), _format_value("s", x, None))
                            for k, x in v.items()))
            return "{" + ", ".join(f"{k}: {x}" for k, x in items) + "}"
        if v is None:
            return "null"
        if isinstance(v, TypeValue):
            return v.name
        return _to_string(v)
    if verb == "d":
        if type(v) in (int, UInt):
            return str(int(v))
        if type(v) is float and (math.isnan(v) or math.isinf(v)):
            return format_double(v)
        raise CELError(f"error during formatting: decimal clause can only be used on "
                       f"integers, was given {go_type_name(v)}")
    if verb in "fe":
        if type(v) in (int, UInt, float):
            p = 6 if precision is None else precision
            x = float(v)
            if math.isnan(x) or math.isinf(x):
                return format_double(x)
            return f"{x:.{p}{verb}}"
        raise CELError(f"error during formatting: fixed-point clause can only be used on "
                       f"doubles, was given {go_type_name(v)}")
    if verb == "b":
        if type(v) in (int, UInt):
            return format(int(v), "b")
        if type(v) is bool:
            return "1" if v else "0"
        raise CELError(f"error during formatting: only integers and bools can be formatted "
                       f"as binary, was given {go_type_name(v)}")
    if verb == "o":
        if type(v) in (int, UInt):
            return format(int(v), "o")
        raise CELError(f"error during formatting: octal clause can only be used on integers, "
                       f"was given {go_type_name(v)}")
    if verb in "xX":
        if type(v) in (int, UInt):
            r = format(int(v), "x")
        elif type(v) is str:
            r = v.encode("utf-8").hex()
        elif type(v) is bytes:
            r = v.hex()
        else:
            raise CELError(f"error during formatting: only integers, byte buffers, and "
                           f"strings can be formatted as hex, was given {go_type_name(v)}")
        return r.upper() if verb == "X" else r
    raise CELError(f'could not parse formatting clause: unrecognized formatting clause "{verb}"')


def _format(s: Any, args: Any) -> str:
    _str_recv("format", s, args)
    if type(args) is not list:
        raise no_overload("format", s, args)
    out: list[str] = []
    i, n, ai = 0, len(s), 0
    while i < n:
        c = s[i]
        if c != "%":
            out.append(c)
            i += 1
            continue
        i += 1
        if i < n and s[i] == "%":
            out.append("%")
            i += 1
            continue
        precision = None
        if i < n and s[i] == ".":
            j = i + 1
            while j < n and s[j].isdigit():
                j += 1
            precision = int(s[i + 1:j] or "0")
            i = j
        if i >= n:
            raise CELError("could not parse formatting clause: unexpected end of string")
        if ai >= len(args):
            raise CELError(f"index {ai} out of range")
        out.append(_format_value(s[i], args[ai], precision))
        ai += 1
        i += 1
    return "".join(out)


def _cost_format(args: Sequence[Any]) -> int:
    lst = args[1] if len(args) > 1 else []
    extra = sum(size_of(x) for x in lst) if type(lst) is list else 0
    return 1 + traversal(size_of(args[0]) + extra)


def _reverse(s: Any) -> str:
    _str_recv("reverse", s)
    return str(s[::-1])


define("contains", ["string.contains(string) -> bool"],
       lambda s, sub: _str_recv("contains", s, sub).find(_str_recv("contains", sub)) >= 0,
       _cost_two_strings)
define("startsWith", ["string.startsWith(string) -> bool"],
       lambda s, p: _str_recv("startsWith", s, p).startswith(_str_recv("startsWith", p)),
       lambda args: traversal(size_of(args[1])))
define("endsWith", ["string.endsWith(string) -> bool"],
       lambda s, p: _str_recv("endsWith", s, p).endswith(_str_recv("endsWith", p)),
       lambda args: traversal(size_of(args[1])))
define("matches", ["string.matches(string) -> bool", "matches(string, string) -> bool"],
       _matches, _cost_regex)
define("charAt", ["string.charAt(int) -> string"], _char_at, _cost_recv)
define("indexOf", ["string.indexOf(string) -> int", "string.indexOf(string, int) -> int",
                   "list(A).indexOf(A) -> int"], _index_of, _cost_recv)
define("lastIndexOf", ["string.lastIndexOf(string) -> int",
                       "string.lastIndexOf(string, int) -> int",
                       "list(A).lastIndexOf(A) -> int"], _last_index_of, _cost_recv)
define("lowerAscii", ["string.lowerAscii() -> string"], _ascii("lowerAscii", False), _cost_recv)
define("upperAscii", ["string.upperAscii() -> string"], _ascii("upperAscii", True), _cost_recv)
define("replace", ["string.replace(string, string) -> string",
                   "string.replace(string, string, int) -> string"], _replace, _cost_replace)
define("split", ["string.split(string) -> list(string)",
                 "string.split(string, int) -> list(string)"], _split, _cost_recv)
define("substring", ["string.substring(int) -> string",
                     "string.substring(int, int) -> string"], _substring, _cost_recv)
define("trim", ["string.trim() -> string"],
       lambda s: _str_recv("trim", s).strip(_WS), _cost_recv)
define("join", ["list(string).join() -> string", "list(string).join(string) -> string"],
       _join, _cost_join)
define("strings.quote", ["strings.quote(string) -> string"], _quote, _cost_recv)
define("format", ["string.format(list(dyn)) -> string"], _format, _cost_format)
define("reverse", ["string.reverse() -> string"], _reverse, _cost_recv)

# --- regex (Kubernetes' regex library) -------------------------------------------------


def _find(s: Any, pattern: Any) -> str:
    if type(s) is not str or type(pattern) is not str:
        raise no_overload("find", s, pattern)
    m = _regex(pattern).search(s)
    return "" if m is None else str(m.group(0))


def _find_all(s: Any, pattern: Any, *n: Any) -> list[str]:
    if type(s) is not str or type(pattern) is not str:
        raise no_overload("findAll", s, pattern, *n)
    limit = int(n[0]) if n else -1
    if limit == 0:
        return []
    out = []
    for m in _regex(pattern).finditer(s):
        out.append(str(m.group(0)))
        if 0 < limit <= len(out):
            break
    return out


define("find", ["string.find(string) -> string"], _find, _cost_regex)
define("findAll", ["string.findAll(string) -> list(string)",
                   "string.findAll(string, int) -> list(string)"], _find_all, _cost_regex)

# --- lists (Kubernetes' lists library) and sets (cel-go's sets extension) --------------


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

# --- quantity --------------------------------------------------------------------------

_QUANTITY_ERROR = ("quantities must match the regular expression "
                   "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


def _quantity(s: Any) -> QuantityValue:
    if type(s) is not str:
        raise no_overload("quantity", s)
    try:
        return QuantityValue(parse_quantity(s))
    except QuantityError:
        raise CELError(_QUANTITY_ERROR) from None


def _is_quantity(s: Any) -> bool:
    if type(s) is not str:
        raise no_overload("isQuantity", s)
    try:
        parse_quantity(s)
    except QuantityError:
        return False
    return True


def _compare_any(name: str, a: Any, b: Any) -> int:
    if type(a) is SemverValue and type(b) is SemverValue:
        return a.compare(b)
    if type(a) is QuantityValue and type(b) is QuantityValue:
        return a.q.cmp(b.q)
    raise no_overload(name, a, b)


def _qty_arith(name: str, sign: int) -> Impl:
    def op(a: Any, b: Any) -> QuantityValue:
        if type(a) is not QuantityValue:
            raise no_overload(name, a, b)
        if type(b) is QuantityValue:
            qb = b.q
        elif type(b) is int:
            qb = parse_quantity(str(b))
        else:
            raise no_overload(name, a, b)
        return QuantityValue(a.q + qb if sign > 0 else a.q - qb)

    return op


def _as_integer(v: Any) -> int:
    if type(v) is not QuantityValue:
        raise no_overload("asInteger", v)
    f = v.q.as_fraction()
    if f.denominator != 1 or not INT64_MIN <= f.numerator <= INT64_MAX:
        raise CELError("cannot convert value to integer")
    return int(f.numerator)


def _is_integer(v: Any) -> bool:
    if type(v) is not QuantityValue:
        raise no_overload("isInteger", v)
    f = v.q.as_fraction()
    return f.denominator == 1 and INT64_MIN <= f.numerator <= INT64_MAX


define("quantity", ["quantity(string) -> Quantity"], _quantity, _cost_recv)
define("isQuantity", ["isQuantity(string) -> bool"], _is_quantity, _cost_recv)
define("sign", ["Quantity.sign() -> int"],
       lambda v: _want(v, QuantityValue, "sign", v).q.sign())
define("isInteger", ["Quantity.isInteger() -> bool"], _is_integer)
define("asInteger", ["Quantity.asInteger() -> int"], _as_integer)
define("asApproximateFloat", ["Quantity.asApproximateFloat() -> double"],
       lambda v: float(_want(v, QuantityValue, "asApproximateFloat", v).q.as_fraction()))
define("add", ["Quantity.add(Quantity) -> Quantity", "Quantity.add(int) -> Quantity"],
       _qty_arith("add", 1))
define("sub", ["Quantity.sub(Quantity) -> Quantity", "Quantity.sub(int) -> Quantity"],
       _qty_arith("sub", -1))
define("compareTo", ["Quantity.compareTo(Quantity) -> int", "Semver.compareTo(Semver) -> int"],
       lambda a, b: _compare_any("compareTo", a, b))
define("isGreaterThan", ["Quantity.isGreaterThan(Quantity) -> bool",
                         "Semver.isGreaterThan(Semver) -> bool"],
       lambda a, b: _compare_any("isGreaterThan", a, b) > 0)
define("isLessThan", ["Quantity.isLessThan(Quantity) -> bool",
                      "Semver.isLessThan(Semver) -> bool"],
       lambda a, b: _compare_any("isLessThan", a, b) < 0)

# --- semver ----------------------------------------------------------------------------


def _semver(s: Any, *normalize: Any) -> SemverValue:
    if type(s) is not str or (normalize and type(normalize[0]) is not bool):
        raise no_overload("semver", s, *normalize)
    return SemverValue(s, bool(normalize and normalize[0]))


def _is_semver(s: Any, *normalize: Any) -> bool:
    if type(s) is not str or (normalize and type(normalize[0]) is not bool):
        raise no_overload("isSemver", s, *normalize)
    try:
        SemverValue(s, bool(normalize and normalize[0]))
    except CELError:
        return False
    return True


define("semver", ["semver(string) -> Semver", "semver(string, bool) -> Semver"], _semver,
       _cost_recv)
define("isSemver", ["isSemver(string) -> bool", "isSemver(string, bool) -> bool"], _is_semver,
       _cost_recv)
define("major", ["Semver.major() -> int"], lambda v: _want(v, SemverValue, "major", v).major)
define("minor", ["Semver.minor() -> int"], lambda v: _want(v, SemverValue, "minor", v).minor)
define("patch", ["Semver.patch() -> int"], lambda v: _want(v, SemverValue, "patch", v).patch)

# --- IP and CIDR -----------------------------------------------------------------------


def _parse_ip(s: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    if "%" in s:
        raise CELError("IP address with zone value is not allowed")
    try:
        addr = ipaddress.ip_address(s)
    except ValueError:
        raise CELError(f"IP Address {s!r} parse error during conversion from string: "
                       f"ParseAddr({s!r}): unable to parse IP") from None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise CELError("IPv4-mapped IPv6 address is not allowed")
    return addr


def _ip(s: Any) -> IPValue:
    if type(s) is IPValue:
        return s
    if type(s) is CIDRValue:
        return IPValue(s.iface.ip)
    if type(s) is not str:
        raise no_overload("ip", s)
    return IPValue(_parse_ip(s))


def _is_ip(s: Any) -> bool:
    if type(s) is not str:
        raise no_overload("isIP", s)
    try:
        _parse_ip(s)
    except CELError:
        return False
    return True


def _is_canonical(s: Any) -> bool:
    if type(s) is not str:
        raise no_overload("ip.isCanonical", s)
    return str(_parse_ip(s)) == s


def _parse_cidr(s: str) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface:
    if "/" not in s:
        raise CELError(f"network address parse error during conversion from string: "
                       f"netip.ParsePrefix({s!r}): no '/'")
    addr, _, _ = s.partition("/")
    _parse_ip(addr)
    try:
        return ipaddress.ip_interface(s)
    except ValueError:
        raise CELError(f"network address parse error during conversion from string: "
                       f"netip.ParsePrefix({s!r}): bad bits") from None


def _cidr(s: Any) -> CIDRValue:
    if type(s) is not str:
        raise no_overload("cidr", s)
    return CIDRValue(_parse_cidr(s))


def _is_cidr(s: Any) -> bool:
    if type(s) is not str:
        raise no_overload("isCIDR", s)
    try:
        _parse_cidr(s)
    except CELError:
        return False
    return True


def _ipv(name: str, fn: Callable[[Any], Any]) -> Impl:
    def call(v: Any) -> Any:
        if type(v) is not IPValue:
            raise no_overload(name, v)
        return fn(v.addr)

    return call


def _contains_ip(c: Any, ip: Any) -> bool:
    if type(c) is not CIDRValue:
        raise no_overload("containsIP", c, ip)
    addr = _parse_ip(ip) if type(ip) is str else (ip.addr if type(ip) is IPValue else None)
    if addr is None:
        raise no_overload("containsIP", c, ip)
    return addr.version == c.iface.version and addr in c.iface.network


def _contains_cidr(c: Any, other: Any) -> bool:
    if type(c) is not CIDRValue:
        raise no_overload("containsCIDR", c, other)
    o = _parse_cidr(other) if type(other) is str else (
        other.iface if type(other) is CIDRValue else None)
    if o is None:
        raise no_overload("containsCIDR", c, other)
    return o.version == c.iface.version and o.network.subnet_of(c.iface.network)  # type: ignore[arg-type]


define("ip", ["ip(string) -> IP", "CIDR.ip() -> IP"], _ip, _cost_recv)
define("isIP", ["isIP(string) -> bool"], _is_ip, _cost_recv)
define("ip.isCanonical", ["ip.isCanonical(string) -> bool"], _is_canonical, _cost_recv)
define("family", ["IP.family() -> int"], _ipv("family", lambda a: a.version))
define("isUnspecified", ["IP.isUnspecified() -> bool"],
       _ipv("isUnspecified", lambda a: a.is_unspecified))
define("isLoopback", ["IP.isLoopback() -> bool"], _ipv("isLoopback", lambda a: a.is_loopback))
define("isLinkLocalMulticast", ["IP.isLinkLocalMulticast() -> bool"],
       _ipv("isLinkLocalMulticast", lambda a: a.is_multicast and (
           a in ipaddress.ip_network("224.0.0.0/24") if a.version == 4
           else (int(a) >> 112) & 0xFF0F == 0xFF02)))
define("isLinkLocalUnicast", ["IP.isLinkLocalUnicast() -> bool"],
       _ipv("isLinkLocalUnicast", lambda a: a.is_link_local and not a.is_multicast))
define("isGlobalUnicast", ["IP.isGlobalUnicast() -> bool"],
       _ipv("isGlobalUnicast", lambda a: not (
           a.is_unspecified or a.is_loopback or a.is_multicast or a.is_link_local
           or (a.version == 4 and a == ipaddress.IPv4Address("255.255.255.255")))))
define("cidr", ["cidr(string) -> CIDR"], _cidr, _cost_recv)
define("isCIDR", ["isCIDR(string) -> bool"], _is_cidr, _cost_recv)
define("containsIP", ["CIDR.containsIP(IP) -> bool", "CIDR.containsIP(string) -> bool"],
       _contains_ip)
define("containsCIDR", ["CIDR.containsCIDR(CIDR) -> bool", "CIDR.containsCIDR(string) -> bool"],
       _contains_cidr)
define("masked", ["CIDR.masked() -> CIDR"],
       lambda c: CIDRValue(ipaddress.ip_interface(str(_want(c, CIDRValue, "masked", c)
                                                          .iface.network))))
define("prefixLength", ["CIDR.prefixLength() -> int"],
       lambda c: _want(c, CIDRValue, "prefixLength", c).iface.network.prefixlen)

# --- URL -------------------------------------------------------------------------------


def _url(s: Any) -> URLValue:
    if type(s) is not str:
        raise no_overload("url", s)
    try:
        u = URLValue(s)
        u.parts.port  # noqa: B018 - validates the port
    except ValueError as exc:
        raise CELError(f"URL parse error during conversion from string: {exc}") from None
    if not (u.parts.scheme or s.startswith("/")):
        raise CELError(f"URL parse error during conversion from string: parse {s!r}: "
                       "invalid URI for request")
    return u


def _is_url(s: Any) -> bool:
    if type(s) is not str:
        raise no_overload("isURL", s)
    try:
        _url(s)
    except CELError:
        return False
    return True


def _urlv(name: str, fn: Callable[[URLValue], Any]) -> Impl:
    def call(u: Any) -> Any:
        if type(u) is not URLValue:
            raise no_overload(name, u)
        return fn(u)

    return call


def _host(u: URLValue) -> str:
    netloc = u.parts.netloc.rpartition("@")[2]
    return netloc


def _hostname(u: URLValue) -> str:
    return _host(u).rpartition(":")[0] if (":" in _host(u) and not _host(u).endswith("]")) \
        else _host(u).strip("[]")


def _port(u: URLValue) -> str:
    h = _host(u)
    if h.endswith("]") or ":" not in h:
        return ""
    return h.rpartition(":")[2]


define("url", ["url(string) -> URL"], _url, _cost_recv)
define("isURL", ["isURL(string) -> bool"], _is_url, _cost_recv)
define("getScheme", ["URL.getScheme() -> string"], _urlv("getScheme", lambda u: u.parts.scheme))
define("getHost", ["URL.getHost() -> string"], _urlv("getHost", _host))
define("getHostname", ["URL.getHostname() -> string"], _urlv("getHostname", _hostname))
define("getPort", ["URL.getPort() -> string"], _urlv("getPort", _port))
define("getEscapedPath", ["URL.getEscapedPath() -> string"],
       _urlv("getEscapedPath", lambda u: u.parts.path))
define("getQuery", ["URL.getQuery() -> map(string, list(string))"],
       _urlv("getQuery", lambda u: {k: list(v) for k, v in parse_qs(
           u.parts.query, keep_blank_values=True).items()}))

# --- optionals -------------------------------------------------------------------------


def _opt(name: str, o: Any, *args: Any) -> OptionalValue:
    if type(o) is not OptionalValue:
        raise no_overload(name, o, *args)
    return o


def _opt_value(o: Any) -> Any:
    opt = _opt("value", o)
    if not opt.present:
        raise CELError("optional.none() dereference")
    return opt.value


def _opt_of_non_zero(v: Any) -> OptionalValue:
    zero = v is None or (type(v) in (bool, int, UInt, float, str, bytes, list, dict) and not v)
    return OptionalValue() if zero else OptionalValue(v)


def _or_value(o: Any, d: Any) -> Any:
    opt = _opt("orValue", o, d)
    return opt.value if opt.present else d


def _or(o: Any, other: Any) -> Any:
    opt = _opt("or", o, other)
    if opt.present:
        return opt
    return _opt("or", other)


define("optional.of", ["optional.of(A) -> optional(A)"], OptionalValue)
define("optional.none", ["optional.none() -> optional(dyn)"], lambda: OptionalValue())
define("optional.ofNonZeroValue", ["optional.ofNonZeroValue(A) -> optional(A)"],
       _opt_of_non_zero)
define("hasValue", ["optional(A).hasValue() -> bool"], lambda o: _opt("hasValue", o).present)
define("value", ["optional(A).value() -> A"], _opt_value)
define("orValue", ["optional(A).orValue(A) -> A"], _or_value)
define("or", ["optional(A).or(optional(A)) -> optional(A)"], _or)

# --- timestamps and durations ----------------------------------------------------------

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_TS_MIN = _dt.datetime(1, 1, 1, tzinfo=_dt.timezone.utc)
_TS_MAX = _dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=_dt.timezone.utc)
_DURATION_MAX = _dt.timedelta(seconds=315_576_000_000)
_DURATION_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6,
                   "ns": 1e-9}
_DURATION_RE = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(h|ms|us|µs|ns|m|s)")


def _check_time(v: Any) -> Any:
    if type(v) is _dt.datetime and not _TS_MIN <= v <= _TS_MAX:
        raise CELError("timestamp overflow")
    if type(v) is _dt.timedelta and abs(v) > _DURATION_MAX:
        raise CELError("duration overflow")
    return v


def _timestamp(v: Any) -> _dt.datetime:
    if type(v) is _dt.datetime:
        return v
    if type(v) is int:
        try:
            return _check_time(_EPOCH + _dt.timedelta(seconds=v))  # type: ignore[no-any-return]
        except OverflowError:
            raise CELError("timestamp overflow") from None
    if type(v) is not str:
        raise no_overload("timestamp", v)
    text = v[:-1] + "+00:00" if v.endswith(("Z", "z")) else v
    try:
        ts = _dt.datetime.fromisoformat(text)
    except ValueError:
        raise CELError(f'parsing time "{v}" as "2006-01-02T15:04:05Z07:00": cannot parse') from None
    if ts.tzinfo is None or "T" not in text.upper():
        raise CELError(f'parsing time "{v}" as "2006-01-02T15:04:05Z07:00": cannot parse')
    return _check_time(ts.astimezone(_dt.timezone.utc))  # type: ignore[no-any-return]


def _duration(v: Any) -> _dt.timedelta:
    if type(v) is _dt.timedelta:
        return v
    if type(v) is not str:
        raise no_overload("duration", v)
    text = v
    sign = -1 if text.startswith("-") else 1
    body = text.lstrip("+-")
    if body == "0":
        return _dt.timedelta(0)
    pos, total = 0, 0.0
    for m in _DURATION_RE.finditer(body):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _DURATION_UNITS[m.group(2)]
        pos = m.end()
    if pos != len(body) or not body:
        raise CELError(f'time: invalid duration "{v}"')
    return _check_time(_dt.timedelta(seconds=sign * total))  # type: ignore[no-any-return]


def _format_timestamp(v: _dt.datetime) -> str:
    text = v.astimezone(_dt.timezone.utc).isoformat()
    text = text.replace("+00:00", "Z")
    if "." in text:
        head, frac = text[:-1].split(".")
        text = head + "." + frac.rstrip("0") + "Z"
    return text


def _format_duration(v: _dt.timedelta) -> str:
    seconds = v.total_seconds()
    return (f"{seconds:.9f}".rstrip("0").rstrip(".") or "0") + "s"


def _tz(args: Sequence[Any], name: str) -> _dt.tzinfo:
    if not args:
        return _dt.timezone.utc
    tz = args[0]
    if type(tz) is not str:
        raise no_overload(name, tz)
    m = re.fullmatch(r"([+-])(\d{2}):(\d{2})", tz)
    if m:
        delta = _dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3)))
        return _dt.timezone(delta if m.group(1) == "+" else -delta)
    try:
        from zoneinfo import ZoneInfo

        return ZoneInfo(tz)
    except Exception:
        raise CELError(f"unknown time zone {tz}") from None


def _ts_getter(name: str, fn: Callable[[_dt.datetime], int]) -> Impl:
    def call(v: Any, *tz: Any) -> int:
        if type(v) is not _dt.datetime:
            raise no_overload(name, v, *tz)
        return fn(v.astimezone(_tz(tz, name)))

    return call


def _time_getter(name: str, ts: Callable[[_dt.datetime], int] | None,
                 dur: Callable[[_dt.timedelta], int] | None) -> Impl:
    ts_call = _ts_getter(name, ts) if ts is not None else None

    def call(v: Any, *tz: Any) -> int:
        if type(v) is _dt.timedelta and dur is not None and not tz:
            return dur(v)
        if ts_call is None:
            raise no_overload(name, v, *tz)
        return int(ts_call(v, *tz))

    return call


define("timestamp", ["timestamp(string) -> Timestamp", "timestamp(int) -> Timestamp",
                     "timestamp(Timestamp) -> Timestamp"], _timestamp)
define("duration", ["duration(string) -> Duration", "duration(Duration) -> Duration"], _duration)
for _name, _ts_fn, _dur_fn in (
    ("getFullYear", lambda t: t.year, None),
    ("getMonth", lambda t: t.month - 1, None),
    ("getDate", lambda t: t.day, None),
    ("getDayOfMonth", lambda t: t.day - 1, None),
    ("getDayOfWeek", lambda t: (t.weekday() + 1) % 7, None),
    ("getDayOfYear", lambda t: t.timetuple().tm_yday - 1, None),
    ("getHours", lambda t: t.hour, lambda d: int(d.total_seconds() // 3600)),
    ("getMinutes", lambda t: t.minute, lambda d: int(d.total_seconds() // 60)),
    ("getSeconds", lambda t: t.second, lambda d: int(d.total_seconds())),
    ("getMilliseconds", lambda t: t.microsecond // 1000,
     lambda d: int(d.total_seconds() * 1000) % 1000),
):
    _sigs = [f"Timestamp.{_name}() -> int", f"Timestamp.{_name}(string) -> int"]
    if _dur_fn is not None:
        _sigs.append(f"Duration.{_name}() -> int")
    define(_name, _sigs, _time_getter(_name, _ts_fn, _dur_fn))
