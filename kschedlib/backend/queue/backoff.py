"""backoffQ: pods waiting out their backoff, ordered by when it ends (backoff_queue.go)."""

from __future__ import annotations

import math
from collections.abc import Callable

from kschedlib.api.pod import Pod
from kschedlib.backend.queue.heap import Heap
from kschedlib.backend.queue.metrics import BACKOFF, QueueMetrics
from kschedlib.framework.interface import Clock
from kschedlib.framework.queued_pod_info import QueuedPodInfo

LessFn = Callable[[QueuedPodInfo, QueuedPodInfo], bool]

BACKOFF_ORDERING_WINDOW = 1.0
"""Seconds per backoffQ ordering window (KEP-5142): within a window, pods sort as in activeQ."""

NO_BACKOFF = -math.inf
"""Go's zero time.Time: the backoff of a pod that never failed (always in the past)."""

_NS = 1_000_000_000


def _key(p: QueuedPodInfo) -> str:
    return p.pod_info.pod.key


def backoff_duration(count: int, initial: float, maximum: float) -> float:
    """initial * 2^(count-1) capped at maximum, 0 when count is 0; computed in integer
    nanoseconds with the same shift-and-compare as Go so rounding matches."""
    if count == 0:
        return 0.0
    init_ns = round(initial * _NS)
    max_ns = round(maximum * _NS)
    shift = count - 1
    if init_ns > (max_ns >> shift):
        return max_ns / _NS
    return (init_ns << shift) / _NS


