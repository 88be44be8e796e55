"""The queue's own events and labels, and how a pod update maps to ClusterEvents."""

from __future__ import annotations

from kschedlib.api.pod import Pod
from kschedlib.api.quantity import Quantity
from kschedlib.api.resource import pod_requests
from kschedlib.framework.events import (
    FORCE_ACTIVATE,
    UNSCHEDULABLE_TIMEOUT,
    ActionType,
    ClusterEvent,
    EventResource,
)

# Labels of queue moves that are not cluster events (framework/events.go).
SCHEDULE_ATTEMPT_FAILURE = "ScheduleAttemptFailure"
BACKOFF_COMPLETE = "BackoffComplete"
POP_FROM_BACKOFF_Q = "PopFromBackoffQ"
FORCE_ACTIVATE_LABEL = FORCE_ACTIVATE.label
UNSCHEDULABLE_TIMEOUT_LABEL = UNSCHEDULABLE_TIMEOUT.label

EVENT_ASSIGNED_POD_ADD = ClusterEvent(EventResource.AssignedPod, ActionType.Add)
EVENT_ASSIGNED_POD_UPDATE = ClusterEvent(EventResource.AssignedPod, ActionType.Update)
EVENT_ASSIGNED_POD_DELETE = ClusterEvent(EventResource.AssignedPod, ActionType.Delete)
EVENT_UNSCHEDULED_POD_ADD = ClusterEvent(EventResource.UnscheduledPod, ActionType.Add)
EVENT_UNSCHEDULED_POD_UPDATE = ClusterEvent(EventResource.UnscheduledPod, ActionType.Update)
EVENT_UNSCHEDULED_POD_DELETE = ClusterEvent(EventResource.UnscheduledPod, ActionType.Delete)
EVENT_UNSCHEDULABLE_TIMEOUT = UNSCHEDULABLE_TIMEOUT
EVENT_FORCE_ACTIVATE = FORCE_ACTIVATE

POD_SCALE_DOWN = ClusterEvent(EventResource.Pod, ActionType.UpdatePodScaleDown)


def _milli(v: Quantity) -> int:
    """resource.Quantity.MilliValue: milli-units rounded up (Go int64)."""
    return v.milli_value()


def _scaled_down(new_pod: Pod, old_pod: Pod) -> bool:
    new = pod_requests(new_pod)
    for name, old_req in pod_requests(old_pod).items():
        new_req = new.get(name)
        if new_req is None or _milli(old_req) > _milli(new_req):
            return True
    return False


def pod_scheduling_properties_change(new_pod: Pod, old_pod: Pod) -> list[ClusterEvent]:
    """framework.PodSchedulingPropertiesChange: the UpdatePodXYZ events a pod update stands for
    (labels, scale-down, scheduling gates removed, tolerations added), or a plain Update."""
    resource = EventResource.AssignedPod if new_pod.spec.node_name else EventResource.UnscheduledPod
    actions: list[ActionType] = []
    if new_pod.metadata.labels != old_pod.metadata.labels:
        actions.append(ActionType.UpdatePodLabel)
    if new_pod.spec is not old_pod.spec and _scaled_down(new_pod, old_pod):
        actions.append(ActionType.UpdatePodScaleDown)
    if not new_pod.spec.scheduling_gates and old_pod.spec.scheduling_gates:
        actions.append(ActionType.UpdatePodSchedulingGatesEliminated)
    if len(new_pod.spec.tolerations) != len(old_pod.spec.tolerations):
        actions.append(ActionType.UpdatePodToleration)
    if new_pod.status.resource_claim_statuses != old_pod.status.resource_claim_statuses:
        actions.append(ActionType.UpdatePodGeneratedResourceClaim)
    if not actions:
        actions.append(ActionType.Update)
    return [ClusterEvent(resource, a) for a in actions]
