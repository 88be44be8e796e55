"""PodTopologySpread's fast paths give exactly what the straightforward computation gives:
Filter from per-constraint limits vs filter_node (also after AddPod/RemovePod on clones,
which share counts copy-on-write), score_nodes vs Score node by node, normalize_score_values
vs normalize_score, and the counts kept across cycles (found through the snapshot's change
log) vs a recount, on random small workloads."""

from __future__ import annotations

from typing import Any
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.backend import snapshot as snapshot_module
from kschedlib.backend.cache.cache import Cache
from kschedlib.backend.snapshot import Snapshot
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.handle import BasicHandle, ObjectStore
from kschedlib.framework.interface import NodeScore
from kschedlib.framework.status import Code, Status
from kschedlib.plugins import podtopologyspread
from kschedlib.plugins.nodeaffinity.node_affinity import RequiredNodeAffinity
from kschedlib.plugins.podtopologyspread.common import filter_topology_spread_constraints
from kschedlib.plugins.podtopologyspread.counting import (
    SpreadCounter,
    _totals,
    changed_indices,
    node_share,
)
from kschedlib.plugins.podtopologyspread.filtering import PreFilterState, filter_node
from kschedlib.plugins.podtopologyspread.scoring import PreScoreState

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
RACK = "rack"
settings_ = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


# --- random objects ---


@st.composite
def nodes_(draw: st.DrawFn, name: str) -> Node:
    labels: dict[str, str] = {}
    if draw(st.integers(0, 9)) > 0:
        labels[HOST] = name
    zone = draw(st.sampled_from(["z1", "z2", "z3", "z1", None]))
    if zone is not None:
        labels[ZONE] = zone
    rack = draw(st.sampled_from(["r1", "r2", None]))
    if rack is not None:
        labels[RACK] = rack
    spec: dict[str, Any] = {}
    if draw(st.integers(0, 3)) == 0:
        spec["taints"] = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
    return Node.from_dict({"metadata": {"name": name, "labels": labels}, "spec": spec})


def _labels(draw: st.DrawFn) -> dict[str, str]:
    labels = {"app": draw(st.sampled_from(["web", "db"]))}
    ver = draw(st.sampled_from(["1", "2", None]))
    if ver is not None:
        labels["ver"] = ver
    return labels


@st.composite
def existing_pods(draw: st.DrawFn, name: str, node_names: list[str]) -> Pod:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": draw(st.sampled_from(["default", "default", "other"])),
        "uid": name,
        "labels": _labels(draw),
    }
    if draw(st.integers(0, 7)) == 0:
        meta["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    spec = {"containers": [{"name": "c"}], "nodeName": draw(st.sampled_from(node_names))}
    return Pod.from_dict({"metadata": meta, "spec": spec})


@st.composite
def constraints_(draw: st.DrawFn) -> dict[str, Any]:
    c: dict[str, Any] = {
        "maxSkew": draw(st.integers(1, 3)),
        "topologyKey": draw(st.sampled_from([ZONE, ZONE, HOST, RACK])),
        "whenUnsatisfiable": draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"])),
    }
    sel = draw(st.integers(0, 3))
    if sel == 0:
        c["labelSelector"] = {"matchLabels": {"app": "web"}}
    elif sel == 1:
        c["labelSelector"] = {"matchExpressions": [{"key": "app", "operator": "Exists"}]}
    elif sel == 2:
        c["labelSelector"] = {"matchLabels": {"app": "db"}}
    if draw(st.booleans()):
        c["matchLabelKeys"] = ["ver"]
    if draw(st.integers(0, 3)) == 0:
        c["minDomains"] = draw(st.integers(1, 5))
    if draw(st.booleans()):
        c["nodeAffinityPolicy"] = draw(st.sampled_from(["Honor", "Ignore"]))
    if draw(st.booleans()):
        c["nodeTaintsPolicy"] = draw(st.sampled_from(["Honor", "Ignore"]))
    return c


@st.composite
def incoming_pods(draw: st.DrawFn) -> Pod:
    spec: dict[str, Any] = {"containers": [{"name": "c"}]}
    tsc = [draw(constraints_()) for _ in range(draw(st.sampled_from([0, 1, 1, 1, 2, 3])))]
    if tsc:
        spec["topologySpreadConstraints"] = tsc
    if draw(st.integers(0, 3)) == 0:
        spec["nodeSelector"] = {ZONE: draw(st.sampled_from(["z1", "z2"]))}
    if draw(st.booleans()):
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    meta: dict[str, Any] = {
        "name": "incoming",
        "namespace": "default",
        "uid": "incoming",
        "labels": _labels(draw),
    }
    if draw(st.booleans()):  # owned by a ReplicaSet: System default constraints
        meta["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "controller": True}
        ]
    return Pod.from_dict({"metadata": meta, "spec": spec})


@st.composite
def workloads(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(1, 12))
    names = [f"n{i}" for i in range(n)]
    nodes = [draw(nodes_(name)) for name in names]
    pods = [draw(existing_pods(f"p{i}", names)) for i in range(draw(st.integers(0, 25)))]
    incoming = draw(incoming_pods())
    filtered = draw(st.lists(st.sampled_from(names), unique=True, min_size=1))
    updates = draw(
        st.lists(
            st.tuples(st.integers(0, 24), st.sampled_from(names), st.sampled_from([1, -1])),
            max_size=4,
        )
    )
    return {"nodes": nodes, "pods": pods, "incoming": incoming, "filtered": filtered,
            "updates": updates}


def _replica_set() -> Any:
    from kschedlib.api.objects import decode_any

    return decode_any({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "rs", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}},
    })


