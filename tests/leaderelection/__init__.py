"""Shared helpers for the leader election tests: callback recorder, faulty lock, factories."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime

import attrs

from kschedlib.leaderelection import (
    FakeClock,
    InMemoryLeaseStore,
    InMemoryLock,
    LeaderCallbacks,
    LeaderElectionConfig,
    LeaderElectionRecord,
    LeaderElector,
    LockError,
    ResourceLock,
)


@attrs.define
class Events:
    """Records (virtual time, identity, event) for every callback of the electors it wires."""

    clock: FakeClock
    log: list[tuple[float, str, str]] = attrs.field(factory=list)

    def callbacks(self, identity: str) -> LeaderCallbacks:
        return LeaderCallbacks(
            on_started_leading=lambda: self._add(identity, "started"),
            on_stopped_leading=lambda: self._add(identity, "stopped"),
            on_new_leader=lambda leader: self._add(identity, f"new_leader:{leader}"),
        )

    def _add(self, identity: str, event: str) -> None:
        self.log.append((self.clock.now(), identity, event))

    def of(self, identity: str) -> list[str]:
        return [event for _, who, event in self.log if who == identity]

    def time_of(self, identity: str, event: str) -> float:
        return next(t for t, who, ev in self.log if who == identity and ev == event)


@attrs.define
class FlakyLock:
    """Wraps a lock: can fail every call, run a one-shot hook after get(), slow calls down."""

    inner: ResourceLock
    clock: FakeClock
    failing: bool = False
    delay: float = 0.0
    after_get: Callable[[], object] | None = None
    calls: list[tuple[float, str]] = attrs.field(factory=list)

    @property
    def identity(self) -> str:
        return self.inner.identity

    def describe(self) -> str:
        return "flaky:" + self.inner.describe()

    def _enter(self, op: str) -> None:
        self.calls.append((self.clock.now(), op))
        if self.delay:
            self.clock.advance(self.delay)
        if self.failing:
            raise LockError(f"injected failure in {op}")

    def get(self) -> tuple[LeaderElectionRecord, object]:
        self._enter("get")
        try:
            return self.inner.get()
        finally:
            if self.after_get is not None:
                hook, self.after_get = self.after_get, None
                hook()

    def create(self, record: LeaderElectionRecord) -> object:
        self._enter("create")
        return self.inner.create(record)

    def update(self, record: LeaderElectionRecord, version: object) -> object:
        self._enter("update")
        return self.inner.update(record, version)


def make_elector(
    lock: ResourceLock,
    clock: FakeClock,
    events: Events | None = None,
    *,
    seed: int = 0,
    lease_duration: float = 15.0,
    renew_deadline: float = 10.0,
    retry_period: float = 2.0,
    release_on_cancel: bool = False,
) -> LeaderElector:
    """An elector in the clock's virtual time, kube-scheduler's default timings."""
    callbacks = (
        events.callbacks(lock.identity)
        if events is not None
        else LeaderCallbacks(on_started_leading=lambda: None, on_stopped_leading=lambda: None)
    )
    config = LeaderElectionConfig(
        lock=lock,
        callbacks=callbacks,
        lease_duration=lease_duration,
        renew_deadline=renew_deadline,
        retry_period=retry_period,
        release_on_cancel=release_on_cancel,
        name="test",
    )
    return LeaderElector(
        config,
        clock=clock,
        sleep=clock.sleep,
        async_sleep=clock.async_sleep,
        rng=random.Random(seed),
    )


def memory_lock(store: InMemoryLeaseStore, identity: str) -> InMemoryLock:
    return InMemoryLock(store=store, identity=identity)


def virtual_seconds(clock: FakeClock, stamp: datetime | None) -> float:
    """Convert a wall-clock stamp written by ``clock`` back to its virtual time."""
    assert stamp is not None
    return (stamp - clock.wall_epoch).total_seconds() + clock.start
