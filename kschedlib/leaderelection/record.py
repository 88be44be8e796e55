"""The leader election record stored in a lock, with client-go's JSON field names."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone

import attrs

from kschedlib.errors import InvalidObjectError

__all__ = ["LeaderElectionRecord", "format_time", "parse_time"]

_KIND = "LeaderElectionRecord"
_TIME_RE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})$"
)


def format_time(value: datetime) -> str:
    """Render as RFC 3339 with microseconds in UTC (metav1.MicroTime's wire format)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str) -> datetime:
    """Parse an RFC 3339 timestamp (any fraction length, Z or offset) to an aware datetime."""
    m = _TIME_RE.match(text)
    if m is None:
        raise ValueError(f"not an RFC 3339 timestamp: {text!r}")
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    micros = int((m.group(7) or "0")[:6].ljust(6, "0"))
    tz_text = m.group(8)
    if tz_text in ("Z", "z"):
        tz = timezone.utc
    else:
        sign = -1 if tz_text[0] == "-" else 1
        offset = timedelta(hours=int(tz_text[1:3]), minutes=int(tz_text[4:6]))
        tz = timezone(sign * offset)
    return datetime(year, month, day, hour, minute, second, micros, tzinfo=tz)


def _int_field(data: Mapping[str, object], key: str) -> int:
    value = data.get(key, 0)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidObjectError(_KIND, key, f"must be an integer, got {value!r}")
    return value


def _time_field(data: Mapping[str, object], key: str) -> datetime | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidObjectError(_KIND, key, f"must be an RFC 3339 string, got {value!r}")
    try:
        return parse_time(value)
    except ValueError as exc:
        raise InvalidObjectError(_KIND, key, str(exc)) from None


@attrs.frozen(slots=True)
class LeaderElectionRecord:
    """Who holds the lease, for how long, and how often it changed hands.

    Times are observational only: electors never compare them across machines.
    """

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: datetime | None = None
    renew_time: datetime | None = None
    leader_transitions: int = 0

    def to_dict(self) -> dict[str, object]:
        """JSON-ready dict with client-go's keys; absent times become null."""
        return {
            "holderIdentity": self.holder_identity,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "acquireTime": None if self.acquire_time is None else format_time(self.acquire_time),
            "renewTime": None if self.renew_time is None else format_time(self.renew_time),
            "leaderTransitions": self.leader_transitions,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> LeaderElectionRecord:
        """Inverse of to_dict; missing keys take Go's zero values, bad types raise."""
        holder = data.get("holderIdentity", "")
        if holder is None:
            holder = ""
        if not isinstance(holder, str):
            raise InvalidObjectError(_KIND, "holderIdentity", f"must be a string, got {holder!r}")
        return cls(
            holder_identity=holder,
            lease_duration_seconds=_int_field(data, "leaseDurationSeconds"),
            acquire_time=_time_field(data, "acquireTime"),
            renew_time=_time_field(data, "renewTime"),
            leader_transitions=_int_field(data, "leaderTransitions"),
        )
