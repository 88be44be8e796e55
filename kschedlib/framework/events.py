"""Cluster events and QueueingHints: how plugins say which events may make a pod schedulable."""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable
from typing import Any

import attrs

from kschedlib.api.pod import Pod


class ActionType(enum.IntFlag):
    """framework.ActionType: what happened to an object."""

    Add = 1 << 0
    Delete = 1 << 1
    UpdateNodeAllocatable = 1 << 2
    UpdateNodeLabel = 1 << 3
    UpdateNodeTaint = 1 << 4
    UpdateNodeCondition = 1 << 5
    UpdateNodeAnnotation = 1 << 6
    UpdatePodLabel = 1 << 7
    UpdatePodScaleDown = 1 << 8
    UpdatePodToleration = 1 << 9
    UpdatePodSchedulingGatesEliminated = 1 << 10
    UpdatePodGeneratedResourceClaim = 1 << 11
    UpdatePodNominatedNodeName = 1 << 12
    UpdateNodeDeclaredFeature = 1 << 13

    All = (1 << 14) - 1
    Update = (
        UpdateNodeAllocatable
        | UpdateNodeLabel
        | UpdateNodeTaint
        | UpdateNodeCondition
        | UpdateNodeAnnotation
        | UpdatePodLabel
        | UpdatePodScaleDown
        | UpdatePodToleration
        | UpdatePodSchedulingGatesEliminated
        | UpdatePodGeneratedResourceClaim
        | UpdatePodNominatedNodeName
        | UpdateNodeDeclaredFeature
    )


class EventResource(str, enum.Enum):
    """framework.EventResource: the kind of object an event is about."""

    Pod = "Pod"
    AssignedPod = "AssignedPod"
    UnscheduledPod = "UnschedulablePod"
    Node = "Node"
    PersistentVolume = "PersistentVolume"
    PersistentVolumeClaim = "PersistentVolumeClaim"
    CSINode = "storage.k8s.io/CSINode"
    CSIDriver = "storage.k8s.io/CSIDriver"
    VolumeAttachment = "storage.k8s.io/VolumeAttachment"
    CSIStorageCapacity = "storage.k8s.io/CSIStorageCapacity"
    StorageClass = "storage.k8s.io/StorageClass"
    ResourceClaim = "resource.k8s.io/ResourceClaim"
    ResourceSlice = "resource.k8s.io/ResourceSlice"
    DeviceClass = "resource.k8s.io/DeviceClass"
    Namespace = "Namespace"
    PodDisruptionBudget = "PodDisruptionBudget"
    Workload = "scheduling.k8s.io/Workload"
    WildCard = "*"


@attrs.define(slots=True, frozen=True)
class ClusterEvent:
    """An event a plugin registers for, or one that happened."""

    resource: EventResource
    action_type: ActionType
    custom_label: str = ""

    @property
    def label(self) -> str:
        if self.custom_label:
            return self.custom_label
        return _label(self.resource, self.action_type)

    def is_wildcard(self) -> bool:
        return self.resource == EventResource.WildCard and self.action_type == ActionType.All

    def match(self, incoming: ClusterEvent) -> bool:
        """Whether this registered event covers ``incoming`` (framework.ClusterEvent.Match)."""
        if self.is_wildcard():
            return True
        if not (self.action_type & incoming.action_type):
            return False
        if self.resource == EventResource.WildCard or self.resource == incoming.resource:
            return True
        # A registration for Pod covers events of assigned and unscheduled pods.
        return self.resource == EventResource.Pod and incoming.resource in (
            EventResource.AssignedPod,
            EventResource.UnscheduledPod,
        )


@functools.lru_cache(maxsize=1024)
def _label(resource: EventResource, action_type: ActionType) -> str:
    """The label of an event without a custom one (computed once per pair)."""
    return f"{resource.value}{_action_label(action_type)}"


def _action_label(a: ActionType) -> str:
    if a == ActionType.All:
        return "All"
    names = [m.name for m in ActionType if m.name not in ("All", "Update") and m & a]
    if len(names) == 1:
        return names[0] or ""
    return "Update" if not (a & (ActionType.Add | ActionType.Delete)) else "|".join(n or "" for n in names)


class QueueingHint(enum.IntEnum):
    """What a plugin's hint says about an event for a pod it rejected."""

    QueueSkip = 0
    Queue = 1


QueueingHintFn = Callable[[Pod, Any, Any], QueueingHint]
"""(pod, old_obj, new_obj) -> QueueingHint. Raising counts as Queue."""


@attrs.define(slots=True, frozen=True)
class ClusterEventWithHint:
    event: ClusterEvent
    queueing_hint_fn: QueueingHintFn | None = None


WILDCARD_EVENT = ClusterEvent(EventResource.WildCard, ActionType.All, "WildCardEvent")
UNSCHEDULABLE_TIMEOUT = ClusterEvent(
    EventResource.WildCard, ActionType.All, "UnschedulableTimeout"
)
FORCE_ACTIVATE = ClusterEvent(EventResource.WildCard, ActionType.All, "ForceActivate")
EVENTS_TO_REGISTER_ALL = (ClusterEventWithHint(WILDCARD_EVENT),)
