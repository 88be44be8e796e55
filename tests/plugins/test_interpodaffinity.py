"""InterPodAffinity: PreFilter/Filter rules, PreFilterExtensions, PreScore/Score/Normalize,
args and QueueingHints (cases drawn from kube-scheduler's filtering/scoring/plugin tests)."""

from __future__ import annotations

from typing import Any

import pytest

from kschedlib.api.codec import decode
from kschedlib.api.node import Namespace, Node
from kschedlib.api.pod import Pod
from kschedlib.backend.snapshot import Snapshot
from kschedlib.errors import ConfigError
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import ActionType, EventResource, QueueingHint
from kschedlib.framework.handle import BasicHandle, ObjectStore
from kschedlib.framework.interface import NodeScore
from kschedlib.framework.status import Code, Status
from kschedlib.framework.types import PodInfo
from kschedlib.plugins import interpodaffinity
from kschedlib.plugins.interpodaffinity import InterPodAffinity, InterPodAffinityArgs
from kschedlib.plugins.interpodaffinity.scoring import PreScoreState

AFFINITY = "node(s) didn't match pod affinity rules"
ANTI = "node(s) didn't match pod anti-affinity rules"
EXISTING = "node(s) didn't satisfy existing pods anti-affinity rules"
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


# --- builders ---


def term(
    labels: dict[str, str] | None = None,
    key: str = HOST,
    *,
    exprs: list[dict[str, Any]] | None = None,
    namespaces: list[str] | None = None,
    ns_selector: dict[str, Any] | None = None,
    match_label_keys: list[str] | None = None,
    mismatch_label_keys: list[str] | None = None,
) -> dict[str, Any]:
    t: dict[str, Any] = {"topologyKey": key}
    if labels is not None or exprs is not None:
        sel: dict[str, Any] = {}
        if labels is not None:
            sel["matchLabels"] = labels
        if exprs is not None:
            sel["matchExpressions"] = exprs
        t["labelSelector"] = sel
    if namespaces is not None:
        t["namespaces"] = namespaces
    if ns_selector is not None:
        t["namespaceSelector"] = ns_selector
    if match_label_keys is not None:
        t["matchLabelKeys"] = match_label_keys
    if mismatch_label_keys is not None:
        t["mismatchLabelKeys"] = mismatch_label_keys
    return t


def pod(
    name: str,
    labels: dict[str, str] | None = None,
    *,
    node: str = "",
    ns: str = "default",
    affinity: list[dict[str, Any]] | None = None,
    anti: list[dict[str, Any]] | None = None,
    pref_affinity: list[tuple[int, dict[str, Any]]] | None = None,
    pref_anti: list[tuple[int, dict[str, Any]]] | None = None,
) -> Pod:
    aff: dict[str, Any] = {}
    if affinity or pref_affinity:
        aff["podAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": affinity or [],
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": w, "podAffinityTerm": t} for w, t in pref_affinity or []
            ],
        }
    if anti or pref_anti:
        aff["podAntiAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": anti or [],
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": w, "podAffinityTerm": t} for w, t in pref_anti or []
            ],
        }
    spec: dict[str, Any] = {"containers": [{"name": "c"}], "nodeName": node}
    if aff:
        spec["affinity"] = aff
    return Pod.from_dict(
        {
            "metadata": {
                "name": name,
                "namespace": ns,
                "uid": f"{ns}-{name}",
                "labels": labels or {},
            },
            "spec": spec,
        }
    )


def node(name: str, **labels: str) -> Node:
    return Node.from_dict({"metadata": {"name": name, "labels": {HOST: name, **labels}}})


def bare_node(name: str, labels: dict[str, str]) -> Node:
    return Node.from_dict({"metadata": {"name": name, "labels": labels}})


