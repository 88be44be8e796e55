"""Snapshot: the listers plugins read, and Snapshot.from_objects against a cache snapshot."""

from __future__ import annotations

import json
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.backend import snapshot as snapshot_module
from kschedlib.backend.cache import Cache
from kschedlib.backend.snapshot import Snapshot
from kschedlib.framework.types import ImageStateSummary, NodeInfo
from tests.backend.test_cache import make_node, make_pod
from tests.corpus import CORPUS

FAMILIES_WITH_ZONES_OR_IMAGES = ("mixed", "image-locality", "topology-spread", "basics")


def names(infos: object) -> list[str]:
    return [ni.name for ni in infos]  # type: ignore[attr-defined]


def state(ni: NodeInfo) -> tuple[object, ...]:
    return (
        ni.node,
        sorted(p.pod.uid for p in ni.pods),
        sorted(p.pod.uid for p in ni.pods_with_affinity),
        sorted(p.pod.uid for p in ni.pods_with_required_anti_affinity),
        ni.requested,
        ni.non_zero_requested,
        ni.allocatable,
        dict(ni.used_ports),
        ni.pvc_ref_counts,
        ni.image_states,
    )


def test_from_objects_lists_nodes_in_node_tree_order() -> None:
    nodes = [
        make_node("a1", zone="A"),
        make_node("a2", zone="A"),
        make_node("b1", zone="B"),
        make_node("b2", zone="B"),
        make_node("b3", zone="B"),
        make_node("c1", zone="C"),
    ]
    snap = Snapshot.from_objects([], nodes)
    assert names(snap.list()) == ["a1", "b1", "c1", "a2", "b2", "b3"]
    assert snap.num_nodes() == 6


def test_from_objects_aggregates_pods_and_ignores_unassigned_or_unknown() -> None:
    pods = [
        make_pod("p1", "n1", cpu="1"),
        make_pod("p2", "n1", cpu="500m", pvcs=["data"]),
        make_pod("p3", "n2", anti_affinity=True),
        make_pod("pending", ""),
        make_pod("elsewhere", "gone", pvcs=["other"]),
    ]
    snap = Snapshot.from_objects(pods, [make_node("n1"), make_node("n2"), make_node("n3")])
    assert snap.get("n1").requested.milli_cpu == 1500
    assert [p.pod.name for p in snap.get("n2").pods] == ["p3"]
    assert snap.get("n3").pods == []
    assert names(snap.have_pods_with_affinity_list()) == ["n2"]
    assert names(snap.have_pods_with_required_anti_affinity_list()) == ["n2"]
    assert snap.used_pvc_set == {"default/data"}
    assert snap.storage_infos().is_pvc_used_by_pods("default/data")
    assert not snap.storage_infos().is_pvc_used_by_pods("default/other")
    assert "gone" not in snap.node_info_map


def test_from_objects_image_states_count_nodes() -> None:
    nodes = [
        make_node("n1", images=[(["img", "img:v1"], 100), (["solo"], 5)]),
        make_node("n2", images=[(["img"], 100)]),
        make_node("n3"),
    ]
    snap = Snapshot.from_objects([], nodes)
    assert snap.get("n1").image_states == {
        "img": ImageStateSummary(100, 2),
        "img:v1": ImageStateSummary(100, 1),
        "solo": ImageStateSummary(5, 1),
    }
    assert snap.get("n2").image_states == {"img": ImageStateSummary(100, 2)}
    assert snap.get("n3").image_states == {}


def test_get_unknown_node_raises_key_error_with_go_text() -> None:
    snap = Snapshot.from_objects([], [make_node("n1")])
    with pytest.raises(KeyError, match='nodeinfo not found for node name "nope"'):
        snap.get("nope")
    assert snap.node_infos() is snap


def test_empty_snapshot() -> None:
    snap = Snapshot()
    assert snap.list() == []
    assert snap.num_nodes() == 0
    assert snap.generation == 0
    Cache().update_snapshot(snap)
    assert snap.list() == []


def _scenarios() -> list[Path]:
    return sorted(
        p
        for fam in FAMILIES_WITH_ZONES_OR_IMAGES
        for p in CORPUS.glob(f"{fam}-*.json")
        if not p.name.endswith(".expected.json")
    )


def test_corpus_is_present() -> None:
    assert CORPUS.is_dir(), f"conformance corpus not found at {CORPUS}"
    assert len(_scenarios()) >= 40


@pytest.mark.parametrize("family", FAMILIES_WITH_ZONES_OR_IMAGES)
def test_from_objects_matches_a_cache_snapshot_on_the_corpus(family: str) -> None:
    scenarios = [p for p in _scenarios() if p.name.startswith(family + "-")]
    assert scenarios
    for path in scenarios:
        data = json.loads(path.read_text())
        nodes = [Node.from_dict(d) for d in data["nodes"]]
        pods = [Pod.from_dict(d) for d in data["pods"]]
        direct = Snapshot.from_objects(pods, nodes)
        cache = Cache()
        for n in nodes:
            cache.add_node(n)
        for p in pods:
            cache.add_pod(p)
        snap = Snapshot()
        cache.update_snapshot(snap)
        assert names(direct.list()) == names(snap.list()), path.name
        for name, ni in snap.node_info_map.items():
            assert state(direct.get(name)) == state(ni), f"{path.name}: {name}"
        assert direct.used_pvc_set == snap.used_pvc_set
        assert names(direct.have_pods_with_affinity_list()) == names(
            snap.have_pods_with_affinity_list()
        )


