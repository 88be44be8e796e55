"""simulate_drain / removable_nodes / add_nodes_like with cluster-autoscaler's rules."""

from __future__ import annotations

import datetime as dt
from typing import Any

import attrs
import pytest

from kschedlib import FakeClock, Scheduler
from kschedlib.api.workloads import DaemonSet, Job, PodDisruptionBudget, ReplicaSet
from kschedlib.errors import InvalidObjectError
from tests.whatif.helpers import cache_view, node, pod


def _cluster(cpu: str = "4") -> Scheduler:
    s = Scheduler(clock=FakeClock(), seed=2)
    for n in ("a", "b", "c"):
        s.add_node(node(n, cpu=cpu))
    s.add_object(ReplicaSet.from_dict({"metadata": {"name": "rs", "namespace": "default"}}))
    return s


def _actions(report: object) -> dict[str, tuple[str, str | None]]:
    return {p.pod: (p.action, p.destination) for p in report.pods}  # type: ignore[attr-defined]


def test_movable_pods_are_rescheduled_and_daemonset_and_mirror_pods_stay() -> None:
    s = _cluster()
    s.add_pod(pod("web", cpu="1", node_name="a"))
    s.add_pod(pod("ds", node_name="a", owner=("DaemonSet", "agent")))
    s.add_pod(pod("static", node_name="a", owner=None, annotations={"kubernetes.io/config.mirror": "x"}))
    s.add_object(DaemonSet.from_dict({"metadata": {"name": "agent", "namespace": "default"}}))
    before = cache_view(s)
    r = s.simulate_drain(["a"])
    assert r.success
    acts = _actions(r)
    assert acts["default/web"][0] == "moved" and acts["default/web"][1] in ("b", "c")
    assert acts["default/ds"] == ("stays", None)
    assert acts["default/static"] == ("stays", None)
    assert cache_view(s) == before  # the scheduler asked is unchanged
    assert r.summary().startswith("a: can be drained")


