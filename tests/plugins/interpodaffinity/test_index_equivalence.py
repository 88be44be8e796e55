"""InterPodAffinity's reuse across cycles (label index, tables updated from the index's
changed nodes, compiled Filter lookups) against the straightforward computation: random
clusters evolving through a cache, every PreFilter/Filter status and every score equal."""

from __future__ import annotations

from typing import Any
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kschedlib.api.node import Namespace, Node
from kschedlib.api.pod import Pod
from kschedlib.backend.cache.cache import Cache
from kschedlib.backend.snapshot import Snapshot
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.handle import BasicHandle, ObjectStore
from kschedlib.framework.interface import NodeScore
from kschedlib.framework.node_local_cache import NodeLocalCache
from kschedlib.framework.status import Status
from kschedlib.framework.types import NodeInfo, PodInfo
from kschedlib.plugins import interpodaffinity
from kschedlib.plugins.interpodaffinity import InterPodAffinityArgs, PreFilterState, counting
from kschedlib.plugins.interpodaffinity.filtering import filter_node
from kschedlib.plugins.interpodaffinity.index import PodIndex
from kschedlib.plugins.interpodaffinity.scoring import score_node

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
NODE_NAMES = ("n0", "n1", "n2", "n3", "n4")


class ReusingHandle(BasicHandle):
    """A handle that switches the plugin's cross-cycle reuse on (as the Scheduler does)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.node_local_cache = NodeLocalCache()


def _selector() -> st.SearchStrategy[dict[str, Any] | None]:
    req = st.one_of(
        st.builds(
            lambda v: {"key": "app", "operator": "In", "values": v},
            st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=2, unique=True),
        ),
        st.builds(lambda v: {"key": "app", "operator": "NotIn", "values": [v]},
                  st.sampled_from(["a", "b"])),
        st.just({"key": "tier", "operator": "Exists"}),
        st.just({"key": "tier", "operator": "DoesNotExist"}),
    )
    return st.one_of(
        st.none(),
        st.just({}),
        st.builds(lambda v: {"matchLabels": {"app": v}}, st.sampled_from(["a", "b"])),
        st.builds(lambda v, t: {"matchLabels": {"app": v, "tier": t}},
                  st.sampled_from(["a", "b"]), st.sampled_from(["x", "y"])),
        st.builds(lambda r: {"matchExpressions": r}, st.lists(req, min_size=1, max_size=2)),
    )


def _term() -> st.SearchStrategy[dict[str, Any]]:
    def build(sel: Any, key: str, nss: Any, ns_sel: Any) -> dict[str, Any]:
        t: dict[str, Any] = {"topologyKey": key}
        if sel is not None:
            t["labelSelector"] = sel
        if nss is not None:
            t["namespaces"] = nss
        if ns_sel is not None:
            t["namespaceSelector"] = ns_sel
        return t

    return st.builds(
        build,
        _selector(),
        st.sampled_from([HOST, ZONE, "rack"]),
        st.one_of(st.none(), st.just(["ns0"]), st.just(["ns0", "ns1"])),
        st.one_of(st.none(), st.just({}), st.just({"matchLabels": {"team": "x"}})),
    )


_terms = st.lists(_term(), max_size=2)
_weighted = st.lists(st.tuples(st.integers(1, 5), _term()), max_size=2)


_simple_term = st.builds(
    lambda v, key, nss: {"labelSelector": {"matchLabels": {"app": v}}, "topologyKey": key,
                         "namespaces": nss},
    st.sampled_from(["a", "b"]),
    st.sampled_from([HOST, ZONE]),
    st.just(["ns0", "ns1"]),
)
_terms = st.one_of(_terms, st.lists(_simple_term, min_size=1, max_size=2))
_weighted = st.one_of(_weighted, st.lists(st.tuples(st.integers(1, 5), _simple_term),
                                          min_size=1, max_size=2))


@st.composite
def _pod(draw: Any, name: str, node: str = "") -> Pod:
    labels: dict[str, str] = {}
    app = draw(st.sampled_from(["a", "b", "a", "b", "c", None]))
    if app is not None:
        labels["app"] = app
    tier = draw(st.sampled_from(["x", "y", None]))
    if tier is not None:
        labels["tier"] = tier
    aff: dict[str, Any] = {}
    req_a, pref_a = draw(_terms), draw(_weighted)
    req_n, pref_n = draw(_terms), draw(_weighted)
    if req_a or pref_a or draw(st.booleans()):
        aff["podAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": req_a,
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": w, "podAffinityTerm": t} for w, t in pref_a
            ],
        }
    if req_n or pref_n:
        aff["podAntiAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": req_n,
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": w, "podAffinityTerm": t} for w, t in pref_n
            ],
        }
    spec: dict[str, Any] = {"containers": [{"name": "c"}], "nodeName": node}
    if aff:
        spec["affinity"] = aff
    ns = draw(st.sampled_from(["ns0", "ns1"]))
    return Pod.from_dict(
        {
            "metadata": {"name": name, "namespace": ns, "uid": f"{ns}-{name}", "labels": labels},
            "spec": spec,
        }
    )


def _node(name: str, zone: str | None, rack: str | None) -> Node:
    labels = {HOST: name}
    if zone is not None:
        labels[ZONE] = zone
    if rack is not None:
        labels["rack"] = rack
    return Node.from_dict({"metadata": {"name": name, "labels": labels}})


_zone = st.sampled_from(["z1", "z2", None])
_rack = st.sampled_from(["r1", None])

# One step: ("add", pod on node) | ("remove", index) | ("relabel", node, zone, rack)
#           | ("toggle", node): remove the node object, or add it back
#           | ("check", repeats, hard weight, incoming pod from the pool)
_step = st.one_of(
    st.tuples(st.just("add"), st.sampled_from(NODE_NAMES), st.integers(0, 10**6)),
    st.tuples(st.just("remove"), st.integers(0, 50)),
    st.tuples(st.just("relabel"), st.sampled_from(NODE_NAMES), _zone, _rack),
    st.tuples(st.just("toggle"), st.sampled_from(NODE_NAMES)),
    st.tuples(st.just("check"), st.integers(1, 3), st.sampled_from([0, 1, 3]),
              st.integers(0, 2)),
)


def _reference_filter(state: CycleState, incoming: Pod, ni: NodeInfo) -> Status | None:
    """Filter the straightforward way: filter_node on the counters (no compiled lookups)."""
    s = state.get(interpodaffinity.PRE_FILTER_STATE_KEY)
    assert isinstance(s, PreFilterState) and ni.node is not None
    return filter_node(s, ni.node)


def _run(
    pl: Any,
    snap: Snapshot,
    incoming: Pod,
    extra: list[tuple[PodInfo, str]],
    reference: bool = False,
) -> Any:
    """Every result of one cycle: PreFilter, Filter per node (before and after the
    AddPod/RemovePod extensions in ``extra``), PreScore, Score per node and the normalized
    scores; ``reference``: Filter through filter_node, Score through score_node."""
    nodes = snap.list()
    state = CycleState()
    filter_fn = _reference_filter if reference else pl.filter
    res, pst = pl.pre_filter(state, incoming, nodes)
    out: list[Any] = [res, _st(pst)]
    if pst is None:
        out.append([_st(filter_fn(state, incoming, n)) for n in nodes])
        if not reference:
            _check_rejections(pl, state, incoming, nodes)
        for pi, name in extra:
            ni = snap.get(name)
            ext = pl.pre_filter_extensions()
            out.append(_st(ext.add_pod(state, incoming, pi, ni)))
            out.append([_st(filter_fn(state, incoming, n)) for n in nodes])
            if not reference:
                _check_rejections(pl, state, incoming, nodes)
            out.append(_st(ext.remove_pod(state, incoming, pi, ni)))
        out.append([_st(filter_fn(state, incoming, n)) for n in nodes])
        if not reference:
            _check_rejections(pl, state, incoming, nodes)
    sst = pl.pre_score(state, incoming, nodes)
    out.append(_st(sst))
    if sst is None:
        scores = []
        for n in nodes:
            if reference:  # Score the straightforward way: score_node on the weights
                assert n.node is not None
                s, e = score_node(state[interpodaffinity.PRE_SCORE_STATE_KEY], n.node), None
            else:
                s, e = pl.score(state, incoming, n)
            out.append((s, _st(e)))
            scores.append(NodeScore(n.name, s))
        out.append(_st(pl.normalize_score(state, incoming, scores)))
        out.append([(s.name, s.score) for s in scores])
    return out


REJECTIONS_KNOWN = [0]
"""How many times filter_rejections answered (the test checks it is exercised)."""


def _check_rejections(pl: Any, state: CycleState, incoming: Pod, nodes: Any) -> None:
    """filter_rejections (kept across cycles, or recomputed after AddPod/RemovePod) names
    exactly the nodes Filter rejects, with Filter's status, the status object included."""
    rejected = pl.filter_rejections(state, incoming)
    if rejected is None:
        return
    REJECTIONS_KNOWN[0] += 1
    want = {}
    for n in nodes:
        st = pl.filter(state, incoming, n)
        if st is not None:
            want[n.name] = st
    assert {k: _st(v) for k, v in rejected.items()} == {k: _st(v) for k, v in want.items()}
    assert all(rejected[k] is v for k, v in want.items())


