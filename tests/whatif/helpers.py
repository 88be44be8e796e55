"""Small builders for what-if tests."""

from __future__ import annotations

from typing import Any

from kschedlib import FakeClock, Node, Pod, Scheduler


def node(name: str, zone: str = "z1", cpu: str = "4", mem: str = "8Gi", **extra: Any) -> Node:
    d: dict[str, Any] = {
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone},
        },
        "status": {"allocatable": {"cpu": cpu, "memory": mem, "pods": "110"}},
    }
    if extra.get("taints"):
        d["spec"] = {"taints": extra["taints"]}
    return Node.from_dict(d)


def pod(
    name: str,
    cpu: str = "100m",
    mem: str = "128Mi",
    *,
    ns: str = "default",
    node_name: str = "",
    priority: int | None = None,
    labels: dict[str, str] | None = None,
    owner: tuple[str, str] | None = ("ReplicaSet", "rs"),
    annotations: dict[str, str] | None = None,
    volumes: list[dict[str, Any]] | None = None,
    spec: dict[str, Any] | None = None,
) -> Pod:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": ns,
        "uid": f"{ns}-{name}",
        "labels": labels if labels is not None else {"app": "a"},
        "annotations": annotations or {},
    }
    if owner is not None:
        meta["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1], "uid": "o", "controller": True}
        ]
    s: dict[str, Any] = {
        "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": mem}}}]
    }
    if node_name:
        s["nodeName"] = node_name
    if priority is not None:
        s["priority"] = priority
    if volumes:
        s["volumes"] = volumes
    s.update(spec or {})
    return Pod.from_dict({"metadata": meta, "spec": s})


def cluster(n: int = 6, zones: int = 3, cpu: str = "4", seed: int = 7, **kw: Any) -> Scheduler:
    sched = Scheduler(clock=FakeClock(), seed=seed, **kw)
    for i in range(n):
        sched.add_node(node(f"n{i}", zone=f"z{i % zones}", cpu=cpu))
    return sched


def decisions(sched: Scheduler) -> list[tuple[str, str, str | None, str]]:
    """Every attempt run() makes now: (pod, outcome, node, message)."""
    return [(r.key, r.outcome.value, r.node, r.message) for r in sched.run()]


def snapshot_view(sched: Scheduler) -> dict[str, tuple[Any, ...]]:
    """The cluster as the next cycle will see it: per node, its pods and aggregates."""
    sched.cache.update_snapshot(sched.snapshot)
    out: dict[str, tuple[Any, ...]] = {}
    for ni in sched.snapshot.list():
        out[ni.name] = (
            sorted(p.pod.key for p in ni.pods),
            ni.requested.milli_cpu,
            ni.requested.memory,
            sorted(p.pod.key for p in ni.pods_with_affinity),
            sorted(p.pod.key for p in ni.pods_with_required_anti_affinity),
        )
    return out


def cache_view(sched: Scheduler) -> dict[str, tuple[Any, ...]]:
    """Every NodeInfo the cache holds (ghosts too): node present, pods, requested."""
    return {
        name: (ni.node is not None, sorted(p.pod.key for p in ni.pods), ni.requested.milli_cpu)
        for name, ni in sched.cache.dump().nodes.items()
    }
