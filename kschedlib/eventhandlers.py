"""Which scheduling-relevant properties changed between two versions of a node
(framework.NodeSchedulingPropertiesChange)."""

from __future__ import annotations

from kschedlib.api.node import Node
from kschedlib.framework.events import ActionType, ClusterEvent, EventResource

EVENT_NODE_ADD = ClusterEvent(EventResource.Node, ActionType.Add)
EVENT_NODE_DELETE = ClusterEvent(EventResource.Node, ActionType.Delete)


def _node_event(action: ActionType) -> ClusterEvent:
    return ClusterEvent(EventResource.Node, action)


def node_scheduling_properties_change(new: Node, old: Node) -> list[ClusterEvent]:
    events: list[ClusterEvent] = []
    if new.spec.unschedulable != old.spec.unschedulable:
        events.append(_node_event(ActionType.UpdateNodeTaint))
    if new.status.allocatable != old.status.allocatable:
        events.append(_node_event(ActionType.UpdateNodeAllocatable))
    if new.metadata.labels != old.metadata.labels:
        events.append(_node_event(ActionType.UpdateNodeLabel))
    if new.spec.taints != old.spec.taints:
        events.append(_node_event(ActionType.UpdateNodeTaint))
    if {c.type: c.status for c in new.status.conditions} != {
        c.type: c.status for c in old.status.conditions
    }:
        events.append(_node_event(ActionType.UpdateNodeCondition))
    if new.metadata.annotations != old.metadata.annotations:
        events.append(_node_event(ActionType.UpdateNodeAnnotation))
    if new.status.declared_features != old.status.declared_features:
        events.append(_node_event(ActionType.UpdateNodeDeclaredFeature))
    return events


RESOURCE_OF_KIND = {
    "PersistentVolume": EventResource.PersistentVolume,
    "PersistentVolumeClaim": EventResource.PersistentVolumeClaim,
    "StorageClass": EventResource.StorageClass,
    "CSINode": EventResource.CSINode,
    "Namespace": EventResource.Namespace,
    "PodDisruptionBudget": EventResource.PodDisruptionBudget,
    "Workload": EventResource.Workload,
    "ResourceClaim": EventResource.ResourceClaim,
    "ResourceSlice": EventResource.ResourceSlice,
    "DeviceClass": EventResource.DeviceClass,
}


def object_event(kind: str, action: ActionType) -> ClusterEvent | None:
    """The cluster event for an add/update/delete of another object, if the scheduler has one."""
    res = RESOURCE_OF_KIND.get(kind)
    return None if res is None else ClusterEvent(res, action)
