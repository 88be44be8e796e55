"""What the rooms of the Scheduler share: the host's binder and hooks, and the state
:class:`kschedlib.scheduler.Scheduler` sets up, declared for the rooms that read it."""

from __future__ import annotations

from typing import Any, Protocol

import attrs

from kschedlib.api.pod import Pod
from kschedlib.backend.cache import Cache
from kschedlib.backend.queue.scheduling_queue import PriorityQueue
from kschedlib.backend.snapshot import Snapshot
from kschedlib.backend.workloadmanager import WorkloadManager
from kschedlib.framework.batch import Batching, OpportunisticBatch
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.diagnosis import Diagnosis
from kschedlib.framework.extender import Extender
from kschedlib.framework.handle import ObjectStore
from kschedlib.framework.queued_pod_info import QueuedPodInfo
from kschedlib.framework.runtime import Framework
from kschedlib.results import EventLog, Explanation, SchedulerMetrics
from kschedlib.schedule_one import ScheduleResult, SchedulingAlgorithm


class Binder(Protocol):
    """The host's binder: ``bind`` raising means the binding failed."""

    def bind(self, pod: Pod, node_name: str) -> None: ...


class HostHooks(Protocol):
    """Optional host callbacks for side effects the real scheduler makes through the API."""

    def delete_pod(self, pod: Pod, reason: str) -> None: ...


class AcceptingBinder:
    """A binder that accepts every binding (simulation)."""

    def bind(self, pod: Pod, node_name: str) -> None:
        return None


@attrs.define(slots=True)
class _PendingBinding:
    """A pod past its scheduling cycle whose binding cycle waits on Permit."""

    fwk: Framework
    state: CycleState
    qpi: QueuedPodInfo
    assumed: Pod
    host: str
    explanation: Explanation | None


class SchedulerBase:
    """The Scheduler's state as its rooms (event handlers, cycles, explanations) see it."""

    # Set by Scheduler.__init__.
    clock: Any
    objects: ObjectStore
    cache: Cache
    snapshot: Snapshot
    queue: PriorityQueue
    algorithm: SchedulingAlgorithm
    frameworks: dict[str, Framework]
    extenders: list[Extender]
    workload_manager: WorkloadManager
    events: EventLog
    metrics: SchedulerMetrics
    explanations: dict[str, Explanation]
    explanation_history: dict[str, list[Explanation]]
    explain_enabled: bool
    _explain_keys: frozenset[str] | None
    _explain_top_nodes: int | None
    _explain_full_pods: int | None
    _explain_order: dict[str, None]
    _pending: dict[str, Pod]
    _pending_keys: dict[str, str]
    _foreign: dict[str, Pod]
    _held: dict[str, Pod]
    _waiting: dict[str, _PendingBinding]
    _victims: list[Pod]
    _in_cycle: tuple[CycleState, Pod, str] | None
    _gang: bool
    _declared: bool
    _nnn_for_expectation: bool
    _clear_nnn_after_binding: bool
    _track_workloads: bool
    batching: Batching | None
    _batch: OpportunisticBatch | None
    """The profile's opportunistic batch during a scheduling cycle (None outside one)."""

    # What one room calls in another (each defined once, in the room named).

    def framework_for(self, pod: Pod) -> Framework | None:  # scheduler.py
        raise NotImplementedError

    def responsible_for(self, pod: Pod) -> bool:  # scheduler.py
        raise NotImplementedError

    def tick(self) -> None:  # scheduler.py
        raise NotImplementedError

    def _lookup_pending(self, namespace: str, name: str) -> Pod | None:  # scheduler.py
        raise NotImplementedError

    def _cached_pods(self) -> list[Pod]:  # scheduler.py
        raise NotImplementedError

    def _cached(self, pod: Pod) -> Pod | None:  # eventhandlers.py
        raise NotImplementedError

    def _drop_pending(self, pod: Pod) -> None:  # eventhandlers.py
        raise NotImplementedError

    def _find_pod(self, pod: Pod | str) -> Pod | None:  # eventhandlers.py
        raise NotImplementedError

    def nominated_node_name_changed(self, old: Pod, new: Pod) -> None:  # eventhandlers.py
        raise NotImplementedError

    def _explain(  # explain.py
        self, fwk: Framework, pod: Pod, d: Diagnosis, result: ScheduleResult | None
    ) -> Explanation:
        raise NotImplementedError

    def _waiting_message(self, fwk: Framework, pod: Pod) -> str:  # explain.py
        raise NotImplementedError

    def add_pod(self, pod: Any) -> None:  # eventhandlers.py
        raise NotImplementedError
