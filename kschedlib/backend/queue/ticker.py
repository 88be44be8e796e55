"""QueueTicker: the queue's periodic flushes (PriorityQueue.Run) on an injected clock."""

from __future__ import annotations

import math

from kschedlib.backend.queue.scheduling_queue import PriorityQueue
from kschedlib.framework.interface import Clock

BACKOFF_FLUSH_INTERVAL = 1.0
UNSCHEDULABLE_FLUSH_INTERVAL = 30.0


class QueueTicker:
    """Tells the host when the next flush is due (``next_tick``) and runs the due ones
    (``run_due``): backoffQ on every whole second, leftovers at start then every 30 s."""

    __slots__ = ("_queue", "_clock", "_next_backoff", "_next_leftover", "_leftover_interval")

    def __init__(
        self,
        queue: PriorityQueue,
        clock: Clock | None = None,
        leftover_interval: float = UNSCHEDULABLE_FLUSH_INTERVAL,
    ) -> None:
        self._queue = queue
        self._clock = clock if clock is not None else queue.clock
        now = self._clock.now()
        self._next_backoff = float(math.floor(now + BACKOFF_FLUSH_INTERVAL))
        self._next_leftover = now
        self._leftover_interval = leftover_interval

    def next_tick(self) -> float:
        return min(self._next_backoff, self._next_leftover)

    def run_due(self) -> list[str]:
        """Run the flushes due at the clock's time (each once, earliest first); returns their
        names ("backoff", "leftover")."""
        now = self._clock.now()
        due: list[tuple[float, int, str]] = []
        if self._next_backoff <= now:
            due.append((self._next_backoff, 0, "backoff"))
        if self._next_leftover <= now:
            due.append((self._next_leftover, 1, "leftover"))
        ran: list[str] = []
        for _, _, name in sorted(due):
            if name == "backoff":
                self._queue.flush_backoff_q_completed()
                self._next_backoff = math.floor(now) + BACKOFF_FLUSH_INTERVAL
            else:
                self._queue.flush_unschedulable_pods_leftover()
                self._next_leftover = now + self._leftover_interval
            ran.append(name)
        return ran
