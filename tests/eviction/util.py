"""Builders for eviction tests: pods, nodes and summary-API statistics."""

from __future__ import annotations

from typing import Any

from kschedlib import FakeClock, Node, Pod, Scheduler

Ki = 1024
Mi = 1024**2
Gi = 1024**3


def node(name: str = "n1", memory: str = "8Gi", cpu: str = "4", **extra: Any) -> Node:
    res = {"cpu": cpu, "memory": memory, "pods": "110"}
    d: dict[str, Any] = {"metadata": {"name": name}, "status": {"capacity": res, "allocatable": res}}
    d.update(extra)
    return Node.from_dict(d)


def pod(
    name: str,
    *,
    node_name: str = "n1",
    mem: str | None = None,
    mem_limit: str | None = None,
    cpu: str | None = None,
    cpu_limit: str | None = None,
    eph: str | None = None,
    priority: int | None = None,
    tgps: int | None = None,
    ready: bool | None = True,
    phase: str = "Running",
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    owner: str | None = "ReplicaSet",
    volumes: list[dict[str, Any]] | None = None,
    tolerations: list[dict[str, Any]] | None = None,
    namespace: str = "default",
) -> Pod:
    req: dict[str, str] = {}
    lim: dict[str, str] = {}
    if mem:
        req["memory"] = mem
    if cpu:
        req["cpu"] = cpu
    if eph:
        req["ephemeral-storage"] = eph
    if mem_limit:
        lim["memory"] = mem_limit
    if cpu_limit:
        lim["cpu"] = cpu_limit
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": req, "limits": lim}}]}
    if node_name:
        spec["nodeName"] = node_name
    if priority is not None:
        spec["priority"] = priority
    if tgps is not None:
        spec["terminationGracePeriodSeconds"] = tgps
    if volumes:
        spec["volumes"] = volumes
    if tolerations:
        spec["tolerations"] = tolerations
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{name}",
                            "labels": labels or {}, "annotations": annotations or {}}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner, "name": f"{name}-owner",
                                    "uid": f"owner-{name}", "controller": True}]
    status: dict[str, Any] = {"phase": phase}
    if ready is not None:
        status["conditions"] = [{"type": "Ready", "status": "True" if ready else "False"}]
    return Pod.from_dict({"metadata": meta, "spec": spec, "status": status})


def pod_stats(
    p: Pod,
    *,
    mem: int | None = None,
    rootfs: int = 0,
    logs: int = 0,
    rootfs_inodes: int = 0,
    logs_inodes: int = 0,
    volumes: dict[str, int] | None = None,
    procs: int | None = None,
) -> dict[str, Any]:
    d: dict[str, Any] = {
        "podRef": {"name": p.metadata.name, "namespace": p.metadata.namespace, "uid": p.metadata.uid},
        "containers": [{
            "name": "c",
            "rootfs": {"usedBytes": rootfs, "inodesUsed": rootfs_inodes},
            "logs": {"usedBytes": logs, "inodesUsed": logs_inodes},
        }],
    }
    if mem is not None:
        d["memory"] = {"workingSetBytes": mem}
        d["containers"][0]["memory"] = {"workingSetBytes": mem}
    if volumes:
        d["volume"] = [{"name": k, "usedBytes": v, "inodesUsed": 0} for k, v in volumes.items()]
    if procs is not None:
        d["process_stats"] = {"process_count": procs}
    return d


def fs(avail: int, cap: int, inodes_free: int = 900_000, inodes: int = 1_000_000) -> dict[str, int]:
    return {"availableBytes": avail, "capacityBytes": cap, "inodesFree": inodes_free, "inodes": inodes}


def summary(
    *,
    mem_avail: int = 4 * Gi,
    mem_ws: int = 4 * Gi,
    nodefs: dict[str, int] | None = None,
    imagefs: dict[str, int] | None = None,
    pods: list[dict[str, Any]] | None = None,
    pid: tuple[int, int] | None = None,
    reclaimable: dict[str, int] | None = None,
    layout: str = "single",
    pods_container: tuple[int, int] | None = None,
) -> dict[str, Any]:
    nf = nodefs or fs(50 * Gi, 100 * Gi)
    node_d: dict[str, Any] = {
        "nodeName": "n1",
        "memory": {"availableBytes": mem_avail, "workingSetBytes": mem_ws},
        "fs": nf,
        "runtime": {"imageFs": imagefs or nf},
    }
    if pid is not None:
        node_d["rlimit"] = {"maxpid": pid[0], "curproc": pid[1]}
    if reclaimable:
        node_d["reclaimable"] = reclaimable
    if pods_container is not None:
        node_d["systemContainers"] = [{"name": "pods", "memory": {
            "availableBytes": pods_container[0], "workingSetBytes": pods_container[1]}}]
    return {"node": node_d, "pods": pods or [], "layout": layout}


def scheduler(*nodes: Node) -> Scheduler:
    s = Scheduler(clock=FakeClock(1000.0), deterministic=True)
    for n in nodes or (node(),):
        s.add_node(n)
    return s
