"""Scheduler.capacity(): cluster-capacity's question, batched exactly."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from kschedlib import FakeClock, Pod, Scheduler
from kschedlib.errors import InvalidObjectError
from kschedlib.whatif.capacity import capacity, make_replica, replica_name
from tests.whatif.helpers import cache_view, cluster, node, pod


def _template(**kw: Any) -> Pod:
    kw.setdefault("owner", None)
    kw.setdefault("labels", {"app": "web"})
    return pod("web", **kw)


def test_resource_limits() -> None:
    s = cluster(3, cpu="2")  # 3 nodes x 2 CPU
    s.add_pod(pod("busy", cpu="1500m", node_name="n0"))
    before = cache_view(s)
    r = s.capacity(_template(cpu="500m"))
    assert r.count == 1 + 4 + 4
    assert r.distribution == {"n0": 1, "n1": 4, "n2": 4}
    assert r.stop_reason == (  # the whole FailedScheduling message, PostFilter part included
        "0/3 nodes are available: 3 Insufficient cpu. no new claims to deallocate, preemption: "
        "0/3 nodes are available: 3 No preemption victims found for incoming pod.")
    assert r.preemption_node is None
    assert not r.limited
    assert cache_view(s) == before  # asked in a fork
    limited = s.capacity(_template(cpu="500m"), limit=2)
    assert limited.count == 2 and limited.limited and limited.stop_reason == "limit"
    assert s.capacity(_template(cpu="500m"), limit=0).count == 0


def test_host_ports_allow_one_replica_per_node() -> None:
    s = cluster(4)
    tpl = _template(spec={"containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080}],
                                          "resources": {"requests": {"cpu": "100m"}}}]})
    r = s.capacity(tpl)
    assert r.count == 4 and set(r.distribution.values()) == {1}
    assert "didn't have free ports for the requested pod ports" in r.stop_reason


def test_anti_affinity_among_replicas() -> None:
    s = cluster(5)
    tpl = _template(spec={"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}})
    r = s.capacity(tpl)
    assert r.count == 5 and sorted(r.distribution) == [f"n{i}" for i in range(5)]
    assert "didn't match pod anti-affinity rules" in r.stop_reason


def test_spreading_among_replicas() -> None:
    s = cluster(6, zones=3)
    s.add_pod(pod("other", node_name="n0", labels={"app": "web"}))
    tpl = _template(spec={"topologySpreadConstraints": [{
        "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}}}]})
    r = s.capacity(tpl, limit=8)
    per_zone = {z: 0 for z in range(3)}
    for n, c in r.distribution.items():
        per_zone[int(n[1:]) % 3] += c
    per_zone[0] += 1  # the running pod
    assert max(per_zone.values()) - min(per_zone.values()) <= 1
    assert r.count == 8


def test_replicas_are_named_and_labelled_like_a_replicaset() -> None:
    tpl = _template()
    a, b = make_replica(tpl, "web", 0), make_replica(tpl, "web", 1)
    assert a.metadata.name == replica_name("web", 0) != b.metadata.name
    assert a.metadata.name.startswith("web-") and len(a.metadata.name) == len("web-") + 5
    assert a.metadata.labels == {"app": "web"} and a.uid != b.uid
    ref = a.metadata.owner_references[-1]
    assert (ref.kind, ref.name, ref.controller) == ("ReplicaSet", "web", True)
    assert a.spec is tpl.spec


@pytest.mark.parametrize("deterministic", [False, True])
@pytest.mark.parametrize(
    "shape",
    ["plain", "taints", "preferred-affinity", "spread", "ports", "images", "mixed-nodes", "nominated"],
)
def test_batched_loop_decides_exactly_as_one_by_one(shape: str, deterministic: bool) -> None:
    s = Scheduler(clock=FakeClock(), seed=11, deterministic=deterministic)
    for i in range(130):  # above 100 nodes, so percentageOfNodesToScore windows apply
        labels_zone = f"z{i % 3}"
        cpu = str(2 + i % 4) if shape == "mixed-nodes" else "3"
        d: dict[str, Any] = {"metadata": {"name": f"n{i:03d}", "labels": {
            "kubernetes.io/hostname": f"n{i:03d}", "topology.kubernetes.io/zone": labels_zone,
            "tier": "gold" if i % 5 == 0 else "silver"}},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}
        if shape == "taints" and i % 4 == 0:
            d["spec"] = {"taints": [{"key": "k", "value": "v", "effect": "PreferNoSchedule"}]}
        if shape == "images" and i % 3 == 0:
            d["status"]["images"] = [{"names": ["img:1"], "sizeBytes": 500_000_000}]
        from kschedlib import Node
        s.add_node(Node.from_dict(d))
    for i in range(0, 130, 7):
        s.add_pod(pod(f"run{i}", cpu="1", node_name=f"n{i:03d}"))
    extra: dict[str, Any] = {}
    if shape == "preferred-affinity":
        extra = {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "preference": {"matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["gold"]}]}}]}}}
    if shape == "spread":
        extra = {"topologySpreadConstraints": [{"maxSkew": 2, "topologyKey": "topology.kubernetes.io/zone",
                 "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"app": "web"}}}]}
    if shape == "ports":
        extra = {"containers": [{"name": "c", "image": "img:1", "ports": [{"containerPort": 1, "hostPort": 9000}],
                                 "resources": {"requests": {"cpu": "400m"}}}]}
    if shape == "images":
        extra = {"containers": [{"name": "c", "image": "img:1", "resources": {"requests": {"cpu": "400m"}}}]}
    if shape == "nominated":
        import attrs

        blocker = pod("blocker", cpu="2", priority=10)
        s.add_pod(attrs.evolve(blocker, status=attrs.evolve(blocker.status, nominated_node_name="n001")))
        assert s.has_nominated_pods()
    tpl = _template(cpu="400m", spec=extra)
    fast = capacity(s, tpl, limit=150)
    slow = capacity(s, tpl, limit=150, batch=False)
    assert fast.replicas == slow.replicas
    assert fast.stop_reason == slow.stop_reason
    assert fast.count > 50
    assert slow.batched == 0
    # ScheduleAnyway spreading is scored on each replica's window: batched too.
    assert fast.batched == fast.count


def test_bad_input() -> None:
    s = cluster(2)
    with pytest.raises(InvalidObjectError, match="limit"):
        s.capacity(_template(), limit=-1)
    with pytest.raises(InvalidObjectError, match="spec.nodeName"):
        s.capacity(_template(node_name="n0"))
    with pytest.raises(InvalidObjectError, match="schedulerName"):
        s.capacity(_template(spec={"schedulerName": "nope"}))


def test_report_output() -> None:
    s = cluster(2, cpu="1")
    r = s.capacity(_template(cpu="400m"))
    d = r.to_dict()
    assert d["count"] == 4 and d["distribution"] == {"n0": 2, "n1": 2}
    assert len(d["replicas"]) == 4 and d["stopReason"].startswith("0/2 nodes are available")
    text = str(r)
    assert text.splitlines()[0].startswith("4 replica(s) of default/web fit on 2 node(s)")
    assert "NODE" in text and "n0" in text


def test_batched_loop_reaches_the_same_fit_error() -> None:
    s = Scheduler(clock=FakeClock(), seed=3)
    for i in range(110):
        s.add_node(node(f"n{i:03d}", zone=f"z{i % 2}", cpu="1" if i % 3 else "2"))
    tpl = _template(cpu="400m")
    fast, slow = capacity(s, tpl), capacity(s, tpl, batch=False)
    assert fast.count == slow.count == 2 * 73 + 5 * 37
    assert fast.replicas == slow.replicas
    assert fast.stop_reason == slow.stop_reason
    assert fast.stop_reason.startswith("0/110 nodes are available: 110 Insufficient cpu. ")
    assert fast.batched == fast.count


def test_batched_loop_counts_nominated_pods() -> None:
    import attrs

    s = Scheduler(clock=FakeClock(), seed=5)
    for i in range(110):
        s.add_node(node(f"n{i:03d}", zone=f"z{i % 2}", cpu="1"))
    blocker = pod("blocker", cpu="900m", priority=10)
    s.add_pod(attrs.evolve(blocker, status=attrs.evolve(blocker.status, nominated_node_name="n000")))
    tpl = _template(cpu="400m")
    fast, slow = capacity(s, tpl), capacity(s, tpl, batch=False)
    assert fast.replicas == slow.replicas and fast.stop_reason == slow.stop_reason
    assert "n000" not in fast.distribution and fast.count == 2 * 109
    assert fast.batched == fast.count


def test_stop_reason_says_when_the_next_replica_would_fit_by_preempting() -> None:
    s = Scheduler(clock=FakeClock(), seed=1)
    s.add_node(node("n0", cpu="2"))
    s.add_pod(pod("low", cpu="1500m", node_name="n0", priority=1))
    tpl = _template(cpu="1")
    tpl = attrs.evolve(tpl, spec=attrs.evolve(tpl.spec, priority=100))
    r = capacity(s, tpl)
    assert r.count == 0
    assert r.stop_reason == "0/1 nodes are available: 1 Insufficient cpu."
    assert (r.preemption_node, r.preemption_victims) == ("n0", ("default/low",))
    assert "would fit on n0 by preempting default/low" in r.summary()
    assert r.to_dict()["preemption"] == {"node": "n0", "victims": ["default/low"]}
    assert [p.key for p in s.bound_pods()] == ["default/low"]  # nothing was evicted
