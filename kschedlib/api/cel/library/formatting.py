"""The strings extension's formatting: ``strings.quote`` and ``string.format`` with
cel-go's verbs."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from kschedlib.api.cel.errors import CELError
from kschedlib.api.cel.library.functions import _str_recv
from kschedlib.api.cel.library.standard import _to_string, format_double
from kschedlib.api.cel.library.values import (
    TypeValue,
    UInt,
    go_type_name,
    no_overload,
    size_of,
    traversal,
)


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
