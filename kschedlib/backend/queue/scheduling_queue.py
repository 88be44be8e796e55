"""PriorityQueue: kube-scheduler v1.35's scheduling queue (activeQ, backoffQ, unschedulable pods),
driven by an injected clock and no threads."""

# v1.35 defaults reproduced: SchedulerQueueingHints (GA) decides requeueing with the rejecting
# plugins' hints, including for events seen while a pod was in flight; SchedulerPopFromBackoffQ
# (beta, on) pops from backoffQ when activeQ is empty, runs PreEnqueue when a pod enters
# backoffQ and orders backoffQ by 1-second windows, then by the QueueSort ``less``.

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence

from kschedlib.api.pod import Pod, pod_priority
from kschedlib.backend.queue.active import ActiveQueue, InFlightEvent
from kschedlib.backend.queue.backoff import BackoffQueue
from kschedlib.backend.queue.hints import HintRegistration
from kschedlib.backend.queue.metrics import (
    ACTIVE,
    BACKOFF,
    GATED,
    UNSCHEDULABLE,
    QueueMetrics,
)
from kschedlib.backend.queue.nominator import NominatingInfo, Nominator, PodLister, PodRef
from kschedlib.backend.queue.queue_events import (
    BACKOFF_COMPLETE,
    EVENT_FORCE_ACTIVATE,
    EVENT_UNSCHEDULABLE_TIMEOUT,
    EVENT_UNSCHEDULED_POD_ADD,
    EVENT_UNSCHEDULED_POD_UPDATE,
    FORCE_ACTIVATE_LABEL,
    POP_FROM_BACKOFF_Q,
    SCHEDULE_ATTEMPT_FAILURE,
    pod_scheduling_properties_change,
)
from kschedlib.backend.queue.requeue import (
    ACTIVE_Q,
    BACKOFF_Q,
    UNSCHEDULABLE_Q,
    PreEnqueueCheck,
    QueueingStrategy,
    Requeue,
)
from kschedlib.backend.queue.unschedulable_pods import (
    POD_TOPOLOGY_SPREAD,
    NamespaceLabels,
)
from kschedlib.errors import QueueError
from kschedlib.framework.events import (
    ActionType,
    ClusterEvent,
    EventResource,
    QueueingHintFn,
)
from kschedlib.framework.handle import RealClock
from kschedlib.framework.interface import Clock, PreEnqueuePlugin
from kschedlib.framework.queued_pod_info import QueuedPodInfo
from kschedlib.framework.status import Code, Status
from kschedlib.framework.types import PodInfo

__all__ = [
    "ACTIVE_Q",
    "BACKOFF_Q",
    "DEFAULT_POD_INITIAL_BACKOFF",
    "DEFAULT_POD_MAX_BACKOFF",
    "DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION",
    "POD_TOPOLOGY_SPREAD",
    "UNSCHEDULABLE_Q",
    "LessFn",
    "NamespaceLabels",
    "PreEnqueueCheck",
    "PriorityQueue",
    "QueueingStrategy",
    "priority_sort_less",
]

DEFAULT_POD_INITIAL_BACKOFF = 1.0
DEFAULT_POD_MAX_BACKOFF = 10.0
DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION = 300.0

LessFn = Callable[[QueuedPodInfo, QueuedPodInfo], bool]

_EPOCHS = itertools.count(1)


_NO_PRIORITY = 1 << 62
"""Above every pod priority (int32): the least priority of no pods."""

_NominatedEntry = tuple[
    tuple[tuple[Pod, bool], ...], int, tuple[str, ...], tuple[str, ...]
]
"""A node's nominated pods: (pod, pod_level) each, their least priority, UIDs and keys."""


def _same(p: QueuedPodInfo) -> QueuedPodInfo:
    return p


def priority_sort_less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    """The PrioritySort QueueSort plugin: higher priority first, then the earlier timestamp."""
    p1 = pod_priority(a.pod)
    p2 = pod_priority(b.pod)
    return p1 > p2 or (p1 == p2 and a.timestamp < b.timestamp)