class BackoffQueue:
    """Two heaps: podBackoffQ (rejected pods) and podErrorBackoffQ (pods that hit an error)."""

    # With SchedulerPopFromBackoffQ (on in v1.35) backoff ends are truncated to whole seconds and
    # pods in the same window are ordered by the activeQ ``less``; a pod's backoff is over only
    # once the clock is in a later window than its backoff end.

    __slots__ = (
        "_clock",
        "_initial",
        "_max",
        "_active_less",
        "_pop_from_backoff_q",
        "_metrics",
        "pod_backoff_q",
        "pod_error_backoff_q",
        "owner_epoch",
    )

    def __init__(
        self,
        clock: Clock,
        pod_initial_backoff: float,
        pod_max_backoff: float,
        active_less: LessFn,
        pop_from_backoff_q: bool,
        metrics: QueueMetrics,
    ) -> None:
        self._clock = clock
        self._initial = pod_initial_backoff
        self._max = pod_max_backoff
        self._active_less = active_less
        self._pop_from_backoff_q = pop_from_backoff_q
        self._metrics = metrics
        self.pod_backoff_q: Heap[QueuedPodInfo] = Heap(
            _key,
            self._less_with_priority if pop_from_backoff_q else self._less_backoff_completed,
        )
        self.pod_error_backoff_q: Heap[QueuedPodInfo] = Heap(_key, self._less_backoff_completed)
        self.owner_epoch = 0
        """The owning queue's copy-on-write epoch: entries of another epoch are shared with a
        fork and never written (their backoff end is computed, not cached)."""

    def copy_from(self, other: BackoffQueue, copy_item: Callable[[QueuedPodInfo], QueuedPodInfo]) -> None:
        """Take a copy of ``other``'s two heaps (forks)."""
        self.pod_backoff_q.copy_from(other.pod_backoff_q, copy_item)
        self.pod_error_backoff_q.copy_from(other.pod_error_backoff_q, copy_item)

    @property
    def pod_initial_backoff(self) -> float:
        return self._initial

    @property
    def pod_max_backoff(self) -> float:
        return self._max

    # --- backoff arithmetic ---

    def align_to_window(self, t: float) -> float:
        return math.floor(t) if self._pop_from_backoff_q else t

    def calculate_backoff_duration(self, count: int) -> float:
        return backoff_duration(count, self._initial, self._max)

    def get_backoff_time(self, p: QueuedPodInfo) -> float:
        """When ``p``'s backoff ends (cached on ``p``), from its rejections or, while its last
        attempts were errors, its consecutive errors; NO_BACKOFF when it never failed."""
        count = p.unschedulable_count
        if p.consecutive_errors_count > 0:
            count = p.consecutive_errors_count
        if count == 0:
            return NO_BACKOFF
        end = p.backoff_expiration
        if end is None:
            end = self.align_to_window(p.timestamp + self.calculate_backoff_duration(count))
            if p.epoch == self.owner_epoch:
                p.backoff_expiration = end
        return end

    def is_pod_backing_off(self, p: QueuedPodInfo) -> bool:
        """True while the clock has not left the window of ``p``'s backoff end."""
        return not self.get_backoff_time(p) < self.align_to_window(self._clock.now())

    def _less_backoff_completed(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return self.get_backoff_time(a) < self.get_backoff_time(b)

    def _less_with_priority(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        ba = self.get_backoff_time(a)
        bb = self.get_backoff_time(b)
        if ba != bb:
            return ba < bb
        return self._active_less(a, b)

    # --- queue operations ---

    def _pop_completed(self, heap: Heap[QueuedPodInfo]) -> list[QueuedPodInfo]:
        out: list[QueuedPodInfo] = []
        while True:
            head = heap.peek()
            if head is None or self.is_pod_backing_off(head):
                break
            popped = heap.pop()
            assert popped is not None
            out.append(popped)
        return out

    def pop_all_backoff_completed(self) -> list[QueuedPodInfo]:
        """Pop every pod whose backoff is over, podBackoffQ first, then podErrorBackoffQ."""
        return self._pop_completed(self.pod_backoff_q) + self._pop_completed(
            self.pod_error_backoff_q
        )

    def add(self, p: QueuedPodInfo, event: str) -> None:
        """Add ``p`` to the heap its failure kind selects (rejected or error), keeping it out of
        the other one."""
        if not p.unschedulable_plugins and not p.pending_plugins:
            target, other = self.pod_error_backoff_q, self.pod_backoff_q
        else:
            target, other = self.pod_backoff_q, self.pod_error_backoff_q
        target.add_or_update(p)
        if other.delete(p) is not None:
            # kube-scheduler logs an error here and records no incoming-pod metric.
            return
        self._metrics.incoming(BACKOFF, event)

    def update(self, new_pod: Pod, old_key: str) -> QueuedPodInfo | None:
        """Point the queued pod with ``old_key`` at ``new_pod``; None when it is not here."""
        for heap in (self.pod_backoff_q, self.pod_error_backoff_q):
            p = heap.get_by_key(old_key)
            if p is not None:
                p.update(new_pod)
                heap.add_or_update(p)
                return p
        return None

    def delete(self, key: str) -> bool:
        if self.pod_backoff_q.delete_key(key) is not None:
            return True
        return self.pod_error_backoff_q.delete_key(key) is not None

    def pop_backoff(self) -> QueuedPodInfo | None:
        """Pop the head of podBackoffQ, backoff over or not (podErrorBackoffQ is never used)."""
        return self.pod_backoff_q.pop()

    def get(self, key: str) -> QueuedPodInfo | None:
        p = self.pod_backoff_q.get_by_key(key)
        return p if p is not None else self.pod_error_backoff_q.get_by_key(key)

    def has(self, key: str) -> bool:
        return self.pod_backoff_q.has_key(key) or self.pod_error_backoff_q.has_key(key)

    def pod_infos(self) -> list[QueuedPodInfo]:
        """podBackoffQ's pods then podErrorBackoffQ's, each in heap order."""
        return self.pod_backoff_q.items() + self.pod_error_backoff_q.items()

    def __len__(self) -> int:
        return len(self.pod_backoff_q) + len(self.pod_error_backoff_q)

    def len_backoff(self) -> int:
        return len(self.pod_backoff_q)
