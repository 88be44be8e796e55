"""Kubernetes' URL library."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

from kschedlib.api.cel.errors import CELError
from kschedlib.api.cel.library.functions import Impl, _cost_recv, define
from kschedlib.api.cel.library.values import URLValue, no_overload


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
