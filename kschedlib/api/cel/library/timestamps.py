"""CEL timestamps and durations: conversions, range checks, formatting and the getters."""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable, Sequence
from typing import Any

from kschedlib.api.cel.errors import CELError
from kschedlib.api.cel.library.functions import Impl, define
from kschedlib.api.cel.library.values import no_overload

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