def _priority_ordered(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    """priority_sort_less with the arrival tie-break, in one call (the hot comparison)."""
    p1 = a.pod_info.pod.spec.priority or 0
    p2 = b.pod_info.pod.spec.priority or 0
    if p1 != p2:
        return p1 > p2
    t1 = a.timestamp
    t2 = b.timestamp
    if t1 != t2:
        return t1 < t2
    return a.seq < b.seq


def _with_arrival_tie_break(less: LessFn) -> LessFn:
    """``less``, with pods it holds equal (same priority and timestamp) ordered by arrival.
    PrioritySort (or a plugin offering ``ordered_less``, which must be exactly that) gets the
    fused comparison."""
    if less is priority_sort_less:
        return _priority_ordered
    fused = getattr(getattr(less, "__self__", None), "ordered_less", None)
    if callable(fused):
        return fused  # type: ignore[no-any-return]

    def ordered(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        if less(a, b):
            return True
        return a.seq < b.seq and not less(b, a)

    return ordered


class PriorityQueue(Requeue):
    """The scheduling queue shared by all profiles (a pod's profile is its spec.schedulerName);
    nothing runs by itself: the host drives the periodic flushes (see ``QueueTicker``)."""

    # ``pre_enqueue_plugins`` and ``queueing_hints`` are keyed by profile name; hint
    # registrations are (event, plugin name, hint fn or None), e.g. from build_queueing_hints.
    # Pods are identified by namespace/name in the queues, by UID in flight and in the
    # nominator.

    def __init__(
        self,
        less: LessFn | None = None,
        clock: Clock | None = None,
        pre_enqueue_plugins: Mapping[str, Sequence[PreEnqueuePlugin]] | None = None,
        queueing_hints: Mapping[str, Iterable[HintRegistration]] | None = None,
        pod_initial_backoff: float = DEFAULT_POD_INITIAL_BACKOFF,
        pod_max_backoff: float = DEFAULT_POD_MAX_BACKOFF,
        pod_max_in_unschedulable_pods_duration: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
        *,
        pod_lister: PodLister | None = None,
        namespace_labels: NamespaceLabels | None = None,
        pop_from_backoff_q: bool = True,
        metrics: QueueMetrics | None = None,
    ) -> None:
        self._less: LessFn = _with_arrival_tie_break(
            less if less is not None else priority_sort_less
        )
        self._seq = 0
        """Arrival counter behind QueuedPodInfo.seq (the QueueSort tie-break)."""
        self._clock: Clock = clock if clock is not None else RealClock()
        self._pre_enqueue: dict[str, list[PreEnqueuePlugin]] = {
            profile: list(pls) for profile, pls in (pre_enqueue_plugins or {}).items()
        }
        self._hints: dict[str, dict[ClusterEvent, list[tuple[str, QueueingHintFn | None]]]] = {}
        self._plugin_to_events: dict[str, list[ClusterEvent]] = {}
        for profile, regs in (queueing_hints or {}).items():
            hint_map = self._hints.setdefault(profile, {})
            for event, plugin, fn in regs:
                hint_map.setdefault(event, []).append((plugin, fn))
                self._plugin_to_events.setdefault(plugin, []).append(event)
        self._interest: dict[ClusterEvent, bool] = {}
        """is_event_of_interest answers per event (the registrations never change)."""
        self._pod_max_in_unschedulable_pods_duration = pod_max_in_unschedulable_pods_duration
        self._namespace_labels = namespace_labels
        self._pop_from_backoff_q = pop_from_backoff_q
        self.metrics = metrics if metrics is not None else QueueMetrics()
        self._active = ActiveQueue(self._less, self.metrics)
        self._backoff = BackoffQueue(
            self._clock,
            pod_initial_backoff,
            pod_max_backoff,
            self._less,
            pop_from_backoff_q,
            self.metrics,
        )
        self._unschedulable: dict[str, QueuedPodInfo] = {}
        self._cross_topology_keys: set[str] = set()
        self._nominator = Nominator(pod_lister)
        self._nominated_memo: dict[str, _NominatedEntry] = {}
        """node name -> its nominated pods as ``nominated_filter_keys`` finds them, kept across
        cycles; an entry is dropped when the node's nominations change or one of its pods is
        added to, removed from or replaced in a sub-queue (``_nominated_touch``)."""
        self._nominated_memo_keys: dict[str, set[str]] = {}
        """pod key -> the memoized nodes whose entries it is part of."""
        self._nominated_log = NominationLog()
        """Every node whose memoized entry is dropped, in order (see NominationLog)."""
        for heap in (
            self._active.heap, self._backoff.pod_backoff_q, self._backoff.pod_error_backoff_q
        ):
            heap.on_change = self._nominated_touch
        self._nominator.on_change = self._nominated_memo_drop
        self.move_request_cycle = -1
        """Cycle of the last move request; kept as in Go, unused while queueing hints are on."""
        self._epoch = 0
        """Copy-on-write epoch (see ``copy_state_from``)."""

    # ------------------------------------------------------------------ forks

    def copy_state_from(self, other: PriorityQueue) -> None:
        """Take ``other``'s pods, in-flight log, nominations and counters (forks); this queue
        keeps its own plugins, hints and clock. QueuedPodInfos are shared copy-on-write: both
        queues move to new epochs, and each copies a QueuedPodInfo of an older epoch before
        changing it (``_own``)."""
        other._epoch = other._backoff.owner_epoch = next(_EPOCHS)
        self._epoch = self._backoff.owner_epoch = next(_EPOCHS)
        self._active.copy_from(other._active, _same)
        self._backoff.copy_from(other._backoff, _same)
        self._unschedulable = dict(other._unschedulable)
        self._cross_topology_keys = set(other._cross_topology_keys)
        self._nominator.copy_from(other._nominator)
        self._nominated_memo.clear()
        self._nominated_memo_keys.clear()
        self._nominated_log.reset()
        self.move_request_cycle = other.move_request_cycle
        self._seq = other._seq
        self.metrics.copy_from(other.metrics)

    def _own(self, p: QueuedPodInfo) -> QueuedPodInfo:
        """``p``, or when a fork shares it, a private copy put in its place wherever it is
        queued; call before changing a QueuedPodInfo taken from the queues."""
        if p.epoch == self._epoch:
            return p
        c = p.fork_copy()
        c.epoch = self._epoch
        key = p.key
        if self._unschedulable.get(key) is p:
            self._unschedulable[key] = c
            self._nominated_touch(key)
        for heap in (self._active.heap, self._backoff.pod_backoff_q, self._backoff.pod_error_backoff_q):
            if heap.get_by_key(key) is p:
                heap.replace(key, c)
        return c

    def _own_key(self, key: str) -> None:
        """Own the QueuedPodInfo queued under ``key`` (if any) before an in-place update."""
        p = self._active.get(key) or self._backoff.get(key) or self._unschedulable.get(key)
        if p is not None:
            self._own(p)

    # ------------------------------------------------------------------ helpers

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    @property
    def clock(self) -> Clock:
        return self._clock

    @property
    def backoff_q(self) -> BackoffQueue:
        return self._backoff

    @property
    def nominator(self) -> Nominator:
        return self._nominator

    def new_queued_pod_info(self, pod: Pod, *plugins: str) -> QueuedPodInfo:
        p = QueuedPodInfo.of(pod, self._clock.now(), *plugins)
        p.seq = self._next_seq()
        p.epoch = self._epoch
        return p

    # ------------------------------------------------------------------ PreEnqueue

    def _run_pre_enqueue_plugins(self, p: QueuedPodInfo) -> None:
        """Run the profile's PreEnqueue plugins, the gating one first; the first rejection gates
        the pod, and the pod is ungated only when all admit it."""
        plugins = self._pre_enqueue.get(p.pod.spec.scheduler_name, ())
        gating = p.gating_plugin
        if gating:
            for pl in plugins:
                if pl.name == gating:
                    if not self._run_pre_enqueue_plugin(pl, p):
                        return
                    break
        for pl in plugins:
            if gating and pl.name == gating:
                continue
            if not self._run_pre_enqueue_plugin(pl, p):
                return
        p.gating_plugin = ""

    def _run_pre_enqueue_plugin(self, pl: PreEnqueuePlugin, p: QueuedPodInfo) -> bool:
        status: Status | None
        try:
            status = pl.pre_enqueue(p.pod)
        except Exception as exc:  # a raising plugin gates the pod with an Error status
            status = Status.error(exc, pl.name)
        code = Code.Success if status is None else status.code
        self.metrics.pre_enqueue_results[(pl.name, code.name)] += 1
        if code == Code.Success:
            return True
        p.unschedulable_plugins.add(pl.name)
        self._note_cross_topology(p)
        self.metrics.unschedulable_reasons[(pl.name, p.pod.spec.scheduler_name)] += 1
        p.gating_plugin = pl.name
        p.gating_plugin_events = tuple(self._plugin_to_events.get(pl.name, ()))
        return False

    # ------------------------------------------------------------------ SchedulingQueue API

    def add(self, pod: Pod) -> None:
        """A new unscheduled pod: into activeQ, or with the unschedulable pods if gated."""
        self._move_to_active_q(self.new_queued_pod_info(pod), EVENT_UNSCHEDULED_POD_ADD.label)

    def activate(self, pods: Iterable[Pod] | Mapping[str, Pod]) -> None:
        """Move the given pods from the unschedulable pods or backoffQ to activeQ; for a pod in
        flight, record a ForceActivate event so it is requeued when it comes back."""
        items = pods.values() if isinstance(pods, Mapping) else pods
        for pod in items:
            if self._activate(pod):
                continue
            self._active.add_events_if_pod_in_flight(None, pod, (EVENT_FORCE_ACTIVATE,))
            self.move_request_cycle = self._active.sched_cycle

    def _activate(self, pod: Pod) -> bool:
        key = pod.key
        p = self._unschedulable.get(key)
        from_backoff = False
        if p is None:
            p = self._backoff.get(key)
            if p is None or not self._backoff.delete(key):
                return False
            from_backoff = True
        return self._move_to_active_q(p, FORCE_ACTIVATE_LABEL, from_backoff)

    def scheduling_cycle(self) -> int:
        return self._active.sched_cycle

    def pop(self) -> QueuedPodInfo | None:
        """Take the head of activeQ (or of backoffQ when activeQ is empty) into flight, counting the
        attempt and starting a scheduling cycle; None when nothing can be popped."""
        while True:
            p = self._active.heap.pop()
            if p is None:
                if not self._pop_from_backoff_q:
                    return None
                p = self._backoff.pop_backoff()
                if p is None:
                    return None
                self.metrics.incoming(ACTIVE, POP_FROM_BACKOFF_Q)
            p = self._own(p)
            p.attempts += 1
            if p.uid in self._active.in_flight:
                # The same pod is already being scheduled: discard this copy (as kube-scheduler).
                continue
            self._active.in_flight.add_pod(p.pod)
            self._active.sched_cycle += 1
            self._start_attempt(p)
            return p

    def pop_pod(self, pod: Pod) -> QueuedPodInfo | None:
        """Take one given pod into flight now, from wherever it waits (activeQ, backoffQ or
        the unschedulable pods), counting the attempt as ``pop`` does. None when the pod is
        not queued, is gated, or is already in flight."""
        key = pod.key
        if pod.uid in self._active.in_flight:
            return None
        p = self._active.heap.delete_key(key)
        if p is None:
            p = self._backoff.get(key)
            if p is not None:
                self._backoff.delete(key)
        if p is None:
            u = self._unschedulable.get(key)
            if u is None or u.gated():
                return None
            self._unschedulable_delete(u.pod)
            p = u
        p = self._own(p)
        p.attempts += 1
        self._active.in_flight.add_pod(p.pod)
        self._active.sched_cycle += 1
        self._start_attempt(p)
        return p

    def _start_attempt(self, p: QueuedPodInfo) -> None:
        """Count the attempt and reset the pod's rejectors for it, as v1.35's activeQ pop
        does: unschedulable and pending plugins (and any gating plugin) are cleared, so a
        requeue consults only this attempt's rejectors."""
        profile = p.pod.spec.scheduler_name
        self.metrics.scheduling_attempts[profile] += 1
        for plugin in p.unschedulable_plugins | p.pending_plugins:
            self.metrics.unschedulable_reasons[(plugin, profile)] -= 1
        p.unschedulable_plugins = set()
        p.pending_plugins = set()
        p.gating_plugin = ""
        p.gating_plugin_events = ()
        p.backoff_expiration = None

    def done(self, uid: str) -> None:
        """End the in-flight tracking of a popped pod (idempotent)."""
        self._active.in_flight.done(uid)

    def add_unschedulable_if_not_present(self, p: QueuedPodInfo, scheduling_cycle: int) -> None:
        """Bring a pod back after a failed attempt; its in-flight tracking ends either way, and a
        pod already queued raises QueueError without other change."""
        # Rejected pods wait with the unschedulable pods unless an event received during the
        # attempt makes a rejector's hint say Queue; pods that failed with an error (no
        # rejector) go to backoffQ.
        try:
            key = p.key
            if key in self._unschedulable:
                raise QueueError(f"Pod {key} is already present in unschedulable queue")
            if self._active.has(key):
                raise QueueError(f"Pod {key} is already present in the active queue")
            if self._backoff.has(key):
                raise QueueError(f"Pod {key} is already present in the backoff queue")
            if not p.unschedulable_plugins and not p.pending_plugins:
                p.consecutive_errors_count += 1
            else:
                p.unschedulable_count += 1
                p.consecutive_errors_count = 0
            p.timestamp = self._clock.now()
            p.seq = self._next_seq()
            p.backoff_expiration = None
            profile = p.pod.spec.scheduler_name
            for plugin in p.unschedulable_plugins | p.pending_plugins:
                self.metrics.unschedulable_reasons[(plugin, profile)] += 1
            strategy = self._determine_scheduling_hint_for_in_flight_pod(p)
            self._requeue_pod_with_queueing_strategy(p, strategy, SCHEDULE_ATTEMPT_FAILURE)
        finally:
            self.done(p.uid)

    def flush_backoff_q_completed(self) -> None:
        """Move every pod whose backoff is over from backoffQ to activeQ."""
        for p in self._backoff.pop_all_backoff_completed():
            self._move_to_active_q(p, BACKOFF_COMPLETE, moves_from_backoff_q=True)

    def flush_unschedulable_pods_leftover(self) -> None:
        """Requeue pods that waited longer than podMaxInUnschedulablePodsDuration."""
        now = self._clock.now()
        limit = self._pod_max_in_unschedulable_pods_duration
        to_move = [p for p in self._unschedulable.values() if now - p.timestamp > limit]
        if to_move:
            self._move_pods_to_active_or_backoff_queue(
                to_move, EVENT_UNSCHEDULABLE_TIMEOUT, None, None
            )

    def update(self, old_pod: Pod | None, new_pod: Pod) -> None:
        """An unscheduled pod changed: update it where it is queued (requeueing it from the
        unschedulable pods if its rejectors' hints say so), record it if in flight, else add it."""
        self._nominated_touch(new_pod.key)  # its PodInfo may change in place
        if old_pod is not None:
            self._nominated_touch(old_pod.key)
        if old_pod is not None:
            events = pod_scheduling_properties_change(new_pod, old_pod)
        else:
            resource = (
                EventResource.AssignedPod
                if new_pod.spec.node_name
                else EventResource.UnscheduledPod
            )
            events = [ClusterEvent(resource, ActionType.Update)]
        if self._active.add_events_if_pod_in_flight(old_pod, new_pod, events):
            return
        if old_pod is not None:
            old_key = old_pod.key
            self._own_key(old_key)
            p = self._active.update(new_pod, old_key)
            if p is None:
                p = self._backoff.update(new_pod, old_key)
            if p is not None:
                self._nominator.update_nominated_pod(old_pod, p.pod_info)
                return
        p = self._unschedulable.get(new_pod.key)
        if p is not None:
            p = self._own(p)
            p.update(new_pod)
            self._note_cross_topology(p)
            self._nominator.update_nominated_pod(old_pod, p.pod_info)
            for evt in events:
                strategy = self._is_pod_worth_requeuing(p, evt, old_pod, new_pod)
                queue = self._requeue_pod_with_queueing_strategy(p, strategy, evt.label)
                if queue == ACTIVE_Q or (self._pop_from_backoff_q and queue == BACKOFF_Q):
                    break
            return
        self._move_to_active_q(
            self.new_queued_pod_info(new_pod), EVENT_UNSCHEDULED_POD_UPDATE.label
        )

    def delete(self, pod: Pod) -> None:
        """Forget an unscheduled pod (and its nomination); unknown pods are ignored."""
        self._nominator.delete_nominated_pod_if_exists(pod)
        key = pod.key
        if self._active.delete(key) or self._backoff.delete(key):
            return
        self._unschedulable.pop(key, None)
        self._nominated_touch(key)
        self._cross_topology_keys.discard(key)

    # ------------------------------------------------------------------ nominator

    def add_nominated_pod(self, pod_info: PodInfo, nominating_info: NominatingInfo | None) -> None:
        self._nominator.add_nominated_pod(pod_info, nominating_info)

    def delete_nominated_pod_if_exists(self, pod: Pod) -> None:
        self._nominator.delete_nominated_pod_if_exists(pod)

    def update_nominated_pod(self, old_pod: Pod | None, new_pod_info: PodInfo) -> None:
        self._nominator.update_nominated_pod(old_pod, new_pod_info)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        """Copies of the PodInfos of the pods nominated to ``node_name``, in nomination order,
        taken from the queue (a pod not queued is represented by its name and UID only)."""
        return [
            self._nominated_pod_to_info(ref).copy()
            for ref in self._nominator.nominated_pods_for_node(node_name)
        ]

    def nominated_filter_keys(self, min_priority: int, exclude_uid: str) -> NominatedKeys:
        """node name -> (pod, pod_level) of the pods nominated there with at least
        ``min_priority``, ``exclude_uid`` left out: what the two-pass filter adds. Bound to
        the queue as it is now and remembered per node, for one scheduling cycle's lookups
        (the queue does not change during a cycle)."""
        return NominatedKeys(
            self._nominated_memo, self._nominated_memo_keys, self._nominated_entry,
            min_priority, exclude_uid, self._nominated_log,
            self._nominator.nominated_pod_to_node.__contains__,
        )

    def _nominated_entry(self, node_name: str) -> _NominatedEntry:
        """The pods nominated to ``node_name`` as found in the queue (as
        ``_nominated_pod_to_info``): (pod, pod_level) each, their least priority, UIDs, keys."""
        # The heaps' own index and items (a method call per lookup costs more than the lookup).
        active = self._active.heap
        backoff = self._backoff.pod_backoff_q
        error_backoff = self._backoff.pod_error_backoff_q
        unschedulable = self._unschedulable.get
        out: list[tuple[Pod, bool]] = []
        uids: list[str] = []
        keys: list[str] = []
        least = _NO_PRIORITY
        for ref in self._nominator.nominated_pods.get(node_name, ()):
            key = ref.key
            i = active._index.get(key)  # same order as the sub-queues' get()
            if i is not None:
                p: QueuedPodInfo | None = active._items[i]
            else:
                p = unschedulable(key)
                if p is None:
                    i = backoff._index.get(key)
                    if i is not None:
                        p = backoff._items[i]
                    else:
                        i = error_backoff._index.get(key)
                        p = None if i is None else error_backoff._items[i]
            pi = PodInfo(ref.to_pod()) if p is None else p.pod_info
            pod = pi.pod
            least = min(least, pod.spec.priority or 0)
            out.append((pod, pi.pod_level))
            uids.append(ref.uid)
            keys.append(key)
        return tuple(out), least, tuple(uids), tuple(keys)

    def _nominated_touch(self, key: str) -> None:
        """The pod queued under ``key`` was added, removed or replaced: drop the memoized
        nominated pods of the nodes it is part of."""
        nodes = self._nominated_memo_keys.pop(key, None)
        if nodes is not None:
            memo = self._nominated_memo
            add = self._nominated_log.add
            for node_name in nodes:
                memo.pop(node_name, None)
                add(node_name)

    def _nominated_memo_drop(self, node_name: str) -> None:
        """``node_name``'s nominations change: drop its memoized nominated pods."""
        self._nominated_memo.pop(node_name, None)
        self._nominated_log.add(node_name)

    def _nominated_pod_to_info(self, ref: PodRef) -> PodInfo:
        key = ref.key
        p = self._active.get(key) or self._unschedulable.get(key) or self._backoff.get(key)
        if p is not None:
            return p.pod_info
        return PodInfo(ref.to_pod())

    # ------------------------------------------------------------------ introspection

    def get_pod(self, name: str, namespace: str) -> QueuedPodInfo | None:
        key = f"{namespace}/{name}"
        return self._backoff.get(key) or self._unschedulable.get(key) or self._active.get(key)

    def pods_in_active_q(self) -> list[Pod]:
        return [p.pod for p in self._active.heap.items()]

    def pods_in_backoff_q(self) -> list[Pod]:
        return [p.pod for p in self._backoff.pod_infos()]

    def unschedulable_pods(self) -> list[Pod]:
        return [p.pod for p in self._unschedulable.values()]

    def unschedulable_pod_infos(self) -> list[QueuedPodInfo]:
        return list(self._unschedulable.values())

    def in_flight_pods(self) -> list[Pod]:
        return self._active.in_flight.pods()

    def in_flight_events(self) -> list[InFlightEvent | Pod]:
        return self._active.in_flight.entries()

    def pending_pods(self) -> tuple[list[Pod], str]:
        """All queued pods (activeQ, backoffQ, unschedulable) and a one-line summary."""
        active = self.pods_in_active_q()
        backoff = self.pods_in_backoff_q()
        unsched = self.unschedulable_pods()
        summary = (
            f"activeQ:{len(active)}; backoffQ:{len(backoff)}; unschedulablePods:{len(unsched)}"
        )
        return active + backoff + unsched, summary

    def pending_pods_count(self) -> dict[str, int]:
        """The scheduler_pending_pods gauge per queue: active, backoff, unschedulable, gated."""
        gated = sum(1 for p in self._unschedulable.values() if p.gated())
        return {
            ACTIVE: len(self._active),
            BACKOFF: len(self._backoff),
            UNSCHEDULABLE: len(self._unschedulable) - gated,
            GATED: gated,
        }

    def where_is(self, pod: Pod) -> list[str]:
        """The places that hold ``pod`` (by key in the queues, by UID in flight)."""
        out: list[str] = []
        key = pod.key
        if self._active.has(key):
            out.append(ACTIVE_Q)
        if self._backoff.has(key):
            out.append(BACKOFF_Q)
        if key in self._unschedulable:
            out.append(UNSCHEDULABLE_Q)
        if pod.uid in self._active.in_flight:
            out.append("InFlight")
        return out

    def check_invariants(self) -> None:
        """Assert that the internal indexes agree (heaps, maps, in-flight log): for tests."""
        self._active.heap.check()
        self._backoff.pod_backoff_q.check()
        self._backoff.pod_error_backoff_q.check()
        active: set[str] = set(self._active.heap.keys())
        backoff: set[str] = set(self._backoff.pod_backoff_q.keys())
        error_backoff: set[str] = set(self._backoff.pod_error_backoff_q.keys())
        unsched: set[str] = set(self._unschedulable)
        assert not active & backoff and not active & error_backoff and not active & unsched
        assert not backoff & error_backoff and not (backoff | error_backoff) & unsched
        for key, p in self._unschedulable.items():
            assert p.key == key
            if p.pod_info.required_affinity_terms or POD_TOPOLOGY_SPREAD in p.unschedulable_plugins:
                assert key in self._cross_topology_keys, key
        assert len(self._active.in_flight.pods()) == len(self._active.in_flight)


NominatedKey = tuple[tuple[Pod, bool], ...]


class NominatedKeys:
    """One cycle's node name -> nominated pods the two-pass filter adds (see
    ``SchedulingQueue.nominated_filter_keys``), with the queue's log of the nodes whose
    answer may have changed since (``log``)."""

    __slots__ = ("_cycle", "_find", "_memo", "_memo_keys", "_min_priority", "_exclude_uid",
                 "log", "is_nominated")

    def __init__(
        self,
        memo: dict[str, _NominatedEntry],
        memo_keys: dict[str, set[str]],
        find: Callable[[str], _NominatedEntry],
        min_priority: int,
        exclude_uid: str,
        log: NominationLog | None = None,
        is_nominated: Callable[[str], bool] | None = None,
    ) -> None:
        self.log = log
        """Nodes whose answer may have changed, for callers keeping results across cycles."""
        self.is_nominated = is_nominated
        """Whether a pod (by UID) is nominated to some node."""
        self._memo = memo
        self._memo_keys = memo_keys
        self._find = find
        self._min_priority = min_priority
        self._exclude_uid = exclude_uid
        self._cycle: dict[str, NominatedKey] = {}

    def __call__(self, node_name: str) -> NominatedKey:
        found = self._cycle.get(node_name)
        if found is not None:
            return found
        e = self._memo.get(node_name)
        if e is None:
            e = self._memo[node_name] = self._find(node_name)
            memo_keys = self._memo_keys
            for k in e[3]:
                memo_keys.setdefault(k, set()).add(node_name)
        full, least, uids, _ = e
        exclude_uid, min_priority = self._exclude_uid, self._min_priority
        if least >= min_priority and exclude_uid not in uids:
            found = full
        else:
            found = tuple(
                pl for pl, u in zip(full, uids, strict=True)
                if u != exclude_uid and (pl[0].spec.priority or 0) >= min_priority
            )
        self._cycle[node_name] = found
        return found


_NOMINATION_LOG_MAX = 4096


class NominationLog:
    """The nodes whose memoized nominated pods were dropped (their nominations changed, or
    one of their pods was added to, removed from or replaced in a sub-queue), in order: a
    node not logged since a mark has the nominated pods it had then. Marks older than what
    is kept, or taken before a ``reset`` (a fork took another queue's state), answer None."""

    __slots__ = ("_names", "_floor")

    def __init__(self) -> None:
        self._names: list[str] = []
        self._floor = 0
        """The mark of ``_names[0]``."""

    def mark(self) -> int:
        return self._floor + len(self._names)

    def since(self, mark: int) -> list[str] | None:
        """The nodes logged since ``mark`` (maybe repeated), or None when not known."""
        i = mark - self._floor
        if i < 0 or i > len(self._names):
            return None
        return self._names[i:]

    def add(self, node_name: str) -> None:
        names = self._names
        names.append(node_name)
        if len(names) > _NOMINATION_LOG_MAX:
            cut = len(names) // 2
            del names[:cut]
            self._floor += cut

    def reset(self) -> None:
        """Forget everything: every earlier mark answers None."""
        self._floor += len(self._names) + 1
        self._names.clear()