def counted_plugin(w: dict[str, Any]) -> tuple[Cache, Snapshot, Any]:
    """The workload in a cache and its snapshot, and PodTopologySpread over it with the
    counter on (the reuse across cycles)."""
    store = ObjectStore()
    store.upsert(_replica_set())
    cache = Cache()
    for n in w["nodes"]:
        cache.add_node(n)
    for p in w["pods"]:
        cache.add_pod(p)
    snap = Snapshot()
    cache.update_snapshot(snap)
    handle = BasicHandle(snap, store)
    handle.node_local_cache = object()  # type: ignore[attr-defined]  # counter on
    return cache, snap, podtopologyspread.new(None, handle)


def added_pod(step: int, a: int, live: list[str]) -> Pod:
    """The pod a step's "add" binds: labelled web or db, on one of the live nodes."""
    return Pod.from_dict({
        "metadata": {"name": f"x{step}", "namespace": "default", "uid": f"x{step}",
                     "labels": {"app": ["web", "db"][a % 2]}},
        "spec": {"containers": [{"name": "c"}], "nodeName": live[a % len(live)]},
    })


def apply_op(cache: Cache, snap: Snapshot, live: list[str], step: int, op: str, a: int) -> None:
    """One step: a pod added, or a live node removed (while more than one is left)."""
    if op == "add":
        cache.add_pod(added_pod(step, a, live))
    elif len(live) > 1:
        cache.remove_node(live.pop(a % len(live)))
    cache.update_snapshot(snap)


def _key(st: Status | None) -> Any:
    return None if st is None else (st.code, st.reasons, st.plugin)


# --- Filter / Score vs the straightforward computation ---


def _verdicts(pl: Any, state: CycleState, pod: Pod, nodes: Any) -> list[Any]:
    return [_key(pl.filter(state, pod, ni)) for ni in nodes]


def _reference_verdicts(s: PreFilterState, nodes: Any) -> list[Any]:
    return [_key(filter_node(s, ni.node)) for ni in nodes]


@settings_
@given(workloads())
def test_filter_and_score_fast_paths_equal_the_straightforward_ones(w: dict[str, Any]) -> None:
    store = ObjectStore()
    store.upsert(_replica_set())
    snap = Snapshot.from_objects(w["pods"], w["nodes"])
    pl = podtopologyspread.new(None, BasicHandle(snap, store))
    incoming = w["incoming"]
    nodes = snap.list()

    state = CycleState()
    _, st_ = pl.pre_filter(state, incoming, nodes)
    if st_ is None:
        s = state.read(podtopologyspread.PRE_FILTER_STATE_KEY)
        before = _reference_verdicts(s, nodes)
        assert _verdicts(pl, state, incoming, nodes) == before
        # AddPod/RemovePod on a clone: the clone's verdicts follow its counts, the original's
        # stay as they were (counts shared copy-on-write).
        clone_state = state.clone()
        c = clone_state.read(podtopologyspread.PRE_FILTER_STATE_KEY)
        for idx, node_name, delta in w["updates"]:
            if not w["pods"]:
                break
            p = w["pods"][idx % len(w["pods"])]
            ni = snap.get(node_name)
            c.update_with_pod(p, incoming, ni.node, delta)
            assert _verdicts(pl, clone_state, incoming, nodes) == _reference_verdicts(c, nodes)
        assert _verdicts(pl, state, incoming, nodes) == before
        assert _reference_verdicts(s, nodes) == before
    else:
        assert st_.code == Code.Skip

    filtered = [ni for ni in nodes if ni.name in w["filtered"]]
    state = CycleState()
    st_ = pl.pre_score(state, incoming, filtered)
    if st_ is not None:
        assert st_.code == Code.Skip
        return
    # Every node, not only the filtered ones: values without counts take the missing path.
    single = []
    for ni in nodes:
        v, sst = pl.score(state, incoming, ni)
        assert sst is None
        single.append(v)
    batch, bst = pl.score_nodes(state, incoming, nodes)
    assert bst is None
    assert batch == single
    single = [v for ni, v in zip(nodes, single, strict=True) if ni.name in w["filtered"]]
    # As many nodes as PreScore saw, in another order: not the nodes it read.
    batch, bst = pl.score_nodes(state, incoming, filtered[::-1])
    assert bst is None
    assert batch == single[::-1]
    batch, bst = pl.score_nodes(state, incoming, filtered)
    assert bst is None
    assert batch == single
    objs = [NodeScore(ni.name, v) for ni, v in zip(filtered, single, strict=True)]
    assert pl.normalize_score(state, incoming, objs) is None
    assert pl.normalize_score_values(state, incoming, batch) is None
    assert batch == [o.score for o in objs]


