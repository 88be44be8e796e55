"""LeaderElectionRecord JSON round trips with client-go's keys and RFC 3339 times."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedlib.errors import InvalidObjectError
from kschedlib.leaderelection import LeaderElectionRecord, format_time, parse_time

T0 = datetime(2025, 3, 4, 5, 6, 7, 890123, tzinfo=timezone.utc)


def test_to_dict_uses_client_go_keys() -> None:
    record = LeaderElectionRecord(
        holder_identity="a",
        lease_duration_seconds=15,
        acquire_time=T0,
        renew_time=T0 + timedelta(seconds=2),
        leader_transitions=3,
    )
    assert record.to_dict() == {
        "holderIdentity": "a",
        "leaseDurationSeconds": 15,
        "acquireTime": "2025-03-04T05:06:07.890123Z",
        "renewTime": "2025-03-04T05:06:09.890123Z",
        "leaderTransitions": 3,
    }


def test_zero_record_and_missing_keys() -> None:
    assert LeaderElectionRecord().to_dict()["acquireTime"] is None
    assert LeaderElectionRecord.from_dict({}) == LeaderElectionRecord()
    assert LeaderElectionRecord.from_dict({"holderIdentity": None}) == LeaderElectionRecord()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2025-03-04T05:06:07Z", datetime(2025, 3, 4, 5, 6, 7, tzinfo=timezone.utc)),
        ("2025-03-04T05:06:07.5Z", datetime(2025, 3, 4, 5, 6, 7, 500000, tzinfo=timezone.utc)),
        (
            "2025-03-04T05:06:07.123456789Z",
            datetime(2025, 3, 4, 5, 6, 7, 123456, tzinfo=timezone.utc),
        ),
        ("2025-03-04T07:06:07+02:00", datetime(2025, 3, 4, 5, 6, 7, tzinfo=timezone.utc)),
        ("2025-03-04T00:06:07-05:00", datetime(2025, 3, 4, 5, 6, 7, tzinfo=timezone.utc)),
    ],
)
def test_parse_time_accepts_rfc3339_spellings(text: str, expected: datetime) -> None:
    assert parse_time(text) == expected


def test_format_time_pads_microseconds_and_converts_to_utc() -> None:
    local = datetime(2025, 1, 1, 2, 0, 0, tzinfo=timezone(timedelta(hours=2)))
    assert format_time(local) == "2025-01-01T00:00:00.000000Z"
    assert format_time(datetime(2025, 1, 1)) == "2025-01-01T00:00:00.000000Z"


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"holderIdentity": 3}, "holderIdentity"),
        ({"leaseDurationSeconds": "15"}, "leaseDurationSeconds"),
        ({"leaseDurationSeconds": True}, "leaseDurationSeconds"),
        ({"leaderTransitions": 1.5}, "leaderTransitions"),
        ({"acquireTime": "yesterday"}, "acquireTime"),
        ({"renewTime": 12}, "renewTime"),
    ],
)
def test_from_dict_rejects_bad_fields(data: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidObjectError) as info:
        LeaderElectionRecord.from_dict(data)
    assert info.value.field == field


_times = st.datetimes(
    min_value=datetime(1970, 1, 1),
    max_value=datetime(2200, 1, 1),
    timezones=st.just(timezone.utc),
)


@given(
    holder=st.text(),
    lease=st.integers(min_value=0, max_value=2**31 - 1),
    acquire=st.none() | _times,
    renew=st.none() | _times,
    transitions=st.integers(min_value=0, max_value=2**31 - 1),
)
def test_json_round_trip(
    holder: str,
    lease: int,
    acquire: datetime | None,
    renew: datetime | None,
    transitions: int,
) -> None:
    record = LeaderElectionRecord(holder, lease, acquire, renew, transitions)
    wire = json.loads(json.dumps(record.to_dict()))
    assert LeaderElectionRecord.from_dict(wire) == record
