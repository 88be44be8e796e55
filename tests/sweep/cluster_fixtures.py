"""Small clusters for sweep tests, built from Kubernetes dicts."""

from __future__ import annotations

from typing import Any

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.sweep import BaseCluster


def node(name: str, zone: str, cpu: str = "4", memory: str = "8Gi", **labels: str) -> Node:
    return Node.from_dict({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                              "topology.kubernetes.io/zone": zone, **labels}},
        "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"},
                   "capacity": {"cpu": cpu, "memory": memory, "pods": "110"}},
    })


def pod_dict(name: str, cpu: str = "1", *, node_name: str = "", owner: str | None = None,
             labels: dict[str, str] | None = None, priority: int = 0) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": f"uid-{name}",
                            "labels": labels or {"app": name.rsplit("-", 1)[0]}}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner, "name": "owner",
                                    "uid": "owner-uid", "controller": True}]
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "img",
                                            "resources": {"requests": {"cpu": cpu,
                                                                       "memory": "256Mi"}}}],
                            "priority": priority}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def pod(name: str, cpu: str = "1", **kw: Any) -> Pod:
    return Pod.from_dict(pod_dict(name, cpu, **kw))


def three_zone_cluster() -> BaseCluster:
    """Six 4-cpu nodes over three zones, some running pods (with and without controllers,
    a DaemonSet pod), and eight pending 1-cpu pods."""
    nodes = [node(f"n{i}", f"zone-{'abc'[i % 3]}") for i in range(6)]
    running = [
        pod("rs-web-0", "2", node_name="n0", owner="ReplicaSet"),
        pod("bare-0", "1", node_name="n0"),
        pod("ds-agent-0", "100m", node_name="n0", owner="DaemonSet"),
        pod("rs-web-1", "2", node_name="n1", owner="ReplicaSet"),
    ]
    pending = [pod(f"job-{i}", "1") for i in range(8)]
    return BaseCluster.from_objects([*nodes, *running, *pending])
