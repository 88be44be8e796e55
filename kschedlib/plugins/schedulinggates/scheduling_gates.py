"""SchedulingGates PreEnqueue: a pod waits while it carries scheduling gates."""

from __future__ import annotations

from typing import Any

from kschedlib.api.pod import Pod
from kschedlib.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kschedlib.framework.registry import PluginSpec
from kschedlib.framework.status import Status, unresolvable

NAME = "SchedulingGates"


def gates_message(pod: Pod) -> str:
    """The PreEnqueue reason, formatted as Go's ``%v`` of a string slice."""
    return f"waiting for scheduling gates: [{' '.join(g.name for g in pod.spec.scheduling_gates)}]"


class SchedulingGates:
    """Rejects at PreEnqueue any pod whose ``spec.schedulingGates`` is not empty."""

    __slots__ = ()

    @property
    def name(self) -> str:
        return NAME

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not pod.spec.scheduling_gates:
            return None
        return unresolvable(gates_message(pod))

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, ActionType.UpdatePodSchedulingGatesEliminated),
                is_schedulable_after_update_pod_scheduling_gates_eliminated,
            )
        ]


def is_schedulable_after_update_pod_scheduling_gates_eliminated(
    pod: Pod, old_obj: Any, new_obj: Any
) -> QueueingHint:
    """Only the gated pod's own update (its gates removed) can make it schedulable."""
    if not isinstance(new_obj, Pod):
        raise TypeError(f"expected Pod, got {type(new_obj).__name__}")
    return QueueingHint.Queue if new_obj.uid == pod.uid else QueueingHint.QueueSkip


def new(args: Any, handle: Any) -> SchedulingGates:
    return SchedulingGates()


PLUGINS: tuple[PluginSpec, ...] = (PluginSpec(NAME, new),)