def _st(s: Status | None) -> Any:
    return None if s is None else (s.code, s.reasons, s.plugin)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    zones=st.lists(st.tuples(_zone, _rack), min_size=len(NODE_NAMES), max_size=len(NODE_NAMES)),
    steps=st.lists(_step, min_size=1, max_size=25),
    cheap=st.sampled_from([None, True, False]),
    data=st.data(),
)
def test_reuse_gives_what_recomputation_gives(
    zones: list[tuple[str | None, str | None]], steps: list[Any], cheap: bool | None, data: Any
) -> None:
    objects = ObjectStore()
    objects.upsert(Namespace.from_dict({"metadata": {"name": "ns0", "labels": {"team": "x"}}}))
    objects.upsert(Namespace.from_dict({"metadata": {"name": "ns1", "labels": {"team": "y"}}}))
    cache = Cache()
    nodes = {name: _node(name, z, r) for name, (z, r) in zip(NODE_NAMES, zones, strict=True)}
    for n in nodes.values():
        cache.add_node(n)
    snap = Snapshot()
    fast = {w: interpodaffinity.new(InterPodAffinityArgs(hard_pod_affinity_weight=w),
                                    ReusingHandle(snap, objects)) for w in (0, 1, 3)}
    slow = {w: interpodaffinity.new(InterPodAffinityArgs(hard_pod_affinity_weight=w),
                                    BasicHandle(snap, objects)) for w in (0, 1, 3)}
    placed: list[Pod] = []
    gone: set[str] = set()
    pool = [data.draw(_pod(f"in{k}")) for k in range(3)]
    patch = (
        mock.patch.object(counting, "_index_is_cheaper", lambda c, n: cheap)
        if cheap is not None
        else mock.patch.object(counting, "MAX_ENTRIES", counting.MAX_ENTRIES)
    )
    with patch:
        for i, step in enumerate(steps):
            if step[0] == "add":
                p = data.draw(_pod(f"p{i}", step[1]))
                cache.add_pod(p)
                placed.append(p)
            elif step[0] == "remove" and placed:
                cache.remove_pod(placed.pop(step[1] % len(placed)))
            elif step[0] == "relabel" and step[1] not in gone:
                old = nodes[step[1]]
                new = _node(step[1], step[2], step[3])
                cache.update_node(old, new)
                nodes[step[1]] = new
            elif step[0] == "toggle":
                if step[1] in gone:
                    gone.discard(step[1])
                    cache.add_node(nodes[step[1]])
                else:
                    gone.add(step[1])
                    cache.remove_node(nodes[step[1]])
            elif step[0] == "check":
                cache.update_snapshot(snap)
                incoming = pool[step[3]]  # the same pods come back: tables are reused
                extra = [(PodInfo.of(data.draw(_pod(f"x{i}", "n1"))), "n1")]
                if "n1" in gone:
                    extra = []
                for _ in range(step[1]):
                    want = _run(slow[step[2]], snap, incoming, extra, reference=True)
                    got = _run(fast[step[2]], snap, incoming, extra)
                    assert got == want


def _content(ix: PodIndex) -> Any:
    """What the index holds, independent of its record ids."""
    return (
        sorted((p.uid, name) for p, name in ix.pods.values()),
        sorted((k, sorted((p.uid, n) for p, n in d.values()))
               for k, d in ix.pods_by_label.items() if d),
        sorted(ix.node_labels),
        sorted(ix.infos),
    )


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 299), st.booleans()), max_size=30), st.data())
def test_sync_follows_changes_anywhere_in_a_long_node_list(
    changes: list[tuple[int, bool]], data: Any
) -> None:
    nodes = [NodeInfo(_node(f"m{i:03d}", "z1", None)) for i in range(300)]
    ix = PodIndex()
    ix.sync(nodes)
    for k, (i, add) in enumerate(changes):
        ni = nodes[i]
        if add or not ni.pods:
            ni.add_pod(data.draw(_pod(f"q{k}", ni.name)))
        else:
            ni.remove_pod(ni.pods[0].pod)
        if data.draw(st.booleans()):
            ix.sync(nodes)
            fresh = PodIndex()
            fresh.sync(nodes)
            assert _content(ix) == _content(fresh)
