"""Queue dynamics of the event handlers as kube-scheduler v1.35 has them: which updates and
deletes are cluster events, and which pods they move."""

from __future__ import annotations

from typing import Any

import attrs

from kschedlib import FakeClock, Node, Pod, Scheduler
from kschedlib.framework.registry import PluginSpec
from kschedlib.framework.status import Code, Status


def node(name: str, cpu: str = "2", unschedulable: bool = False) -> Node:
    return Node.from_dict({
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": {"unschedulable": unschedulable},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
    })


def pod(name: str, cpu: str = "1", priority: int = 0, node_name: str = "") -> Pod:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
        "priority": priority,
    }
    if node_name:
        spec["nodeName"] = node_name
    return Pod.from_dict({"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
                          "spec": spec})


class RejectsPrefixed:
    """Rejects pods named ``stuck-*``; registers no events, so every event may requeue them."""

    name = "RejectsPrefixed"

    def filter(self, state: Any, p: Pod, node_info: Any) -> Status | None:
        if p.metadata.name.startswith("stuck"):
            return Status(Code.Unschedulable, ("stuck",), self.name)
        return None


def with_rejector() -> Scheduler:
    return Scheduler(
        clock=FakeClock(), deterministic=True,
        plugins={"RejectsPrefixed": PluginSpec("RejectsPrefixed", lambda args, h: RejectsPrefixed())},
        config={"profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "RejectsPrefixed"}]}}}]},
    )


def where(s: Scheduler, name: str) -> str:
    names = {
        "active": s.queue.pods_in_active_q(),
        "backoff": s.queue.pods_in_backoff_q(),
        "unschedulable": s.queue.unschedulable_pods(),
    }
    for q, pods in names.items():
        if any(p.metadata.name == name for p in pods):
            return q
    return "none"


def test_cordoning_is_no_node_event_uncordoning_is() -> None:
    s = with_rejector()
    s.add_node(node("a"))
    s.add_pod(pod("stuck-1"))
    s.run()
    assert where(s, "stuck-1") == "unschedulable"
    s.update_node(node("a", unschedulable=True))  # cordon: kube-scheduler sends no event
    assert where(s, "stuck-1") == "unschedulable"
    assert s.run() == []
    s.update_node(node("a"))  # uncordon: Node/UpdateNodeTaint
    assert where(s, "stuck-1") in ("active", "backoff")


def test_deleting_a_pending_pod_moves_others_only_with_a_nomination() -> None:
    s = with_rejector()
    s.add_node(node("a"))
    s.add_pod(pod("stuck-1"))
    s.add_pod(pod("stuck-2"))
    s.add_pod(pod("stuck-hi", priority=10))
    s.run()
    assert where(s, "stuck-1") == where(s, "stuck-2") == "unschedulable"
    s.delete_pod("default/stuck-2")  # no nominated node: no event
    assert where(s, "stuck-1") == "unschedulable"
    nominated = pod("stuck-3", priority=5)
    nominated = attrs.evolve(nominated, status=attrs.evolve(nominated.status,
                                                            nominated_node_name="a"))
    s.add_pod(nominated)
    s.delete_pod("default/stuck-3")  # nominated: AssignedPodDelete, lower or equal priority
    assert where(s, "stuck-1") in ("active", "backoff")
    assert where(s, "stuck-hi") == "unschedulable"  # higher priority than the deleted pod


def test_a_cleared_nomination_requeues_lower_or_equal_priority_pods() -> None:
    """A failed retry clears ``hi``'s nomination; the status update comes back and moves, as
    an assigned pod's deletion, the pods of lower or equal priority that NodeResourcesFit
    rejected (``hi`` itself included), not the higher ones."""
    s = Scheduler(clock=FakeClock(), deterministic=True)
    s.add_node(node("a", cpu="2"))
    s.add_pod(pod("victim", cpu="2", node_name="a"))
    s.add_pod(pod("hi", cpu="2", priority=100))
    (first,) = s.run(max_cycles=1)
    assert first.nominated_node == "a" and [v.key for v in first.victims] == ["default/victim"]
    # Before hi's retry, a higher-priority pod takes the node; two more pods wait.
    s.add_pod(pod("boss", cpu="2", priority=1000, node_name="a"))
    s.add_pod(pod("lo", cpu="2", priority=1))
    s.add_pod(pod("top", cpu="2", priority=500))
    results = s.run()
    # top (500), lo (1) and hi (100, nominated) fail in priority order; hi's retry clears its
    # nomination, which moves lo and hi (<= 100) from unschedulablePods, not top: both run once
    # more (popped from backoffQ: activeQ is empty).
    assert [(r.pod.metadata.name, r.nominated_node) for r in results] == [
        ("top", None), ("lo", None), ("hi", None), ("lo", None), ("hi", None)]
    assert where(s, "top") == where(s, "lo") == where(s, "hi") == "unschedulable"
