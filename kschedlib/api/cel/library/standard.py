"""cel-go's standard definitions: operators with overflow checks, ``in``, ``size`` and the
type conversions."""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Sequence
from typing import Any

from kschedlib.api.cel.errors import CELError
from kschedlib.api.cel.library.functions import _check_int, _check_uint, define
from kschedlib.api.cel.library.timestamps import (
    _EPOCH,
    _check_time,
    _format_duration,
    _format_timestamp,
)
from kschedlib.api.cel.library.values import (
    CIDRValue,
    IPValue,
    QuantityValue,
    SemverValue,
    TypeValue,
    UInt,
    URLValue,
    cel_compare,
    cel_equal,
    cel_type_name,
    map_lookup,
    no_overload,
    size_of,
    traversal,
)


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
