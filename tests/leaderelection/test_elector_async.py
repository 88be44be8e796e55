"""The asyncio variant run_async, in virtual time (several electors share one FakeClock)."""

from __future__ import annotations

import asyncio
import time

import pytest

from kschedlib.leaderelection import (
    FakeClock,
    InMemoryLeaseStore,
    LeaderCallbacks,
    LeaderElectionConfig,
    LeaderElector,
    SystemClock,
)
from tests.leaderelection import Events, FlakyLock, make_elector, memory_lock

LEASE, RENEW, RETRY = 15.0, 10.0, 2.0


def stop_at(clock: FakeClock, when: float) -> asyncio.Event:
    stop = asyncio.Event()
    clock.call_at(when, stop.set)
    return stop


def leaders_over_time(events: Events) -> list[tuple[float, str, str]]:
    """Assert at most one elector is between 'started' and 'stopped' at any time."""
    leading: set[str] = set()
    transitions = []
    for t, who, event in sorted(events.log, key=lambda e: e[0]):
        if event == "started":
            assert not leading, f"{who} started at {t} while {leading} leading"
            leading.add(who)
            transitions.append((t, who, event))
        elif event == "stopped" and who in leading:
            leading.discard(who)
            transitions.append((t, who, event))
    return transitions


def test_single_elector_acquires_async() -> None:
    clock, store = FakeClock(0.0), InMemoryLeaseStore()
    events = Events(clock)
    a = make_elector(memory_lock(store, "a"), clock, events)
    asyncio.run(a.run_async(stop_at(clock, 31)))
    assert events.log == [(0.0, "a", "new_leader:a"), (0.0, "a", "started"), (32.0, "a", "stopped")]
    assert store.get()[0].holder_identity == "a"


def test_two_electors_concurrently_take_over_after_lease() -> None:
    clock, store = FakeClock(0.0), InMemoryLeaseStore()
    events = Events(clock)
    a = make_elector(memory_lock(store, "a"), clock, events, seed=1)
    b_lock = FlakyLock(memory_lock(store, "b"), clock)
    b = make_elector(b_lock, clock, events, seed=2)

    async def main() -> None:
        task_a = asyncio.ensure_future(a.run_async(stop_at(clock, 40)))  # a stops, no release
        await clock.async_sleep(0.5)  # let a win the first round
        await asyncio.gather(task_a, b.run_async(stop_at(clock, 120)))

    asyncio.run(main())
    leaders_over_time(events)
    assert events.of("a") == ["new_leader:a", "started", "stopped"]
    assert events.of("b") == ["new_leader:a", "new_leader:b", "started", "stopped"]
    a_stopped = events.time_of("a", "stopped")
    b_started = events.time_of("b", "started")
    assert a_stopped == 40.0
    last_a_renewal = 38.0
    seen = min(t for t, op in b_lock.calls if op == "get" and t >= last_a_renewal)
    assert seen + LEASE <= b_started < seen + LEASE + RETRY * 2.2
    record, _ = store.get()
    assert record.holder_identity == "b" and record.leader_transitions == 1


def test_release_on_cancel_async_lets_standby_in_quickly() -> None:
    clock, store = FakeClock(0.0), InMemoryLeaseStore()
    events = Events(clock)
    a = make_elector(memory_lock(store, "a"), clock, events, release_on_cancel=True)
    b = make_elector(memory_lock(store, "b"), clock, events, seed=3)

    async def main() -> None:
        task_a = asyncio.ensure_future(a.run_async(stop_at(clock, 20)))
        await clock.async_sleep(0.5)
        await asyncio.gather(task_a, b.run_async(stop_at(clock, 60)))

    asyncio.run(main())
    leaders_over_time(events)
    b_started = events.time_of("b", "started")
    assert 20.0 < b_started < 20.0 + RETRY * 2.2  # next poll after the release
    assert store.get()[0].leader_transitions == 1


def test_renew_failure_async_cancels_work_then_stops() -> None:
    clock, store = FakeClock(0.0), InMemoryLeaseStore()
    lock = FlakyLock(memory_lock(store, "a"), clock)
    log: list[tuple[float, str]] = []

    async def work() -> None:
        log.append((clock.now(), "work-start"))
        try:
            while True:
                await clock.async_sleep(1)
        except asyncio.CancelledError:
            log.append((clock.now(), "work-cancelled"))
            raise

    config = LeaderElectionConfig(
        lock=lock,
        callbacks=LeaderCallbacks(
            on_started_leading=work,
            on_stopped_leading=lambda: log.append((clock.now(), "stopped")),
        ),
        release_on_cancel=True,
    )
    a = LeaderElector(config, clock=clock, async_sleep=clock.async_sleep)
    clock.call_at(21, lambda: setattr(lock, "failing", True))
    asyncio.run(a.run_async(stop_at(clock, 500)))
    assert log == [(0.0, "work-start"), (32.0, "work-cancelled"), (32.0, "stopped")]
    assert store.get()[0].holder_identity == "a"  # the release could not be written


def test_cancelling_the_task_releases_and_calls_on_stopped_leading() -> None:
    clock, store = FakeClock(0.0), InMemoryLeaseStore()
    events = Events(clock)
    a = make_elector(memory_lock(store, "a"), clock, events, release_on_cancel=True)

    async def main() -> None:
        task = asyncio.ensure_future(a.run_async())
        await clock.async_sleep(7)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert events.of("a") == ["new_leader:a", "started", "stopped"]
    assert store.get()[0].holder_identity == ""


def test_run_async_with_real_time_stops_promptly() -> None:
    store = InMemoryLeaseStore()

    async def main() -> float:
        started = asyncio.Event()
        stopped: list[bool] = []
        config = LeaderElectionConfig(
            lock=memory_lock(store, "a"),
            callbacks=LeaderCallbacks(
                on_started_leading=started.set, on_stopped_leading=lambda: stopped.append(True)
            ),
            lease_duration=60,
            renew_deadline=40,
            retry_period=30,
            release_on_cancel=True,
        )
        elector = LeaderElector(config, clock=SystemClock())
        stop = asyncio.Event()
        task = asyncio.ensure_future(elector.run_async(stop))
        await asyncio.wait_for(started.wait(), timeout=20)
        begin = time.monotonic()
        stop.set()
        await asyncio.wait_for(task, timeout=20)
        assert stopped == [True]
        return time.monotonic() - begin

    assert asyncio.run(main()) < 10
    assert store.get()[0].holder_identity == ""