def test_normalize_values_needs_the_scored_list_when_nodes_are_ignored() -> None:
    nodes = [
        Node.from_dict({"metadata": {"name": "a", "labels": {HOST: "a", ZONE: "z1"}}}),
        Node.from_dict({"metadata": {"name": "b", "labels": {HOST: "b"}}}),
    ]
    snap = Snapshot.from_objects([], nodes)
    pl = podtopologyspread.new(None, BasicHandle(snap, ObjectStore()))
    incoming = Pod.from_dict({
        "metadata": {"name": "p", "namespace": "default", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c"}], "topologySpreadConstraints": [
            {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway",
             "labelSelector": {"matchLabels": {"app": "web"}}}]},
    })
    state = CycleState()
    assert pl.pre_score(state, incoming, snap.list()) is None
    s = state.read(podtopologyspread.PRE_SCORE_STATE_KEY)
    assert isinstance(s, PreScoreState) and s.ignored_nodes == {"b"}
    vals, _ = pl.score_nodes(state, incoming, snap.list())
    assert pl.normalize_score_values(state, incoming, vals) is None
    assert vals == [100, 0]
    st_ = pl.normalize_score_values(state, incoming, [0, 0])
    assert st_ is not None and st_.code == Code.Error


# --- counts kept across cycles vs a recount ---


def _recount(pod: Pod, constraints: Any, nodes: Any, require_all: bool) -> list[Any]:
    required = RequiredNodeAffinity.of(pod)
    ns = pod.metadata.namespace
    shares = [node_share(pod, constraints, required, ns, ni, require_all) for ni in nodes]
    return [list(m.items()) for m in _totals(shares, len(constraints))]


OPS = ["add_pod", "add_pod", "remove_pod", "relabel", "taint", "add_node", "remove_node",
       "new_snapshot", "skip"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(3, 10),
    st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 1000), st.integers(0, 1000)),
             min_size=1, max_size=40),
    st.lists(incoming_pods(), min_size=1, max_size=3),
    st.sampled_from([4, 16, 1 << 14]),
)
def test_counts_kept_across_snapshot_updates_equal_a_recount(
    n_nodes: int, ops: list[tuple[str, int, int]], incoming: list[Pod], log_max: int
) -> None:
    with mock.patch.object(snapshot_module, "_CHANGE_LOG_MAX", log_max):
        _run_counter_ops(n_nodes, ops, incoming)


def _node(i: int, zone: str, taint: bool = False) -> Node:
    spec: dict[str, Any] = {}
    if taint:
        spec["taints"] = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
    return Node.from_dict({
        "metadata": {"name": f"n{i}", "labels": {HOST: f"n{i}", ZONE: zone, RACK: "r1"}},
        "spec": spec,
    })


