"""The scheduling queue (pkg/scheduler/backend/queue): PriorityQueue, backoff, nominator."""

from kschedlib.backend.queue.active import InFlightEvent
from kschedlib.backend.queue.backoff import BACKOFF_ORDERING_WINDOW, BackoffQueue, backoff_duration
from kschedlib.backend.queue.heap import Heap
from kschedlib.backend.queue.hints import HintRegistration, build_queueing_hints
from kschedlib.backend.queue.metrics import QueueMetrics
from kschedlib.backend.queue.nominator import (
    CLEAR_NOMINATED_NODE,
    NominatingInfo,
    NominatingMode,
    Nominator,
    PodRef,
)
from kschedlib.backend.queue.queue_events import (
    BACKOFF_COMPLETE,
    EVENT_ASSIGNED_POD_ADD,
    EVENT_ASSIGNED_POD_DELETE,
    EVENT_ASSIGNED_POD_UPDATE,
    EVENT_FORCE_ACTIVATE,
    EVENT_UNSCHEDULABLE_TIMEOUT,
    EVENT_UNSCHEDULED_POD_ADD,
    EVENT_UNSCHEDULED_POD_DELETE,
    EVENT_UNSCHEDULED_POD_UPDATE,
    FORCE_ACTIVATE_LABEL,
    POP_FROM_BACKOFF_Q,
    SCHEDULE_ATTEMPT_FAILURE,
    UNSCHEDULABLE_TIMEOUT_LABEL,
    pod_scheduling_properties_change,
)
from kschedlib.backend.queue.scheduling_queue import (
    ACTIVE_Q,
    BACKOFF_Q,
    DEFAULT_POD_INITIAL_BACKOFF,
    DEFAULT_POD_MAX_BACKOFF,
    DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
    UNSCHEDULABLE_Q,
    PriorityQueue,
    QueueingStrategy,
    priority_sort_less,
)
from kschedlib.backend.queue.ticker import QueueTicker

__all__ = [
    "ACTIVE_Q",
    "BACKOFF_COMPLETE",
    "BACKOFF_ORDERING_WINDOW",
    "BACKOFF_Q",
    "CLEAR_NOMINATED_NODE",
    "DEFAULT_POD_INITIAL_BACKOFF",
    "DEFAULT_POD_MAX_BACKOFF",
    "DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION",
    "EVENT_ASSIGNED_POD_ADD",
    "EVENT_ASSIGNED_POD_DELETE",
    "EVENT_ASSIGNED_POD_UPDATE",
    "EVENT_FORCE_ACTIVATE",
    "EVENT_UNSCHEDULABLE_TIMEOUT",
    "EVENT_UNSCHEDULED_POD_ADD",
    "EVENT_UNSCHEDULED_POD_DELETE",
    "EVENT_UNSCHEDULED_POD_UPDATE",
    "FORCE_ACTIVATE_LABEL",
    "POP_FROM_BACKOFF_Q",
    "SCHEDULE_ATTEMPT_FAILURE",
    "UNSCHEDULABLE_Q",
    "UNSCHEDULABLE_TIMEOUT_LABEL",
    "BackoffQueue",
    "Heap",
    "HintRegistration",
    "InFlightEvent",
    "NominatingInfo",
    "NominatingMode",
    "Nominator",
    "PodRef",
    "PriorityQueue",
    "QueueMetrics",
    "QueueTicker",
    "QueueingStrategy",
    "backoff_duration",
    "build_queueing_hints",
    "pod_scheduling_properties_change",
    "priority_sort_less",
]
