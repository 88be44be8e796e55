"""Clocks for leader election: the real one, and a virtual-time one for tests and simulations."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Protocol

import attrs

__all__ = ["Clock", "FakeClock", "SystemClock"]


class Clock(Protocol):
    """Time source: ``now()`` drives all timing, ``wall_time()`` only stamps records."""

    def now(self) -> float:
        """Monotonic seconds; only differences are meaningful."""
        ...

    def wall_time(self) -> datetime:
        """Timezone-aware wall-clock time written into acquireTime/renewTime."""
        ...


@attrs.frozen(slots=True)
class SystemClock:
    """The process clocks: time.monotonic() and UTC wall time."""

    def now(self) -> float:
        return time.monotonic()

    def wall_time(self) -> datetime:
        return datetime.now(timezone.utc)


_EPOCH = datetime(2025, 1, 1, tzinfo=timezone.utc)
_Waiter = tuple[float, int, "asyncio.Future[None]"]
_Timer = tuple[float, int, Callable[[], object]]


@attrs.define(slots=True, eq=False)
class FakeClock:
    """Virtual time: ``sleep``/``advance`` move it forward and fire timers due on the way.

    ``async_sleep`` parks coroutines in virtual time; a driver task wakes them in deadline
    order once the event loop has settled, so several electors can share one clock.
    """

    start: float = 0.0
    wall_epoch: datetime = _EPOCH
    settle_yields: int = 20
    _now: float = attrs.field(init=False)
    _seq: itertools.count[int] = attrs.field(init=False, factory=itertools.count)
    _timers: list[_Timer] = attrs.field(init=False, factory=list)
    _waiters: list[_Waiter] = attrs.field(init=False, factory=list)
    _driver: asyncio.Task[None] | None = attrs.field(init=False, default=None)

    def __attrs_post_init__(self) -> None:
        self._now = float(self.start)

    def now(self) -> float:
        return self._now

    def wall_time(self) -> datetime:
        return self.wall_epoch + timedelta(seconds=self._now - self.start)

    def call_at(self, when: float, callback: Callable[[], object]) -> None:
        """Run ``callback`` when virtual time reaches ``when`` (FIFO among equal times)."""
        heapq.heappush(self._timers, (when, next(self._seq), callback))

    def call_later(self, delay: float, callback: Callable[[], object]) -> None:
        """Run ``callback`` ``delay`` seconds of virtual time from now."""
        self.call_at(self._now + delay, callback)

    def advance_to(self, when: float) -> None:
        """Move time to ``when`` (never backwards), firing due timers at their own times."""
        while self._timers and self._timers[0][0] <= when:
            due, _, callback = heapq.heappop(self._timers)
            self._now = max(self._now, float(due))
            callback()
        self._now = max(self._now, float(when))

    def advance(self, seconds: float) -> None:
        """Move time forward by ``seconds``."""
        self.advance_to(self._now + max(seconds, 0.0))

    def sleep(self, seconds: float) -> None:
        """Synchronous sleep in virtual time (single-threaded simulations)."""
        self.advance(seconds)

    async def async_sleep(self, seconds: float) -> None:
        """Suspend the calling task until virtual time has advanced by ``seconds``."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        heapq.heappush(self._waiters, (self._now + max(seconds, 0.0), next(self._seq), fut))
        if self._driver is None or self._driver.done():
            self._driver = loop.create_task(self._drive())
        await fut

    async def _drive(self) -> None:
        while True:
            for _ in range(self.settle_yields):
                await asyncio.sleep(0)
            while self._waiters and self._waiters[0][2].done():
                heapq.heappop(self._waiters)
            if not self._waiters:
                return
            when, _, fut = heapq.heappop(self._waiters)
            self.advance_to(when)
            fut.set_result(None)
