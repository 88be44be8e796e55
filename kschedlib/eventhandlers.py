"""The host's cluster events into the cache and the queue (kube-scheduler's eventhandlers.go),
and which scheduling-relevant properties changed between two versions of a node
(framework.NodeSchedulingPropertiesChange)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kschedlib.api.node import Node
from kschedlib.api.objects import as_object
from kschedlib.api.pod import Pod, is_terminal, pod_priority
from kschedlib.api.scheduling import Workload, validate_workload_update
from kschedlib.backend.queue.queue_events import (
    EVENT_ASSIGNED_POD_DELETE,
    EVENT_UNSCHEDULED_POD_ADD,
    pod_scheduling_properties_change,
)
from kschedlib.errors import CacheError, InvalidObjectError
from kschedlib.framework.events import ActionType, ClusterEvent, EventResource
from kschedlib.framework.handle import ObjectStore
from kschedlib.framework.types import PodInfo
from kschedlib.scheduler_base import SchedulerBase

EVENT_NODE_ADD = ClusterEvent(EventResource.Node, ActionType.Add)


def le_priority(pod: Pod) -> Callable[[Pod], bool]:
    """getLEPriorityPreCheck: pods of lower or equal priority than ``pod``."""
    priority = pod_priority(pod)
    return lambda p: pod_priority(p) <= priority
EVENT_NODE_DELETE = ClusterEvent(EventResource.Node, ActionType.Delete)


def _node_event(action: ActionType) -> ClusterEvent:
    return ClusterEvent(EventResource.Node, action)


def node_scheduling_properties_change(new: Node, old: Node) -> list[ClusterEvent]:
    events: list[ClusterEvent] = []
    if old.spec.unschedulable and not new.spec.unschedulable:
        # Only becoming schedulable is an event: cordoning moves no pod.
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


def _as_pod(obj: Any) -> Pod:
    """A Pod from a Pod, its Kubernetes JSON as a dict or a client object."""
    return as_object(obj, Pod)  # type: ignore[no-any-return]


def _as_node(obj: Any) -> Node:
    """A Node from a Node, its Kubernetes JSON as a dict or a client object."""
    return as_object(obj, Node)  # type: ignore[no-any-return]


class EventHandlers(SchedulerBase):
    """The Scheduler's handlers of the host's events: nodes, pods, other objects."""

    # ------------------------------------------------------------------ node events

    # Unknown objects, as kube-scheduler's event handlers treat them: an update of an unknown
    # pod or node adds it (the cache's UpdateNode creates the node, the queue's Update adds
    # the pod), a delete of an unknown pod or node is ignored (kube-scheduler logs it).
    # Every method taking a Pod or Node also takes its Kubernetes JSON as a dict.

    def add_node(self, node: Node | Mapping[str, Any]) -> None:
        node = _as_node(node)
        self.cache.add_node(node)
        self.queue.move_all_to_active_or_backoff_queue(EVENT_NODE_ADD, None, node)

    def update_node(self, node: Node | Mapping[str, Any]) -> None:
        """Replace a node; an unknown node is added (kube-scheduler's cache.UpdateNode)."""
        node = _as_node(node)
        try:
            old = self.cache.get_node(node.metadata.name).node
        except (KeyError, CacheError):
            old = None
        if old is None:
            self.add_node(node)
            return
        self.cache.update_node(old, node)
        for ev in node_scheduling_properties_change(node, old):
            if ev.action_type == ActionType.UpdateNodeDeclaredFeature and not self._declared:
                continue
            self.queue.move_all_to_active_or_backoff_queue(ev, old, node)

    def delete_node(self, node: Node | Mapping[str, Any] | str) -> None:
        """A node is gone (by object or name); an unknown node is ignored."""
        name = node if isinstance(node, str) else _as_node(node).metadata.name
        try:
            old = self.cache.get_node(name).node
        except (KeyError, CacheError):
            old = None
        if old is None:
            return
        self.cache.remove_node(name)
        self.queue.move_all_to_active_or_backoff_queue(EVENT_NODE_DELETE, old, None)

    # ------------------------------------------------------------------ pod events

    def add_pod(self, pod: Pod | Mapping[str, Any]) -> None:
        """A pod appeared: assigned pods go to the cache, our pending pods to the queue.
        Terminal pods are invisible, as they are to kube-scheduler's informers."""
        pod = _as_pod(pod)
        if not pod.metadata.namespace:  # built in code: the API server requires one
            raise InvalidObjectError(
                f"pod {pod.metadata.name}", "metadata.namespace", "Required value"
            )
        if is_terminal(pod):
            return
        if pod.spec.node_name:
            self._add_assigned(pod)
        elif self.responsible_for(pod):
            if pod.uid in self._pending:
                raise CacheError(f"pod {pod.key} is already pending")
            other = self._lookup_pending(pod.metadata.namespace, pod.metadata.name)
            if other is not None:
                raise CacheError(
                    f"pod {pod.key} (uid {pod.uid!r}) has the namespace/name of pending pod "
                    f"{other.key} (uid {other.uid!r}): delete that one first"
                )
            self._pending[pod.uid] = pod
            self._pending_keys[pod.key] = pod.uid
            if self._track_workloads:
                self.workload_manager.add_pod(pod)
            self.queue.add(pod)
            if pod.status.nominated_node_name:
                self.queue.add_nominated_pod(PodInfo.of(pod), None)
            if self._gang:
                # A new pod may complete a gang that others wait for (GangScheduling).
                self.queue.move_all_to_active_or_backoff_queue(
                    EVENT_UNSCHEDULED_POD_ADD, None, pod
                )
        else:
            # Another scheduler's pod: kube-scheduler ignores it; kept only to say why.
            self._foreign[pod.uid] = pod

    def _add_assigned(self, pod: Pod) -> None:
        if self._track_workloads:
            self.workload_manager.add_pod(pod)
        known = self._cached(pod)
        if known is not None and not self.cache.is_assumed_pod(pod):
            self.cache.update_pod(known, pod)
            for ev in pod_scheduling_properties_change(pod, known):
                self.queue.assigned_pod_updated(known, pod, ev)
            return
        self.cache.add_pod(pod)
        self.queue.assigned_pod_added(pod)

    def _cached(self, pod: Pod) -> Pod | None:
        try:
            return self.cache.get_pod(pod)
        except (KeyError, CacheError):
            return None

    def update_pod(self, pod: Pod | Mapping[str, Any]) -> None:
        """A new version of a pod (matched by UID); an unknown pod is added."""
        pod = _as_pod(pod)
        pending = self._pending.get(pod.uid)
        if self._foreign.pop(pod.uid, None) is not None and not is_terminal(pod):
            self.add_pod(pod)
            return
        if is_terminal(pod):
            self.delete_pod(pod)
            return
        if pending is not None:
            if pod.spec.node_name:
                # Bound elsewhere (another scheduler or the host): leave the queue.
                self._forget_pending(pending)
                self._add_assigned(pod)
                return
            self._set_pending(pod, old=pending)
            return
        cached = self._cached(pod)
        if cached is not None:
            if self.cache.is_assumed_pod(pod):
                return
            self.cache.update_pod(cached, pod)
            for ev in pod_scheduling_properties_change(pod, cached):
                self.queue.assigned_pod_updated(cached, pod, ev)
            return
        self.add_pod(pod)

    def _drop_pending(self, pod: Pod) -> None:
        gone = self._pending.pop(pod.uid, None)
        if gone is not None and self._pending_keys.get(gone.key) == gone.uid:
            del self._pending_keys[gone.key]

    def _set_pending(self, pod: Pod, old: Pod | None = None) -> None:
        """updatePodInSchedulingQueue: the queue takes the new version; a nominated node
        that changed (or was cleared) frees the old one as an assigned pod's deletion would,
        for pods of lower or equal priority."""
        old = old if old is not None else self._pending.get(pod.uid)
        self._pending[pod.uid] = pod
        self.queue.update(old, pod)
        if old is not None:
            self.nominated_node_name_changed(old, pod)

    def nominated_node_name_changed(self, old: Pod, new: Pod) -> None:
        """hasNominatedNodeNameChanged: requeue as AssignedPodDelete of ``old`` (lower or
        equal priority pods only) when ``old`` had a nominated node and ``new`` has another."""
        before = old.status.nominated_node_name
        if before and before != new.status.nominated_node_name:
            self.queue.move_all_to_active_or_backoff_queue(
                EVENT_ASSIGNED_POD_DELETE, old, None, le_priority(old)
            )

    def _forget_pending(self, pod: Pod) -> None:
        self._drop_pending(pod)
        self.workload_manager.delete_pod(pod)
        self.queue.delete(pod)
        for fwk in self.frameworks.values():
            fwk.reject_waiting_pod(pod.uid)

    def delete_pod(self, pod: Pod | Mapping[str, Any] | str) -> None:
        """A pod is gone (by object, UID or namespace/name); an unknown pod is ignored."""
        if not isinstance(pod, (Pod, str)):
            pod = _as_pod(pod)
        found = self._find_pod(pod)
        if found is None:
            return
        if self._foreign.pop(found.uid, None) is not None:
            return
        pending = self._pending.get(found.uid)
        if pending is not None and not pending.spec.node_name:
            assumed = self._cached(pending)
            was_assumed = found.uid in self._waiting or (
                assumed is not None and self.cache.is_assumed_pod(assumed)
            )
            self._forget_pod_records(pending.key)
            self._forget_pending(pending)
            if was_assumed:
                # handleAssumedPodDeletion: the resources it held are free again.
                self.queue.move_all_to_active_or_backoff_queue(
                    EVENT_ASSIGNED_POD_DELETE, assumed or pending, None
                )
            elif pending.status.nominated_node_name:
                # Lower or equal priority pods counted it as if assigned to its node.
                self.queue.move_all_to_active_or_backoff_queue(
                    EVENT_ASSIGNED_POD_DELETE, pending, None, le_priority(pending)
                )
            return
        cached = self._cached(found)
        if cached is None:
            return
        for fwk in self.frameworks.values():
            fwk.reject_waiting_pod(found.uid)
        self._waiting.pop(found.uid, None)
        self._forget_pod_records(cached.key)
        self.workload_manager.delete_pod(cached)
        self.cache.remove_pod(cached)
        self.queue.move_all_to_active_or_backoff_queue(EVENT_ASSIGNED_POD_DELETE, cached, None)

    def _forget_pod_records(self, key: str) -> None:
        """Nothing is kept for a deleted pod: its explanations and last failure go."""
        self.explanations.pop(key, None)
        self._explain_order.pop(key, None)
        self.explanation_history.pop(key, None)
        self.events.forget(key)

    def _find_pod(self, pod: Pod | str) -> Pod | None:
        if isinstance(pod, Pod):
            return pod
        if pod in self._pending:
            return self._pending[pod]
        uid = self._pending_keys.get(pod)
        if uid is not None and uid in self._pending:
            return self._pending[uid]
        for p in self._foreign.values():
            if p.uid == pod or p.key == pod:
                return p
        return self.cache.find_pod(pod)

    # ------------------------------------------------------------------ other objects

    def add_object(self, obj: Any) -> None:
        """Namespaces, PDBs, storage objects, services, controllers and Workloads plugins read.
        A Workload's pod groups are immutable: changing them raises InvalidObjectError and
        leaves the stored Workload as it was."""
        obj = as_object(obj)
        if isinstance(obj, Workload):
            prev = self.objects.get_object("Workload", ObjectStore.key_of(obj))
            if isinstance(prev, Workload):
                problem = validate_workload_update(obj, prev)
                if problem is not None:
                    field, _, msg = problem.partition(": ")
                    raise InvalidObjectError(f"workload {obj.key}", field, msg)
        old = self.objects.upsert(obj)
        action = ActionType.Add if old is None else ActionType.Update
        ev = object_event(obj.kind, action)
        if ev is not None:
            self.queue.move_all_to_active_or_backoff_queue(ev, old, obj)

    update_object = add_object

    def delete_object(self, obj: Any) -> None:
        obj = as_object(obj)
        old = self.objects.delete(obj)
        ev = object_event(obj.kind, ActionType.Delete)
        if ev is not None and old is not None:
            self.queue.move_all_to_active_or_backoff_queue(ev, old, None)

    def apply(self, objects: Iterable[Any]) -> None:
        """Add many objects of any kind (typed, Kubernetes JSON dicts or client objects):
        nodes first, then other objects, then pods."""
        objs = [as_object(o) for o in objects]
        for o in objs:
            if isinstance(o, Node):
                self.add_node(o)
        for o in objs:
            if not isinstance(o, (Node, Pod)):
                self.add_object(o)
        for o in objs:
            if isinstance(o, Pod):
                self.add_pod(o)

    def hold(self, pod: Pod | Mapping[str, Any], *, after: str) -> None:
        """Add ``pod`` once the pod ``after`` (namespace/name) is bound, as an OrderedReady
        StatefulSet controller creates ordinal N+1 once N runs (``load_cluster`` marks such
        pods; ``Cluster.scheduler()`` and ``kschedlib simulate`` hold them this way)."""
        self._held[after] = _as_pod(pod)

    def held_pods(self) -> list[Pod]:
        """Pods held by :meth:`hold`, not created yet."""
        return list(self._held.values())

    def _activate_from_plugin(self, pods: Any) -> None:
        """Handle.Activate for plugins: pending pods by object (a mapping or an iterable)."""
        items = pods.values() if isinstance(pods, Mapping) else pods
        self.queue.activate([p for p in items if p.uid in self._pending])

    def activate(self, pods: Iterable[Pod]) -> None:
        """Move pods to activeQ now, skipping their backoff (as podsToActivate does)."""
        self.queue.activate(list(pods))
