"""cel-go's optional types: ``optional.of``/``none``/``ofNonZeroValue``, ``hasValue``,
``value``, ``orValue`` and ``or``."""

from __future__ import annotations

from typing import Any

from kschedlib.api.cel.errors import CELError
from kschedlib.api.cel.library.functions import define
from kschedlib.api.cel.library.values import OptionalValue, UInt, no_overload


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
