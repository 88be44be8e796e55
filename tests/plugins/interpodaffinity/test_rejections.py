"""InterPodAffinity's Filter rejections by node name (FilterRejectionsPlugin), kept from one
cycle to the next for the same incoming pod, against Filter node by node and against a
full recomputation, on random clusters evolving through a cache."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kschedlib.api.node import Namespace
from kschedlib.api.pod import Pod
from kschedlib.backend.cache.cache import Cache
from kschedlib.backend.snapshot import Snapshot
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.handle import ObjectStore
from kschedlib.framework.interface import FilterRejectionsPlugin
from kschedlib.framework.status import Status
from kschedlib.framework.types import PodInfo
from kschedlib.plugins import interpodaffinity
from kschedlib.plugins.interpodaffinity import PreFilterState
from kschedlib.plugins.interpodaffinity.index import PodIndex
from kschedlib.plugins.interpodaffinity.rejections import rejected_nodes
from tests.plugins.interpodaffinity.test_index_equivalence import (
    HOST,
    ZONE,
    ReusingHandle,
    _node,
    _pod,
    _rack,
    _zone,
)

NODES = tuple(f"n{i}" for i in range(8))
KEYS = (HOST, ZONE, "rack")


@st.composite
def _targeted_pod(draw: Any, name: str, node: str = "") -> Pod:
    """A pod labelled app=a or b, with required anti-affinity (and maybe affinity) to one of
    the apps: such pods select each other often, so verdicts change from step to step."""
    def term() -> dict[str, Any]:
        return {
            "labelSelector": {"matchLabels": {"app": draw(st.sampled_from(["a", "b"]))}},
            "topologyKey": draw(st.sampled_from(KEYS)),
        }

    aff: dict[str, Any] = {}
    if draw(st.booleans()):
        aff["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [term()]}
    if draw(st.integers(0, 3)) == 0:
        aff["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [term()]}
    spec: dict[str, Any] = {"containers": [{"name": "c"}], "nodeName": node}
    if aff:
        spec["affinity"] = aff
    return Pod.from_dict({
        "metadata": {"name": name, "namespace": "ns0", "uid": name,
                     "labels": {"app": draw(st.sampled_from(["a", "b"]))}},
        "spec": spec,
    })


def _any_pod(name: str, node: str = "") -> st.SearchStrategy[Pod]:
    return st.one_of(_targeted_pod(name, node), _targeted_pod(name, node), _pod(name, node))

_add = st.tuples(st.just("add"), st.sampled_from(NODES))
_step = st.one_of(
    _add, _add, _add, _add,
    st.tuples(st.just("remove"), st.integers(0, 50)),
    st.tuples(st.just("relabel"), st.sampled_from(NODES), _zone, _rack),
    st.tuples(st.just("toggle"), st.sampled_from(NODES)),
    st.tuples(st.just("nominate"), st.sampled_from(NODES), st.booleans()),
)


def _verdicts(pl: Any, state: CycleState, pod: Pod, snap: Snapshot) -> dict[str, Status]:
    out = {}
    for ni in snap.list():
        s = pl.filter(state, pod, ni)
        if s is not None:
            out[ni.name] = s
    return out


def _fresh(state: CycleState, snap: Snapshot) -> dict[str, Status] | None:
    """rejected_nodes from a new index (no reuse at all)."""
    s = state[interpodaffinity.PRE_FILTER_STATE_KEY]
    assert isinstance(s, PreFilterState)
    ix = PodIndex()
    ix.sync(snap.list())
    c = PreFilterState(
        s.pod, s.required_affinity_terms, s.required_anti_affinity_terms, s.namespace_labels,
        s.existing_anti_affinity_counts, s.affinity_counts, s.anti_affinity_counts,
    )
    return rejected_nodes(c, ix)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    zones=st.lists(st.tuples(_zone, _rack), min_size=len(NODES), max_size=len(NODES)),
    steps=st.lists(_step, min_size=1, max_size=30),
    data=st.data(),
)
def test_rejections_agree_with_filter_and_recomputation(
    zones: list[tuple[str | None, str | None]], steps: list[Any], data: Any
) -> None:
    objects = ObjectStore()
    objects.upsert(Namespace.from_dict({"metadata": {"name": "ns0", "labels": {"team": "x"}}}))
    objects.upsert(Namespace.from_dict({"metadata": {"name": "ns1", "labels": {"team": "y"}}}))
    cache = Cache()
    nodes = {name: _node(name, z, r) for name, (z, r) in zip(NODES, zones, strict=True)}
    for n in nodes.values():
        cache.add_node(n)
    snap = Snapshot()
    pl = interpodaffinity.new(None, ReusingHandle(snap, objects))
    assert isinstance(pl, FilterRejectionsPlugin)
    incoming = data.draw(st.one_of(_targeted_pod("in"), _targeted_pod("in"), _pod("in")))  # one pod kind throughout: the kept rejections are reused
    placed: list[Pod] = []
    gone: set[str] = set()
    for i, step in enumerate(steps):
        if step[0] == "add":
            p = data.draw(_any_pod(f"p{i}", step[1]))
            cache.add_pod(p)
            placed.append(p)
        elif step[0] == "remove" and placed:
            cache.remove_pod(placed.pop(step[1] % len(placed)))
        elif step[0] == "relabel" and step[1] not in gone:
            new = _node(step[1], step[2], step[3])
            cache.update_node(nodes[step[1]], new)
            nodes[step[1]] = new
        elif step[0] == "toggle":
            if step[1] in gone:
                gone.discard(step[1])
                cache.add_node(nodes[step[1]])
            else:
                gone.add(step[1])
                cache.remove_node(nodes[step[1]])
        cache.update_snapshot(snap)
        state = CycleState()
        _, pst = pl.pre_filter(state, incoming, snap.list())
        if pst is not None:
            assert pl.filter_rejections(state, incoming) is None  # nothing written
            continue
        got = pl.filter_rejections(state, incoming)
        assert got is not None
        want = _verdicts(pl, state, incoming, snap)
        assert got == want
        assert all(got[k] is v for k, v in want.items())
        assert _fresh(state, snap) == want
        if step[0] == "nominate" and step[1] not in gone:
            # AddPod on the cycle's state (as the nominated-pods pass does on its copy):
            # the rejections follow the changed counts, then come back after RemovePod.
            pi = PodInfo.of(data.draw(_any_pod(f"x{i}", step[1])))
            ni = snap.get(step[1])
            ext = pl.pre_filter_extensions()
            ext.add_pod(state, incoming, pi, ni)
            assert pl.filter_rejections(state, incoming) == _verdicts(pl, state, incoming, snap)
            if step[2]:  # or left counted: the next cycle must not start from these counts
                ext.remove_pod(state, incoming, pi, ni)
                assert pl.filter_rejections(state, incoming) == want
        other = CycleState()  # a state PreFilter did not write for this cycle: no answer
        other.write(interpodaffinity.PRE_FILTER_STATE_KEY, state.read(
            interpodaffinity.PRE_FILTER_STATE_KEY).clone())
        assert pl.filter_rejections(other, incoming) is None


def _simple(name: str, node: str, app: str, anti: tuple[str, str] | None = None) -> Pod:
    spec: dict[str, Any] = {"containers": [{"name": "c"}], "nodeName": node}
    if anti is not None:
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": anti[0]}}, "topologyKey": anti[1]}
        ]}}
    return Pod.from_dict({
        "metadata": {"name": name, "namespace": "ns0", "uid": name, "labels": {"app": app}},
        "spec": spec,
    })


def test_kept_rejections_follow_a_zone_and_hosts() -> None:
    """A pod added in a zone changes the verdict of every node of the zone; the dict kept
    from the cycle before is updated in place while the lookups stay the same."""
    cache = Cache()
    for i in range(6):
        cache.add_node(_node(f"n{i}", "z1" if i < 3 else "z2", None))
    snap = Snapshot()
    pl = interpodaffinity.new(None, ReusingHandle(snap, ObjectStore()))
    incoming = _simple("in", "", "a", ("b", ZONE))
    b0, b3 = _simple("b0", "n0", "b"), _simple("b3", "n3", "b")
    steps: list[tuple[str, Any]] = [
        ("add", b0),  # z1 rejected (a new lookup: full pass)
        ("add", b3),  # z2 too: n3 changed, n4 and n5 share its zone
        ("remove", b0),  # z1 passes again
        ("relabel", "n3"),  # n3 (and b3's count) moves to z1: full pass
        ("add", _simple("h1", "n1", "c", ("a", HOST))),  # a new lookup: full pass
        ("add", _simple("h4", "n4", "c", ("a", HOST))),  # n4: existing anti-affinity
        ("remove", b3),  # z1 passes again, but n1 (a lookup gone: full pass)
    ]
    want_kept = [False, True, True, False, False, True, False]
    prev: Any = None
    seen = []
    for (op, p), kept in zip(steps, want_kept, strict=True):
        if op == "add":
            cache.add_pod(p)
        elif op == "remove":
            cache.remove_pod(p)
        else:
            cache.update_node(snap.get(p).node, _node(p, "z1", None))
        cache.update_snapshot(snap)
        state = CycleState()
        assert pl.pre_filter(state, incoming, snap.list()) == (None, None)
        got = pl.filter_rejections(state, incoming)
        assert got is not None
        assert got == _verdicts(pl, state, incoming, snap)
        assert (got is prev) == kept
        prev = got
        seen.append(sorted(got))
    assert seen == [
        ["n0", "n1", "n2"],
        ["n0", "n1", "n2", "n3", "n4", "n5"],
        ["n3", "n4", "n5"],
        ["n0", "n1", "n2", "n3"],
        ["n0", "n1", "n2", "n3"],
        ["n0", "n1", "n2", "n3", "n4"],
        ["n1", "n4"],
    ]


def test_counts_changed_by_add_pod_are_not_kept() -> None:
    """After AddPod on a cycle's state (left counted), the next cycle does not start from
    that state's counts: a zone counted through the added pod, then for real, is rejected
    on all its nodes."""
    cache = Cache()
    for i in range(6):
        cache.add_node(_node(f"n{i}", "z1" if i < 3 else "z2", None))
    snap = Snapshot()
    pl = interpodaffinity.new(None, ReusingHandle(snap, ObjectStore()))
    incoming = _simple("in", "", "a", ("b", ZONE))
    cache.add_pod(_simple("b3", "n3", "b"))
    cache.update_snapshot(snap)
    state = CycleState()
    pl.pre_filter(state, incoming, snap.list())
    assert sorted(pl.filter_rejections(state, incoming) or ()) == ["n3", "n4", "n5"]
    ext = pl.pre_filter_extensions()
    ext.add_pod(state, incoming, PodInfo.of(_simple("nom", "n0", "b")), snap.get("n0"))
    assert sorted(pl.filter_rejections(state, incoming) or ()) == [f"n{i}" for i in range(6)]
    cache.add_pod(_simple("b1", "n1", "b"))
    cache.update_snapshot(snap)
    state = CycleState()
    pl.pre_filter(state, incoming, snap.list())
    got = pl.filter_rejections(state, incoming)
    assert got == _verdicts(pl, state, incoming, snap)
    assert sorted(got or ()) == [f"n{i}" for i in range(6)]
