"""The batched capacity loop for templates with topology spread and pod (anti-)affinity:
the same replicas, node for node, and the same stop reason as scheduling every replica
through ``schedule_pod``, on random clusters (hypothesis)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kschedlib import FakeClock, Node, Scheduler
from kschedlib.api.objects import decode_any
from kschedlib.backend.snapshot import Snapshot
from kschedlib.whatif.capacity import capacity
from tests.whatif.helpers import pod

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def _cluster(n: int, zones: int, unlabelled: int, seed: int, deterministic: bool,
             running: list[tuple[int, str, str]]) -> Scheduler:
    s = Scheduler(clock=FakeClock(), seed=seed, deterministic=deterministic)
    for i in range(n):
        labels = {HOST: f"n{i:03d}"}
        if i >= unlabelled:
            labels[ZONE] = f"z{i % zones}"
        s.add_node(Node.from_dict({
            "metadata": {"name": f"n{i:03d}", "labels": labels},
            "status": {"allocatable": {"cpu": str(1 + i % 3), "memory": "8Gi", "pods": "110"}},
        }))
    for k, (at, app, kind) in enumerate(running):
        spec: dict[str, Any] = {}
        if kind == "anti":
            spec = {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOST}]}}}
        if kind == "preferred":  # scores the replicas through its preferred terms
            spec = {"affinity": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 30, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}},
                                                   "topologyKey": ZONE}}]}}}
        if kind == "hard":  # scores the replicas through hardPodAffinityWeight
            spec = {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOST}]}}}
        s.add_pod(pod(f"run{k}", cpu="300m", node_name=f"n{at % n:03d}", labels={"app": app},
                      owner=None, spec=spec))
    return s


def _template(kind: str, skew: int, key: str, min_domains: int | None) -> Any:
    spec: dict[str, Any] = {}
    sel = {"matchLabels": {"app": "web"}}
    if kind in ("spread", "spread+anti"):
        c: dict[str, Any] = {"maxSkew": skew, "topologyKey": key,
                             "whenUnsatisfiable": "DoNotSchedule", "labelSelector": sel}
        if min_domains is not None:
            c["minDomains"] = min_domains
        spec["topologySpreadConstraints"] = [c]
    if kind in ("anti", "spread+anti"):
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": sel, "topologyKey": HOST if kind == "spread+anti" else key}]}}
    if kind == "affinity":
        spec["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": sel, "topologyKey": key}]}}
    # Scores that are not node-local, scored on each replica's window.
    if kind in ("anyway", "anyway+hostname"):
        spec["topologySpreadConstraints"] = [
            {"maxSkew": skew, "topologyKey": k, "whenUnsatisfiable": "ScheduleAnyway",
             "labelSelector": sel}
            for k in ([key] if kind == "anyway" else [ZONE, HOST])
        ]
    if kind == "preferred-anti":
        spec["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 50, "podAffinityTerm": {"labelSelector": sel, "topologyKey": key}}]}}
    if kind == "preferred-affinity":
        spec["affinity"] = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 20, "podAffinityTerm": {"labelSelector": sel, "topologyKey": key}}]},
            "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 80, "podAffinityTerm": {"labelSelector": sel, "topologyKey": HOST}}]}}
    return pod("web", cpu="400m", labels={"app": "web"}, owner=None, spec=spec)


@settings(max_examples=16, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.sampled_from([12, 105]),
    zones=st.integers(1, 4),
    unlabelled=st.integers(0, 3),
    seed=st.integers(0, 1000),
    deterministic=st.booleans(),
    running=st.lists(
        st.tuples(st.integers(0, 200), st.sampled_from(["web", "other"]),
                  st.sampled_from(["plain", "plain", "anti", "preferred", "hard"])),
        max_size=12,
    ),
    kind=st.sampled_from([
        "spread", "anti", "affinity", "spread+anti",
        "anyway", "anyway+hostname", "preferred-anti", "preferred-affinity",
    ]),
    skew=st.integers(1, 3),
    key=st.sampled_from([ZONE, HOST]),
    min_domains=st.sampled_from([None, None, 2, 5]),
    service=st.booleans(),
)
def test_batched_loop_equals_one_by_one(
    n: int, zones: int, unlabelled: int, seed: int, deterministic: bool,
    running: list[tuple[int, str, str]], kind: str, skew: int, key: str, min_domains: int | None,
    service: bool,
) -> None:
    s = _cluster(n, zones, unlabelled, seed, deterministic, running)
    if service:  # system-default spreading for the templates without constraints of their own
        s.add_object(_service())
    tpl = _template(kind, skew, key, min_domains)
    fast = capacity(s, tpl, limit=70)
    slow = capacity(s, tpl, limit=70)  # the same question twice gives the same answer
    assert fast.replicas == slow.replicas
    reference = capacity(s, tpl, limit=70, batch=False)
    assert fast.replicas == reference.replicas
    assert fast.stop_reason == reference.stop_reason
    assert reference.batched == 0
    if fast.count > 1:
        assert fast.batched == fast.count  # every replica was batched


def test_spread_minimum_after_the_smallest_domain_grows() -> None:
    # Zones fill round by round: the spread minimum moves from domain to domain, which the
    # two critical paths AddPod keeps cannot follow; the batched loop recounts it.
    s = _cluster(130, 3, 0, 4, False, [])
    tpl = _template("spread", 1, ZONE, None)
    fast, slow = capacity(s, tpl, limit=120), capacity(s, tpl, limit=120, batch=False)
    assert fast.replicas == slow.replicas and fast.batched == 120
    per_zone = [0, 0, 0]
    for _name, node in fast.replicas:
        per_zone[int(node[1:]) % 3] += 1
    assert max(per_zone) - min(per_zone) <= 1


def test_next_start_index_counts_rejected_nodes_after_the_window() -> None:
    # 130 nodes, 100 to find: full nodes after the last needed feasible node are counted
    # into the next start index, as the cycle checks them before it stops.
    s = _cluster(130, 2, 0, 9, False, [])
    for i in range(0, 130, 2):
        s.add_pod(pod(f"fill{i}", cpu=str(1 + i % 3), node_name=f"n{i:03d}", owner=None))
    tpl = pod("plain", cpu="400m", owner=None)
    fast, slow = capacity(s, tpl, limit=60), capacity(s, tpl, limit=60, batch=False)
    assert fast.replicas == slow.replicas and fast.batched == 60


def test_unshare_keeps_the_affinity_lists_exact() -> None:
    # A forked snapshot replaces shared NodeInfos in its affinity lists by bisection.
    s = _cluster(12, 3, 0, 1, False, [(i, "web", "anti") for i in range(0, 12, 3)])
    s.cache.update_snapshot(s.snapshot)
    fork = s.fork()
    fork.add_pod(pod("x", node_name="n003", owner=None, labels={"app": "x"}))
    fork.add_pod(pod("y", node_name="n004", owner=None, labels={"app": "x"}))
    fork.cache.update_snapshot(fork.snapshot)
    snap: Snapshot = fork.snapshot
    by_name = {ni.name: ni for ni in snap.node_info_list}
    listed = snap.have_pods_with_affinity_node_info_list
    assert [ni.name for ni in listed] == ["n000", "n003", "n006", "n009"]
    assert all(ni is by_name[ni.name] for ni in listed)
    assert all(ni is by_name[ni.name] for ni in snap.have_pods_with_required_anti_affinity_node_info_list)


def _service() -> Any:
    return decode_any({"kind": "Service", "metadata": {"name": "web", "namespace": "default"},
                       "spec": {"selector": {"app": "web"}}})


def test_system_default_spreading_of_a_service_is_batched() -> None:
    # A Service selects the template's pods: PodTopologySpread's system-default constraints
    # (ScheduleAnyway, zone and hostname) score the replicas, which carry no constraint of
    # their own. The first replica finds that out with its PreScore, and scores on its
    # window with it; the next ones keep their own states.
    s = _cluster(105, 3, 2, 7, False, [(i, "web", "plain") for i in range(0, 105, 9)])
    s.add_object(_service())
    tpl = pod("web", cpu="400m", labels={"app": "web"}, owner=None)
    fast, slow = capacity(s, tpl, limit=80), capacity(s, tpl, limit=80, batch=False)
    assert fast.replicas == slow.replicas and fast.stop_reason == slow.stop_reason
    assert fast.batched == fast.count == 80
