"""removable_nodes (default mode: each moved pod through its scheduling cycle) with the
scheduler's reuse on (per-node results kept across cycles and node removals: position marks
carried over to the shrunk node list, PodTopologySpread's counts and readings, the cache's
removal hints) gives, drain by drain and pod by pod, what the plain recomputation gives
(``node_local_cache=False``): the same removable nodes, reasons and destinations."""

from __future__ import annotations

from typing import Any

import pytest

from kschedlib import FakeClock, Node, Scheduler
from kschedlib.api.workloads import PodDisruptionBudget, ReplicaSet
from kschedlib.config.loader import load_config
from kschedlib.whatif import drain
from kschedlib.whatif.capacity.batched import FastPath
from tests.whatif.helpers import pod

ZONE = "topology.kubernetes.io/zone"
NODES = 220


def _cluster(seed: int, reuse: bool) -> Scheduler:
    config = load_config({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 10,  # windows of 100 nodes: round robin over the list
    })
    s = Scheduler(config, clock=FakeClock(), seed=seed, node_local_cache=reuse)
    for i in range(NODES):
        labels = {"kubernetes.io/hostname": f"n{i:03d}"}
        if i % 17:
            labels[ZONE] = f"z{i % 3}"  # a few nodes without a zone
        d: dict[str, Any] = {
            "metadata": {"name": f"n{i:03d}", "labels": labels},
            "status": {"allocatable": {"cpu": str(2 + i % 3), "memory": "8Gi", "pods": "110"}},
        }
        if i == 7:  # one tainted node (a window holding it takes the general path)
            d["spec"] = {"taints": [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]}
        s.add_node(Node.from_dict(d))
    s.add_object(ReplicaSet.from_dict({
        "metadata": {"name": "rs", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "a"}}},
    }))
    s.add_object(PodDisruptionBudget.from_dict({
        "metadata": {"name": "budget", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"tier": "guarded"}}},
        "status": {"disruptionsAllowed": 6},
    }))
    for k in range(2 * NODES + 30):
        kind = (k * 7 + seed) % 6
        spec: dict[str, Any] = {}
        labels = {"app": "a"}
        if kind == 1:  # soft spreading of its own
            spec = {"topologySpreadConstraints": [{
                "maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"app": "a"}}}]}
        elif kind == 2:  # preferred anti-affinity (InterPodAffinity scores)
            spec = {"affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
                "weight": 50, "podAffinityTerm": {
                    "topologyKey": "kubernetes.io/hostname",
                    "labelSelector": {"matchLabels": {"app": "a"}}}}]}}}
        elif kind == 3:  # tolerates the tainted nodes, prefers zone z1
            spec = {
                "tolerations": [{"key": "dedicated", "operator": "Exists"}],
                "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
                    "weight": 10, "preference": {"matchExpressions": [
                        {"key": ZONE, "operator": "In", "values": ["z1"]}]}}]}},
            }
        elif kind == 4:
            labels = {"app": "a", "tier": "guarded"}  # PDB-guarded
        s.add_pod(pod(f"p{k:03d}", cpu=f"{100 + 50 * (k % 4)}m", labels=labels, spec=spec))
    s.run()
    return s


def _removable(s: Scheduler, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Any, list[Any]]:
    report, rows, _ = _drains(s, monkeypatch)
    return str(report), report.to_dict(), rows


