"""Clocks for leader election: the real one, and a virtual-time one for tests and simulations."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Protocol

import attrs

from kschedlib.clock import FakeClock

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
