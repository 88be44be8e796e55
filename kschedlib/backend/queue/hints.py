"""Building a profile's queueing-hint registrations from its plugins (scheduler.go)."""

from __future__ import annotations

from collections.abc import Iterable

from kschedlib.framework.events import (
    ActionType,
    ClusterEvent,
    EventResource,
    QueueingHintFn,
)

HintRegistration = tuple[ClusterEvent, str, QueueingHintFn | None]
"""(event, plugin name, hint fn); a None fn means the event always queues the pod."""

WILDCARD_ALL = ClusterEvent(EventResource.WildCard, ActionType.All)
NODE_TAINT_UPDATE = ClusterEvent(EventResource.Node, ActionType.UpdateNodeTaint)


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
            out.append((ev, name, ewh.queueing_hint_fn))
        if node_added and not node_taint_updated:
            out.append((NODE_TAINT_UPDATE, name, None))
    return out
