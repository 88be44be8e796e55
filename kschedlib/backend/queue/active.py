"""activeQ and the in-flight bookkeeping: pods being scheduled and the events seen meanwhile."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import attrs

from kschedlib.api.pod import Pod
from kschedlib.backend.queue.heap import Heap
from kschedlib.backend.queue.metrics import ACTIVE, POD_POPPED_IN_FLIGHT_EVENT, QueueMetrics
from kschedlib.framework.events import ClusterEvent
from kschedlib.framework.queued_pod_info import QueuedPodInfo


@attrs.define(slots=True, frozen=True)
class InFlightEvent:
    """A cluster event received while at least one pod was in flight."""

    event: ClusterEvent
    old_obj: Any
    new_obj: Any


@attrs.define(slots=True)
class _PodMark:
    """Where an in-flight pod's attempt started in the event log; ``pod`` is the version popped."""

    pod: Pod
    live: bool = True


class InFlightLog:
    """inFlightEvents: pod marks (appended at pop) and cluster events in arrival order; the events
    after a pod's mark happened during its attempt."""

    __slots__ = ("_entries", "_base", "_pods", "_metrics")

    def __init__(self, metrics: QueueMetrics) -> None:
        self._entries: list[InFlightEvent | _PodMark] = []
        self._base = 0
        self._pods: dict[str, int] = {}
        self._metrics = metrics

    def __contains__(self, uid: object) -> bool:
        return uid in self._pods

    def copy_from(self, other: InFlightLog) -> None:
        """Take a copy of ``other``'s log (forks); events are immutable and shared."""
        self._entries = [
            _PodMark(e.pod, e.live) if isinstance(e, _PodMark) else e for e in other._entries
        ]
        self._base = other._base
        self._pods = dict(other._pods)

    def __len__(self) -> int:
        return len(self._pods)

    def add_pod(self, pod: Pod) -> None:
        self._metrics.in_flight_events[POD_POPPED_IN_FLIGHT_EVENT] += 1
        self._pods[pod.uid] = self._base + len(self._entries)
        self._entries.append(_PodMark(pod))

    def add_event(self, event: ClusterEvent, old_obj: Any, new_obj: Any) -> None:
        self._metrics.in_flight_events[event.label] += 1
        self._entries.append(InFlightEvent(event, old_obj, new_obj))

    def events_for_pod(self, uid: str) -> list[InFlightEvent] | None:
        """Events received since ``uid`` was popped; None when it is not in flight."""
        seq = self._pods.get(uid)
        if seq is None:
            return None
        return [e for e in self._entries[seq - self._base + 1 :] if isinstance(e, InFlightEvent)]

    def done(self, uid: str) -> bool:
        """End ``uid``'s attempt and drop the events no remaining in-flight pod needs."""
        seq = self._pods.pop(uid, None)
        if seq is None:
            return False
        mark = self._entries[seq - self._base]
        assert isinstance(mark, _PodMark)
        mark.live = False
        n = 0
        for e in self._entries:
            if isinstance(e, _PodMark) and e.live:
                break
            if isinstance(e, InFlightEvent):
                self._metrics.in_flight_events[e.event.label] -= 1
            n += 1
        if n:
            del self._entries[:n]
            self._base += n
        self._metrics.in_flight_events[POD_POPPED_IN_FLIGHT_EVENT] -= 1
        return True

    def pods(self) -> list[Pod]:
        out: list[Pod] = []
        for seq in self._pods.values():
            mark = self._entries[seq - self._base]
            assert isinstance(mark, _PodMark)
            out.append(mark.pod)
        return out

    def uids(self) -> list[str]:
        return list(self._pods)

    def entries(self) -> list[InFlightEvent | Pod]:
        """The live log (pods and events), oldest first: for tests and debugging."""
        return [
            e.pod if isinstance(e, _PodMark) else e
            for e in self._entries
            if not isinstance(e, _PodMark) or e.live
        ]


def _key(p: QueuedPodInfo) -> str:
    return p.pod_info.pod.key


class ActiveQueue:
    """activeQ (a heap ordered by the profile's QueueSort ``less``) plus the in-flight log and the
    scheduling-cycle counter."""

    __slots__ = ("heap", "in_flight", "sched_cycle", "_metrics")

    def __init__(
        self, less: Callable[[QueuedPodInfo, QueuedPodInfo], bool], metrics: QueueMetrics
    ) -> None:
        self.heap: Heap[QueuedPodInfo] = Heap(_key, less)
        self.in_flight = InFlightLog(metrics)
        self.sched_cycle = 0
        self._metrics = metrics

    def copy_from(
        self, other: ActiveQueue, copy_item: Callable[[QueuedPodInfo], QueuedPodInfo]
    ) -> None:
        """Take a copy of ``other``'s heap, in-flight log and cycle counter (forks)."""
        self.heap.copy_from(other.heap, copy_item)
        self.in_flight.copy_from(other.in_flight)
        self.sched_cycle = other.sched_cycle

    def add(self, p: QueuedPodInfo, event: str) -> None:
        self.heap.add_or_update(p)
        self._metrics.incoming(ACTIVE, event)

    def update(self, new_pod: Pod, old_key: str) -> QueuedPodInfo | None:
        p = self.heap.get_by_key(old_key)
        if p is None:
            return None
        p.update(new_pod)
        self.heap.add_or_update(p)
        return p

    def delete(self, key: str) -> bool:
        return self.heap.delete_key(key) is not None

    def get(self, key: str) -> QueuedPodInfo | None:
        return self.heap.get_by_key(key)

    def has(self, key: str) -> bool:
        return self.heap.has_key(key)

    def __len__(self) -> int:
        return len(self.heap)

    def add_events_if_pod_in_flight(
        self, old_pod: Pod | None, new_pod: Pod, events: Iterable[ClusterEvent]
    ) -> bool:
        """Record ``events`` for ``new_pod`` if it is in flight; True when it is."""
        if new_pod.uid not in self.in_flight:
            return False
        for e in events:
            self.in_flight.add_event(e, old_pod, new_pod)
        return True

    def add_event_if_any_in_flight(self, old_obj: Any, new_obj: Any, event: ClusterEvent) -> bool:
        if not len(self.in_flight):
            return False
        self.in_flight.add_event(event, old_obj, new_obj)
        return True