def test_change_log_names_the_nodes_the_cache_updated() -> None:
    """changed_since answers from the cache's updates; None before the first update and
    once the log no longer reaches back far enough."""
    cache = Cache()
    for i in range(3):
        cache.add_node(Node.from_dict({"metadata": {"name": f"n{i}"}}))
    snap = Snapshot()
    assert snap.changed_since(0) is None  # no log before the cache updated it
    cache.update_snapshot(snap)
    g = snap.generation
    assert sorted(snap.changed_since(0) or []) == ["n0", "n1", "n2"]
    assert snap.changed_since(g) == []
    pod = Pod.from_dict({
        "metadata": {"name": "p", "namespace": "default", "uid": "p"},
        "spec": {"containers": [{"name": "c"}], "nodeName": "n1"},
    })
    cache.add_pod(pod)
    cache.update_snapshot(snap)
    assert snap.changed_since(g) == ["n1"]
    with mock.patch.object(snapshot_module, "_CHANGE_LOG_MAX", 2):
        for _ in range(3):
            cache.remove_pod(pod)
            cache.add_pod(pod)
            cache.update_snapshot(snap)
        assert snap.changed_since(g) is None  # the log no longer reaches back that far
        assert snap.changed_since(snap.generation) == []


def _reference_lists(snap: Snapshot) -> tuple[object, ...]:
    """The derived lists recomputed straightforwardly from node_info_list."""
    lst = snap.node_info_list
    return (
        {n.name: i for i, n in enumerate(lst)},
        [n for n in lst if n.pods_with_affinity],
        [n for n in lst if n.pods_with_required_anti_affinity],
        {k for n in lst for k in n.pvc_ref_counts},
    )


@pytest.mark.parametrize("family", ("mixed", "basics", "volumes", "pod-affinity"))
def test_node_removals_keep_the_lists_a_recomputation_gives(family: str) -> None:
    scenarios = sorted(
        p for p in CORPUS.glob(f"{family}-*.json") if not p.name.endswith(".expected.json")
    )[:8]
    assert scenarios
    for path in scenarios:
        data = json.loads(path.read_text())
        nodes = [Node.from_dict(d) for d in data["nodes"]]
        pods = [Pod.from_dict(d) for d in data["pods"]]
        cache = Cache()
        for n in nodes:
            cache.add_node(n)
        for p in pods:
            if p.spec.node_name:
                cache.add_pod(p)
        snap = Snapshot()
        cache.update_snapshot(snap)
        # Remove every other node (those with pods stay as ghosts), checking each snapshot.
        for n in nodes[::2]:
            cache.remove_node(n)
            cache.update_snapshot(snap)
            fresh = Snapshot()
            cache.update_snapshot(fresh)
            assert names(snap.list()) == names(fresh.list()) == cache.node_names(), path.name
            assert set(snap.node_info_map) == set(fresh.node_info_map), path.name
            # (positions built from the names the cache noted for the list it built)
            assert snap._names is not None and snap._names[0] is snap.node_info_list
            assert (snap.positions, snap.have_pods_with_affinity_node_info_list,
                    snap.have_pods_with_required_anti_affinity_node_info_list,
                    snap.used_pvc_set) == _reference_lists(snap), path.name
            assert names(snap.have_pods_with_affinity_list()) == names(
                fresh.have_pods_with_affinity_list()), path.name
            assert snap.used_pvc_set == fresh.used_pvc_set, path.name


@pytest.mark.parametrize("touched", [1, 3, 20])
def test_replacing_shared_entries_after_a_removal_keeps_the_lists_exact(touched: int) -> None:
    # After a node removal the positions are built on first use: a forked snapshot replaces
    # its shared NodeInfos by scanning the list, then (past a few) by positions. Either way
    # the list, map and positions are what a fresh snapshot gives, and the parent's stay.
    from kschedlib import FakeClock, Scheduler
    from tests.whatif.helpers import node as mk_node
    from tests.whatif.helpers import pod as mk_pod

    s = Scheduler(clock=FakeClock(), seed=1)
    for i in range(30):
        s.add_node(mk_node(f"n{i:02d}", zone=f"z{i % 3}"))
    s.cache.update_snapshot(s.snapshot)
    parent = [(ni.name, ni.generation, len(ni.pods)) for ni in s.snapshot.list()]
    fork = s.fork()
    fork.delete_node("n04")
    fork.cache.update_snapshot(fork.snapshot)
    left = [f"n{i:02d}" for i in range(30) if i != 4]
    for k in range(touched):
        fork.add_pod(mk_pod(f"p{k}", node_name=left[(1 + 7 * k) % 29], owner=None))
    fork.cache.update_snapshot(fork.snapshot)
    snap = fork.snapshot
    fresh = Snapshot()
    fork.cache.update_snapshot(fresh)
    assert names(snap.list()) == names(fresh.list())
    assert all(ni is snap.node_info_map[ni.name] for ni in snap.list())
    assert snap.positions == {ni.name: i for i, ni in enumerate(snap.list())}
    assert [len(ni.pods) for ni in snap.list()] == [len(ni.pods) for ni in fresh.list()]
    assert sum(len(ni.pods) for ni in snap.list()) == touched
    assert [(ni.name, ni.generation, len(ni.pods)) for ni in s.snapshot.list()] == parent


