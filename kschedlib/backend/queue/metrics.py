"""The scheduling queue's metrics as plain counters a host can read (no Prometheus)."""

from __future__ import annotations

from collections import Counter

import attrs

ACTIVE = "active"
BACKOFF = "backoff"
UNSCHEDULABLE = "unschedulable"
GATED = "gated"

QUEUEING_HINT_QUEUE = "Queue"
QUEUEING_HINT_SKIP = "QueueSkip"
QUEUEING_HINT_ERROR = "Error"

POD_POPPED_IN_FLIGHT_EVENT = "PodPopped"


@attrs.define(slots=True)
class QueueMetrics:
    """Counters mirroring kube-scheduler's queue metrics; pending pods per queue are computed on
    demand by ``PriorityQueue.pending_pods_count()``."""

    # incoming_pods[(queue, event)]: scheduler_queue_incoming_pods_total.
    # scheduling_attempts[profile]: pops, i.e. scheduling cycles started.
    # unschedulable_reasons[(plugin, profile)]: the scheduler_unschedulable_pods gauge.
    # in_flight_events[label]: scheduler_inflight_events.
    # queueing_hint_results[(plugin, event, result)]: QueueingHint calls by result.
    # pre_enqueue_results[(plugin, code)]: PreEnqueue calls by status code.

    incoming_pods: Counter[tuple[str, str]] = attrs.field(factory=Counter)
    scheduling_attempts: Counter[str] = attrs.field(factory=Counter)
    unschedulable_reasons: Counter[tuple[str, str]] = attrs.field(factory=Counter)
    in_flight_events: Counter[str] = attrs.field(factory=Counter)
    queueing_hint_results: Counter[tuple[str, str, str]] = attrs.field(factory=Counter)
    pre_enqueue_results: Counter[tuple[str, str]] = attrs.field(factory=Counter)

    def copy_from(self, other: QueueMetrics) -> None:
        """Overwrite every counter with a copy of ``other``'s (forks, rollbacks)."""
        for f in attrs.fields(QueueMetrics):
            mine = getattr(self, f.name)
            mine.clear()
            mine.update(getattr(other, f.name))

    def incoming(self, queue: str, event: str, n: int = 1) -> None:
        self.incoming_pods[(queue, event)] += n

    def total_scheduling_attempts(self) -> int:
        return sum(self.scheduling_attempts.values())