def _run_counter_ops(n_nodes: int, ops: list[tuple[str, int, int]], incoming: list[Pod]) -> None:
    cache = Cache()
    nodes = {i: _node(i, f"z{i % 3}") for i in range(n_nodes)}
    for n in nodes.values():
        cache.add_node(n)
    snap = Snapshot()
    cache.update_snapshot(snap)
    counter = SpreadCounter()
    loose = SpreadCounter()  # exact=False: lookups only (removals subtract)
    pods: list[Pod] = []
    next_id = n_nodes
    for step, (op, a, b) in enumerate(ops):
        names = sorted(nodes)
        if op == "add_pod" and names:
            i = names[a % len(names)]
            p = Pod.from_dict({
                "metadata": {"name": f"q{step}", "namespace": "default", "uid": f"q{step}",
                             "labels": {"app": ["web", "db"][b % 2], "ver": str(b % 3)}},
                "spec": {"containers": [{"name": "c"}], "nodeName": f"n{i}"},
            })
            cache.add_pod(p)
            pods.append(p)
        elif op == "remove_pod" and pods:
            p = pods.pop(a % len(pods))
            cache.remove_pod(p)
        elif op in ("relabel", "taint") and names:
            i = names[a % len(names)]
            old = nodes[i]
            zone = f"z{b % 4}" if op == "relabel" else old.metadata.labels[ZONE]
            nodes[i] = _node(i, zone, taint=op == "taint" and not old.spec.taints)
            cache.update_node(old, nodes[i])
        elif op == "add_node":
            nodes[next_id] = _node(next_id, f"z{b % 3}")
            cache.add_node(nodes[next_id])
            next_id += 1
        elif op == "remove_node" and len(names) > 1:
            i = names[a % len(names)]
            cache.remove_node(nodes.pop(i))
        elif op == "new_snapshot":
            snap = Snapshot()
        if op == "skip":
            continue  # no cycle: the next one finds several updates in the log
        cache.update_snapshot(snap)
        all_nodes = snap.list()
        for pod in incoming:
            for action in ("DoNotSchedule", "ScheduleAnyway"):
                constraints = filter_topology_spread_constraints(
                    pod.spec.topology_spread_constraints, pod.metadata.labels, action
                )
                if not constraints:
                    continue
                for require_all in (True, False):
                    got = counter.totals(pod, constraints, all_nodes, require_all, snap)
                    if got is None:  # first sight: counted directly by the caller
                        continue
                    want = _recount(pod, constraints, all_nodes, require_all)
                    assert [list(m.items()) for m in got] == want
                    # Inexact totals: the same value for every domain a recount has, and
                    # 0 for the domains left without nodes.
                    some = loose.totals(pod, constraints, all_nodes, require_all, snap,
                                        exact=False)
                    if some is None:
                        continue
                    for m, w in zip(some, want, strict=True):
                        ref = dict(w)
                        assert all(m.get(v, 0) == n for v, n in ref.items())
                        assert all(n == 0 for v, n in m.items() if v not in ref)


# --- helpers ---


@given(st.lists(st.integers(0, 3), max_size=300), st.data())
def test_changed_indices_finds_every_difference_in_order(a: list[int], data: Any) -> None:
    b = list(a)
    for i in data.draw(st.lists(st.integers(0, max(len(a) - 1, 0)), max_size=20)):
        if b:
            b[i] += data.draw(st.integers(0, 2))
    assert changed_indices(a, b) == [i for i in range(len(a)) if a[i] != b[i]]


# --- hostname counts taken from the counter's kept shares vs counted ---


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads(), st.lists(st.tuples(st.sampled_from(["add", "remove_node"]),
                                       st.integers(0, 30)), max_size=5))
def test_hostname_counts_from_kept_shares_equal_counting(
    w: dict[str, Any], ops: list[tuple[str, int]]
) -> None:
    cache, snap, pl = counted_plugin(w)
    incoming = w["incoming"]
    live = [n.metadata.name for n in w["nodes"]]
    for step in range(len(ops) + 2):  # twice first: the counter keeps a key seen again
        if step >= 2:
            apply_op(cache, snap, live, step, *ops[step - 2])
        nodes = snap.list()
        filtered = [ni for ni in nodes if ni.name in w["filtered"]] or list(nodes)
        state = CycleState()
        st_ = pl.pre_score(state, incoming, filtered)
        if st_ is not None:
            assert st_.code == Code.Skip
            return
        s = state.read(podtopologyspread.PRE_SCORE_STATE_KEY)
        assert isinstance(s, PreScoreState)
        if step >= 1 and any(c.topology_key == HOST for c in s.constraints):
            assert s.node_shares is not None  # the reuse is on
            assert s.score_keys is not None  # what Score reads is kept per generation
        single = []
        for ni in filtered:
            v, sst = pl.score(state, incoming, ni)  # score_node counts on the node itself
            assert sst is None
            single.append(v)
        batch, bst = pl.score_nodes(state, incoming, filtered)
        assert bst is None
        assert batch == single
