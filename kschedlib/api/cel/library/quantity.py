"""Kubernetes' quantity library: ``quantity``, ``isQuantity`` and Quantity's arithmetic and
comparisons (``compareTo``, ``isGreaterThan``, ``isLessThan`` serve Semver too)."""

from __future__ import annotations

from typing import Any

from kschedlib.api.cel.errors import CELError
from kschedlib.api.cel.library.functions import Impl, _cost_recv, _want, define
from kschedlib.api.cel.library.values import (
    INT64_MAX,
    INT64_MIN,
    QuantityValue,
    SemverValue,
    no_overload,
)
from kschedlib.api.quantity import parse_quantity
from kschedlib.errors import QuantityError

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
