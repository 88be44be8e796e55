"""Small object builders shared by the robustness tests (no tests here)."""

from __future__ import annotations

from typing import Any

from kschedlib import FakeClock, Node, Pod, Scheduler


def node_dict(name: str, cpu: str = "4", memory: str = "8Gi", pods: str = "110",
              labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
                   "capacity": {"cpu": cpu, "memory": memory, "pods": pods}},
    }


def pod_dict(name: str, cpu: str | None = "100m", namespace: str = "default",
             uid: str | None = None, priority: int | None = None, **spec: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "c", "image": "busybox"}
    if cpu is not None:
        container["resources"] = {"requests": {"cpu": cpu}}
    d: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": uid or f"uid-{namespace}-{name}"},
        "spec": {"containers": [container], **spec},
    }
    if priority is not None:
        d["spec"]["priority"] = priority
    return d


def node(name: str, **kw: Any) -> Node:
    return Node.from_dict(node_dict(name, **kw))


def pod(name: str, **kw: Any) -> Pod:
    return Pod.from_dict(pod_dict(name, **kw))


def accounted(s: Scheduler, keys: list[str]) -> dict[str, str]:
    """Where each pod is: pending, waiting or bound (a missing key means the pod was lost)."""
    where: dict[str, str] = {}
    for p in s.pending_pods():
        where[p.key] = "pending"
    for p in s.waiting_pods():
        where[p.key] = "waiting"
    for p in s.bound_pods():
        where[p.key] = "bound"
    return {k: where.get(k, "LOST") for k in keys}


def new_scheduler(**kw: Any) -> Scheduler:
    kw.setdefault("clock", FakeClock())
    kw.setdefault("deterministic", True)
    return Scheduler(**kw)
