"""Requeueing unschedulable pods (the move requests of kube-scheduler's scheduling_queue.go):
cluster events routed through the rejecting plugins' queueing hints into activeQ or backoffQ."""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

from kschedlib.api.pod import Pod
from kschedlib.backend.queue.active import ActiveQueue
from kschedlib.backend.queue.backoff import BackoffQueue
from kschedlib.backend.queue.metrics import (
    QUEUEING_HINT_ERROR,
    QUEUEING_HINT_QUEUE,
    QUEUEING_HINT_SKIP,
)
from kschedlib.backend.queue.nominator import Nominator
from kschedlib.backend.queue.queue_events import (
    EVENT_ASSIGNED_POD_ADD,
    EVENT_UNSCHEDULED_POD_ADD,
    EVENT_UNSCHEDULED_POD_UPDATE,
    POD_SCALE_DOWN,
)
from kschedlib.backend.queue.unschedulable_pods import UnschedulablePods
from kschedlib.framework.events import (
    ClusterEvent,
    QueueingHint,
    QueueingHintFn,
)
from kschedlib.framework.interface import Clock
from kschedlib.framework.queued_pod_info import QueuedPodInfo

ACTIVE_Q = "Active"
BACKOFF_Q = "Backoff"
UNSCHEDULABLE_Q = "Unschedulable"

PreEnqueueCheck = Callable[[Pod], bool]

_EVENTS_THAT_NOMINATE = (EVENT_UNSCHEDULED_POD_ADD.label, EVENT_UNSCHEDULED_POD_UPDATE.label)


class QueueingStrategy(enum.IntEnum):
    """How a pod leaves the unschedulable pods: not at all, after its backoff, or right away."""

    QueueSkip = 0
    QueueAfterBackoff = 1
    QueueImmediately = 2