def namespace(name: str, **labels: str) -> Namespace:
    return Namespace.from_dict(
        {"metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name, **labels}}}
    )


def setup(
    pods: list[Pod],
    nodes: list[Node],
    namespaces: list[Namespace] | None = None,
    args: InterPodAffinityArgs | None = None,
) -> tuple[InterPodAffinity, Snapshot]:
    objects = ObjectStore()
    for ns in namespaces or [namespace("default")]:
        objects.upsert(ns)
    snap = Snapshot.from_objects(pods, nodes)
    return interpodaffinity.new(args, BasicHandle(snap, objects)), snap


def run_filter(
    incoming: Pod,
    pods: list[Pod],
    nodes: list[Node],
    namespaces: list[Namespace] | None = None,
) -> dict[str, tuple[Code, str] | None]:
    """PreFilter then Filter on every node: node -> (code, reason) or None (passes)."""
    pl, snap = setup(pods, nodes, namespaces)
    state = CycleState()
    _, st = pl.pre_filter(state, incoming, snap.list())
    out: dict[str, tuple[Code, str] | None] = {}
    for ni in snap.list():
        if st is not None and st.code == Code.Skip:
            out[ni.name] = None
            continue
        assert st is None
        f = pl.filter(state, incoming, ni)
        out[ni.name] = None if f is None else (f.code, f.reasons[0])
    return out


def run_score(
    incoming: Pod,
    pods: list[Pod],
    nodes: list[Node],
    namespaces: list[Namespace] | None = None,
    args: InterPodAffinityArgs | None = None,
) -> tuple[dict[str, int], dict[str, int]] | None:
    """PreScore/Score/Normalize on every node: (raw, normalized), or None when skipped."""
    pl, snap = setup(pods, nodes, namespaces, args)
    state = CycleState()
    st = pl.pre_score(state, incoming, snap.list())
    if st is not None:
        assert st.code == Code.Skip
        return None
    scores = []
    for ni in snap.list():
        s, sst = pl.score(state, incoming, ni)
        assert sst is None
        scores.append(NodeScore(ni.name, s))
    raw = {ns.name: ns.score for ns in scores}
    assert pl.normalize_score(state, incoming, scores) is None
    return raw, {ns.name: ns.score for ns in scores}


# --- PreFilter / Filter ---


def test_pre_filter_skips_pod_without_required_terms_and_no_existing_anti_affinity() -> None:
    pl, snap = setup([pod("a", {"app": "x"}, node="n1")], [node("n1")])
    _, st = pl.pre_filter(CycleState(), pod("p", {"app": "x"}), snap.list())
    assert st is not None and st.code == Code.Skip


def test_pre_filter_runs_when_an_existing_pod_rejects_the_incoming_pod() -> None:
    existing = pod("a", node="n1", anti=[term({"app": "x"})])
    pl, snap = setup([existing], [node("n1")])
    state = CycleState()
    assert pl.pre_filter(state, pod("p", {"app": "x"}), snap.list()) == (None, None)
    assert interpodaffinity.PRE_FILTER_STATE_KEY in state


def test_required_affinity_same_node_and_same_zone() -> None:
    nodes = [node("n1", **{ZONE: "a"}), node("n2", **{ZONE: "a"}), node("n3", **{ZONE: "b"})]
    pods = [pod("cache", {"app": "cache"}, node="n1")]
    by_host = run_filter(pod("p", affinity=[term({"app": "cache"})]), pods, nodes)
    assert by_host == {
        "n1": None,
        "n2": (Code.UnschedulableAndUnresolvable, AFFINITY),
        "n3": (Code.UnschedulableAndUnresolvable, AFFINITY),
    }
    by_zone = run_filter(pod("p", affinity=[term({"app": "cache"}, ZONE)]), pods, nodes)
    assert by_zone == {"n1": None, "n2": None, "n3": (Code.UnschedulableAndUnresolvable, AFFINITY)}


def test_required_affinity_fails_on_nodes_without_the_topology_key() -> None:
    nodes = [node("n1", **{ZONE: "a"}), node("n2")]
    pods = [pod("cache", {"app": "cache"}, node="n1")]
    got = run_filter(pod("p", affinity=[term({"app": "cache"}, ZONE)]), pods, nodes)
    assert got == {"n1": None, "n2": (Code.UnschedulableAndUnresolvable, AFFINITY)}


def test_required_affinity_all_terms_must_match_one_pod() -> None:
    nodes = [node("n1"), node("n2")]
    pods = [pod("a", {"app": "a"}, node="n1"), pod("b", {"tier": "b"}, node="n2")]
    incoming = pod("p", affinity=[term({"app": "a"}), term({"tier": "b"})])
    got = run_filter(incoming, pods, nodes)
    assert got == {
        "n1": (Code.UnschedulableAndUnresolvable, AFFINITY),
        "n2": (Code.UnschedulableAndUnresolvable, AFFINITY),
    }
    both = [pod("ab", {"app": "a", "tier": "b"}, node="n2")]
    assert run_filter(incoming, both, nodes)["n2"] is None


def test_first_pod_of_a_self_affine_group_may_go_anywhere_with_the_keys() -> None:
    nodes = [node("n1", **{ZONE: "a"}), node("n2", **{ZONE: "b"}), bare_node("n3", {})]
    incoming = pod("p", {"app": "etl"}, affinity=[term({"app": "etl"}, ZONE)])
    got = run_filter(incoming, [], nodes)
    assert got == {"n1": None, "n2": None, "n3": (Code.UnschedulableAndUnresolvable, AFFINITY)}
    # Once a matching pod exists the exception no longer applies.
    got = run_filter(incoming, [pod("e", {"app": "etl"}, node="n2")], nodes)
    assert got["n1"] == (Code.UnschedulableAndUnresolvable, AFFINITY)
    assert got["n2"] is None


def test_pod_not_matching_its_own_affinity_gets_no_exception() -> None:
    incoming = pod("p", {"app": "web"}, affinity=[term({"app": "etl"})])
    got = run_filter(incoming, [], [node("n1")])
    assert got == {"n1": (Code.UnschedulableAndUnresolvable, AFFINITY)}


def test_required_anti_affinity() -> None:
    nodes = [node("n1", **{ZONE: "a"}), node("n2", **{ZONE: "a"}), node("n3")]
    pods = [pod("s", {"app": "search"}, node="n1")]
    incoming = pod("p", {"app": "search"}, anti=[term({"app": "search"}, ZONE)])
    got = run_filter(incoming, pods, nodes)
    # n3 has no zone label: anti-affinity cannot be violated there.
    assert got == {"n1": (Code.Unschedulable, ANTI), "n2": (Code.Unschedulable, ANTI), "n3": None}


def test_existing_pods_anti_affinity_is_symmetric() -> None:
    nodes = [node("n1", **{ZONE: "a"}), node("n2", **{ZONE: "a"}), node("n3", **{ZONE: "b"})]
    pods = [pod("db", node="n1", anti=[term({"tier": "latency"}, ZONE)])]
    got = run_filter(pod("p", {"tier": "latency"}), pods, nodes)
    assert got == {
        "n1": (Code.Unschedulable, EXISTING),
        "n2": (Code.Unschedulable, EXISTING),
        "n3": None,
    }
    assert run_filter(pod("p", {"tier": "batch"}), pods, nodes) == dict.fromkeys(("n1", "n2", "n3"))


def test_check_order_affinity_then_anti_then_existing() -> None:
    nodes = [node("n1")]
    pods = [pod("x", {"app": "x"}, node="n1", anti=[term({"app": "p"})])]
    incoming = pod("p", {"app": "p"}, affinity=[term({"app": "nope"})], anti=[term({"app": "x"})])
    assert run_filter(incoming, pods, nodes)["n1"] == (Code.UnschedulableAndUnresolvable, AFFINITY)
    incoming = pod("p", {"app": "p"}, anti=[term({"app": "x"})])
    assert run_filter(incoming, pods, nodes)["n1"] == (Code.Unschedulable, ANTI)


def test_term_without_namespaces_sees_only_the_pods_namespace() -> None:
    nodes = [node("n1"), node("n2")]
    pods = [pod("c", {"app": "cache"}, node="n1", ns="team-a")]
    nss = [namespace("default"), namespace("team-a")]
    got = run_filter(pod("p", affinity=[term({"app": "cache"})]), pods, nodes, nss)
    assert got["n1"] == (Code.UnschedulableAndUnresolvable, AFFINITY)
    incoming = pod("p", affinity=[term({"app": "cache"}, namespaces=["team-a"])])
    assert run_filter(incoming, pods, nodes, nss)["n1"] is None


def test_namespace_selector_is_unrolled_from_namespace_labels() -> None:
    nodes = [node("n1"), node("n2"), node("n3")]
    nss = [namespace("default"), namespace("pay", team="payments"), namespace("ops", team="ops")]
    pods = [
        pod("a", {"app": "api"}, node="n1", ns="pay"),
        pod("b", {"app": "api"}, node="n2", ns="ops"),
    ]
    sel = {"matchLabels": {"team": "payments"}}
    got = run_filter(pod("p", anti=[term({"app": "api"}, ns_selector=sel)]), pods, nodes, nss)
    assert got == {"n1": (Code.Unschedulable, ANTI), "n2": None, "n3": None}


def test_empty_namespace_selector_matches_all_namespaces() -> None:
    nodes = [node("n1"), node("n2"), node("n3")]
    nss = [namespace("default"), namespace("x"), namespace("y")]
    pods = [
        pod("a", {"app": "api"}, node="n1", ns="x"),
        pod("b", {"app": "api"}, node="n2", ns="y"),
    ]
    got = run_filter(pod("p", anti=[term({"app": "api"}, ns_selector={})]), pods, nodes, nss)
    assert got == {"n1": (Code.Unschedulable, ANTI), "n2": (Code.Unschedulable, ANTI), "n3": None}


def test_existing_pods_namespace_selector_uses_the_incoming_pods_namespace_labels() -> None:
    nodes = [node("n1")]
    nss = [namespace("default"), namespace("pay", team="payments"), namespace("web", team="web")]
    sel = {"matchLabels": {"team": "payments"}}
    pods = [pod("a", node="n1", ns="ops", anti=[term({"app": "api"}, ns_selector=sel)])]
    nss.append(namespace("ops"))
    assert run_filter(pod("p", {"app": "api"}, ns="pay"), pods, nodes, nss)["n1"] == (
        Code.Unschedulable,
        EXISTING,
    )
    assert run_filter(pod("p", {"app": "api"}, ns="web"), pods, nodes, nss)["n1"] is None


def test_match_label_keys_limit_anti_affinity_to_the_same_revision() -> None:
    nodes = [node("n1"), node("n2")]
    pods = [pod("old", {"app": "api", "hash": "v1"}, node="n1")]
    t = term({"app": "api"}, match_label_keys=["hash"])
    new_rev = pod("p", {"app": "api", "hash": "v2"}, anti=[t])
    assert run_filter(new_rev, pods, nodes) == {"n1": None, "n2": None}
    same_rev = pod("p", {"app": "api", "hash": "v1"}, anti=[t])
    assert run_filter(same_rev, pods, nodes)["n1"] == (Code.Unschedulable, ANTI)


def test_mismatch_label_keys_avoid_other_tenants() -> None:
    nodes = [node("n1", pool="p1"), node("n2", pool="p2")]
    pods = [pod("a", {"tenant": "acme"}, node="n1"), pod("b", {"tenant": "globex"}, node="n2")]
    t = term(
        exprs=[{"key": "tenant", "operator": "Exists"}], key="pool", mismatch_label_keys=["tenant"]
    )
    got = run_filter(pod("p", {"tenant": "acme"}, anti=[t]), pods, nodes)
    assert got == {"n1": None, "n2": (Code.Unschedulable, ANTI)}


def test_label_selector_expressions() -> None:
    nodes = [node("n1"), node("n2"), node("n3")]
    pods = [
        pod("a", {"app": "a", "env": "prod"}, node="n1"),
        pod("b", {"app": "b", "env": "dev"}, node="n2"),
        pod("c", {"app": "c"}, node="n3"),
    ]
    t = term(
        {"app": "a"},
        exprs=[
            {"key": "env", "operator": "In", "values": ["prod", "staging"]},
            {"key": "legacy", "operator": "DoesNotExist"},
        ],
    )
    assert run_filter(pod("p", affinity=[t]), pods, nodes)["n1"] is None
    t2 = term(exprs=[{"key": "env", "operator": "NotIn", "values": ["prod"]}])
    got = run_filter(pod("p", anti=[t2]), pods, nodes)
    # NotIn matches pods without the key too.
    assert got == {"n1": None, "n2": (Code.Unschedulable, ANTI), "n3": (Code.Unschedulable, ANTI)}


def test_missing_state_is_an_error() -> None:
    pl, snap = setup([], [node("n1")])
    st = pl.filter(CycleState(), pod("p"), snap.list()[0])
    assert st is not None and st.code == Code.Error
    assert st.reasons == ('error reading "PreFilterInterPodAffinity" from cycleState: not found',)


# --- PreFilterExtensions ---


def test_add_and_remove_pod_update_all_three_counters() -> None:
    nodes = [node("n1", **{ZONE: "a"}), node("n2", **{ZONE: "b"})]
    incoming = pod(
        "p", {"app": "web"}, affinity=[term({"app": "cache"}, ZONE)], anti=[term({"app": "web"})]
    )
    pl, snap = setup([pod("c", {"app": "cache"}, node="n2")], nodes)
    state = CycleState()
    assert pl.pre_filter(state, incoming, snap.list()) == (None, None)
    n1, n2 = snap.list()
    assert pl.filter(state, incoming, n1) == Status(
        Code.UnschedulableAndUnresolvable, (AFFINITY,), "InterPodAffinity"
    )
    assert pl.filter(state, incoming, n2) is None

    ext = pl.pre_filter_extensions()
    cache_on_n1 = PodInfo.of(pod("c2", {"app": "cache"}, node="n1"))
    assert ext.add_pod(state, incoming, cache_on_n1, n1) is None
    assert pl.filter(state, incoming, n1) is None

    cloned = state.clone()
    web_on_n2 = PodInfo.of(pod("w", {"app": "web"}, node="n2"))
    assert ext.add_pod(state, incoming, web_on_n2, n2) is None
    assert pl.filter(state, incoming, n2) == Status(Code.Unschedulable, (ANTI,), "InterPodAffinity")
    assert pl.filter(cloned, incoming, n2) is None  # the clone is independent

    hater = PodInfo.of(pod("h", node="n2", anti=[term({"app": "web"}, ZONE)]))
    assert ext.remove_pod(state, incoming, web_on_n2, n2) is None
    assert ext.add_pod(state, incoming, hater, n2) is None
    assert pl.filter(state, incoming, n2) == Status(
        Code.Unschedulable, (EXISTING,), "InterPodAffinity"
    )
    assert ext.remove_pod(state, incoming, hater, n2) is None
    assert pl.filter(state, incoming, n2) is None


def test_removing_the_only_matching_pod_restores_the_self_affinity_exception() -> None:
    nodes = [node("n1"), node("n2")]
    existing = pod("e", {"app": "etl"}, node="n1")
    incoming = pod("p", {"app": "etl"}, affinity=[term({"app": "etl"})])
    pl, snap = setup([existing], nodes)
    state = CycleState()
    pl.pre_filter(state, incoming, snap.list())
    n1, n2 = snap.list()
    assert pl.filter(state, incoming, n2) is not None
    assert pl.pre_filter_extensions().remove_pod(state, incoming, PodInfo.of(existing), n1) is None
    assert pl.filter(state, incoming, n2) is None


def test_extensions_without_state_report_an_error() -> None:
    pl, snap = setup([], [node("n1")])
    st = pl.pre_filter_extensions().add_pod(
        CycleState(), pod("p"), PodInfo.of(pod("q")), snap.list()[0]
    )
    assert st is not None and st.code == Code.Error


# --- PreScore / Score / NormalizeScore ---


def test_preferred_affinity_and_anti_affinity_scores() -> None:
    nodes = [
        node("n1", **{ZONE: "a"}),
        node("n2", **{ZONE: "a"}),
        node("n3", **{ZONE: "b"}),
        node("n4", **{ZONE: "c"}),
    ]
    pods = [
        pod("cache", {"app": "cache"}, node="n1"),
        pod("batch", {"app": "batch"}, node="n3"),
    ]
    incoming = pod(
        "p",
        pref_affinity=[(92, term({"app": "cache"}, ZONE))],
        pref_anti=[(97, term({"app": "batch"}, ZONE))],
    )
    got = run_score(incoming, pods, nodes)
    assert got is not None
    raw, norm = got
    assert raw == {"n1": 92, "n2": 92, "n3": -97, "n4": 0}
    # (s - min) / (max - min) * 100, truncated
    assert norm == {"n1": 100, "n2": 100, "n3": 0, "n4": 51}


def test_existing_pods_preferred_terms_and_hard_affinity_weight() -> None:
    nodes = [node("n1"), node("n2"), node("n3"), node("n4")]
    pods = [
        pod("a", node="n1", pref_affinity=[(80, term({"app": "web"}))]),
        pod("b", node="n2", pref_anti=[(50, term({"app": "web"}))]),
        pod("c", node="n3", affinity=[term({"app": "web"})]),
    ]
    got = run_score(pod("p", {"app": "web"}), pods, nodes)
    assert got is not None
    assert got[0] == {"n1": 80, "n2": -50, "n3": 1, "n4": 0}
    got = run_score(pod("p", {"app": "web"}), pods, nodes, args=InterPodAffinityArgs(10))
    assert got is not None
    assert got[0]["n3"] == 10
    got = run_score(pod("p", {"app": "web"}), pods[2:], nodes, args=InterPodAffinityArgs(0))
    assert got is None  # weight 0: existing pods' required affinity does not score


def test_ignore_preferred_terms_of_existing_pods() -> None:
    nodes = [node("n1"), node("n2")]
    pods = [pod("a", node="n1", pref_affinity=[(80, term({"app": "web"}))])]
    args = InterPodAffinityArgs(ignore_preferred_terms_of_existing_pods=True)
    assert run_score(pod("p", {"app": "web"}), pods, nodes, args=args) is None
    incoming = pod("p", {"app": "web"}, pref_anti=[(5, term({"app": "web"}))])
    got = run_score(incoming, pods, nodes, args=args)
    assert got is not None and got[0] == {"n1": 80, "n2": 0}


def test_pre_score_skips_when_no_term_applies() -> None:
    nodes = [node("n1"), node("n2")]
    incoming = pod("p", pref_affinity=[(10, term({"app": "none"}))])
    assert run_score(incoming, [pod("a", {"app": "x"}, node="n1")], nodes) is None


def test_weights_that_cancel_out_still_score_and_normalize_to_zero() -> None:
    nodes = [node("n1"), node("n2")]
    incoming = pod(
        "p", pref_affinity=[(10, term({"app": "x"}))], pref_anti=[(10, term({"app": "x"}))]
    )
    got = run_score(incoming, [pod("a", {"app": "x"}, node="n1")], nodes)
    assert got == ({"n1": 0, "n2": 0}, {"n1": 0, "n2": 0})


def test_existing_pod_on_node_without_labels_contributes_nothing() -> None:
    nodes = [bare_node("n1", {}), node("n2")]
    incoming = pod("p", pref_affinity=[(10, term({"app": "x"}, "kubernetes.io/hostname"))])
    pods = [pod("a", {"app": "x"}, node="n1"), pod("b", {"app": "x"}, node="n2")]
    got = run_score(incoming, pods, nodes)
    assert got is not None and got[0] == {"n1": 0, "n2": 10}


def test_preferred_terms_with_namespace_selector() -> None:
    nodes = [node("n1"), node("n2")]
    nss = [namespace("default"), namespace("pay", team="payments")]
    pods = [pod("a", {"app": "x"}, node="n1", ns="pay"), pod("b", {"app": "x"}, node="n2")]
    incoming = pod(
        "p",
        pref_affinity=[(7, term({"app": "x"}, ns_selector={"matchLabels": {"team": "payments"}}))],
    )
    got = run_score(incoming, pods, nodes, nss)
    assert got is not None and got[0] == {"n1": 7, "n2": 0}


def test_normalize_truncates_like_go() -> None:
    pl, _ = setup([], [node("n1")])
    state = CycleState()
    state.write(interpodaffinity.PRE_SCORE_STATE_KEY, PreScoreState({"k": {"v": 1}}))
    scores = [NodeScore("a", -3), NodeScore("b", 0), NodeScore("c", 3), NodeScore("d", 2)]
    assert pl.normalize_score(state, pod("p"), scores) is None
    assert [s.score for s in scores] == [0, 50, 100, 83]


# --- args ---


def test_args_defaults_decode_and_validation() -> None:
    assert InterPodAffinityArgs() == InterPodAffinityArgs(1, False)
    args = decode(
        InterPodAffinityArgs,
        {"hardPodAffinityWeight": 10, "ignorePreferredTermsOfExistingPods": True},
    )
    assert args == InterPodAffinityArgs(10, True)
    assert InterPodAffinityArgs(0).validate() == []
    assert InterPodAffinityArgs(100).validate() == []
    assert InterPodAffinityArgs(101).validate() == [
        ("hardPodAffinityWeight", "Invalid value: 101: not in valid range [0-100]")
    ]
    assert InterPodAffinityArgs(-1).validate()[0][1].startswith("Invalid value: -1")
    with pytest.raises(ConfigError):
        interpodaffinity.new(InterPodAffinityArgs(200), None)
    with pytest.raises(ConfigError):
        interpodaffinity.new(object(), None)


def test_package_exports() -> None:
    assert interpodaffinity.NAME == "InterPodAffinity"
    (spec,) = interpodaffinity.PLUGINS
    assert spec.name == "InterPodAffinity" and spec.args_type is InterPodAffinityArgs
    assert spec.factory is interpodaffinity.new


# --- QueueingHints ---


def test_events_to_register() -> None:
    pl, _ = setup([], [])
    events = pl.events_to_register()
    assert [(e.event.resource, e.event.action_type) for e in events] == [
        (EventResource.Pod, ActionType.Add | ActionType.UpdatePodLabel | ActionType.Delete),
        (EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel),
    ]
    assert all(e.queueing_hint_fn is not None for e in events)


_AFF = [term({"service": "securityscan"}, "region")]
_ANTI = [
    term(
        exprs=[{"key": "service", "operator": "In", "values": ["securityscan", "value2"]}],
        key="region",
    )
]


@pytest.mark.parametrize(
    ("target", "old", "new", "want"),
    [
        (
            pod("p", affinity=_AFF),
            None,
            pod("o", {"service": "securityscan"}, node="n"),
            QueueingHint.Queue,
        ),
        (
            pod("p", affinity=_AFF),
            None,
            pod("o", {"service": "securityscan"}),
            QueueingHint.QueueSkip,
        ),
        (pod("p", affinity=_AFF), None, pod("o", {"aaa": "a"}, node="n"), QueueingHint.QueueSkip),
        (
            pod("p", affinity=_AFF),
            pod("o", {"aaa": "a"}, node="n"),
            pod("o", {"service": "securityscan"}, node="n"),
            QueueingHint.Queue,
        ),
        (
            pod("p", affinity=_AFF),
            pod("o", {"service": "securityscan"}, node="n"),
            pod("o", {"aaa": "a"}, node="n"),
            QueueingHint.QueueSkip,
        ),
        (
            pod("p", {"foo": "baz"}),
            pod("p", {"foo": "bar"}),
            pod("p", {"foo": "baz"}),
            QueueingHint.Queue,
        ),
        (
            pod("p", anti=_ANTI),
            pod("o", {"service": "securityscan"}, node="n"),
            pod("o", {"service": "aaaa"}, node="n"),
            QueueingHint.Queue,
        ),
        (
            pod("p", anti=_ANTI),
            pod("o", {"service": "bbb"}, node="n"),
            pod("o", {"service": "securityscan"}, node="n"),
            QueueingHint.QueueSkip,
        ),
        (pod("p", anti=_ANTI), pod("o", {"aaa": "a"}, node="n"), None, QueueingHint.QueueSkip),
        (
            pod("p", anti=_ANTI),
            pod("o", {"service": "securityscan"}, node="n"),
            None,
            QueueingHint.Queue,
        ),
        (
            pod("p", {"service": "securityscan"}),
            pod("o", node="n", anti=_ANTI),
            None,
            QueueingHint.Queue,
        ),
        (
            pod("p", {"service": "foo"}),
            pod("o", node="n", anti=_ANTI),
            None,
            QueueingHint.QueueSkip,
        ),
    ],
)
def test_pod_change_hint(target: Pod, old: Pod | None, new: Pod | None, want: QueueingHint) -> None:
    pl, _ = setup([], [])
    assert pl.is_schedulable_after_pod_change(target, old, new) == want


_AFF_ZONE = pod("p", affinity=[term({"service": "x"}, "zone")])
_ANTI_ZONE = pod("p", anti=[term({"another": "label"}, "zone")])


@pytest.mark.parametrize(
    ("target", "old", "new", "want"),
    [
        (_AFF_ZONE, None, bare_node("a", {"zone": "z1"}), QueueingHint.Queue),
        (
            pod("p", affinity=[term({"service": "x"}, "region")]),
            None,
            bare_node("a", {"zone": "z1"}),
            QueueingHint.QueueSkip,
        ),
        (
            _AFF_ZONE,
            bare_node("a", {"aaa": "a"}),
            bare_node("a", {"aaa": "b"}),
            QueueingHint.QueueSkip,
        ),
        (
            _AFF_ZONE,
            bare_node("a", {"zone": "z1"}),
            bare_node("a", {"zone": "z1", "u": "u"}),
            QueueingHint.QueueSkip,
        ),
        (
            _AFF_ZONE,
            bare_node("a", {"zone": "z1"}),
            bare_node("a", {"zone": "z2"}),
            QueueingHint.Queue,
        ),
        (
            _AFF_ZONE,
            bare_node("a", {"aaa": "a"}),
            bare_node("a", {"zone": "z1"}),
            QueueingHint.Queue,
        ),
        (_ANTI_ZONE, None, bare_node("a", {"zone": "z1"}), QueueingHint.Queue),
        (_ANTI_ZONE, None, bare_node("a", {}), QueueingHint.Queue),
        (
            _ANTI_ZONE,
            bare_node("a", {"zone": "z1"}),
            bare_node("a", {"zone": "z1", "u": "u"}),
            QueueingHint.QueueSkip,
        ),
        (
            _ANTI_ZONE,
            bare_node("a", {"zone": "z1"}),
            bare_node("a", {"zone": "z2"}),
            QueueingHint.Queue,
        ),
        (
            _ANTI_ZONE,
            bare_node("a", {"aaa": "a"}),
            bare_node("a", {"zone": "z1"}),
            QueueingHint.QueueSkip,
        ),
        (
            _ANTI_ZONE,
            bare_node("a", {"zone": "z1"}),
            bare_node("a", {"aaa": "a"}),
            QueueingHint.Queue,
        ),
        (pod("p"), None, bare_node("a", {"zone": "z1"}), QueueingHint.QueueSkip),
    ],
)
def test_node_change_hint(target: Pod, old: Node | None, new: Node, want: QueueingHint) -> None:
    pl, _ = setup([], [])
    assert pl.is_schedulable_after_node_change(target, old, new) == want