def test_blockers() -> None:
    s = _cluster()
    s.add_pod(pod("bare", node_name="a", owner=None))
    s.add_pod(pod("nse", node_name="b", annotations={"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}))
    s.add_pod(pod("local", node_name="c", volumes=[{"name": "scratch", "emptyDir": {}}]))
    s.add_pod(pod("mem", node_name="c", volumes=[{"name": "m", "emptyDir": {"medium": "Memory"}}]))
    s.add_pod(pod("allowed", node_name="c", volumes=[{"name": "s", "emptyDir": {}}],
                  annotations={"cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes": "s"}))
    s.add_pod(pod("orphan", node_name="c", owner=("ReplicaSet", "gone")))
    s.add_pod(pod("sys", ns="kube-system", node_name="c"))
    s.add_object(ReplicaSet.from_dict({"metadata": {"name": "rs", "namespace": "kube-system"}}))
    r = s.simulate_drain(["a", "b", "c"])
    assert not r.success
    reasons = {p.pod: p.reason for p in r.pods}
    assert reasons["default/bare"] == "NotReplicated: default/bare is not replicated"
    assert reasons["default/nse"] == (
        "NotSafeToEvictAnnotation: pod annotated as not safe to evict present: nse"
    )
    assert reasons["default/local"] == "LocalStorageRequested: pod with local storage present: local"
    assert _actions(r)["default/mem"][0] != "blocked"
    assert _actions(r)["default/allowed"][0] != "blocked"
    assert reasons["default/orphan"].startswith("ControllerNotFound: ")
    assert reasons["kube-system/sys"].startswith("UnmovableKubeSystemPod: ")
    assert {b.pod for b in r.blockers} >= {"default/bare", "default/nse", "default/local"}


def test_safe_to_evict_true_overrides_the_blocking_rules() -> None:
    s = _cluster()
    s.add_pod(pod("bare", node_name="a", owner=None, volumes=[{"name": "h", "hostPath": {"path": "/x"}}],
                  annotations={"cluster-autoscaler.kubernetes.io/safe-to-evict": "true"}))
    r = s.simulate_drain(["a"])
    assert r.success and _actions(r)["default/bare"][0] == "moved"


def test_pdb_budget_is_consumed_node_by_node() -> None:
    s = _cluster()
    s.add_object(PodDisruptionBudget.from_dict({
        "metadata": {"name": "pdb", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "db"}}},
        "status": {"disruptionsAllowed": 1}}))
    s.add_pod(pod("db-0", node_name="a", labels={"app": "db"}))
    s.add_pod(pod("db-1", node_name="b", labels={"app": "db"}))
    s.add_pod(pod("db-2", node_name="b", labels={"app": "db"}))
    # cluster-autoscaler's pdb rule checks each pod on its own: one node's pods all pass
    assert s.simulate_drain(["b"]).success
    # the budget the first node took is gone for the next one
    r = s.simulate_drain(["a", "b"])
    acts = _actions(r)
    assert acts["default/db-0"][0] == "moved"
    assert acts["default/db-1"][0] == "blocked"
    assert [p.reason for p in r.pods if p.pod == "default/db-1"] == [
        "NotEnoughPdb: not enough pod disruption budget to move default/db-1"
    ]
    assert not r.success
    # a kube-system pod with a PDB is not a system-pod blocker
    s.add_object(PodDisruptionBudget.from_dict({
        "metadata": {"name": "sys", "namespace": "kube-system"},
        "spec": {"selector": {"matchLabels": {"app": "dns"}}}, "status": {"disruptionsAllowed": 3}}))
    s.add_pod(pod("dns", ns="kube-system", node_name="b", labels={"app": "dns"},
                  owner=("ReplicaSet", "rs")))
    s.add_object(ReplicaSet.from_dict({"metadata": {"name": "rs", "namespace": "kube-system"}}))
    assert _actions(s.simulate_drain(["b"]))["kube-system/dns"][0] == "moved"


def test_movable_pod_without_room_makes_the_drain_fail() -> None:
    s = _cluster(cpu="2")
    s.add_pod(pod("big", cpu="1500m", node_name="a"))
    s.add_pod(pod("fill-b", cpu="1", node_name="b"))
    s.add_pod(pod("fill-c", cpu="1", node_name="c"))
    r = s.simulate_drain(["a"])
    assert not r.success
    res = r.pods[0]
    assert res.action == "unschedulable"
    # the drained node is still there, tainted, while its pods are placed (cluster-autoscaler)
    assert res.reason.startswith(
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu.")
    assert s.simulate_drain(["a", "zzz"]).missing_nodes == ("zzz",)


def test_long_terminating_pods_are_ignored() -> None:
    s = _cluster()
    p = pod("old", node_name="a", owner=None)
    meta = attrs.evolve(p.metadata, deletion_timestamp=dt.datetime.fromtimestamp(
        s.clock.now() - 3600, tz=dt.timezone.utc))
    s.add_pod(attrs.evolve(p, metadata=meta))
    r = s.simulate_drain(["a"])
    assert r.success and _actions(r)["default/old"] == ("ignored", None)


def test_removable_nodes_one_after_another() -> None:
    s = _cluster(cpu="2")
    s.add_pod(pod("p-a", cpu="300m", node_name="a"))
    s.add_pod(pod("p-b", cpu="500m", node_name="b"))
    s.add_pod(pod("p-c", cpu="1500m", node_name="c"))
    before = cache_view(s)
    r = s.removable_nodes()
    # a (0.15) goes first, its pod lands on b or c; then b (now 0.4 or 0.25) can go too,
    # but only if its pods fit on what is left.
    assert [n.node for n in r.removable][0] == "a"
    assert "c" in r.not_removable
    assert cache_view(s) == before
    assert r.to_dict()["removable"][0]["node"] == "a"
    assert "removable" in str(r)


def test_removable_nodes_pauses_the_collector_and_leaves_it_as_found(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import gc

    from kschedlib.whatif import drain

    s = _cluster(cpu="2")
    s.add_pod(pod("p-a", cpu="300m", node_name="a"))
    seen: list[bool] = []
    real = drain._Checkpointed.drain

    def spy(self: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return real(self, *args, **kwargs)

    monkeypatch.setattr(drain._Checkpointed, "drain", spy)
    was = gc.isenabled()
    try:
        gc.enable()
        first = s.removable_nodes()
        assert gc.isenabled() and seen == [False]
        gc.disable()
        assert s.removable_nodes() == first and not gc.isenabled()
    finally:
        if was:
            gc.enable()


def test_add_nodes_like() -> None:
    s = _cluster()
    f = s.fork()
    added = f.add_nodes_like("a", 3)
    assert [n.metadata.name for n in added] == ["a-copy-0", "a-copy-1", "a-copy-2"]
    assert all(n.metadata.labels["kubernetes.io/hostname"] == n.metadata.name for n in added)
    assert len({n.metadata.uid for n in added}) == 3
    more = f.add_nodes_like(added[0], 1, prefix="a-copy")
    assert [n.metadata.name for n in more] == ["a-copy-3"]
    assert "a-copy-0" not in s.cache.node_names()
    with pytest.raises(InvalidObjectError):
        s.add_nodes_like("nope", 1)
    with pytest.raises(InvalidObjectError):
        s.add_nodes_like("a", -1)


def test_removable_nodes_carry_pdb_budgets_across_removals() -> None:
    s = _cluster(cpu="4")
    s.add_object(PodDisruptionBudget.from_dict({
        "metadata": {"name": "pdb", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "db"}}},
        "status": {"disruptionsAllowed": 1}}))
    s.add_pod(pod("db-0", cpu="100m", node_name="a", labels={"app": "db"}))
    s.add_pod(pod("db-1", cpu="200m", node_name="b", labels={"app": "db"}))
    s.add_pod(pod("big", cpu="3", node_name="c"))
    r = s.removable_nodes()
    assert [n.node for n in r.removable] == ["a"]
    assert "NotEnoughPdb" in r.not_removable["b"]


def test_a_drained_node_keeps_its_topology_domain() -> None:
    """cluster-autoscaler PR 9288: the drained node stays as a tainted ghost without pods while
    its pods are placed, so hard topology spread still counts its zone (nodeTaintsPolicy
    Ignore): draining the only node of a zone fails when the spread would be violated."""
    s = Scheduler(clock=FakeClock(), seed=2)
    for name, zone in (("a", "z1"), ("b", "z2"), ("c", "z2")):
        s.add_node(node(name, cpu="4", zone=zone))
    s.add_object(ReplicaSet.from_dict({"metadata": {"name": "rs", "namespace": "default"}}))
    spread = {"topologySpreadConstraints": [{
        "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "a"}}}]}
    s.add_pod(pod("w-a", node_name="a", spec=spread))
    s.add_pod(pod("w-b", node_name="b", spec=spread))
    r = s.simulate_drain(["a"])
    assert not r.success  # z1 would have 0 pods, z2 2: skew 2 > 1
    (res,) = [p for p in r.pods if p.pod == "default/w-a"]
    assert res.action == "unschedulable"
    assert "didn't match pod topology spread constraints" in res.reason
    assert "untolerated taint" in res.reason
    assert "a" in s.cache.node_names()  # the scheduler asked is unchanged
    removable = s.removable_nodes(["a"])
    assert [n.node for n in removable.removable] == []


@pytest.mark.parametrize(
    ("kind", "api_version", "reason"),
    [
        ("Job", "batch/v1", "ControllerNotFound: job for default/p is not available"),
        ("DaemonSet", "apps/v1", "ControllerNotFound: daemonset for default/p is not present"),
        ("ReplicationController", "v1",
         "ControllerNotFound: replication controller for default/p is not available"),
        ("StatefulSet", "apps/v1", "ControllerNotFound: statefulset for default/p is not available"),
    ],
)
def test_every_controller_kind_cluster_autoscaler_looks_up(kind: str, api_version: str,
                                                          reason: str) -> None:
    s = _cluster()
    p = pod("p", node_name="a", owner=(kind, "gone"))
    owner = attrs.evolve(p.metadata.owner_references[0], api_version=api_version)
    s.add_pod(attrs.evolve(p, metadata=attrs.evolve(p.metadata, owner_references=(owner,))))
    r = s.simulate_drain(["a"])
    assert not r.success
    assert [(x.action, x.reason) for x in r.pods] == [("blocked", reason)]


def test_present_job_and_daemonset_controllers_and_other_kinds() -> None:
    s = _cluster()
    s.add_object(Job.from_dict({"metadata": {"name": "batch", "namespace": "default"}}))
    s.add_object(DaemonSet.from_dict({"metadata": {"name": "agent", "namespace": "default"}}))
    s.add_pod(pod("job-pod", node_name="a", owner=("Job", "batch")))
    s.add_pod(pod("ds-pod", node_name="a", owner=("DaemonSet", "agent")))
    s.add_pod(pod("custom", node_name="b", owner=("MyController", "x")))  # not looked up
    r = s.simulate_drain(["a"])
    assert r.success
    assert _actions(r)["default/ds-pod"] == ("stays", None)
    assert _actions(r)["default/job-pod"][0] == "moved"
    r = s.simulate_drain(["b"])
    assert [(x.action, x.reason) for x in r.pods] == [
        ("blocked", "NotReplicated: default/custom is not replicated")]


def test_add_nodes_like_copies_daemonset_pods_as_the_scale_up_template() -> None:
    """SanitizedTemplateNodeInfoFromNodeInfo: the copies carry the example's DaemonSet (and
    mirror) pods, renamed; a pod that fits only without them is not schedulable there."""
    from kschedlib.whatif.nodes import add_nodes_like

    s = Scheduler(clock=FakeClock(), seed=2)
    s.add_node(node("a", cpu="4"))
    s.add_object(DaemonSet.from_dict({"metadata": {"name": "agent", "namespace": "default"}}))
    s.add_pod(pod("agent-x", cpu="1", node_name="a", owner=("DaemonSet", "agent")))
    s.add_pod(pod("web", cpu="2500m", node_name="a"))
    f = s.fork()
    (copy,) = f.add_nodes_like("a", 1)
    assert {p.key: p.spec.node_name for p in f.bound_pods() if p.spec.node_name == copy.metadata.name} == {
        "default/agent-x-a-copy-0": "a-copy-0"}
    verdict = f.can_schedule(pod("big", cpu="3500m"))
    assert not verdict.schedulable  # 4 - 1 (the DaemonSet pod) < 3.5
    bare = s.fork()
    add_nodes_like(bare, "a", 1, with_daemonset_pods=False)
    assert bare.can_schedule(pod("big", cpu="3500m")).schedulable
