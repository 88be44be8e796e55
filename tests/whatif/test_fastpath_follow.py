"""capacity()'s batched replica cycle (FastPath) kept across changes it did not make: node
removals (every kept column follows its node to its new position), pods deleted or
scheduled the ordinary way, taints and labels changed. At every replica, the node it picks
is the one a scheduling cycle picks on a fork of the same cluster (same round-robin start
and random state)."""

from __future__ import annotations

import random
from typing import Any

import attrs
import pytest

from kschedlib import FakeClock, Node, Pod, Scheduler
from kschedlib.api.node import Taint
from kschedlib.api.workloads import ReplicaSet
from kschedlib.config.loader import load_config
from kschedlib.framework.types import PodInfo
from kschedlib.results import Outcome
from kschedlib.whatif.capacity.batched import FastPath
from tests.whatif.helpers import pod

ZONE = "topology.kubernetes.io/zone"


def _cluster(seed: int, n: int) -> Scheduler:
    config = load_config({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 30,
    })
    s = Scheduler(config, clock=FakeClock(), seed=seed)
    for f in s.frameworks.values():
        f.post_filter_plugins.clear()  # as in a drain: no preemption, no nominations
    for i in range(n):
        labels = {"kubernetes.io/hostname": f"n{i:03d}"}
        if i % 11:
            labels[ZONE] = f"z{i % 3}"
        s.add_node(Node.from_dict({
            "metadata": {"name": f"n{i:03d}", "labels": labels},
            "status": {"allocatable": {"cpu": str(2 + i % 3), "memory": "8Gi", "pods": "110"}},
        }))
    s.add_object(ReplicaSet.from_dict({
        "metadata": {"name": "rs", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "a"}}},
    }))
    for k in range(2 * n):  # system-default spreading counts these
        s.add_pod(pod(f"b{k:03d}", cpu="200m", node_name=f"n{(k * 7) % n:03d}"))
    return s


TEMPLATES: dict[str, dict[str, Any]] = {
    "default-spreading": {},
    "own-soft-spreading": {"topologySpreadConstraints": [{
        "maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": {"app": "a"}}}]},
    "hostname-soft-spreading": {"topologySpreadConstraints": [{
        "maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": {"app": "a"}}}]},
    "preferred-anti-affinity": {"affinity": {"podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{
            "weight": 50, "podAffinityTerm": {
                "topologyKey": ZONE, "labelSelector": {"matchLabels": {"app": "a"}}}}]}}},
}


def _step(s: Scheduler, rng: random.Random, i: int) -> None:
    """One change the FastPath did not make."""
    names = sorted(s.cache.node_names())
    what = rng.random()
    if what < 0.3 and len(names) > 12:  # a drained node: its pods go, then the node
        name = rng.choice(names)
        for pi in list(s.cache.get_node(name).pods):
            if rng.random() < 0.8:  # the others go with the node
                s.delete_pod(pi.pod)
        s.delete_node(name)
    elif what < 0.5:
        bound = s.bound_pods()
        if bound:
            s.delete_pod(rng.choice(bound))
    elif what < 0.65:  # a taint comes or goes
        name = rng.choice(names)
        obj = s.cache.get_node(name).node
        assert obj is not None
        taints = () if obj.spec.taints else (Taint(key="x", value="", effect="NoSchedule"),)
        s.update_node(attrs.evolve(obj, spec=attrs.evolve(obj.spec, taints=taints)))
    elif what < 0.85:  # another pod, scheduled the ordinary way
        other = pod(f"o{i:03d}", cpu="300m")
        s.add_pod(other)
        s.schedule_pod(other)
    else:  # a node changes zone
        name = rng.choice(names)
        obj = s.cache.get_node(name).node
        assert obj is not None
        labels = {**obj.metadata.labels, ZONE: f"z{rng.randrange(4)}"}
        s.update_node(attrs.evolve(obj, metadata=attrs.evolve(obj.metadata, labels=labels)))


@pytest.mark.parametrize("template", sorted(TEMPLATES))
@pytest.mark.parametrize("seed", [1, 2])
def test_fastpath_across_changes_picks_what_a_cycle_picks(template: str, seed: int) -> None:
    s = _cluster(seed, 60)
    proto = pod("r", cpu="150m", spec=TEMPLATES[template])
    fwk = s.framework_for(proto)
    assert fwk is not None
    fast = FastPath(s, fwk, proto)
    rng = random.Random(seed)
    batched = replicas = 0
    for i in range(160):
        if i % 3 == 2:
            _step(s, rng, i)
            continue
        replicas += 1
        replica: Pod = attrs.evolve(proto, metadata=attrs.evolve(
            proto.metadata, name=f"r{i:03d}", uid=f"default-r{i:03d}"))
        assert replica.spec is proto.spec
        ref = s.fork()
        ref.add_pod(replica)
        want = ref.schedule_pod(replica)
        assert want is not None
        expected = want.node if want.outcome == Outcome.Scheduled else None
        host = fast.schedule(replica)
        if host is None:  # the ordinary way (what FastPath cannot take)
            s.add_pod(replica)
            got = s.schedule_pod(replica)
            assert got is not None
            assert (got.node if got.outcome == Outcome.Scheduled else None) == expected
            if got.outcome != Outcome.Scheduled:
                s.delete_pod(replica)
            continue
        batched += 1
        assert host == expected, f"replica {i}"
        assert s.algorithm.next_start_node_index == ref.algorithm.next_start_node_index
        bound = replica.with_node_name(host)
        s.add_pod(bound)
        fast.placed(replica, PodInfo.of(bound), host)
    assert batched > replicas // 2  # the path was taken, not bypassed