@pytest.mark.parametrize("seed", [0, 3])
def test_removable_nodes_with_reuse_equals_the_plain_recomputation(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = _removable(_cluster(seed, True), monkeypatch)
    plain = _removable(_cluster(seed, False), monkeypatch)
    assert fast == plain
    text, report, rows = fast
    assert len(report["removable"]) > 20 and report["notRemovable"]  # both kinds happen
    moved = [r for _, drained in rows for r in drained if r[1] == "moved"]
    assert len(moved) > 100


def _drains(
    s: Scheduler, monkeypatch: pytest.MonkeyPatch, **kwargs: Any
) -> tuple[Any, list[Any], list[str]]:
    """removable_nodes with ``kwargs``: the report, every drain's pods, and what happened in
    order ("drain", "doomed" for a drain run in a transaction, "batched" for a moved pod the
    batched replica cycle placed)."""
    rows: list[Any] = []
    events: list[str] = []
    orig = drain._Checkpointed.drain
    orig_place = drain.Runs.place

    def record(self: Any, node: str, options: Any, pdbs: Any, doomed: bool = False) -> Any:
        report = orig(self, node, options, pdbs, doomed)
        rows.append((node, [(p.pod, p.action, p.destination, p.reason) for p in report.pods]))
        events.append("doomed" if doomed else "drain")
        return report

    def place(self: Any, sched: Scheduler, pod: Any) -> Any:
        host = orig_place(self, sched, pod)
        if host is not None:
            events.append("batched")
        return host

    monkeypatch.setattr(drain._Checkpointed, "drain", record)
    monkeypatch.setattr(drain.Runs, "place", place)
    report = drain.removable_nodes(s, **kwargs)
    monkeypatch.setattr(drain._Checkpointed, "drain", orig)
    monkeypatch.setattr(drain.Runs, "place", orig_place)
    return report, rows, events


@pytest.mark.parametrize("seed", [0, 3])
def test_removable_nodes_batched_equals_a_cycle_per_pod(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Moved pods that are replicas of one another take capacity()'s batched cycle, kept
    # from drain to drain (following each node removal and the drains' pod deletions); the
    # varied pods here make more templates than the runs keep, and some of them cannot be
    # batched, and more templates than get a batched path. Drain by drain, pod by pod, what
    # a scheduling cycle per pod gives.
    s = _cluster(seed, True)
    # A few pods per template here; and the paths are kept even where a node removal costs
    # them a pass over every node (InterPodAffinity scores every pod here).
    monkeypatch.setattr(drain.Runs, "START", 2)
    monkeypatch.setattr(FastPath, "follows_cheaply", lambda self: True)
    report, rows, events = _drains(s, monkeypatch)
    plain, plain_rows, plain_events = _drains(s, monkeypatch, batch=False)
    assert plain_events.count("batched") == 0 and events.count("batched") > 100
    assert report.to_dict() == plain.to_dict()
    assert rows == plain_rows


def test_removable_nodes_batched_with_daemonset_pods_left_on_removed_nodes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Identical replicas under system-default spreading; every node also runs a DaemonSet
    # pod (matched by the spreading selector), which stays on its node and goes with it:
    # the nodes holding nothing else are removed with a counted pod on them.
    s = Scheduler(clock=FakeClock(), seed=5)
    for i in range(90):
        labels = {"kubernetes.io/hostname": f"n{i:03d}", ZONE: f"z{i % 3 if i < 60 else 0}"}
        d: dict[str, Any] = {
            "metadata": {"name": f"n{i:03d}", "labels": labels},
            # Candidates by utilization: the large nodes, the DaemonSet-only ones, the rest.
            "status": {"allocatable": {"cpu": "16" if i < 30 else "4", "memory": "8Gi",
                                       "pods": "110"}},
        }
        if i >= 60:  # no moved pod lands there: they keep only their DaemonSet pods
            d["spec"] = {"taints": [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]}
        s.add_node(Node.from_dict(d))
        # The last 30 nodes (zone z0) hold only these.
        for d in range(1 if i < 60 else 4):
            s.add_pod(pod(f"ds{d}-{i}", cpu="50m" if i < 60 else "200m", node_name=f"n{i:03d}",
                          owner=("DaemonSet", f"ds{d}")))
    s.add_object(ReplicaSet.from_dict({
        "metadata": {"name": "rs", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "a"}}},
    }))
    from kschedlib.api.workloads import DaemonSet

    for d in range(4):
        s.add_object(DaemonSet.from_dict({"metadata": {"name": f"ds{d}", "namespace": "default"}}))
    for k in range(260):
        s.add_pod(pod(f"p{k:03d}", cpu="300m", node_name=f"n{(k * 13) % 60:03d}"))
    fast, rows, events = _drains(s, monkeypatch)
    plain, plain_rows, _ = _drains(s, monkeypatch, batch=False)
    report = fast.to_dict()
    assert events.count("batched") > 200 and len(report["removable"]) > 30
    assert report["notRemovable"]
    assert (report, rows) == (plain.to_dict(), plain_rows)


def test_removable_nodes_batched_paths_kept_across_a_rolled_back_drain(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # One node holds more small pods than the other nodes have pod slots left: its drain is
    # doomed and runs in a transaction, rolled back, in the middle of the run. The batched
    # paths set up before it carry on after it (the rollback gives the nodes it restores
    # fresh generations, read as changes made by others).
    s = Scheduler(clock=FakeClock(), seed=9)
    for i in range(31):
        labels = {"kubernetes.io/hostname": f"n{i:03d}", ZONE: f"z{i % 3}"}
        s.add_node(Node.from_dict({
            "metadata": {"name": f"n{i:03d}", "labels": labels},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi",
                                       "pods": "110" if i == 30 else "5"}},
        }))
    s.add_object(ReplicaSet.from_dict({
        "metadata": {"name": "rs", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "a"}}},
    }))
    for i in range(30):
        for k in range(1 + i % 3):
            s.add_pod(pod(f"p{i}-{k}", cpu="300m", node_name=f"n{i:03d}"))
    for k in range(80):  # 16% of its memory: drained between nodes with 2 and 3 replicas
        s.add_pod(pod(f"tiny{k}", cpu="5m", mem="16Mi", node_name="n030", labels={"app": "tiny"}))
    monkeypatch.setattr(drain.Runs, "START", 2)
    fast, _, seq = _drains(s, monkeypatch)
    plain, _, _ = _drains(s, monkeypatch, batch=False)
    assert "doomed" in seq and "batched" in seq[: seq.index("doomed")]
    assert "batched" in seq[seq.index("doomed"):]
    assert fast == plain and fast.removable and fast.not_removable