class Requeue(UnschedulablePods):
    """Moves between the PriorityQueue's queues and the queueing hints that decide them
    (mixed into PriorityQueue)."""

    # Set by PriorityQueue.__init__.
    _active: ActiveQueue
    _backoff: BackoffQueue
    _nominator: Nominator
    _clock: Clock
    _hints: dict[str, dict[ClusterEvent, list[tuple[str, QueueingHintFn | None]]]]
    _interest: dict[ClusterEvent, bool]
    _pop_from_backoff_q: bool
    move_request_cycle: int

    # Defined by the PriorityQueue (scheduling_queue.py).

    def _own(self, p: QueuedPodInfo) -> QueuedPodInfo:
        raise NotImplementedError

    def _run_pre_enqueue_plugins(self, p: QueuedPodInfo) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------------ moves

    def _move_to_active_q(
        self, p: QueuedPodInfo, event: str, moves_from_backoff_q: bool = False
    ) -> bool:
        """Run PreEnqueue (unless the pod comes straight from backoffQ) and add the pod to activeQ,
        or keep it with the unschedulable pods when gated. True when added to activeQ."""
        p = self._own(p)
        if not (self._pop_from_backoff_q and moves_from_backoff_q):
            self._run_pre_enqueue_plugins(p)
        key = p.key
        if p.gated():
            if self._active.has(key) or self._backoff.has(key) or key in self._unschedulable:
                return False
            self._unschedulable_add_or_update(p, event)
            return False
        if p.initial_attempt_timestamp is None:
            p.initial_attempt_timestamp = self._clock.now()
        self._unschedulable_delete(p.pod)
        self._backoff.delete(key)
        self._active.add(p, event)
        if event in _EVENTS_THAT_NOMINATE:
            self._nominator.add_nominated_pod(p.pod_info, None)
        return True

    def _move_to_backoff_q(self, p: QueuedPodInfo, event: str) -> bool:
        """Add the pod to backoffQ, running PreEnqueue first (PopFromBackoffQ); a gated pod stays
        with the unschedulable pods. True when added to backoffQ."""
        p = self._own(p)
        if self._pop_from_backoff_q:
            self._run_pre_enqueue_plugins(p)
            if p.gated():
                if p.key not in self._unschedulable:
                    self._unschedulable_add_or_update(p, event)
                return False
        self._unschedulable_delete(p.pod)
        self._backoff.add(p, event)
        return True

    def _requeue_pod_with_queueing_strategy(
        self, p: QueuedPodInfo, strategy: QueueingStrategy, event: str
    ) -> str:
        """Put the pod where ``strategy`` says; returns the queue it ended up in."""
        p = self._own(p)  # the backoff check below caches on it: never on a fork's entry
        if strategy == QueueingStrategy.QueueSkip:
            self._unschedulable_add_or_update(p, event)
            return UNSCHEDULABLE_Q
        if strategy == QueueingStrategy.QueueAfterBackoff and self._backoff.is_pod_backing_off(p):
            return BACKOFF_Q if self._move_to_backoff_q(p, event) else UNSCHEDULABLE_Q
        return ACTIVE_Q if self._move_to_active_q(p, event) else UNSCHEDULABLE_Q

    # ------------------------------------------------------------------ queueing hints

    def is_event_of_interest(self, event: ClusterEvent) -> bool:
        """Whether some profile's plugin registered an event matching ``event``."""
        known = self._interest.get(event)
        if known is not None:
            return known
        if event.is_wildcard():
            return True
        answer = any(ev.match(event) for hint_map in self._hints.values() for ev in hint_map)
        self._interest[event] = answer
        return answer

    def _is_pod_worth_requeuing(
        self, p: QueuedPodInfo, event: ClusterEvent, old_obj: Any, new_obj: Any
    ) -> QueueingStrategy:
        """Ask the hints of the plugins that rejected ``p`` about ``event``: a Queue from a
        Pending plugin requeues immediately, from another plugin after backoff."""
        rejectors = p.unschedulable_plugins | p.pending_plugins
        if not rejectors:
            return QueueingStrategy.QueueAfterBackoff
        if event.is_wildcard():
            # A wildcard event carrying a pod in new_obj is meant for that pod only.
            if new_obj is not None and (not isinstance(new_obj, Pod) or new_obj.uid != p.uid):
                return QueueingStrategy.QueueSkip
            return QueueingStrategy.QueueAfterBackoff
        hint_map = self._hints.get(p.pod.spec.scheduler_name)
        if hint_map is None:
            return QueueingStrategy.QueueAfterBackoff
        strategy = QueueingStrategy.QueueSkip
        for registered, fns in hint_map.items():
            if not registered.match(event):
                continue
            for plugin, fn in fns:
                if plugin not in rejectors:
                    continue
                hint, result = self._call_hint(fn, p.pod, old_obj, new_obj)
                self.metrics.queueing_hint_results[(plugin, event.label, result)] += 1
                if hint == QueueingHint.QueueSkip:
                    continue
                if plugin in p.pending_plugins:
                    return QueueingStrategy.QueueImmediately
                if not p.pending_plugins:
                    return QueueingStrategy.QueueAfterBackoff
                strategy = QueueingStrategy.QueueAfterBackoff
        return strategy

    @staticmethod
    def _call_hint(
        fn: QueueingHintFn | None, pod: Pod, old_obj: Any, new_obj: Any
    ) -> tuple[QueueingHint, str]:
        if fn is None:
            return QueueingHint.Queue, QUEUEING_HINT_QUEUE
        try:
            hint = fn(pod, old_obj, new_obj)
        except Exception:  # an erroring hint must not leave the pod stuck
            return QueueingHint.Queue, QUEUEING_HINT_ERROR
        if hint == QueueingHint.QueueSkip:
            return QueueingHint.QueueSkip, QUEUEING_HINT_SKIP
        return QueueingHint.Queue, QUEUEING_HINT_QUEUE

    def _determine_scheduling_hint_for_in_flight_pod(self, p: QueuedPodInfo) -> QueueingStrategy:
        """Replay the events received while ``p`` was in flight through its rejectors' hints."""
        if not p.unschedulable_plugins and not p.pending_plugins:
            # Failed with an error, not a rejection: retry after backoff.
            return QueueingStrategy.QueueAfterBackoff
        events = self._active.in_flight.events_for_pod(p.uid)
        if events is None:
            return QueueingStrategy.QueueAfterBackoff
        strategy = QueueingStrategy.QueueSkip
        for e in events:
            s = self._is_pod_worth_requeuing(p, e.event, e.old_obj, e.new_obj)
            if s == QueueingStrategy.QueueSkip:
                continue
            if s == QueueingStrategy.QueueImmediately:
                return s
            strategy = QueueingStrategy.QueueAfterBackoff
            if not p.pending_plugins:
                return strategy
        return strategy
    def assigned_pod_added(self, pod: Pod) -> None:
        """A bound pod appeared: it may satisfy affinity or spreading of unschedulable pods."""
        self._move_pods_to_active_or_backoff_queue(
            self._unschedulable_pods_with_cross_topology_term(pod),
            EVENT_ASSIGNED_POD_ADD,
            None,
            pod,
        )

    def assigned_pod_updated(self, old_pod: Pod, new_pod: Pod, event: ClusterEvent) -> None:
        """A bound pod changed: a scale-down may help any pod, other changes only pods with
        matching affinity terms or rejected by PodTopologySpread."""
        if POD_SCALE_DOWN.match(event):
            self.move_all_to_active_or_backoff_queue(event, old_pod, new_pod, None)
        else:
            self._move_pods_to_active_or_backoff_queue(
                self._unschedulable_pods_with_cross_topology_term(new_pod), event, old_pod, new_pod
            )

    def move_all_to_active_or_backoff_queue(
        self,
        event: ClusterEvent,
        old_obj: Any,
        new_obj: Any,
        pre_check: PreEnqueueCheck | None = None,
    ) -> None:
        """A cluster event: requeue the unschedulable pods (passing ``pre_check``) whose rejectors'
        hints say Queue, and remember the event for the pods in flight."""
        if not self.is_event_of_interest(event):
            return
        pods = [p for p in self._unschedulable.values() if pre_check is None or pre_check(p.pod)]
        self._move_pods_to_active_or_backoff_queue(pods, event, old_obj, new_obj)

    def _move_pods_to_active_or_backoff_queue(
        self, pods: list[QueuedPodInfo], event: ClusterEvent, old_obj: Any, new_obj: Any
    ) -> None:
        if not self.is_event_of_interest(event):
            return
        for p in pods:
            if p.gated() and not any(e.match(event) for e in p.gating_plugin_events):
                # Only an event the gating plugin registered can ungate the pod.
                continue
            strategy = self._is_pod_worth_requeuing(p, event, old_obj, new_obj)
            if strategy == QueueingStrategy.QueueSkip:
                continue
            self._unschedulable_delete(p.pod)
            self._requeue_pod_with_queueing_strategy(p, strategy, event.label)
        self.move_request_cycle = self._active.sched_cycle
        self._active.add_event_if_any_in_flight(old_obj, new_obj, event)
