"""PreEnqueue and EnqueueExtensions: hold pods whose claims do not exist yet, and the events
(with queueing hints) that may make a pod schedulable."""

from __future__ import annotations

from typing import Any

from kschedlib.api.pod import Pod
from kschedlib.api.resource_v1 import ResourceClaim
from kschedlib.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kschedlib.framework.status import Status
from kschedlib.plugins.dynamicresources.base import DynamicResourcesBase
from kschedlib.plugins.dynamicresources.state import _field, _unresolvable


class EnqueueMixin(DynamicResourcesBase):
    """PreEnqueue, EventsToRegister and the queueing hints."""

    __slots__ = ()

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not pod.spec.resource_claims:
            return None
        _, err = self.pod_resource_claims(pod)
        return _unresolvable(err) if err else None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        add_update = ActionType.Add | ActionType.Update
        node_actions = (
            ActionType.Add | ActionType.UpdateNodeLabel | ActionType.UpdateNodeAllocatable
        )
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.Node, node_actions)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.ResourceClaim, add_update),
                self.is_schedulable_after_claim_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, ActionType.UpdatePodGeneratedResourceClaim),
                self.is_schedulable_after_pod_change,
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.DeviceClass, add_update)),
            ClusterEventWithHint(ClusterEvent(EventResource.ResourceSlice, add_update)),
        ]

    def is_schedulable_after_claim_change(
        self, pod: Pod, old_obj: Any, new_obj: Any
    ) -> QueueingHint:
        """Queue when a claim got deallocated, or one the pod uses appeared or changed status.
        Objects other than ResourceClaims are an error (the queue then requeues the pod)."""
        if not isinstance(new_obj, ResourceClaim) or (
            old_obj is not None and not isinstance(old_obj, ResourceClaim)
        ):
            bad = new_obj if not isinstance(new_obj, ResourceClaim) else old_obj
            raise TypeError(f"expected ResourceClaim, got {type(bad).__name__}")
        claims, err = self.pod_resource_claims(pod)
        if err:
            return QueueingHint.QueueSkip
        new_uid = _field(new_obj, "metadata", "uid")
        new_key = (_field(new_obj, "metadata", "namespace"), _field(new_obj, "metadata", "name"))
        uses = any(
            c.metadata.uid == new_uid if new_uid else
            (c.metadata.namespace, c.metadata.name) == new_key
            for c in claims
        )
        if (
            old_obj is not None
            and _field(old_obj, "status", "allocation") is not None
            and _field(new_obj, "status", "allocation") is None
        ):
            return QueueingHint.Queue
        if not uses:
            return QueueingHint.QueueSkip
        if old_obj is None:
            return QueueingHint.Queue
        if _field(old_obj, "status") == _field(new_obj, "status"):
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    def is_schedulable_after_pod_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """Queue when this very pod got the ResourceClaims it waited for."""
        if not isinstance(new_obj, Pod):
            raise TypeError("expected a Pod")
        if new_obj.uid != pod.uid:
            return QueueingHint.QueueSkip
        _, err = self.pod_resource_claims(new_obj)
        return QueueingHint.QueueSkip if err else QueueingHint.Queue
