"""Clocks: the real ones and the one fake clock every part of kschedlib accepts.

The scheduler reads ``now()`` (seconds); the leader elector also reads ``wall_time()`` and
sleeps through ``sleep``/``async_sleep``. ``FakeClock`` provides all of it in virtual time,
so one clock can drive a Scheduler and its leader elector together.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

__all__ = ["FakeClock", "RealClock"]

_Waiter = tuple[float, int, "asyncio.Future[None]"]
_Timer = tuple[float, int, Callable[[], object]]


class RealClock:
    """Wall-clock seconds (time.time())."""

    __slots__ = ()

    def now(self) -> float:
        return time.time()

    def wall_time(self) -> datetime:
        return datetime.now(timezone.utc)

    def sleep(self, seconds: float) -> None:
        time.sleep(max(0.0, seconds))


class FakeClock:
    """Virtual time that moves only when told to: for tests and simulations.

    ``now()`` starts at ``start`` (Unix seconds); ``wall_time()`` is ``wall_epoch`` plus the
    time elapsed since ``start`` (by default the UTC date of ``now()``). ``advance``/``sleep``/
    ``set`` move time forward and fire timers due on the way (``call_at``/``call_later``).
    ``async_sleep`` parks coroutines in virtual time; a driver task wakes them in deadline
    order once the event loop has settled, so several leader electors can share one clock.
    """

    __slots__ = ("_driver", "_now", "_seq", "_timers", "_waiters", "settle_yields", "start",
                 "wall_epoch")

    def __init__(
        self,
        start: float = 1_700_000_000.0,
        wall_epoch: datetime | None = None,
        settle_yields: int = 20,
    ) -> None:
        self.start = float(start)
        self.wall_epoch = (
            wall_epoch if wall_epoch is not None else datetime.fromtimestamp(self.start, timezone.utc)
        )
        self.settle_yields = settle_yields
        self._now = self.start
        self._seq = itertools.count()
        self._timers: list[_Timer] = []
        self._waiters: list[_Waiter] = []
        self._driver: asyncio.Task[None] | None = None

    def __repr__(self) -> str:
        return f"FakeClock(now={self._now!r})"

    def now(self) -> float:
        return self._now

    def clone(self) -> FakeClock:
        """An independent clock at the same time, with no timers (for forks)."""
        c = FakeClock(self.start, self.wall_epoch, self.settle_yields)
        c._now = self._now
        return c

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
        """Move time forward by ``seconds`` (ValueError if negative)."""
        if seconds < 0:
            raise ValueError("cannot move a clock backwards")
        self.advance_to(self._now + seconds)

    def set(self, t: float) -> None:
        """Set the time; setting it back is allowed (tests of clock skew) and fires nothing."""
        if t >= self._now:
            self.advance_to(t)
        else:
            self._now = float(t)

    def sleep(self, seconds: float) -> None:
        """Synchronous sleep in virtual time (single-threaded simulations)."""
        self.advance_to(self._now + max(0.0, seconds))

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
