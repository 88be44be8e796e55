"""LeaderElector semantics and the blocking run() loop, all in virtual time."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib.leaderelection import (
    FakeClock,
    InMemoryLeaseStore,
    LeaderCallbacks,
    LeaderElectionConfig,
    LeaderElectionError,
    LeaderElectionRecord,
    LeaderElector,
    LockNotFoundError,
    SystemClock,
)
from tests.leaderelection import Events, FlakyLock, make_elector, memory_lock, virtual_seconds

LEASE, RENEW, RETRY = 15.0, 10.0, 2.0
MAX_ACQUIRE_WAIT = RETRY * 2.2  # retry_period * (1 + JitterFactor)


def run_until(elector: LeaderElector, clock: FakeClock, stop_at: float) -> threading.Event:
    stop = threading.Event()
    clock.call_at(stop_at, stop.set)
    elector.run(stop)
    return stop


# ------------------------------------------------------------- try_acquire_or_renew


def test_first_attempt_creates_the_record() -> None:
    clock, store = FakeClock(0.0), InMemoryLeaseStore()
    a = make_elector(memory_lock(store, "a"), clock)
    assert not a.is_leader() and a.get_leader() == ""
    assert a.try_acquire_or_renew()
    record, _ = store.get()
    assert record == LeaderElectionRecord("a", 15, clock.wall_time(), clock.wall_time(), 0)
    assert a.is_leader() and a.get_leader() == "a"


def test_renewal_keeps_acquire_time_and_transitions() -> None:
    clock, store = FakeClock(0.0), InMemoryLeaseStore()
    a = make_elector(memory_lock(store, "a"), clock)
    assert a.try_acquire_or_renew()
    acquired = clock.wall_time()
    clock.advance(2)
    assert a.try_acquire_or_renew()
    record, version = store.get()
    assert record.acquire_time == acquired
    assert record.renew_time == acquired + timedelta(seconds=2)
    assert record.leader_transitions == 0
    assert version == 2


def test_held_lease_expires_only_on_the_local_clock() -> None:
    """Remote timestamps are ignored: a stale renewTime still buys a full lease_duration."""
    clock, store = FakeClock(0.0), InMemoryLeaseStore()
    ancient = clock.wall_time() - timedelta(days=1)
    store.create(LeaderElectionRecord("x", 15, ancient, ancient, 4))
    b = make_elector(memory_lock(store, "b"), clock)
    assert not b.try_acquire_or_renew()
    assert b.get_leader() == "x" and not b.is_leader()
    clock.advance(LEASE - 0.001)
    assert not b.try_acquire_or_renew()
    clock.advance(0.001)
    assert b.try_acquire_or_renew()
    record, _ = store.get()
    assert record.holder_identity == "b"
    assert record.leader_transitions == 5
    assert record.acquire_time == clock.wall_time()


def test_uses_the_records_lease_duration() -> None:
    clock, store = FakeClock(0.0), InMemoryLeaseStore()
    now = clock.wall_time()
    store.create(LeaderElectionRecord("x", 40, now, now, 0))
    b = make_elector(memory_lock(store, "b"), clock)
    assert not b.try_acquire_or_renew()
    clock.advance(39)
    assert not b.try_acquire_or_renew()
    clock.advance(1)
    assert b.try_acquire_or_renew()


def test_every_observed_change_restarts_the_lease() -> None:
    clock, store = FakeClock(0.0), InMemoryLeaseStore()
    a = make_elector(memory_lock(store, "a"), clock)
    b = make_elector(memory_lock(store, "b"), clock)
    assert a.try_acquire_or_renew()
    for _ in range(10):
        clock.advance(10)
        assert not b.try_acquire_or_renew()  # sees a change: its lease clock restarts
        assert a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()
    clock.advance(LEASE - 1)
    assert not b.try_acquire_or_renew()
    clock.advance(1)
    assert b.try_acquire_or_renew()
    assert store.get()[0].leader_transitions == 1


def test_empty_holder_can_be_taken_immediately() -> None:
    clock, store = FakeClock(0.0), InMemoryLeaseStore()
    now = clock.wall_time()
    store.create(LeaderElectionRecord("", 1, now, now, 7))
    b = make_elector(memory_lock(store, "b"), clock)
    assert b.try_acquire_or_renew()
    assert store.get()[0].leader_transitions == 8


def test_racing_candidates_conflict_and_only_one_wins() -> None:
    clock, store = FakeClock(0.0), InMemoryLeaseStore()
    now = clock.wall_time()
    store.create(LeaderElectionRecord("x", 15, now, now, 0))
    a_lock = FlakyLock(memory_lock(store, "a"), clock)
    a = make_elector(a_lock, clock)
    b = make_elector(memory_lock(store, "b"), clock)
    assert not a.try_acquire_or_renew() and not b.try_acquire_or_renew()
    clock.advance(LEASE)
    # b slips its takeover in between a's get() and a's update().
    b_won: list[bool] = []
    a_lock.after_get = lambda: b_won.append(b.try_acquire_or_renew())
    assert not a.try_acquire_or_renew()
    assert b_won == [True]
    assert [op for _, op in a_lock.calls][-2:] == ["get", "update"]
    record, _ = store.get()
    assert record.holder_identity == "b" and record.leader_transitions == 1
    # a now observes b's record and must wait a full lease again.
    assert not a.try_acquire_or_renew()
    assert a.get_leader() == "b"


def test_racing_creates_conflict() -> None:
    clock, store = FakeClock(0.0), InMemoryLeaseStore()
    a_lock = FlakyLock(memory_lock(store, "a"), clock)
    a = make_elector(a_lock, clock)
    b = make_elector(memory_lock(store, "b"), clock)
    b_won: list[bool] = []
    a_lock.after_get = lambda: b_won.append(b.try_acquire_or_renew())  # a saw "not found"
    assert not a.try_acquire_or_renew()
    assert b_won == [True]
    assert [op for _, op in a_lock.calls] == ["get", "create"]
    assert store.get()[0].holder_identity == "b"


def test_leader_fast_path_conflict_falls_back_to_slow_path() -> None:
    clock, store = FakeClock(0.0), InMemoryLeaseStore()
    a_lock = FlakyLock(memory_lock(store, "a"), clock)
    a = make_elector(a_lock, clock)
    assert a.try_acquire_or_renew()
    acquired = clock.wall_time()
    record, version = store.get()
    store.update(record, version)  # someone rewrites the same record: version moves on
    clock.advance(2)
    a_lock.calls.clear()
    assert a.try_acquire_or_renew()
    assert [op for _, op in a_lock.calls] == ["update", "get", "update"]
    record, _ = store.get()
    assert record.holder_identity == "a"
    assert record.acquire_time == acquired and record.leader_transitions == 0


def test_leader_with_expired_local_lease_renews_via_slow_path() -> None:
    clock, store = FakeClock(0.0), InMemoryLeaseStore()
    a_lock = FlakyLock(memory_lock(store, "a"), clock)
    a = make_elector(a_lock, clock)
    assert a.try_acquire_or_renew()
    clock.advance(LEASE + 1)
    a_lock.calls.clear()
    assert a.try_acquire_or_renew()
    assert [op for _, op in a_lock.calls] == ["get", "update"]
    assert store.get()[0].leader_transitions == 0


def test_lock_errors_make_attempts_fail() -> None:
    clock, store = FakeClock(0.0), InMemoryLeaseStore()
    lock = FlakyLock(memory_lock(store, "a"), clock, failing=True)
    a = make_elector(lock, clock)
    assert not a.try_acquire_or_renew()
    lock.failing = False
    assert a.try_acquire_or_renew()


def test_release_clears_holder_and_keeps_transitions() -> None:
    clock, store = FakeClock(0.0), InMemoryLeaseStore()
    now = clock.wall_time()
    store.create(LeaderElectionRecord("", 1, now, now, 2))
    a = make_elector(memory_lock(store, "a"), clock)
    assert a.try_acquire_or_renew()
    clock.advance(3)
    assert a.release()
    record, _ = store.get()
    stamp = clock.wall_time()
    assert record == LeaderElectionRecord("", 1, stamp, stamp, 3)
    assert not a.is_leader()
    assert a.release()  # not leader: nothing to do


def test_check_reports_a_leader_that_stopped_renewing() -> None:
    clock, store = FakeClock(0.0), InMemoryLeaseStore()
    a = make_elector(memory_lock(store, "a"), clock)
    a.check(0)  # not leading: healthy
    assert a.try_acquire_or_renew()
    clock.advance(LEASE + 20)
    a.check(20)
    clock.advance(0.5)
    with pytest.raises(LeaderElectionError, match="test"):
        a.check(20)


# ------------------------------------------------------------- blocking run loop


def test_single_elector_acquires_and_renews() -> None:
    clock, store = FakeClock(0.0), InMemoryLeaseStore()
    events = Events(clock)
    lock = FlakyLock(memory_lock(store, "a"), clock)
    a = make_elector(lock, clock, events)
    run_until(a, clock, 31)
    assert events.log == [(0.0, "a", "new_leader:a"), (0.0, "a", "started"), (32.0, "a", "stopped")]
    record, _ = store.get()
    assert record.holder_identity == "a" and record.leader_transitions == 0
    assert virtual_seconds(clock, record.acquire_time) == 0.0
    assert virtual_seconds(clock, record.renew_time) == 30.0
    # first renewal is immediate after acquiring, then one every retry_period
    assert [op for _, op in lock.calls[:2]] == ["get", "create"]
    update_times = [t for t, op in lock.calls if op == "update"]
    assert update_times == [2.0 * i for i in range(16)]


def test_standby_waits_while_lease_is_fresh_then_takes_over() -> None:
    clock, store = FakeClock(0.0), InMemoryLeaseStore()
    events = Events(clock)
    a = make_elector(memory_lock(store, "a"), clock, events)
    b_lock = FlakyLock(memory_lock(store, "b"), clock)
    b = make_elector(b_lock, clock, events, seed=7)
    assert a.try_acquire_or_renew()
    renewals: list[bool] = []
    for t in range(2, 61, 2):  # a renews every 2 s until t=60, then dies silently
        clock.call_at(t, lambda: renewals.append(a.try_acquire_or_renew()))
    run_until(b, clock, 200)
    assert all(renewals) and len(renewals) == 30

    started = events.time_of("b", "started")
    first_seen_after_last_renewal = min(t for t, op in b_lock.calls if op == "get" and t > 60)
    assert started >= first_seen_after_last_renewal + LEASE
    assert started < first_seen_after_last_renewal + LEASE + MAX_ACQUIRE_WAIT
    assert events.of("b") == ["new_leader:a", "new_leader:b", "started", "stopped"]
    record, _ = store.get()
    assert record.holder_identity == "b"
    assert record.leader_transitions == 1
    assert virtual_seconds(clock, record.acquire_time) == pytest.approx(started, abs=1e-6)
    # b polled with jittered waits in [retry, retry * 2.2)
    polls = [t for t, op in b_lock.calls if op == "get" and t < started]
    gaps = [y - x for x, y in zip(polls, polls[1:], strict=False)]
    assert gaps and all(RETRY <= g < MAX_ACQUIRE_WAIT for g in gaps)
    assert len(set(gaps)) > 1


def test_renew_failure_past_deadline_stops_leading() -> None:
    clock, store = FakeClock(0.0), InMemoryLeaseStore()
    events = Events(clock)
    lock = FlakyLock(memory_lock(store, "a"), clock)
    a = make_elector(lock, clock, events)
    clock.call_at(31, lambda: setattr(lock, "failing", True))
    stop = run_until(a, clock, 500)
    assert not stop.is_set()  # run returned on its own
    last_renewal = virtual_seconds(clock, store.get()[0].renew_time)
    assert last_renewal == 30.0
    # next attempt after retry_period, then retries until renew_deadline has passed
    assert events.time_of("a", "stopped") == last_renewal + RETRY + RENEW
    assert events.of("a") == ["new_leader:a", "started", "stopped"]
    failed = sorted({t for t, _ in lock.calls if t > last_renewal})
    assert failed == [32.0, 34.0, 36.0, 38.0, 40.0]
    assert store.get()[0].holder_identity == "a"  # no release_on_cancel


def test_transient_failure_shorter_than_deadline_keeps_leading() -> None:
    clock, store = FakeClock(0.0), InMemoryLeaseStore()
    events = Events(clock)
    lock = FlakyLock(memory_lock(store, "a"), clock)
    a = make_elector(lock, clock, events)
    clock.call_at(31, lambda: setattr(lock, "failing", True))
    clock.call_at(39, lambda: setattr(lock, "failing", False))
    run_until(a, clock, 100)
    assert events.of("a") == ["new_leader:a", "started", "stopped"]
    assert events.time_of("a", "stopped") >= 100


def test_renewal_completing_after_deadline_does_not_count() -> None:
    clock, store = FakeClock(0.0), InMemoryLeaseStore()
    events = Events(clock)
    lock = FlakyLock(memory_lock(store, "a"), clock)
    a = make_elector(lock, clock, events)
    clock.call_at(5, lambda: setattr(lock, "delay", RENEW + 1))  # lock calls now take 11 s
    stop = run_until(a, clock, 500)
    assert not stop.is_set()
    assert events.of("a") == ["new_leader:a", "started", "stopped"]
    assert events.time_of("a", "stopped") < 30


@pytest.mark.parametrize("release", [True, False])
def test_release_on_cancel(release: bool) -> None:
    clock, store = FakeClock(0.0), InMemoryLeaseStore()
    events = Events(clock)
    a = make_elector(memory_lock(store, "a"), clock, events, release_on_cancel=release)
    run_until(a, clock, 9)
    record, _ = store.get()
    if release:
        stamp = clock.wall_time()
        assert record == LeaderElectionRecord("", 1, stamp, stamp, 0)
        assert a.get_leader() == ""
    else:
        assert record.holder_identity == "a" and record.lease_duration_seconds == 15
    b = make_elector(memory_lock(store, "b"), clock, events)
    assert b.try_acquire_or_renew() is release
    if release:
        assert store.get()[0].leader_transitions == 1


def test_release_after_losing_to_another_holder_is_skipped() -> None:
    clock, store = FakeClock(0.0), InMemoryLeaseStore()
    events = Events(clock)
    lock = FlakyLock(memory_lock(store, "a"), clock)
    a = make_elector(lock, clock, events, release_on_cancel=True)

    def hijack() -> None:  # another writer takes the record; a's renewals now conflict
        record, version = store.get()
        store.update(attrs_evolve_holder(record, "z"), version)

    clock.call_at(11, hijack)
    run_until(a, clock, 500)
    assert events.of("a") == ["new_leader:a", "started", "new_leader:z", "stopped"]
    assert store.get()[0].holder_identity == "z"


def attrs_evolve_holder(record: LeaderElectionRecord, holder: str) -> LeaderElectionRecord:
    import attrs

    return attrs.evolve(record, holder_identity=holder)


def test_stop_before_acquiring_still_calls_on_stopped_leading() -> None:
    clock, store = FakeClock(0.0), InMemoryLeaseStore()
    now = clock.wall_time()
    store.create(LeaderElectionRecord("x", 15, now, now, 0))
    events = Events(clock)
    b = make_elector(memory_lock(store, "b"), clock, events, release_on_cancel=True)
    run_until(b, clock, 5)
    assert events.of("b") == ["new_leader:x", "stopped"]
    assert store.get()[0].holder_identity == "x"


def test_on_started_leading_must_not_return_an_awaitable_in_run() -> None:
    clock, store = FakeClock(0.0), InMemoryLeaseStore()
    stopped: list[bool] = []

    async def work() -> None:
        return None

    config = LeaderElectionConfig(
        lock=memory_lock(store, "a"),
        callbacks=LeaderCallbacks(
            on_started_leading=work, on_stopped_leading=lambda: stopped.append(True)
        ),
        release_on_cancel=True,
    )
    a = LeaderElector(config, clock=clock, sleep=clock.sleep)
    with pytest.raises(TypeError, match="run_async"):
        a.run(threading.Event())
    assert stopped == [True]
    assert store.get()[0].holder_identity == ""


def test_run_in_a_thread_with_real_time_stops_promptly() -> None:
    store = InMemoryLeaseStore()
    started = threading.Event()
    stopped = threading.Event()
    config = LeaderElectionConfig(
        lock=memory_lock(store, "a"),
        callbacks=LeaderCallbacks(on_started_leading=started.set, on_stopped_leading=stopped.set),
        lease_duration=60,
        renew_deadline=40,
        retry_period=30,  # long waits: only the stop event can end them quickly
        release_on_cancel=True,
    )
    elector = LeaderElector(config, clock=SystemClock())
    stop = threading.Event()
    thread = threading.Thread(target=elector.run, args=(stop,), daemon=True)
    thread.start()
    assert started.wait(timeout=20)
    begin = time.monotonic()
    stop.set()
    thread.join(timeout=20)
    assert not thread.is_alive()
    assert time.monotonic() - begin < 10
    assert stopped.is_set()
    assert store.get()[0].holder_identity == ""


# ------------------------------------------------------------- safety property

_steps = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=2),
        st.sampled_from(["try", "try", "try", "release"]),
        st.floats(min_value=0.0, max_value=9.0, allow_nan=False),
    ),
    max_size=80,
)


@settings(max_examples=150, deadline=None)
@given(steps=_steps)
def test_no_takeover_before_lease_expires(steps: list[tuple[int, str, float]]) -> None:
    """A holder is only replaced after lease_duration without it writing, unless it released."""
    clock, store = FakeClock(0.0), InMemoryLeaseStore()
    electors = [make_elector(memory_lock(store, n), clock) for n in "abc"]
    last_write: dict[str, float] = {}
    holder, transitions, version = "", 0, 0
    for index, action, dt in steps:
        clock.advance(dt)
        elector = electors[index]
        ok = elector.try_acquire_or_renew() if action == "try" else elector.release()
        try:
            record, new_version = store.get()
        except LockNotFoundError:
            continue
        if new_version == version:
            continue
        assert ok
        me = elector.identity
        if action == "try":
            assert record.holder_identity == me
            if holder not in ("", me):
                assert clock.now() - last_write[holder] >= LEASE
                assert record.leader_transitions == transitions + 1
            elif holder == me:
                assert record.leader_transitions == transitions
            last_write[me] = clock.now()
        else:
            assert record.holder_identity == "" and record.leader_transitions == transitions
        holder, transitions, version = (
            record.holder_identity,
            record.leader_transitions,
            new_version,
        )
