"""LeaderElector: client-go's leader election loop over a ResourceLock, in sync and asyncio form."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import math
import random
import threading
import time
from collections.abc import Awaitable, Callable, Generator
from typing import Protocol

import attrs

from kschedlib.leaderelection.clock import Clock, SystemClock
from kschedlib.leaderelection.config import JITTER_FACTOR, LeaderElectionConfig
from kschedlib.leaderelection.errors import LeaderElectionError, LockNotFoundError
from kschedlib.leaderelection.lock import ResourceLock
from kschedlib.leaderelection.record import LeaderElectionRecord

__all__ = ["AsyncStopEvent", "LeaderElector", "StopEvent"]

logger = logging.getLogger("kschedlib.leaderelection")

# A plan yields the seconds to wait before it is resumed; returning means it finished.
_Plan = Generator[float, None, None]


class StopEvent(Protocol):
    """What ``run`` needs from its stop signal (threading.Event fits)."""

    def is_set(self) -> bool: ...

    def wait(self, timeout: float | None = None) -> bool: ...


class AsyncStopEvent(Protocol):
    """What ``run_async`` needs from its stop signal (asyncio.Event fits)."""

    def is_set(self) -> bool: ...

    async def wait(self) -> object: ...


@attrs.define(slots=True, eq=False)
class LeaderElector:
    """One participant of an election; the config is validated on construction.

    Only local ``clock.now()`` readings decide expiry: a lease is held until lease_duration
    passes without this elector observing the record change.
    """

    config: LeaderElectionConfig
    clock: Clock = attrs.field(factory=SystemClock, kw_only=True)
    sleep: Callable[[float], object] | None = attrs.field(default=None, kw_only=True)
    async_sleep: Callable[[float], Awaitable[object]] | None = attrs.field(
        default=None, kw_only=True
    )
    rng: random.Random = attrs.field(factory=random.Random, kw_only=True)
    _lock: ResourceLock = attrs.field(init=False)
    _mutex: threading.Lock = attrs.field(init=False, factory=threading.Lock)
    _observed_record: LeaderElectionRecord = attrs.field(init=False, factory=LeaderElectionRecord)
    _observed_version: object = attrs.field(init=False, default=None)
    _observed_time: float = attrs.field(init=False, default=-math.inf)
    _reported_leader: str = attrs.field(init=False, default="")

    def __attrs_post_init__(self) -> None:
        self.config.validate()
        assert self.config.lock is not None  # guaranteed by validate()
        self._lock = self.config.lock

    # ----------------------------------------------------------------- observation

    @property
    def identity(self) -> str:
        return self._lock.identity

    @property
    def observed_record(self) -> LeaderElectionRecord:
        """The last record this elector read or wrote."""
        with self._mutex:
            return self._observed_record

    def is_leader(self) -> bool:
        """Whether the last observed record names this elector as holder."""
        return self.observed_record.holder_identity == self._lock.identity

    def get_leader(self) -> str:
        """Identity of the last observed holder ("" if none observed yet)."""
        return self.observed_record.holder_identity

    def check(self, max_tolerable_expired_lease: float) -> None:
        """Health check: raise if leading but the lease expired more than the tolerance ago."""
        if not self.is_leader():
            return
        with self._mutex:
            since = self.clock.now() - self._observed_time
        if since > self.config.lease_duration + max_tolerable_expired_lease:
            raise LeaderElectionError(
                f"failed election to renew leadership on lease {self.config.name}"
            )

    def _set_observed(self, record: LeaderElectionRecord, version: object) -> None:
        with self._mutex:
            self._observed_record = record
            self._observed_version = version
            self._observed_time = self.clock.now()

    def _lease_valid(self, now: float) -> bool:
        with self._mutex:
            return self._observed_time + self._observed_record.lease_duration_seconds > now

    def _maybe_report_transition(self) -> None:
        holder = self.get_leader()
        if holder == self._reported_leader:
            return
        self._reported_leader = holder
        if self.config.callbacks.on_new_leader is not None:
            self.config.callbacks.on_new_leader(holder)

    # ----------------------------------------------------------------- one attempt

    def try_acquire_or_renew(self) -> bool:
        """One attempt to take or keep the lease; True if this elector holds it afterwards."""
        now = self.clock.now()
        stamp = self.clock.wall_time()
        identity = self._lock.identity
        desired = LeaderElectionRecord(
            holder_identity=identity,
            lease_duration_seconds=int(self.config.lease_duration),
            acquire_time=stamp,
            renew_time=stamp,
        )

        # Fast path: the leader writes optimistically against the version it last saw.
        if self.is_leader() and self._lease_valid(now):
            with self._mutex:
                observed, version = self._observed_record, self._observed_version
            record = attrs.evolve(
                desired,
                acquire_time=observed.acquire_time,
                leader_transitions=observed.leader_transitions,
            )
            try:
                new_version = self._lock.update(record, version)
            except Exception as exc:
                logger.warning(
                    "failed to update lock %s optimistically: %s; falling back to slow path",
                    self._lock.describe(),
                    exc,
                )
            else:
                self._set_observed(record, new_version)
                return True

        # Slow path: read the record, creating it if absent.
        try:
            current, current_version = self._lock.get()
        except LockNotFoundError:
            try:
                new_version = self._lock.create(desired)
            except Exception as exc:
                logger.error("error initially creating lock %s: %s", self._lock.describe(), exc)
                return False
            self._set_observed(desired, new_version)
            return True
        except Exception as exc:
            logger.error("error retrieving lock %s: %s", self._lock.describe(), exc)
            return False

        with self._mutex:
            changed = (current, current_version) != (
                self._observed_record,
                self._observed_version,
            )
        if changed:
            self._set_observed(current, current_version)
        if current.holder_identity and self._lease_valid(now) and not self.is_leader():
            logger.debug(
                "lock %s is held by %s and has not yet expired",
                self._lock.describe(),
                current.holder_identity,
            )
            return False

        if self.is_leader():
            record = attrs.evolve(
                desired,
                acquire_time=current.acquire_time,
                leader_transitions=current.leader_transitions,
            )
        else:
            record = attrs.evolve(desired, leader_transitions=current.leader_transitions + 1)
        try:
            new_version = self._lock.update(record, current_version)
        except Exception as exc:
            logger.error("failed to update lock %s: %s", self._lock.describe(), exc)
            return False
        self._set_observed(record, new_version)
        return True

    def release(self) -> bool:
        """Give the lease up if held: empty holder, 1 s lease, transitions kept."""
        if not self.is_leader():
            return True
        stamp = self.clock.wall_time()
        with self._mutex:
            transitions = self._observed_record.leader_transitions
            version = self._observed_version
        record = LeaderElectionRecord(
            holder_identity="",
            lease_duration_seconds=1,
            acquire_time=stamp,
            renew_time=stamp,
            leader_transitions=transitions,
        )
        try:
            new_version = self._lock.update(record, version)
        except Exception as exc:
            logger.error("failed to release lock %s: %s", self._lock.describe(), exc)
            return False
        self._set_observed(record, new_version)
        return True

    # ----------------------------------------------------------------- loops as plans

    def _jittered(self, period: float) -> float:
        return period + self.rng.random() * JITTER_FACTOR * period

    def _acquire_plan(self) -> _Plan:
        desc = self._lock.describe()
        logger.info("attempting to acquire leader lease %s...", desc)
        while True:
            acquired = self.try_acquire_or_renew()
            self._maybe_report_transition()
            if acquired:
                logger.info("successfully acquired lease %s", desc)
                return
            logger.debug("failed to acquire lease %s", desc)
            yield self._jittered(self.config.retry_period)

    def _renew_plan(self) -> _Plan:
        desc = self._lock.describe()
        retry = self.config.retry_period
        while True:
            deadline = self.clock.now() + self.config.renew_deadline
            while True:
                # A renewal that only completes after the deadline does not count.
                renewed = self.try_acquire_or_renew() and self.clock.now() < deadline
                remaining = deadline - self.clock.now()
                if renewed or remaining <= 0:
                    break
                if remaining <= retry:
                    yield remaining
                    break
                yield retry
            self._maybe_report_transition()
            if not renewed:
                logger.info("failed to renew lease %s: timed out", desc)
                return
            logger.debug("successfully renewed lease %s", desc)
            yield retry

    # ----------------------------------------------------------------- blocking variant

    def _wait(self, stop: StopEvent | None, seconds: float) -> None:
        if self.sleep is not None:
            self.sleep(seconds)
        elif stop is not None:
            stop.wait(seconds)
        else:
            time.sleep(seconds)

    def _drive(self, plan: _Plan, stop: StopEvent | None) -> bool:
        """Run a plan to completion (True) unless ``stop`` is set first (False)."""
        try:
            while stop is None or not stop.is_set():
                try:
                    delay = next(plan)
                except StopIteration:
                    return True
                self._wait(stop, delay)
            return False
        finally:
            plan.close()

    def run(self, stop: StopEvent | None = None) -> None:
        """Block until ``stop`` is set or leadership is lost; on_stopped_leading always runs.

        Waits use the injected ``sleep`` if given, else ``stop.wait`` so a stop is prompt.
        """
        callbacks = self.config.callbacks
        try:
            if not self._drive(self._acquire_plan(), stop):
                return
            try:
                assert callbacks.on_started_leading is not None
                result = callbacks.on_started_leading()
                if inspect.isawaitable(result):
                    if inspect.iscoroutine(result):
                        result.close()
                    raise TypeError("on_started_leading returned an awaitable; use run_async()")
                self._drive(self._renew_plan(), stop)
            finally:
                logger.info("stopped leading %s", self._lock.describe())
                if self.config.release_on_cancel:
                    self.release()
        finally:
            assert callbacks.on_stopped_leading is not None
            callbacks.on_stopped_leading()

    # ----------------------------------------------------------------- asyncio variant

    async def _wait_async(self, stop: AsyncStopEvent | None, seconds: float) -> None:
        if self.async_sleep is not None:
            await self.async_sleep(seconds)
        elif stop is None:
            await asyncio.sleep(seconds)
        else:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), seconds)

    async def _drive_async(self, plan: _Plan, stop: AsyncStopEvent | None) -> bool:
        try:
            while stop is None or not stop.is_set():
                try:
                    delay = next(plan)
                except StopIteration:
                    return True
                await self._wait_async(stop, delay)
            return False
        finally:
            plan.close()

    async def run_async(self, stop: AsyncStopEvent | None = None) -> None:
        """Asyncio form of ``run``; cancelling the task counts as a stop.

        An awaitable returned by on_started_leading runs as a task, cancelled and awaited
        when leadership ends and before the lease is released. Lock calls run inline.
        """
        callbacks = self.config.callbacks
        try:
            if not await self._drive_async(self._acquire_plan(), stop):
                return
            work: asyncio.Future[object] | None = None
            try:
                assert callbacks.on_started_leading is not None
                result = callbacks.on_started_leading()
                if inspect.isawaitable(result):
                    work = asyncio.ensure_future(result)
                await self._drive_async(self._renew_plan(), stop)
            finally:
                try:
                    if work is not None:
                        await _cancel_and_wait(work)
                finally:
                    logger.info("stopped leading %s", self._lock.describe())
                    if self.config.release_on_cancel:
                        self.release()
        finally:
            assert callbacks.on_stopped_leading is not None
            callbacks.on_stopped_leading()


async def _cancel_and_wait(work: asyncio.Future[object]) -> None:
    """Cancel the leader's work and wait for it to finish, logging any failure."""
    work.cancel()
    (outcome,) = await asyncio.gather(work, return_exceptions=True)
    if isinstance(outcome, BaseException) and not isinstance(outcome, asyncio.CancelledError):
        logger.error("on_started_leading task failed: %r", outcome)
