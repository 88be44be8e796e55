"""Eviction walkthrough: a memory-pressure event on a node, then a drain blocked by a PDB.

Run: python examples/eviction_walkthrough.py
"""

from __future__ import annotations

from kschedlib import FakeClock, Node, Pod, Scheduler
from kschedlib.api import PodDisruptionBudget

Mi, Gi = 1024**2, 1024**3
ALLOC = {"cpu": "8", "memory": "16Gi", "pods": "110"}


def node(name: str) -> Node:
    return Node.from_dict({"metadata": {"name": name},
                           "status": {"capacity": ALLOC, "allocatable": ALLOC}})


def pod(name: str, node_name: str, memory: str | None, labels: dict[str, str] | None = None,
        priority: int = 0) -> Pod:
    requests = {"memory": memory, "cpu": "500m"} if memory else {}
    return Pod.from_dict({
        "metadata": {"name": name, "namespace": "shop", "uid": name, "labels": labels or {},
                     "ownerReferences": [{"kind": "ReplicaSet", "name": "rs", "controller": True}]},
        "spec": {"nodeName": node_name, "priority": priority,
                 "terminationGracePeriodSeconds": 30,
                 "containers": [{"name": "app", "resources": {"requests": requests}}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    })


def main() -> None:
    sched = Scheduler(clock=FakeClock(), deterministic=True)
    sched.add_node(node("n1"))
    sched.add_node(node("n2"))
    sched.eviction.set_kubelet_config({
        "evictionHard": {"memory.available": "500Mi"},
        "evictionMinimumReclaim": {"memory.available": "1Gi"},
    })
    workloads = [
        pod("web-0", "n1", "1Gi", {"app": "web"}), pod("web-1", "n1", "1Gi", {"app": "web"}),
        pod("web-2", "n2", "1Gi", {"app": "web"}), pod("report", "n1", None),
        pod("etl", "n1", "2Gi", priority=100),
    ]
    for p in workloads:
        sched.add_pod(p)
    sched.add_object(PodDisruptionBudget.from_dict({
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "maxUnavailable": 1},
        "status": {"disruptionsAllowed": 1, "currentHealthy": 3, "desiredHealthy": 2,
                   "expectedPods": 3},
    }))

    print("== memory pressure on n1 ==")
    usage = {"web-0": 1100 * Mi, "web-1": 900 * Mi, "report": 400 * Mi, "etl": 3 * Gi}
    stats = {
        "node": {"nodeName": "n1",
                 "memory": {"availableBytes": 300 * Mi, "workingSetBytes": 16 * Gi - 300 * Mi}},
        "pods": [{"podRef": {"name": n, "namespace": "shop", "uid": n},
                  "memory": {"workingSetBytes": u},
                  "containers": [{"name": "app", "memory": {"workingSetBytes": u}}]}
                 for n, u in usage.items()],
    }
    report = sched.eviction.observe_node("n1", stats)
    print(report.explain())
    print("still on n1:", sorted(p.metadata.name for p in sched.bound_pods() if p.spec.node_name == "n1"))

    # The kubelet ignores PDBs. The disruption controller then recounts the budget: web's
    # ReplicaSet wants 3 replicas and only 2 are left, so no more disruptions are allowed.
    for pdb in sched.eviction.sync_pdbs(scale_of=lambda p: ("web-rs", 3)):
        s = pdb.status
        print(f"\nPDB {pdb.metadata.name}: {s.current_healthy} healthy of {s.expected_pods} expected, "
              f"{s.desired_healthy} desired, {s.disruptions_allowed} disruptions allowed")

    print("\n== kubectl drain n1 ==")
    result = sched.eviction.drain("n1")
    print(result.report())
    for s in result.stuck:
        print(f"  {s.pod.key} is stuck: {s.response.code} {'; '.join(s.response.causes)}")


if __name__ == "__main__":
    main()
