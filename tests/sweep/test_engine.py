from __future__ import annotations

import pytest

from kschedlib.errors import InvalidObjectError
from kschedlib.framework.handle import FakeClock
from kschedlib.scheduler import Scheduler
from kschedlib.sweep import BaseCluster, NodeAddition, PodAddition, Variant, run_variant
from kschedlib.sweep.engine import plan_variant
from tests.sweep.cluster_fixtures import node, pod, pod_dict, three_zone_cluster


def test_removed_nodes_take_their_pods_controllers_recreate_theirs() -> None:
    base = three_zone_cluster()
    plan = plan_variant(base, Variant(name="n0-down", remove_nodes=["n0"]))
    assert plan.removed == ["n0"]
    assert [p.metadata.name for p in plan.lost] == ["bare-0"]
    recreated = [p for p in plan.pending if p.metadata.name == "rs-web-0"]
    assert len(recreated) == 1 and recreated[0].spec.node_name == ""
    assert recreated[0].uid != "uid-rs-web-0"
    assert all(p.metadata.name != "ds-agent-0" for p in plan.pending + plan.pods)
    assert len(plan.pending) == 1 + 8


def test_zone_and_label_removal() -> None:
    base = BaseCluster.from_objects([
        node("a", "z1", pool="old"), node("b", "z1"), node("c", "z2", pool="old"), node("d", "z2"),
    ])
    plan = plan_variant(base, Variant(name="v", remove_zones=["z1"], remove_node_labels={"pool": "old"}))
    assert plan.removed == ["a", "b", "c"]
    with pytest.raises(InvalidObjectError, match=r"variant v: removeZones: no node in zone\(s\) \['z9'\]"):
        plan_variant(base, Variant(name="v", remove_zones=["z9"]))


def test_added_nodes_are_named_and_hostname_labelled() -> None:
    base = three_zone_cluster()
    plan = plan_variant(base, Variant(name="v", add_nodes=[NodeAddition(template="n2", count=3)]))
    new = [n for n in plan.nodes if n.metadata.name.startswith("n2-new-")]
    assert [n.metadata.name for n in new] == ["n2-new-0", "n2-new-1", "n2-new-2"]
    assert all(n.metadata.labels["kubernetes.io/hostname"] == n.metadata.name for n in new)
    assert all(n.metadata.labels["topology.kubernetes.io/zone"] == "zone-c" for n in new)
    with pytest.raises(InvalidObjectError, match="addNodes\\[0\\].template"):
        plan_variant(base, Variant(name="v", add_nodes=[NodeAddition(template="zz", count=1)]))


def test_pending_scale_and_added_replicas() -> None:
    base = three_zone_cluster()
    plan = plan_variant(base, Variant(name="v", pending_scale=1.5,
                                      add_pods=[PodAddition(template=pod_dict("api"), count=2)]))
    names = [p.metadata.name for p in plan.pending]
    assert len(names) == 12 + 2
    assert names[8:12] == ["job-0-s1", "job-1-s1", "job-2-s1", "job-3-s1"]
    assert len({p.uid for p in plan.pending}) == len(plan.pending)
    assert all(n.startswith("api-") and len(n) == len("api-") + 5 for n in names[12:])


def test_record_matches_scheduling_the_changed_cluster_directly() -> None:
    base = three_zone_cluster()
    variant = Variant(name="zone-a-down", remove_zones=["zone-a"], pending_scale=2.0)
    rec = run_variant(base, variant)
    # The same cluster, written out by hand and scheduled by a plain Scheduler.
    plan = plan_variant(base, variant)
    clock = FakeClock()
    sched = Scheduler(clock=clock, seed=0)
    sched.apply([*plan.nodes, *plan.pods, *plan.pending])
    for _ in range(120):
        sched.run()
        if not sched.queue.pods_in_backoff_q() and not sched.queue.pods_in_active_q():
            break
        clock.advance(1.0)
    bound = {p.uid for p in sched.bound_pods()}
    expected = sum(1 for p in plan.pending if p.uid in bound)
    assert rec["scheduled"] == expected
    assert rec["unschedulable"] == len(plan.pending) - expected
    assert rec["nodes"] == 4 and rec["nodes_removed"] == 2 and rec["lost_pods"] == 1
    assert sum(rec["reasons"].values()) == rec["unschedulable"]
    assert set(rec["utilization"]) == {"zone-b", "zone-c"}


