"""Regular expressions (RE2 as cel-go, compiled once per pattern) and Kubernetes' regex
library (``find``, ``findAll``)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from kschedlib.api.cel.errors import CELError
from kschedlib.api.cel.library.functions import define
from kschedlib.api.cel.library.values import (
    REGEX_STRING_LENGTH_COST_FACTOR,
    STRING_TRAVERSAL_COST_FACTOR,
    no_overload,
    size_of,
)

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


def _cost_regex(args: Sequence[Any]) -> int:
    str_cost = math.ceil((1.0 + size_of(args[0])) * STRING_TRAVERSAL_COST_FACTOR)
    regex_cost = math.ceil(size_of(args[1]) * REGEX_STRING_LENGTH_COST_FACTOR)
    return str_cost * regex_cost


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
