"""String functions: the standard ones (contains, startsWith, endsWith, matches) and
cel-go's strings extension (with Kubernetes' list ``indexOf``/``lastIndexOf``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kschedlib.api.cel.errors import CELError
from kschedlib.api.cel.library.formatting import _cost_format, _format, _quote
from kschedlib.api.cel.library.functions import Impl, _cost_recv, _str_recv, define
from kschedlib.api.cel.library.regex import _cost_regex, _regex
from kschedlib.api.cel.library.values import cel_equal, no_overload, size_of, traversal


def _cost_two_strings(args: Sequence[Any]) -> int:
    return traversal(size_of(args[0])) * max(1, traversal(size_of(args[1])))


def _matches(s: Any, pattern: Any) -> bool:
    if type(s) is not str or type(pattern) is not str:
        raise no_overload("matches", s, pattern)
    return _regex(pattern).search(s) is not None


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
