"""Building a profile's queueing-hint registrations from its plugins (scheduler.go)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.errors import QueueingHintError
from kschedlib.framework.events import (
    ActionType,
    ClusterEvent,
    EventResource,
    QueueingHint,
    QueueingHintFn,
)

HintRegistration = tuple[ClusterEvent, str, QueueingHintFn | None]
"""(event, plugin name, hint fn); a None fn means the event always queues the pod."""

WILDCARD_ALL = ClusterEvent(EventResource.WildCard, ActionType.All)
NODE_TAINT_UPDATE = ClusterEvent(EventResource.Node, ActionType.UpdateNodeTaint)


# The object type each event resource carries (the others are not checked).
_EXPECTED: dict[EventResource, tuple[type, str]] = {
    EventResource.Pod: (Pod, "Pod"),
    EventResource.AssignedPod: (Pod, "Pod"),
    EventResource.UnscheduledPod: (Pod, "Pod"),
    EventResource.Node: (Node, "Node"),
}
_EXPECTED_KIND: dict[EventResource, str] = {
    EventResource.PersistentVolume: "PersistentVolume",
    EventResource.PersistentVolumeClaim: "PersistentVolumeClaim",
    EventResource.StorageClass: "StorageClass",
    EventResource.CSINode: "CSINode",
}


def typed_hint(resource: EventResource, fn: QueueingHintFn) -> QueueingHintFn:
    """``fn`` behind kube-scheduler's ``util.As`` check: an old or new object of the wrong
    type raises QueueingHintError (Go's ``(Queue, err)``) before ``fn`` sees it."""
    expected = _EXPECTED.get(resource)
    kind = _EXPECTED_KIND.get(resource)
    if expected is None and kind is None:
        return fn

    def check(obj: Any) -> None:
        if obj is None:
            return
        if expected is not None:
            if isinstance(obj, expected[0]):
                return
            want = expected[1]
        else:
            if getattr(obj, "kind", None) == kind:
                return
            want = str(kind)
        raise QueueingHintError(
            f"unexpected object type {type(obj).__name__} for a {resource.value} event: "
            f"want {want}"
        )

    def hint(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        check(old_obj)
        check(new_obj)
        return fn(pod, old_obj, new_obj)

    hint.__name__ = getattr(fn, "__name__", "hint")
    hint.__wrapped__ = fn  # type: ignore[attr-defined]
    return hint


_REJECTING_POINTS = ("pre_enqueue", "pre_filter", "filter", "reserve", "permit")


def build_queueing_hints(plugins: Iterable[object]) -> list[HintRegistration]:
    """The hint registrations of one profile's enabled plugins, in order (buildQueueingHintMap
    over the framework's enqueue extensions)."""
    # Only plugins that can reject a pod count (PreEnqueue, PreFilter, Filter, Reserve, Permit).
    # One without events_to_register is registered for every event (default enqueue extension);
    # one registering no event is skipped; one registering Node/Add but not Node/UpdateNodeTaint
    # also gets Node/UpdateNodeTaint with no hint (kubernetes issue 109437).
    out: list[HintRegistration] = []
    seen: set[str] = set()
    for pl in plugins:
        if not any(hasattr(pl, m) for m in _REJECTING_POINTS):
            continue
        name: str = pl.name  # type: ignore[attr-defined]
        if name in seen:
            continue
        seen.add(name)
        register = getattr(pl, "events_to_register", None)
        if register is None:
            out.append((WILDCARD_ALL, name, None))
            continue
        events = list(register())
        if not events:
            continue
        node_added = False
        node_taint_updated = False
        for ewh in events:
            ev = ewh.event
            if ev.resource == EventResource.Node:
                if ev.action_type & ActionType.Add:
                    node_added = True
                if ev.action_type & ActionType.UpdateNodeTaint:
                    node_taint_updated = True
            fn = ewh.queueing_hint_fn
            out.append((ev, name, None if fn is None else typed_hint(ev.resource, fn)))
        if node_added and not node_taint_updated:
            out.append((NODE_TAINT_UPDATE, name, None))
    return out
