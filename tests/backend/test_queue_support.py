"""Builders shared by the scheduling-queue tests (no tests here)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from kschedlib.api.meta import ObjectMeta
from kschedlib.api.pod import (
    Affinity,
    Container,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodSchedulingGate,
    PodSpec,
    PodStatus,
    ResourceRequirements,
    Toleration,
)
from kschedlib.api.quantity import parse_quantity
from kschedlib.api.selectors import LabelSelector
from kschedlib.backend.queue import PriorityQueue
from kschedlib.backend.queue.hints import HintRegistration
from kschedlib.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kschedlib.framework.handle import FakeClock
from kschedlib.framework.interface import PreEnqueuePlugin
from kschedlib.framework.status import Status, unresolvable

PROFILE = "default-scheduler"
START = 1_700_000_000.0  # a whole second, so backoff windows are easy to reason about

NODE_ADD = ClusterEvent(EventResource.Node, ActionType.Add)
PV_ADD = ClusterEvent(EventResource.PersistentVolume, ActionType.Add)
PV_UPDATE = ClusterEvent(EventResource.PersistentVolume, ActionType.Update)
PVC_ADD = ClusterEvent(EventResource.PersistentVolumeClaim, ActionType.Add)
CSI_NODE_UPDATE = ClusterEvent(EventResource.CSINode, ActionType.Update)


def make_pod(
    name: str,
    namespace: str = "ns1",
    *,
    uid: str | None = None,
    priority: int | None = None,
    labels: Mapping[str, str] | None = None,
    gates: Sequence[str] = (),
    nominated_node_name: str = "",
    node_name: str = "",
    tolerations: int = 0,
    cpu: str | None = None,
    affinity_to: Mapping[str, str] | None = None,
    scheduler_name: str = PROFILE,
) -> Pod:
    containers: tuple[Container, ...] = ()
    if cpu is not None:
        containers = (
            Container(
                name="c",
                resources=ResourceRequirements(requests={"cpu": parse_quantity(cpu)}),
            ),
        )
    affinity = None
    if affinity_to is not None:
        term = PodAffinityTerm(
            label_selector=LabelSelector(match_labels=dict(affinity_to)),
            topology_key="kubernetes.io/hostname",
        )
        affinity = Affinity(
            pod_affinity=PodAffinity(required_during_scheduling_ignored_during_execution=(term,))
        )
    return Pod(
        metadata=ObjectMeta(
            name=name,
            namespace=namespace,
            uid=uid if uid is not None else f"{namespace}-{name}-uid",
            labels=dict(labels or {}),
        ),
        spec=PodSpec(
            priority=priority,
            scheduling_gates=tuple(PodSchedulingGate(name=g) for g in gates),
            node_name=node_name,
            tolerations=tuple(
                Toleration(key=f"k{i}", operator="Exists") for i in range(tolerations)
            ),
            containers=containers,
            affinity=affinity,
            scheduler_name=scheduler_name,
        ),
        status=PodStatus(nominated_node_name=nominated_node_name),
    )


def evolve_meta(pod: Pod, **changes: Any) -> Pod:
    return attrs.evolve(pod, metadata=attrs.evolve(pod.metadata, **changes))


def evolve_spec(pod: Pod, **changes: Any) -> Pod:
    return attrs.evolve(pod, spec=attrs.evolve(pod.spec, **changes))


class AllowlistPlugin:
    """The Go tests' preEnqueuePlugin: admits pods carrying one of the allowed label keys."""

    def __init__(self, allowlists: Iterable[str] = (), name: str = "preEnqueuePlugin") -> None:
        self.allowlists = list(allowlists)
        self._name = name
        self.calls = 0

    @property
    def name(self) -> str:
        return self._name

    def pre_enqueue(self, pod: Pod) -> Status | None:
        self.calls += 1
        if any(label in pod.metadata.labels for label in self.allowlists):
            return None
        return unresolvable("pod name not in allowlists")


class GatesPlugin:
    """SchedulingGates' PreEnqueue: gated while spec.schedulingGates is not empty."""

    name = "SchedulingGates"

    def pre_enqueue(self, pod: Pod) -> Status | None:
        gates = [g.name for g in pod.spec.scheduling_gates]
        if not gates:
            return None
        return unresolvable(f"waiting for scheduling gates: [{' '.join(gates)}]")


GATES_EVENT = ClusterEvent(
    EventResource.Pod,
    ActionType.UpdatePodToleration | ActionType.UpdatePodSchedulingGatesEliminated,
)


class HintCounter:
    """Hint functions that count their calls."""

    def __init__(self) -> None:
        self.count = 0

    def queue(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        self.count += 1
        return QueueingHint.Queue

    def skip(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        self.count += 1
        return QueueingHint.QueueSkip

    def error(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        self.count += 1
        raise RuntimeError("unexpected error")


def hint_queue(pod: Pod, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.Queue


def hint_skip(pod: Pod, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.QueueSkip


def new_queue(
    clock: FakeClock | None = None,
    hints: Sequence[HintRegistration] = (),
    pre_enqueue: Sequence[PreEnqueuePlugin] = (),
    **kwargs: Any,
) -> PriorityQueue:
    return PriorityQueue(
        clock=clock if clock is not None else FakeClock(START),
        pre_enqueue_plugins={PROFILE: list(pre_enqueue)},
        queueing_hints={PROFILE: list(hints)},
        **kwargs,
    )


def names(pods: Iterable[Pod]) -> list[str]:
    return sorted(p.metadata.name for p in pods)
