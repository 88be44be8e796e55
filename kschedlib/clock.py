"""Clocks: the real ones and the one fake clock every part of kschedlib accepts.

The scheduler reads ``now()`` (seconds); the leader elector also reads ``wall_time()`` and
sleeps through ``sleep``/``async_sleep``. ``FakeClock`` provides all of it in virtual time,
so one clock can drive a Scheduler and its leader elector together.
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from decimal import ROUND_HALF_EVEN, Decimal
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # asyncio (and ssl with it) is imported only by the async sleeps
    import asyncio

__all__ = ["FakeClock", "RealClock"]

_Waiter = tuple[int, int, "asyncio.Future[None]"]
_Timer = tuple[int, int, Callable[[], object]]


class RealClock:
    """Wall-clock seconds (time.time())."""

    __slots__ = ()

    def now(self) -> float:
        return time.time()

    def wall_time(self) -> datetime:
        return datetime.now(timezone.utc)

    def sleep(self, seconds: float) -> None:
        time.sleep(max(0.0, seconds))


_NS = 1_000_000_000


def to_ns(seconds: float | int | Decimal) -> int:
    """Seconds as integer nanoseconds, read as the decimal the number prints as (so 0.3 is
    exactly 300000000 ns and 1700000001.3 exactly 1700000001300000000)."""
    if isinstance(seconds, int):
        return seconds * _NS
    d = seconds if isinstance(seconds, Decimal) else Decimal(repr(float(seconds)))
    return int((d * _NS).to_integral_value(ROUND_HALF_EVEN))


class FakeClock:
    """Virtual time that moves only when told to: for tests and simulations.

    Time is kept as integer nanoseconds (as Go's clock keeps it), so 0.3 + 0.3 + 0.3 + 1.1 s
    is exactly 2 s; the API speaks seconds (``now()`` is a float, ``now_ns()`` the integer).
    ``now()`` starts at ``start`` (Unix seconds); ``wall_time()`` is ``wall_epoch`` plus the
    time elapsed since ``start`` (by default the UTC date of ``now()``). ``advance``/``sleep``/
    ``set`` move time forward and fire timers due on the way (``call_at``/``call_later``).
    ``async_sleep`` parks coroutines in virtual time; a driver task wakes them in deadline
    order once the event loop has settled, so several leader electors can share one clock.
    """

    __slots__ = ("_driver", "_now", "_seq", "_start_ns", "_timers", "_waiters", "settle_yields",
                 "start", "wall_epoch")

    def __init__(
        self,
        start: float = 1_700_000_000.0,
        wall_epoch: datetime | None = None,
        settle_yields: int = 20,
    ) -> None:
        self._start_ns = to_ns(start)
        self.start = self._start_ns / _NS
        self.wall_epoch = (
            wall_epoch if wall_epoch is not None else datetime.fromtimestamp(self.start, timezone.utc)
        )
        self.settle_yields = settle_yields
        self._now = self._start_ns  # integer nanoseconds
        self._seq = itertools.count()
        self._timers: list[_Timer] = []
        self._waiters: list[_Waiter] = []
        self._driver: asyncio.Task[None] | None = None

    def __repr__(self) -> str:
        return f"FakeClock(now={self.now()!r})"

    def now(self) -> float:
        return self._now / _NS

    def now_ns(self) -> int:
        """The time in integer nanoseconds since the Unix epoch."""
        return self._now

    def clone(self) -> FakeClock:
        """An independent clock at the same time, with no timers (for forks)."""
        c = FakeClock(self.start, self.wall_epoch, self.settle_yields)
        c._start_ns = self._start_ns
        c._now = self._now
        return c

    def wall_time(self) -> datetime:
        return self.wall_epoch + timedelta(microseconds=(self._now - self._start_ns) // 1000)

    def call_at(self, when: float, callback: Callable[[], object]) -> None:
        """Run ``callback`` when virtual time reaches ``when`` (FIFO among equal times)."""
        heapq.heappush(self._timers, (to_ns(when), next(self._seq), callback))

    def call_later(self, delay: float, callback: Callable[[], object]) -> None:
        """Run ``callback`` ``delay`` seconds of virtual time from now."""
        heapq.heappush(self._timers, (self._now + to_ns(delay), next(self._seq), callback))

    def _advance_to_ns(self, when: int) -> None:
        while self._timers and self._timers[0][0] <= when:
            due, _, callback = heapq.heappop(self._timers)
            self._now = max(self._now, due)
            callback()
        self._now = max(self._now, when)

    def advance_to(self, when: float) -> None:
        """Move time to ``when`` (never backwards), firing due timers at their own times."""
        self._advance_to_ns(to_ns(when))

    def advance(self, seconds: float) -> None:
        """Move time forward by ``seconds`` (ValueError if negative)."""
        if seconds < 0:
            raise ValueError("cannot move a clock backwards")
        self._advance_to_ns(self._now + to_ns(seconds))

    def set(self, t: float) -> None:
        """Set the time; setting it back is allowed (tests of clock skew) and fires nothing."""
        ns = to_ns(t)
        if ns >= self._now:
            self._advance_to_ns(ns)
        else:
            self._now = ns

    def sleep(self, seconds: float) -> None:
        """Synchronous sleep in virtual time (single-threaded simulations)."""
        self._advance_to_ns(self._now + to_ns(max(0.0, seconds)))

    async def async_sleep(self, seconds: float) -> None:
        """Suspend the calling task until virtual time has advanced by ``seconds``."""
        import asyncio

        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        heapq.heappush(self._waiters, (self._now + to_ns(max(seconds, 0.0)), next(self._seq), fut))
        if self._driver is None or self._driver.done():
            self._driver = loop.create_task(self._drive())
        await fut

    async def _drive(self) -> None:
        import asyncio

        while True:
            for _ in range(self.settle_yields):
                await asyncio.sleep(0)
            while self._waiters and self._waiters[0][2].done():
                heapq.heappop(self._waiters)
            if not self._waiters:
                return
            when, _, fut = heapq.heappop(self._waiters)
            self._advance_to_ns(when)
            fut.set_result(None)
