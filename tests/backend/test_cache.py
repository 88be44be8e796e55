"""Cache: assumed pods, ghost nodes, errors, image states, PVCs and incremental snapshots."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import attrs
import pytest

import kschedlib.backend.cache.cache as cache_module
from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.backend.cache import Cache, InconsistentSnapshotError
from kschedlib.backend.snapshot import Snapshot
from kschedlib.errors import CacheError
from kschedlib.framework.handle import FakeClock
from kschedlib.framework.types import ImageStateSummary, NodeInfo, PodInfo

# ---- builders (shared with the state-machine test) ----------------------------------------


def make_node(
    name: str,
    *,
    zone: str | None = None,
    region: str = "r1",
    cpu: str = "4",
    memory: str = "8Gi",
    images: Sequence[tuple[Sequence[str], int]] = (),
    labels: dict[str, str] | None = None,
) -> Node:
    lbls = dict(labels or {})
    if zone is not None:
        lbls["topology.kubernetes.io/region"] = region
        lbls["topology.kubernetes.io/zone"] = zone
    alloc = {"cpu": cpu, "memory": memory, "pods": "110"}
    return Node.from_dict(
        {
            "metadata": {"name": name, "labels": lbls},
            "status": {
                "capacity": alloc,
                "allocatable": alloc,
                "images": [{"names": list(n), "sizeBytes": s} for n, s in images],
            },
        }
    )


def make_pod(
    name: str,
    node: str = "",
    *,
    uid: str | None = None,
    cpu: str | None = "100m",
    memory: str | None = "100Mi",
    namespace: str = "default",
    host_port: int = 0,
    pvcs: Sequence[str] = (),
    affinity: bool = False,
    anti_affinity: bool = False,
    labels: dict[str, str] | None = None,
) -> Pod:
    requests = {}
    if cpu is not None:
        requests["cpu"] = cpu
    if memory is not None:
        requests["memory"] = memory
    container: dict[str, Any] = {"name": "c", "resources": {"requests": requests}}
    if host_port:
        container["ports"] = [{"containerPort": 80, "hostPort": host_port}]
    spec: dict[str, Any] = {
        "nodeName": node,
        "containers": [container],
        "volumes": [
            {"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(pvcs)
        ],
    }
    term = {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"}
    aff: dict[str, Any] = {}
    if affinity:
        aff["podAffinity"] = {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1, "podAffinityTerm": term}
            ]
        }
    if anti_affinity:
        aff["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
    if aff:
        spec["affinity"] = aff
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels or {}}
    if uid is not None:
        meta["uid"] = uid
    return Pod.from_dict({"metadata": meta, "spec": spec})


def on(pod: Pod, node: str) -> Pod:
    return pod.with_node_name(node)


def fingerprint(cache: Cache) -> Any:
    """Everything observable about the cache's state, generations included."""
    items = []
    item = cache._head
    while item is not None:
        info = item.info
        items.append(
            (
                item.name,
                info.node,
                info.generation,
                tuple(p.uid for p in info.pods),
                tuple(p.uid for p in info.pods_with_affinity),
                tuple(p.uid for p in info.pods_with_required_anti_affinity),
                attrs.astuple(info.requested),
                attrs.astuple(info.non_zero_requested),
                dict(info.used_ports),
                dict(info.pvc_ref_counts),
                item.images,
            )
        )
        item = item.next
    return (
        items,
        sorted(cache._nodes),
        {k: (v.pod, v.deadline, v.binding_finished) for k, v in cache._pod_states.items()},
        frozenset(cache._assumed),
        cache._tree.list(),
        {k: (v.size, frozenset(v.nodes)) for k, v in cache._images.items()},
    )


def names(infos: Sequence[NodeInfo]) -> list[str]:
    return [n.name for n in infos]


def snapshot_of(cache: Cache) -> Snapshot:
    snap = Snapshot()
    cache.update_snapshot(snap)
    return snap


