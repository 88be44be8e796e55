"""Declarative JSON codec for the attrs models: camelCase keys, typed decoding, field paths.

Each model field maps to a JSON key (the camelCase of its name, or ``metadata["json"]``).
Decoding is planned once per class from its type hints, so parsing stays cheap.
"""

from __future__ import annotations

import datetime as _dt
import re
import sys
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, Union

import attrs

from kschedlib.api.quantity import Quantity, parse_quantity
from kschedlib.errors import QuantityError

T = TypeVar("T")

Decoder = Callable[[Any, str], Any]
Encoder = Callable[[Any], Any]


class FieldError(ValueError):
    """A decoding problem at a field path; top-level decoding turns it into InvalidObjectError."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


def json_name(name: str) -> str:
    """snake_case attribute name to its Kubernetes camelCase key."""
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# Decoded strings are shared: names, namespaces, kinds and label values repeat across
# thousands of objects, and one copy of each keeps a loaded cluster small. sys.intern does it
# where interned strings are freed with their last reference; CPython 3.12 makes them immortal
# (a long-running host would keep every pod name ever decoded), so there a small bounded memo
# shares the frequent values instead.
_STRS: dict[str, str] = {}
_STRS_MAX = 4096


def _interning_is_mortal() -> bool:
    probe = sys.intern("".join(("kschedlib-intern-probe-", str(id(object())))))
    return sys.getrefcount(probe) < 1 << 20


def _memo_str(value: str) -> str:
    hit = _STRS.get(value)
    if hit is None:
        if len(_STRS) >= _STRS_MAX:
            _STRS.clear()
        _STRS[value] = hit = value
    return hit


_intern: Callable[[str], str] = sys.intern if _interning_is_mortal() else _memo_str


def _dec_str(value: Any, path: str) -> str:
    if type(value) is str:
        return _intern(value)
    if isinstance(value, str):
        return value
    raise FieldError(path, f"expected string, got {_type_name(value)}")


def _dec_int(value: Any, path: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise FieldError(path, f"expected integer, got {_type_name(value)}")


def _dec_float(value: Any, path: str) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    raise FieldError(path, f"expected number, got {_type_name(value)}")


def _dec_bool(value: Any, path: str) -> bool:
    if isinstance(value, bool):
        return value
    raise FieldError(path, f"expected boolean, got {_type_name(value)}")


def _dec_quantity(value: Any, path: str) -> Quantity:
    if isinstance(value, bool):
        raise FieldError(path, f"expected quantity, got {_type_name(value)}")
    if isinstance(value, (int, float)):
        value = repr(value) if isinstance(value, float) else str(value)
    if not isinstance(value, str):
        raise FieldError(path, f"expected quantity, got {_type_name(value)}")
    try:
        # Go's Quantity.UnmarshalJSON trims surrounding white space before parsing.
        if value[:1] in _GO_SPACE or value[-1:] in _GO_SPACE:
            value = value.strip(_GO_SPACE)
        return parse_quantity(value)
    except QuantityError:
        raise FieldError(path, f'invalid quantity "{value}"') from None


# What Go's strings.TrimSpace removes (unicode.IsSpace).
_GO_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)

_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"
)


def parse_time(value: str) -> _dt.datetime:
    """Parse an RFC 3339 timestamp as Kubernetes writes it, always timezone-aware."""
    m = _RFC3339.match(value)
    if m is None:
        raise ValueError(f'invalid timestamp "{value}"')
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    frac = m.group(7)
    micro = int((frac[1:] + "000000")[:6]) if frac else 0
    tz = m.group(8)
    if tz in ("Z", "z"):
        tzinfo = _dt.timezone.utc
    else:
        sign = 1 if tz[0] == "+" else -1
        tzinfo = _dt.timezone(sign * _dt.timedelta(hours=int(tz[1:3]), minutes=int(tz[4:6])))
    try:
        return _dt.datetime(year, month, day, hour, minute, second, micro, tzinfo=tzinfo)
    except ValueError as exc:
        raise ValueError(f'invalid timestamp "{value}": {exc}') from None


def format_time(value: _dt.datetime) -> str:
    """RFC 3339 in UTC with a Z suffix, as the API server prints metav1.Time."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=_dt.timezone.utc)
    value = value.astimezone(_dt.timezone.utc)
    if value.microsecond:
        return value.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