def test_unschedulable_pods_are_grouped_by_reason() -> None:
    base = BaseCluster.from_objects([node("a", "z1", cpu="2"), *(pod(f"p-{i}", "1") for i in range(5))])
    rec = run_variant(base, Variant(name="small"))
    assert rec["scheduled"] == 2 and rec["unschedulable"] == 3
    (reason, count), = rec["reasons"].items()
    assert count == 3 and "Insufficient cpu" in reason
    assert rec["utilization"]["z1"]["cpu"] == 100.0


def test_preemption_is_counted() -> None:
    base = BaseCluster.from_objects([
        node("a", "z1", cpu="2"), pod("low-0", "2", node_name="a", owner="ReplicaSet"),
        pod("high-0", "2", priority=100),
    ])
    rec = run_variant(base, Variant(name="v"))
    assert rec["preemptions"] == 1 and rec["victims"] == 1 and rec["scheduled"] == 1


def test_feature_gates_per_variant() -> None:
    from kschedlib.sweep.execute import run_sweep

    base = three_zone_cluster()
    res = run_sweep(base, [
        Variant(name="gang-on", feature_gates={"GenericWorkload": True, "GangScheduling": True}),
        Variant(name="bogus", feature_gates={"NoSuchGate": True}),
    ])
    assert res.records[0]["scheduled"] == 8
    assert "NoSuchGate" in res.records[1]["error"]


def test_ordered_ready_statefulset_pods_are_held_until_their_predecessor_runs() -> None:
    sts = {
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "db"}},
                 "template": {"metadata": {"labels": {"app": "db"}},
                              "spec": {"containers": [{"name": "c", "image": "i", "resources": {
                                  "requests": {"cpu": "1"}}}]}}},
    }
    nodes = [node("a", "z1", cpu="2").to_dict()]
    base = BaseCluster.load([*nodes, sts])
    assert len(base.held) == 2
    rec = run_variant(base, Variant(name="v"))
    assert rec["pods_to_schedule"] == 3
    assert rec["scheduled"] == 2 and rec["unschedulable"] == 1


def _study() -> list[Variant]:
    return [
        Variant(name="base"),
        Variant(name="zone-a-down", remove_zones=["zone-a"]),
        Variant(name="n0-down", remove_nodes=["n0"], pending_scale=2.0),
        Variant(name="grow", add_nodes=[NodeAddition(template="n1", count=2)], pending_scale=3.0),
        Variant(name="pods", add_pods=[PodAddition(template=pod_dict("api", "3"), count=4)]),
        Variant(name="labels", remove_node_labels={"topology.kubernetes.io/zone": "zone-b"},
                add_nodes=[NodeAddition(template="n1", count=1, prefix="b-new")]),
    ]


def test_forked_variants_decide_like_variants_built_from_scratch() -> None:
    base = three_zone_cluster()
    for seed in (0, 3):
        for i, v in enumerate(_study()):
            assert run_variant(base, v, i, seed) == run_variant(base, v, i, seed, fork=False), v.name


def test_the_base_scheduler_is_built_once_and_never_changed_by_variants() -> None:
    from kschedlib.sweep import engine

    base = three_zone_cluster()
    first = run_variant(base, Variant(name="zone-a-down", remove_zones=["zone-a"]))
    parent = engine._MEMO.sched
    assert parent is not None and engine._MEMO.base is base
    run_variant(base, Variant(name="x", pending_scale=3.0))
    assert engine._MEMO.sched is parent
    assert len(parent.bound_pods()) == len(base.pods)
    assert run_variant(base, Variant(name="zone-a-down", remove_zones=["zone-a"])) == first


def test_capacity_question_after_the_variant_is_scheduled() -> None:
    from kschedlib.sweep import CapacityQuestion

    base = three_zone_cluster()
    q = CapacityQuestion(template=pod_dict("probe", "1"))
    rec = run_variant(base, Variant(name="cap", capacity=q))
    # 6 nodes x 4 cpu = 24 cpu; running pods ask 5.1, the 8 pending pods 8: 10 more 1-cpu pods.
    assert rec["capacity"] == 10
    assert "Insufficient cpu" in rec["capacity_stop_reason"]
    limited = run_variant(base, Variant(name="cap", capacity=CapacityQuestion(
        template=pod_dict("probe", "1"), limit=3)))
    assert limited["capacity"] == 3 and limited["capacity_stop_reason"] == "limit"
    down = run_variant(base, Variant(name="cap-a-down", remove_zones=["zone-a"], capacity=q))
    assert down["capacity"] < rec["capacity"]
