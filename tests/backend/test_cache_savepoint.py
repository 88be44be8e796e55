"""Cache savepoints (transactions): a rollback restores exactly the state at the savepoint,
in O(changes), and a snapshot kept up to date across the rollback equals one built from
scratch (the restored nodes get fresh generations, so they are copied again)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kschedlib.backend.cache import Cache
from kschedlib.backend.snapshot import Snapshot
from kschedlib.errors import CacheError
from kschedlib.framework.handle import FakeClock
from tests.backend.test_cache import make_node, make_pod, on

NODES = ("n0", "n1", "n2", "n3")
PODS = tuple(f"p{i}" for i in range(6))
IMAGES = ((("img-a",), 100), (("img-b",), 200))

_OP = st.tuples(
    st.sampled_from(["add_node", "update_node", "remove_node", "add_pod", "assume", "forget",
                     "finish", "remove_pod", "snapshot", "savepoint", "release", "rollback"]),
    st.integers(0, 5),
    st.integers(0, 3),
)


def _view(cache: Cache) -> Any:
    """The cache's content without generations (a rollback gives restored nodes new ones)."""
    nodes = {}
    item = cache._head
    while item is not None:
        info = item.info
        nodes[item.name] = (info.node, sorted(p.uid for p in info.pods),
                            info.requested.milli_cpu, item.images)
        item = item.next
    return (
        nodes, sorted(cache._nodes),
        {k: (v.pod, v.binding_finished) for k, v in cache._pod_states.items()},
        sorted(cache._assumed), cache._tree.list(),
        {k: (v.size, sorted(v.nodes)) for k, v in cache._images.items()},
    )


def _snap_view(snap: Snapshot) -> Any:
    return [(ni.name, sorted(p.pod.uid for p in ni.pods), ni.requested.milli_cpu,
             sorted(ni.image_states)) for ni in snap.list()]


def _generations_descend(cache: Cache) -> bool:
    gens = []
    item = cache._head
    while item is not None:
        gens.append(item.info.generation)
        item = item.next
    return gens == sorted(gens, reverse=True)


def _apply(cache: Cache, snap: Snapshot, op: tuple[str, int, int]) -> None:
    kind, i, j = op
    name = NODES[j]
    try:
        if kind == "add_node":
            cache.add_node(make_node(name, zone="z" + str(i % 2), images=IMAGES[: i % 3]))
        elif kind == "update_node":
            cache.update_node(None, make_node(name, zone="z1", cpu=str(2 + i), images=IMAGES[i % 2:]))
        elif kind == "remove_node":
            cache.remove_node(name)
        elif kind == "add_pod":
            cache.add_pod(make_pod(PODS[i], name))
        elif kind == "assume":
            cache.assume_pod(make_pod(PODS[i], name))
        elif kind == "forget":
            cache.forget_pod(on(make_pod(PODS[i]), name))
        elif kind == "finish":
            cache.finish_binding(make_pod(PODS[i], name))
        elif kind == "remove_pod":
            cache.remove_pod(make_pod(PODS[i]))
        elif kind == "snapshot":
            cache.update_snapshot(snap)
    except CacheError:
        pass


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(before=st.lists(_OP, max_size=10), inside=st.lists(_OP, max_size=14),
       after=st.lists(_OP, max_size=6))
def test_rollback_restores_the_savepoint_and_snapshots_follow(
    before: list[tuple[str, int, int]], inside: list[tuple[str, int, int]],
    after: list[tuple[str, int, int]],
) -> None:
    cache, snap = Cache(ttl=30.0, clock=FakeClock()), Snapshot()
    for op in before:
        _apply(cache, snap, op)
    cache.update_snapshot(snap)
    expected = _view(cache)
    outer = cache.savepoint()
    opened: list[tuple[object, Any]] = []
    for op in inside:
        if op[0] == "savepoint":
            opened.append((cache.savepoint(), _view(cache)))
        elif op[0] in ("release", "rollback") and opened:
            token, view = opened.pop()
            if op[0] == "release":
                cache.release(token)
            else:
                cache.rollback(token)
                assert _view(cache) == view
        else:
            _apply(cache, snap, op)
    while opened:
        cache.release(opened.pop()[0])
    cache.rollback(outer)
    assert _view(cache) == expected
    assert _generations_descend(cache)
    for op in after:
        _apply(cache, snap, op)
    cache.update_snapshot(snap)
    fresh = Snapshot()
    cache.update_snapshot(fresh)
    # Content, not order: like kube-scheduler's UpdateSnapshot, an incremental update rebuilds
    # the node list only when the set of nodes changes, so a node that moved to another zone
    # keeps its place until then while a fresh snapshot lists it in node-tree order.
    assert sorted(_snap_view(snap)) == sorted(_snap_view(fresh))
    assert len(snap.list()) == len(fresh.list())


def test_rollback_touches_only_what_changed() -> None:
    cache = Cache()
    for n in NODES:
        cache.add_node(make_node(n))
    snap = Snapshot()
    cache.update_snapshot(snap)
    token = cache.savepoint()
    cache.add_pod(make_pod("p0", "n1"))
    cache.update_snapshot(snap)
    cache.rollback(token)
    changed = cache.changed_since(snap.generation)
    assert changed == ["n1"]
    cache.update_snapshot(snap)
    assert snap.node_info_map["n1"].pods == []