def test_image_names_follow_the_nodes_through_removals_rollbacks_and_forks() -> None:
    # What ImageLocality checks before leaving the node count out of its stored scores.
    def with_images(name: str, *images: str) -> Node:
        return Node.from_dict({"metadata": {"name": name}, "status": {
            "images": [{"names": [i], "sizeBytes": 100} for i in images]}})

    cache = Cache()
    a, b = with_images("a", "img:1"), with_images("b", "img:1", "img:2")
    cache.add_node(a)
    cache.add_node(b)
    snap = Snapshot()
    cache.update_snapshot(snap)
    assert snap.image_names == {"img:1", "img:2"}
    token = cache.savepoint()
    cache.remove_node(b)
    cache.update_snapshot(snap)
    assert snap.image_names == {"img:1"}
    forked = cache.fork()
    other = Snapshot()
    forked.update_snapshot(other)
    assert other.image_names == {"img:1"}
    cache.rollback(token)
    cache.update_snapshot(snap)
    assert snap.image_names == {"img:1", "img:2"}
    forked.remove_node(a)
    forked.update_snapshot(other)
    assert other.image_names == set() and snap.image_names == {"img:1", "img:2"}
    assert Snapshot.from_objects([], [a, b]).image_names == {"img:1", "img:2"}


def _update_unhinted(cache: Cache, snapshot: Snapshot) -> None:
    """Update ``snapshot`` as the cache would without its removed-node hint."""
    gone, cache._gone = cache._gone, set()
    try:
        cache.update_snapshot(snapshot)
    finally:
        cache._gone = gone


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["add", "remove", "pod", "update", "fork"]),
                          st.integers(0, 11)), max_size=40))
@example([("remove", 0), ("add", 0), ("update", 0)])
@example([("remove", 1), ("remove", 3), ("add", 3), ("update", 0), ("add", 1), ("update", 0)])
def test_removals_hinted_by_the_cache_keep_the_snapshots_a_fresh_one_gives(
    ops: list[tuple[str, int]],
) -> None:
    # The cache hints at the nodes removed lately (checked before use). Snapshots updated
    # often, rarely, or from a fork that started without hints hold the nodes a fresh one
    # holds, in the order the same updates give without the hint. (A snapshot that missed a
    # node's removal and its return keeps its order, as kube-scheduler's does: the entry is
    # updated in place and the lists are not rebuilt; one updated after every change has
    # the node tree's order.)
    cache = Cache()
    for i in range(6):
        cache.add_node(make_node(f"n{i}", zone=f"z{i % 2}"))
    often, rarely, often_plain, rarely_plain = Snapshot(), Snapshot(), Snapshot(), Snapshot()
    for snap in (often, rarely):
        cache.update_snapshot(snap)
    for snap in (often_plain, rarely_plain):
        _update_unhinted(cache, snap)
    pods = 0
    for op, k in ops:
        name = f"n{k}"
        if op == "add" and name not in cache.node_names():
            cache.add_node(make_node(name, zone=f"z{k % 3}"))
        elif op == "remove" and name in cache.node_names():
            cache.remove_node(name)
        elif op == "pod" and cache.node_names():
            live = cache.node_names()
            cache.add_pod(make_pod(f"p{pods}", live[k % len(live)]))
            pods += 1
        elif op == "update":
            cache.update_snapshot(rarely)
            _update_unhinted(cache, rarely_plain)
        elif op == "fork":
            cache = cache.fork()
            often, rarely, often_plain, rarely_plain = (
                Snapshot(), Snapshot(), Snapshot(), Snapshot()
            )
            cache.update_snapshot(rarely)
            _update_unhinted(cache, rarely_plain)
        cache.update_snapshot(often)
        _update_unhinted(cache, often_plain)
        fresh = Snapshot()
        cache.update_snapshot(fresh)
        assert names(often.list()) == names(fresh.list()) == cache.node_names()
        pairs = ((often, often_plain), (rarely, rarely_plain)) if op == "update" else (
            (often, often_plain),
        )
        for snap, plain in pairs:
            assert names(snap.list()) == names(plain.list())
            assert sorted(names(snap.list())) == sorted(cache.node_names())
            assert set(snap.node_info_map) == set(fresh.node_info_map)
            assert snap.positions == {ni.name: i for i, ni in enumerate(snap.list())}