# Parsed timestamps by their text (datetimes are immutable, so one object serves every
# object stamped alike); bounded, cleared when full.
_TIMES: dict[str, _dt.datetime] = {}
_TIMES_MAX = 4096


def _dec_time(value: Any, path: str) -> _dt.datetime:
    if type(value) is str:
        hit = _TIMES.get(value)
        if hit is not None:
            return hit
    if isinstance(value, _dt.datetime):  # an unquoted YAML timestamp, as kubectl writes it
        return value if value.tzinfo is not None else value.replace(tzinfo=_dt.timezone.utc)
    if not isinstance(value, str):
        raise FieldError(path, f"expected timestamp string, got {_type_name(value)}")
    try:
        t = parse_time(value)
    except ValueError as exc:
        raise FieldError(path, str(exc)) from None
    if type(value) is str:
        if len(_TIMES) >= _TIMES_MAX:
            _TIMES.clear()
        _TIMES[value] = t
    return t


def _dec_int_or_str(value: Any, path: str) -> Any:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise FieldError(path, f"expected integer or string, got {_type_name(value)}")


def _dec_any(value: Any, path: str) -> Any:
    return value


def _enc_identity(value: Any) -> Any:
    return value


def _enc_quantity(value: Any) -> Any:
    return str(value)


def _enc_time(value: Any) -> Any:
    return format_time(value)


_SCALARS: dict[Any, tuple[Decoder, Encoder]] = {
    str: (_dec_str, _enc_identity),
    int: (_dec_int, _enc_identity),
    float: (_dec_float, _enc_identity),
    bool: (_dec_bool, _enc_identity),
    Quantity: (_dec_quantity, _enc_quantity),
    _dt.datetime: (_dec_time, _enc_time),
    Any: (_dec_any, _enc_identity),
    object: (_dec_any, _enc_identity),
}

_UNION_TYPES: tuple[Any, ...] = (Union, types.UnionType)


def _codec_for(tp: Any) -> tuple[Decoder, Encoder]:
    if tp in _SCALARS:
        return _SCALARS[tp]
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in _UNION_TYPES:
        inner = [a for a in args if a is not type(None)]
        if set(inner) == {int, str}:
            return _dec_int_or_str, _enc_identity
        if len(inner) != 1:
            raise TypeError(f"unsupported union {tp!r}")
        dec, enc = _codec_for(inner[0])

        def dec_opt(value: Any, path: str) -> Any:
            return None if value is None else dec(value, path)

        def enc_opt(value: Any) -> Any:
            return None if value is None else enc(value)

        return dec_opt, enc_opt
    if origin is tuple:
        item_dec, item_enc = _codec_for(args[0])

        def dec_tuple(value: Any, path: str) -> Any:
            if value is None:
                return ()
            if not isinstance(value, list):
                raise FieldError(path, f"expected array, got {_type_name(value)}")
            return tuple(item_dec(v, f"{path}[{i}]") for i, v in enumerate(value))

        def enc_tuple(value: Any) -> Any:
            return [item_enc(v) for v in value]

        return dec_tuple, enc_tuple
    if origin in (dict, Mapping):
        val_dec, val_enc = _codec_for(args[1])

        def dec_map(value: Any, path: str) -> Any:
            if value is None:
                return {}
            if not isinstance(value, dict):
                raise FieldError(path, f"expected object, got {_type_name(value)}")
            out = {}
            for k, v in value.items():
                if type(k) is not str:
                    if not isinstance(k, str):
                        raise FieldError(path, f"expected string key, got {_type_name(k)}")
                else:
                    k = _intern(k)
                out[k] = val_dec(v, _join(path, k))
            return out

        def enc_map(value: Any) -> Any:
            return {k: val_enc(v) for k, v in value.items()}

        return dec_map, enc_map
    if isinstance(tp, type) and attrs.has(tp):
        return _model_decoder(tp), _model_encoder(tp)
    raise TypeError(f"unsupported field type {tp!r}")


@attrs.define(slots=True, frozen=True)
class _FieldPlan:
    attr: str
    key: str
    decode: Decoder
    encode: Encoder
    omit_empty: bool


_PLANS: dict[type, tuple[_FieldPlan, ...]] = {}