@pytest.fixture
def copies(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Records the name of every NodeInfo the cache copies."""
    seen: list[str] = []
    real = cache_module.copy_node_info

    def counting(dst: NodeInfo, src: NodeInfo) -> None:
        seen.append(src.name)
        real(dst, src)

    monkeypatch.setattr(cache_module, "copy_node_info", counting)
    yield seen


# ---- assumed pods ----------------------------------------------------------------------------


def test_assume_accounts_the_pod_at_once() -> None:
    cache = Cache()
    cache.add_node(make_node("n1"))
    pod = make_pod("p1", "n1", cpu="500m", memory="1Gi", host_port=8080)
    cache.assume_pod(pod)
    assert cache.is_assumed_pod(pod)
    info = cache.get_node("n1")
    assert [p.pod for p in info.pods] == [pod]
    assert info.requested.milli_cpu == 500
    assert info.requested.memory == 1 << 30
    assert info.used_ports.check_conflict("", "TCP", 8080)
    snap = snapshot_of(cache)
    assert snap.get("n1").requested.milli_cpu == 500


def test_assume_twice_raises_and_changes_nothing() -> None:
    cache = Cache()
    cache.add_node(make_node("n1"))
    pod = make_pod("p1", "n1", uid="u1")
    cache.assume_pod(pod)
    before = fingerprint(cache)
    with pytest.raises(
        CacheError, match=r"pod u1\(default/p1\) is in the cache, so can't be assumed"
    ):
        cache.assume_pod(pod)
    with pytest.raises(CacheError, match="can't be assumed"):
        cache.assume_pod(on(pod, "n2"))
    assert fingerprint(cache) == before


def test_assume_a_pod_already_added_raises() -> None:
    cache = Cache()
    pod = make_pod("p1", "n1")
    cache.add_pod(pod)
    before = fingerprint(cache)
    with pytest.raises(CacheError, match="default/p1 is in the cache"):
        cache.assume_pod(pod)
    assert fingerprint(cache) == before


def test_assume_without_node_name_raises() -> None:
    cache = Cache()
    with pytest.raises(CacheError, match="has no spec.nodeName"):
        cache.assume_pod(make_pod("p1"))
    assert cache.pod_count() == 0
    assert cache.node_count() == 0


def test_add_confirms_assumed_pod_with_the_real_object() -> None:
    cache = Cache()
    cache.add_node(make_node("n1"))
    assumed = make_pod("p1", "n1", cpu="100m")
    cache.assume_pod(assumed)
    bound = make_pod("p1", "n1", cpu="300m", labels={"bound": "yes"})
    cache.add_pod(bound)
    assert not cache.is_assumed_pod(bound)
    assert cache.get_pod(assumed) is bound
    info = cache.get_node("n1")
    assert [p.pod for p in info.pods] == [bound]
    assert info.requested.milli_cpu == 300


def test_add_confirms_assumed_pod_on_another_node() -> None:
    cache = Cache()
    cache.add_node(make_node("n1"))
    cache.add_node(make_node("n2"))
    cache.assume_pod(make_pod("p1", "n1", cpu="200m"))
    snap = snapshot_of(cache)
    assert snap.get("n1").requested.milli_cpu == 200
    cache.add_pod(make_pod("p1", "n2", cpu="200m"))
    cache.update_snapshot(snap)
    assert snap.get("n1").requested.milli_cpu == 0
    assert snap.get("n1").pods == []
    assert snap.get("n2").requested.milli_cpu == 200
    assert cache.pod_count() == 1
    assert cache.get_pod(make_pod("p1")).spec.node_name == "n2"


def test_add_twice_raises_and_changes_nothing() -> None:
    cache = Cache()
    pod = make_pod("p1", "n1")
    cache.add_pod(pod)
    before = fingerprint(cache)
    with pytest.raises(CacheError, match="pod default/p1 was already in added state"):
        cache.add_pod(pod)
    assert fingerprint(cache) == before


def test_forget_assumed_pod() -> None:
    cache = Cache()
    cache.add_node(make_node("n1"))
    pod = make_pod("p1", "n1", cpu="1")
    cache.assume_pod(pod)
    cache.forget_pod(pod)
    assert not cache.is_assumed_pod(pod)
    assert cache.pod_count() == 0
    assert cache.get_node("n1").requested.milli_cpu == 0
    with pytest.raises(CacheError, match="does not exist in scheduler cache"):
        cache.get_pod(pod)


def test_forget_refuses_pods_that_are_not_assumed() -> None:
    cache = Cache()
    added = make_pod("p1", "n1")
    cache.add_pod(added)
    before = fingerprint(cache)
    with pytest.raises(CacheError, match="pod default/p1 wasn't assumed so cannot be forgotten"):
        cache.forget_pod(added)
    with pytest.raises(CacheError, match="default/p2 wasn't assumed"):
        cache.forget_pod(make_pod("p2", "n1"))
    assert fingerprint(cache) == before


def test_forget_refuses_pod_assumed_on_another_node() -> None:
    cache = Cache()
    pod = make_pod("p1", "n1")
    cache.assume_pod(pod)
    before = fingerprint(cache)
    with pytest.raises(CacheError, match='on node "n1", not on "n2"'):
        cache.forget_pod(on(pod, "n2"))
    assert fingerprint(cache) == before
    assert cache.is_assumed_pod(pod)


def test_forget_after_confirmation_raises() -> None:
    cache = Cache()
    pod = make_pod("p1", "n1")
    cache.assume_pod(pod)
    cache.add_pod(pod)
    with pytest.raises(CacheError, match="wasn't assumed"):
        cache.forget_pod(pod)


def test_update_of_assumed_pod_is_refused() -> None:
    cache = Cache()
    pod = make_pod("p1", "n1")
    cache.assume_pod(pod)
    before = fingerprint(cache)
    with pytest.raises(CacheError, match="assumed pod default/p1 should not be updated"):
        cache.update_pod(pod, make_pod("p1", "n1", cpu="2"))
    assert fingerprint(cache) == before


def test_update_unknown_pod_raises() -> None:
    cache = Cache()
    with pytest.raises(CacheError, match="not added to scheduler cache, so cannot be updated"):
        cache.update_pod(make_pod("p1", "n1"), make_pod("p1", "n1"))
    assert cache.pod_count() == 0


def test_update_pod_on_another_node_or_with_another_uid_raises() -> None:
    cache = Cache()
    pod = make_pod("p1", "n1", uid="u1")
    cache.add_pod(pod)
    before = fingerprint(cache)
    with pytest.raises(CacheError, match='updated on node "n2", different from .* \\("n1"\\)'):
        cache.update_pod(pod, on(pod, "n2"))
    with pytest.raises(CacheError, match="the UIDs differ"):
        cache.update_pod(pod, make_pod("p1", "n1", uid="u2"))
    assert fingerprint(cache) == before


def test_update_pod_replaces_aggregates() -> None:
    cache = Cache()
    cache.add_node(make_node("n1"))
    old = make_pod("p1", "n1", cpu="100m", host_port=80, pvcs=["c1"])
    cache.add_pod(old)
    new = make_pod("p1", "n1", cpu="700m", host_port=81, pvcs=["c2"], anti_affinity=True)
    cache.update_pod(old, new)
    info = cache.get_node("n1")
    assert info.requested.milli_cpu == 700
    assert not info.used_ports.check_conflict("", "TCP", 80)
    assert info.used_ports.check_conflict("", "TCP", 81)
    assert info.pvc_ref_counts == {"default/c2": 1}
    assert [p.pod for p in info.pods_with_required_anti_affinity] == [new]
    assert cache.get_pod(old) is new


def test_remove_pod_errors() -> None:
    cache = Cache()
    pod = make_pod("p1", "n1")
    with pytest.raises(CacheError, match="not found in scheduler cache, so cannot be removed"):
        cache.remove_pod(pod)
    cache.add_pod(pod)
    before = fingerprint(cache)
    with pytest.raises(CacheError, match='cached on node "n1", not on "n2"'):
        cache.remove_pod(on(pod, "n2"))
    assert fingerprint(cache) == before


def test_remove_pod_with_empty_node_name_removes_the_cached_pod() -> None:
    # The informer may hand back a last-known state without spec.nodeName.
    cache = Cache()
    cache.add_node(make_node("n1"))
    cache.add_pod(make_pod("p1", "n1", cpu="1"))
    cache.remove_pod(make_pod("p1", ""))
    assert cache.pod_count() == 0
    assert cache.get_node("n1").requested.milli_cpu == 0


def test_remove_assumed_pod_is_allowed() -> None:
    cache = Cache()
    pod = make_pod("p1", "n1")
    cache.assume_pod(pod)
    cache.remove_pod(pod)
    assert not cache.is_assumed_pod(pod)
    assert cache.pod_count() == 0
    assert cache.node_count() == 0


def test_pods_are_keyed_by_uid_then_namespace_and_name() -> None:
    cache = Cache()
    cache.add_pod(make_pod("p", "n1", uid="u1"))
    cache.add_pod(make_pod("p", "n1", uid="u2"))
    cache.add_pod(make_pod("p", "n1", namespace="other"))
    assert cache.pod_count() == 3
    assert cache.get_pod(make_pod("x", uid="u2")).metadata.uid == "u2"
    with pytest.raises(CacheError, match="already in added state"):
        cache.add_pod(make_pod("p", "n1", namespace="other"))


# ---- assumed pod expiry -------------------------------------------------------------------


def test_assumed_pods_expire_after_ttl_once_binding_finished() -> None:
    clock = FakeClock(100.0)
    cache = Cache(ttl=10.0, clock=clock)
    cache.add_node(make_node("n1"))
    bound = make_pod("p1", "n1")
    pending = make_pod("p2", "n1")
    cache.assume_pod(bound)
    cache.assume_pod(pending)
    cache.finish_binding(bound)  # deadline 110
    clock.advance(10.0)
    assert cache.cleanup_assumed_pods() == []  # deadline reached, not passed
    clock.advance(0.5)
    assert cache.cleanup_assumed_pods() == [bound]
    # Binding of p2 never finished: it never expires.
    clock.advance(1000.0)
    assert cache.cleanup_assumed_pods() == []
    assert cache.is_assumed_pod(pending)
    assert not cache.is_assumed_pod(bound)
    assert [p.pod for p in cache.get_node("n1").pods] == [pending]
    # An Add event for an expired pod adds it back.
    cache.add_pod(bound)
    assert cache.pod_count() == 2


def test_finish_binding_with_explicit_now() -> None:
    cache = Cache(ttl=5.0, clock=FakeClock(0.0))
    pod = make_pod("p1", "n1")
    cache.assume_pod(pod)
    cache.finish_binding(pod, now=50.0)
    assert cache.cleanup_expired_assumed_pods(55.0) == []
    assert cache.cleanup_expired_assumed_pods(55.1) == [pod]


def test_zero_ttl_never_expires() -> None:
    clock = FakeClock(0.0)
    cache = Cache(clock=clock)
    pod = make_pod("p1", "n1")
    cache.assume_pod(pod)
    cache.finish_binding(pod)
    assert cache.cleanup_expired_assumed_pods(1e12) == []
    assert cache.is_assumed_pod(pod)


def test_confirmed_pod_does_not_expire() -> None:
    clock = FakeClock(0.0)
    cache = Cache(ttl=1.0, clock=clock)
    pod = make_pod("p1", "n1")
    cache.assume_pod(pod)
    cache.finish_binding(pod)
    cache.add_pod(pod)
    clock.advance(100)
    assert cache.cleanup_assumed_pods() == []
    assert cache.pod_count() == 1


def test_finish_binding_of_unknown_or_confirmed_pod_is_a_noop() -> None:
    cache = Cache(ttl=1.0, clock=FakeClock(0.0))
    cache.finish_binding(make_pod("ghost", "n1"))
    pod = make_pod("p1", "n1")
    cache.add_pod(pod)
    before = fingerprint(cache)
    cache.finish_binding(pod)
    assert fingerprint(cache) == before


def test_negative_ttl_is_rejected() -> None:
    with pytest.raises(ValueError, match="ttl"):
        Cache(ttl=-1)


# ---- nodes and ghost nodes ----------------------------------------------------------------


def test_remove_node_with_pods_keeps_a_ghost() -> None:
    cache = Cache()
    cache.add_node(make_node("n1"))
    cache.add_node(make_node("n2"))
    pod = make_pod("p1", "n1", cpu="1")
    cache.add_pod(pod)
    snap = snapshot_of(cache)
    cache.remove_node(make_node("n1"))
    assert cache.node_count() == 2  # the ghost stays
    assert cache.pod_count() == 1
    assert cache.get_pod(pod) is pod
    ghost = cache.get_node("n1")
    assert ghost.node is None
    assert ghost.requested.milli_cpu == 1000
    assert cache.node_names() == ["n2"]
    cache.update_snapshot(snap)
    assert names(snap.list()) == ["n2"]
    assert "n1" not in snap.node_info_map
    with pytest.raises(KeyError, match="nodeinfo not found"):
        snap.get("n1")
    assert names(snapshot_of(cache).list()) == ["n2"]
    # The ghost goes with its last pod.
    cache.remove_pod(pod)
    assert cache.node_count() == 1
    cache.update_snapshot(snap)
    assert names(snap.list()) == ["n2"]


def test_remove_node_without_pods_drops_it() -> None:
    cache = Cache()
    cache.add_node(make_node("n1"))
    cache.remove_node("n1")
    assert cache.node_count() == 0
    assert snapshot_of(cache).list() == []


def test_readding_a_ghost_node_restores_it_with_its_pods() -> None:
    cache = Cache()
    cache.add_node(make_node("n1", cpu="2"))
    cache.add_pod(make_pod("p1", "n1", cpu="1"))
    snap = snapshot_of(cache)
    cache.remove_node("n1")
    cache.update_snapshot(snap)
    assert snap.list() == []
    cache.add_node(make_node("n1", cpu="8"))
    cache.update_snapshot(snap)
    info = snap.get("n1")
    assert info.allocatable.milli_cpu == 8000
    assert info.requested.milli_cpu == 1000
    assert [p.pod.name for p in info.pods] == ["p1"]


def test_remove_unknown_or_already_removed_node_raises_and_changes_nothing() -> None:
    cache = Cache()
    with pytest.raises(CacheError, match='node "n9" is not found'):
        cache.remove_node(make_node("n9"))
    cache.add_node(make_node("n1"))
    cache.add_pod(make_pod("p1", "n1"))
    cache.remove_node("n1")
    before = fingerprint(cache)
    with pytest.raises(CacheError, match='node "n1" is not found: it was already removed'):
        cache.remove_node("n1")
    assert fingerprint(cache) == before
    # Pods on a node the cache never saw make a NodeInfo without node: not removable.
    cache.add_pod(make_pod("p2", "n5"))
    with pytest.raises(CacheError, match='"n5" is not found'):
        cache.remove_node("n5")


def test_pod_on_unknown_node_is_not_in_snapshots_until_the_node_arrives() -> None:
    cache = Cache()
    cache.add_pod(make_pod("p1", "n1", cpu="1"))
    snap = snapshot_of(cache)
    assert snap.list() == []
    cache.add_node(make_node("n1"))
    cache.update_snapshot(snap)
    assert snap.get("n1").requested.milli_cpu == 1000


def test_add_node_returns_a_copy_and_update_node_checks_names() -> None:
    cache = Cache()
    copy = cache.add_node(make_node("n1"))
    assert copy.name == "n1"
    copy.pods.append(PodInfo.of(make_pod("x", "n1")))
    assert cache.get_node("n1").pods == []
    with pytest.raises(CacheError, match="the names differ"):
        cache.update_node(make_node("n1"), make_node("n2"))
    assert cache.node_names() == ["n1"]


def test_update_node_replaces_allocatable() -> None:
    cache = Cache()
    old = make_node("n1", cpu="2")
    cache.add_node(old)
    snap = snapshot_of(cache)
    held = snap.get("n1")
    new = make_node("n1", cpu="6")
    cache.update_node(old, new)
    cache.update_snapshot(snap)
    assert snap.get("n1") is held
    assert held.node is new
    assert held.allocatable.milli_cpu == 6000


def test_update_of_unknown_node_adds_it() -> None:
    cache = Cache()
    cache.update_node(None, make_node("n1"))
    assert names(snapshot_of(cache).list()) == ["n1"]


def test_node_and_pod_counts_and_dump() -> None:
    cache = Cache()
    cache.add_node(make_node("n1"))
    cache.add_node(make_node("n2"))
    cache.add_pod(make_pod("p1", "n1"))
    cache.assume_pod(make_pod("p2", "n2", uid="u2"))
    cache.add_pod(make_pod("p3", "n3"))
    cache.remove_node("n1")
    assert cache.node_count() == 3
    assert cache.pod_count() == 3
    dump = cache.dump()
    assert sorted(dump.nodes) == ["n1", "n2", "n3"]
    assert dump.nodes["n1"].node is None
    assert dump.assumed_pods == frozenset({"u2"})
    dump.nodes["n2"].pods.clear()
    assert cache.pod_count() == 3


# ---- node order --------------------------------------------------------------------------


def test_snapshot_lists_nodes_round_robin_across_zones() -> None:
    cache = Cache()
    for name, zone in [
        ("a1", "A"),
        ("a2", "A"),
        ("b1", "B"),
        ("b2", "B"),
        ("b3", "B"),
        ("c1", "C"),
    ]:
        cache.add_node(make_node(name, zone=zone))
    assert names(snapshot_of(cache).list()) == ["a1", "b1", "c1", "a2", "b2", "b3"]


def test_node_list_is_rebuilt_only_when_the_node_set_changes() -> None:
    # As in kube-scheduler: a zone change keeps the snapshot's node order until a node is
    # added or removed; a fresh snapshot shows the new tree order.
    cache = Cache()
    cache.add_node(make_node("a1", zone="A"))
    cache.add_node(make_node("a2", zone="A"))
    b1 = make_node("b1", zone="B")
    cache.add_node(b1)
    snap = snapshot_of(cache)
    assert names(snap.list()) == ["a1", "b1", "a2"]
    listed = snap.node_info_list
    cache.update_node(b1, make_node("b1", zone="A"))
    cache.update_snapshot(snap)
    assert snap.node_info_list is listed
    assert names(snap.list()) == ["a1", "b1", "a2"]
    assert snap.get("b1").node.labels["topology.kubernetes.io/zone"] == "A"  # type: ignore[union-attr]
    assert names(snapshot_of(cache).list()) == ["a1", "a2", "b1"]
    cache.add_node(make_node("c1", zone="C"))
    cache.update_snapshot(snap)
    assert names(snap.list()) == ["a1", "c1", "a2", "b1"]


def test_readding_a_removed_node_between_snapshots_keeps_the_entry() -> None:
    cache = Cache()
    cache.add_node(make_node("n1"))
    cache.add_node(make_node("n2"))
    snap = snapshot_of(cache)
    held = snap.get("n1")
    cache.remove_node("n1")
    cache.add_node(make_node("n1", cpu="16"))
    cache.update_snapshot(snap)
    assert snap.get("n1") is held
    assert held.allocatable.milli_cpu == 16000
    # Same node set: the order is kept (n1 is now last in the tree).
    assert names(snap.list()) == ["n1", "n2"]
    assert names(snapshot_of(cache).list()) == ["n2", "n1"]


# ---- incremental snapshots ----------------------------------------------------------------


def build_cluster(n: int = 5) -> Cache:
    cache = Cache()
    for i in range(n):
        cache.add_node(make_node(f"n{i}"))
        cache.add_pod(make_pod(f"p{i}", f"n{i}"))
    return cache


def test_update_with_nothing_changed_copies_nothing(copies: list[str]) -> None:
    cache = build_cluster()
    snap = snapshot_of(cache)
    copies.clear()
    lists = (snap.node_info_list, snap.have_pods_with_affinity_node_info_list, snap.used_pvc_set)
    cache.update_snapshot(snap)
    assert copies == []
    assert (
        snap.node_info_list,
        snap.have_pods_with_affinity_node_info_list,
        snap.used_pvc_set,
    ) == lists
    assert snap.node_info_list is lists[0]


def test_one_pod_change_copies_one_node_in_place(copies: list[str]) -> None:
    cache = build_cluster()
    snap = snapshot_of(cache)
    held = snap.get("n3")
    listed = snap.node_info_list
    affinity_list = snap.have_pods_with_affinity_node_info_list
    pvcs = snap.used_pvc_set
    copies.clear()
    cache.add_pod(make_pod("extra", "n3", cpu="2"))
    cache.update_snapshot(snap)
    assert copies == ["n3"]
    assert snap.get("n3") is held
    assert held.requested.milli_cpu == 2100
    assert snap.node_info_list is listed
    assert snap.have_pods_with_affinity_node_info_list is affinity_list
    assert snap.used_pvc_set is pvcs


def test_snapshot_generation_follows_the_cache() -> None:
    cache = build_cluster(2)
    snap = snapshot_of(cache)
    g = snap.generation
    assert g == cache.get_node("n0").generation or g == cache.get_node("n1").generation
    assert g == max(cache.get_node("n0").generation, cache.get_node("n1").generation)
    cache.add_pod(make_pod("x", "n0"))
    cache.update_snapshot(snap)
    assert snap.generation == cache.get_node("n0").generation > g


def test_affinity_lists_follow_transitions() -> None:
    cache = build_cluster(3)
    snap = snapshot_of(cache)
    assert snap.have_pods_with_affinity_list() == []
    aff = make_pod("aff", "n1", affinity=True)
    anti = make_pod("anti", "n2", anti_affinity=True)
    cache.add_pod(aff)
    cache.add_pod(anti)
    cache.update_snapshot(snap)
    assert names(snap.have_pods_with_affinity_list()) == ["n1", "n2"]
    assert names(snap.have_pods_with_required_anti_affinity_list()) == ["n2"]
    cache.remove_pod(anti)
    cache.update_snapshot(snap)
    assert names(snap.have_pods_with_affinity_list()) == ["n1"]
    assert snap.have_pods_with_required_anti_affinity_list() == []


def test_affinity_lists_patched_in_place_equal_a_rebuild() -> None:
    """Nodes entering and leaving the affinity lists are patched in, in node-list order:
    the lists equal what a full rebuild gives after every update."""
    import random

    rng = random.Random(5)
    cache = build_cluster(12)
    snap = snapshot_of(cache)
    placed: list[Pod] = []
    for step in range(120):
        if placed and rng.random() < 0.4:
            cache.remove_pod(placed.pop(rng.randrange(len(placed))))
        else:
            kind = rng.choice(["affinity", "anti_affinity"])
            p = make_pod(f"x{step}", f"n{rng.randrange(12)}", **{kind: True})
            cache.add_pod(p)
            placed.append(p)
        cache.update_snapshot(snap)
        got = (list(snap.have_pods_with_affinity_list()),
               list(snap.have_pods_with_required_anti_affinity_list()))
        snap.rebuild_lists()
        want = (list(snap.have_pods_with_affinity_list()),
                list(snap.have_pods_with_required_anti_affinity_list()))
        assert [names(x) for x in got] == [names(x) for x in want]
        assert all(a is b for x, y in zip(got, want, strict=True) for a, b in zip(x, y, strict=True))


def test_affinity_list_entries_are_the_snapshot_node_infos() -> None:
    cache = build_cluster(2)
    cache.add_pod(make_pod("aff", "n1", affinity=True))
    snap = snapshot_of(cache)
    assert snap.have_pods_with_affinity_list()[0] is snap.get("n1")


def test_used_pvc_set_tracks_references() -> None:
    cache = build_cluster(2)
    snap = snapshot_of(cache)
    a = make_pod("a", "n0", pvcs=["data"])
    b = make_pod("b", "n1", pvcs=["data", "logs"])
    cache.add_pod(a)
    cache.update_snapshot(snap)
    assert snap.used_pvc_set == {"default/data"}
    assert snap.storage_infos().is_pvc_used_by_pods("default/data")
    cache.add_pod(b)
    cache.update_snapshot(snap)
    assert snap.used_pvc_set == {"default/data", "default/logs"}
    assert snap.get("n1").pvc_ref_counts == {"default/data": 1, "default/logs": 1}
    cache.remove_pod(a)
    cache.update_snapshot(snap)
    assert snap.used_pvc_set == {"default/data", "default/logs"}
    cache.remove_pod(b)
    cache.update_snapshot(snap)
    assert snap.used_pvc_set == set()


def test_pvc_ref_counts_count_pods() -> None:
    cache = Cache()
    cache.add_node(make_node("n1"))
    a, b = make_pod("a", "n1", pvcs=["c"]), make_pod("b", "n1", pvcs=["c"])
    cache.add_pod(a)
    cache.add_pod(b)
    assert cache.get_node("n1").pvc_ref_counts == {"default/c": 2}
    cache.remove_pod(a)
    assert cache.get_node("n1").pvc_ref_counts == {"default/c": 1}


def test_pvcs_of_a_removed_node_leave_the_snapshot() -> None:
    cache = build_cluster(2)
    cache.add_pod(make_pod("a", "n0", pvcs=["data"]))
    snap = snapshot_of(cache)
    cache.remove_node("n0")
    cache.update_snapshot(snap)
    assert snap.used_pvc_set == set()


def test_inconsistent_snapshot_is_repaired_and_reported() -> None:
    cache = build_cluster(3)
    snap = snapshot_of(cache)
    snap.node_info_list.pop()
    cache.add_pod(make_pod("extra", "n0"))
    with pytest.raises(
        InconsistentSnapshotError,
        match=(
            r"snapshot state is not consistent, length of NodeInfoList=2 not equal to "
            r"length of nodes in tree=3"
        ),
    ):
        cache.update_snapshot(snap)
    assert isinstance(InconsistentSnapshotError("x"), CacheError)
    assert names(snap.list()) == ["n0", "n1", "n2"]
    cache.update_snapshot(snap)  # consistent again


def test_snapshot_missing_tree_nodes_is_filled_in() -> None:
    cache = build_cluster(3)
    snap = snapshot_of(cache)
    snap.node_info_list.remove(snap.node_info_map.pop("n1"))
    with pytest.raises(InconsistentSnapshotError):
        cache.update_snapshot(snap)
    assert names(snap.list()) == ["n0", "n1", "n2"]
    assert snap.get("n1").pods[0].pod.name == "p1"
    cache.update_snapshot(snap)


def test_snapshot_entries_survive_unrelated_removals() -> None:
    cache = build_cluster(4)
    snap = snapshot_of(cache)
    held = {n: snap.get(n) for n in ("n0", "n2", "n3")}
    cache.remove_node("n1")
    cache.remove_pod(make_pod("p1", "n1"))
    cache.update_snapshot(snap)
    assert names(snap.list()) == ["n0", "n2", "n3"]
    for name, info in held.items():
        assert snap.get(name) is info


def test_copy_covers_every_node_info_slot() -> None:
    assert set(NodeInfo.__slots__) == cache_module.COPIED_NODE_INFO_SLOTS


def test_snapshot_copies_do_not_alias_cache_aggregates() -> None:
    cache = build_cluster(1)
    cache.add_pod(make_pod("hp", "n0", host_port=9000, pvcs=["c"]))
    snap = snapshot_of(cache)
    info = snap.get("n0")
    info.requested.milli_cpu = -1
    info.used_ports.clear()
    info.pvc_ref_counts.clear()
    info.pods.clear()
    live = cache.get_node("n0")
    assert live.requested.milli_cpu == 200
    assert live.used_ports.check_conflict("", "TCP", 9000)
    assert live.pvc_ref_counts == {"default/c": 1}
    assert len(live.pods) == 2


# ---- image states -------------------------------------------------------------------------


def test_image_states_count_nodes_having_the_image() -> None:
    cache = Cache()
    cache.add_node(make_node("n1", images=[(["img-a", "img-a:1"], 100), (["img-b"], 200)]))
    cache.add_node(make_node("n2", images=[(["img-a"], 100)]))
    snap = snapshot_of(cache)
    assert snap.get("n1").image_states == {
        "img-a": ImageStateSummary(100, 2),
        "img-a:1": ImageStateSummary(100, 1),
        "img-b": ImageStateSummary(200, 1),
    }
    assert snap.get("n2").image_states == {"img-a": ImageStateSummary(100, 2)}


def test_image_size_comes_from_the_first_node_reporting_it() -> None:
    cache = Cache()
    cache.add_node(make_node("n1", images=[(["img"], 100)]))
    cache.add_node(make_node("n2", images=[(["img"], 999)]))
    snap = snapshot_of(cache)
    assert snap.get("n2").image_states["img"] == ImageStateSummary(100, 2)


def test_duplicate_image_names_on_a_node_count_once() -> None:
    cache = Cache()
    cache.add_node(make_node("n1", images=[(["img"], 100), (["img", "other"], 50)]))
    info = snapshot_of(cache).get("n1")
    assert info.image_states == {
        "img": ImageStateSummary(100, 1),
        "other": ImageStateSummary(50, 1),
    }


def test_image_counts_are_taken_when_a_node_is_copied() -> None:
    # kube-scheduler computes NumNodes when it copies a NodeInfo into the snapshot, so an
    # unchanged node keeps the count of its last copy until it changes itself.
    cache = Cache()
    cache.add_node(make_node("n1", images=[(["img"], 100)]))
    snap = snapshot_of(cache)
    assert snap.get("n1").image_states["img"].num_nodes == 1
    cache.add_node(make_node("n2", images=[(["img"], 100)]))
    cache.update_snapshot(snap)
    assert snap.get("n2").image_states["img"].num_nodes == 2
    assert snap.get("n1").image_states["img"].num_nodes == 1
    assert snapshot_of(cache).get("n1").image_states["img"].num_nodes == 2
    cache.add_pod(make_pod("p", "n1"))
    cache.update_snapshot(snap)
    assert snap.get("n1").image_states["img"].num_nodes == 2


def test_removing_or_updating_nodes_releases_images() -> None:
    cache = Cache()
    n1 = make_node("n1", images=[(["img"], 100)])
    cache.add_node(n1)
    cache.add_node(make_node("n2", images=[(["img"], 100)]))
    cache.update_node(n1, make_node("n1"))
    assert snapshot_of(cache).get("n2").image_states["img"].num_nodes == 1
    cache.remove_node("n2")
    assert cache._images == {}
    cache.add_node(make_node("n3", images=[(["img"], 300)]))
    assert snapshot_of(cache).get("n3").image_states["img"] == ImageStateSummary(300, 1)


def test_ghost_node_images_are_released() -> None:
    cache = Cache()
    cache.add_node(make_node("n1", images=[(["img"], 100)]))
    cache.add_node(make_node("n2", images=[(["img"], 100)]))
    cache.add_pod(make_pod("p", "n1"))
    cache.remove_node("n1")
    assert snapshot_of(cache).get("n2").image_states["img"].num_nodes == 1
    cache.add_node(make_node("n1", images=[(["img"], 100)]))
    assert snapshot_of(cache).get("n1").image_states["img"].num_nodes == 2