def _plan(cls: type) -> tuple[_FieldPlan, ...]:
    plan = _PLANS.get(cls)
    if plan is not None:
        return plan
    hints = typing.get_type_hints(cls)
    rows = []
    for f in attrs.fields(cls):
        if f.metadata.get("skip"):
            continue
        dec, enc = _codec_for(hints[f.name])
        rows.append(
            _FieldPlan(
                attr=f.name,
                key=f.metadata.get("json", json_name(f.name)),
                decode=dec,
                encode=enc,
                omit_empty=f.metadata.get("omitempty", True),
            )
        )
    plan = tuple(rows)
    _PLANS[cls] = plan
    return plan


def _model_decoder(cls: type) -> Decoder:
    def dec(value: Any, path: str) -> Any:
        if not isinstance(value, dict):
            raise FieldError(path or "<root>", f"expected object, got {_type_name(value)}")
        kwargs: dict[str, Any] = {}
        for row in _plan(cls):
            raw = value.get(row.key)
            if raw is None:
                continue
            kwargs[row.attr] = row.decode(raw, _join(path, row.key))
        try:
            return cls(**kwargs)
        except FieldError as exc:
            raise FieldError(_join(path, exc.path), exc.problem) from None
        except (ValueError, TypeError) as exc:
            raise FieldError(path or "<root>", str(exc)) from None

    return dec


def _model_encoder(cls: type) -> Encoder:
    def enc(value: Any) -> Any:
        out: dict[str, Any] = {}
        for row in _plan(cls):
            v = getattr(value, row.attr)
            if row.omit_empty and (v is None or (isinstance(v, (tuple, dict, str)) and not v)):
                continue
            out[row.key] = row.encode(v)
        return out

    return enc


def decode(cls: type[T], data: Any, path: str = "") -> T:
    """Decode ``data`` into ``cls``; raises FieldError with the failing path."""
    result: T = _model_decoder(cls)(data, path)
    return result


def unknown_fields(tp: Any, data: Any, path: str = "") -> list[str]:
    """Paths of keys in ``data`` that the model type ``tp`` has no field for (strict
    decoding, as kube-scheduler's config decoder does), recursing into nested models."""
    out: list[str] = []
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in _UNION_TYPES:
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1:
            return unknown_fields(inner[0], data, path)
        return out
    if origin is tuple and isinstance(data, list) and args:
        for i, v in enumerate(data):
            out += unknown_fields(args[0], v, f"{path}[{i}]")
        return out
    if origin in (dict, Mapping) and isinstance(data, dict) and len(args) == 2:
        for k, v in data.items():
            out += unknown_fields(args[1], v, _join(path, str(k)))
        return out
    if isinstance(tp, type) and attrs.has(tp) and isinstance(data, dict):
        rows = {row.key: row for row in _plan(tp)}
        hints = typing.get_type_hints(tp)
        for k, v in data.items():
            row = rows.get(k)
            if row is None:
                out.append(_join(path, str(k)))
            else:
                out += unknown_fields(hints[row.attr], v, _join(path, row.key))
    return out


def encode(value: Any) -> dict[str, Any]:
    """Encode an attrs model into its camelCase JSON dict, omitting empty fields."""
    result: dict[str, Any] = _model_encoder(type(value))(value)
    return result


def object_label(kind: str, data: Any) -> str:
    """``pod default/web-1`` style label for error messages, from raw JSON."""
    name = ns = ""
    if isinstance(data, dict):
        meta = data.get("metadata")
        if isinstance(meta, dict):
            n, s = meta.get("name"), meta.get("namespace")
            name = n if isinstance(n, str) else ""
            ns = s if isinstance(s, str) else ""
    ident = f"{ns}/{name}" if ns else (name or "<unnamed>")
    return f"{kind} {ident}"


def one_of(*allowed: str) -> Callable[[Any, Any, Any], None]:
    """attrs validator: the value must be one of ``allowed`` (reported at the field's JSON key)."""
    quoted = ", ".join(f'"{a}"' for a in allowed)

    def check(_inst: Any, attribute: Any, value: Any) -> None:
        if value not in allowed:
            key = attribute.metadata.get("json", json_name(attribute.name))
            raise FieldError(key, f'Unsupported value: "{value}": supported values: {quoted}')

    return check
