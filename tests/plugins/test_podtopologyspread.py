"""PodTopologySpread: PreFilter/Filter skew rules, inclusion policies, PreFilterExtensions,
scoring and its normalization, default constraints (helper.DefaultSelector), args and
QueueingHints."""

from __future__ import annotations

import struct
from typing import Any

import pytest

from kschedlib.api.codec import decode
from kschedlib.api.node import Node
from kschedlib.api.objects import decode_any
from kschedlib.api.pod import Pod, TopologySpreadConstraint
from kschedlib.api.selectors import LabelSelector
from kschedlib.backend.snapshot import Snapshot
from kschedlib.errors import ConfigError
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import ActionType, EventResource, QueueingHint
from kschedlib.framework.handle import BasicHandle, ObjectStore
from kschedlib.framework.interface import NodeScore
from kschedlib.framework.status import Code
from kschedlib.framework.types import PodInfo
from kschedlib.plugins import podtopologyspread
from kschedlib.plugins.helper.spread import default_selector, get_pod_services
from kschedlib.plugins.podtopologyspread import PodTopologySpread, PodTopologySpreadArgs
from kschedlib.plugins.podtopologyspread.filtering import CriticalPaths, PreFilterState
from kschedlib.plugins.podtopologyspread.scoring import go_log, go_round

SKEW = "node(s) didn't match pod topology spread constraints"
MISSING = "node(s) didn't match pod topology spread constraints (missing required label)"
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


# --- builders ---


def constraint(
    max_skew: int = 1,
    key: str = ZONE,
    when: str = "DoNotSchedule",
    labels: dict[str, str] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    c: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}
    c["labelSelector"] = {"matchLabels": {"app": "web"} if labels is None else labels}
    c.update(extra)
    return c


def pod(
    name: str,
    labels: dict[str, str] | None = None,
    *,
    node: str = "",
    ns: str = "default",
    constraints: list[dict[str, Any]] | None = None,
    node_selector: dict[str, str] | None = None,
    tolerations: list[dict[str, Any]] | None = None,
    terminating: bool = False,
    owner: tuple[str, str, str] | None = None,
) -> Pod:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": ns,
        "uid": f"{ns}-{name}",
        "labels": {"app": "web"} if labels is None else labels,
    }
    if terminating:
        meta["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    if owner is not None:
        api_version, kind, owner_name = owner
        meta["ownerReferences"] = [
            {"apiVersion": api_version, "kind": kind, "name": owner_name, "controller": True}
        ]
    spec: dict[str, Any] = {"containers": [{"name": "c"}], "nodeName": node}
    if constraints:
        spec["topologySpreadConstraints"] = constraints
    if node_selector:
        spec["nodeSelector"] = node_selector
    if tolerations:
        spec["tolerations"] = tolerations
    return Pod.from_dict({"metadata": meta, "spec": spec})


def node(name: str, zone: str | None = None, taint: bool = False, **labels: str) -> Node:
    all_labels = {HOST: name, **labels}
    if zone is not None:
        all_labels[ZONE] = zone
    spec: dict[str, Any] = {}
    if taint:
        spec["taints"] = [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]
    return Node.from_dict({"metadata": {"name": name, "labels": all_labels}, "spec": spec})


def setup(
    pods: list[Pod],
    nodes: list[Node],
    args: PodTopologySpreadArgs | None = None,
    objects: list[Any] | None = None,
) -> tuple[PodTopologySpread, Snapshot]:
    store = ObjectStore()
    for obj in objects or ():
        store.upsert(obj)
    snap = Snapshot.from_objects(pods, nodes)
    return podtopologyspread.new(args, BasicHandle(snap, store)), snap


def run_filter(
    incoming: Pod,
    pods: list[Pod],
    nodes: list[Node],
    args: PodTopologySpreadArgs | None = None,
    objects: list[Any] | None = None,
) -> dict[str, tuple[Code, str] | None] | None:
    """Filter verdicts per node, or None when PreFilter skips the plugin."""
    pl, snap = setup(pods, nodes, args, objects)
    state = CycleState()
    _, st = pl.pre_filter(state, incoming, snap.list())
    if st is not None:
        assert st.code == Code.Skip
        return None
    out: dict[str, tuple[Code, str] | None] = {}
    for ni in snap.list():
        f = pl.filter(state, incoming, ni)
        out[ni.name] = None if f is None else (f.code, f.reasons[0])
    return out


def run_score(
    incoming: Pod,
    pods: list[Pod],
    nodes: list[Node],
    filtered: list[str] | None = None,
    args: PodTopologySpreadArgs | None = None,
    objects: list[Any] | None = None,
) -> tuple[dict[str, int], dict[str, int]] | None:
    """(raw, normalized) scores of the filtered nodes, or None when PreScore skips."""
    pl, snap = setup(pods, nodes, args, objects)
    infos = [ni for ni in snap.list() if filtered is None or ni.name in filtered]
    state = CycleState()
    st = pl.pre_score(state, incoming, infos)
    if st is not None:
        assert st.code == Code.Skip
        return None
    scores = []
    for ni in infos:
        s, sst = pl.score(state, incoming, ni)
        assert sst is None
        scores.append(NodeScore(ni.name, s))
    raw = {ns.name: ns.score for ns in scores}
    assert pl.normalize_score(state, incoming, scores) is None
    return raw, {ns.name: ns.score for ns in scores}


def web_pods(**per_node: int) -> list[Pod]:
    return [pod(f"{n}-{i}", node=n) for n, count in per_node.items() for i in range(count)]


ABC = [node("n1", "a"), node("n2", "b"), node("n3", "c")]


# --- PreFilter / Filter ---


def test_no_constraints_and_no_default_selector_skips() -> None:
    assert run_filter(pod("p"), [], ABC) is None


def test_zone_skew_against_the_global_minimum() -> None:
    got = run_filter(pod("p", constraints=[constraint()]), web_pods(n1=3, n3=4), ABC)
    assert got == {"n1": (Code.Unschedulable, SKEW), "n2": None, "n3": (Code.Unschedulable, SKEW)}
    got = run_filter(pod("p", constraints=[constraint(4)]), web_pods(n1=3, n3=4), ABC)
    assert got == {"n1": None, "n2": None, "n3": (Code.Unschedulable, SKEW)}


def test_node_without_the_topology_key_is_unresolvable() -> None:
    nodes = [*ABC, node("x")]
    got = run_filter(pod("p", constraints=[constraint()]), [], nodes)
    assert got is not None
    assert got["x"] == (Code.UnschedulableAndUnresolvable, MISSING)
    assert got["n1"] is None


def test_pod_not_selected_by_its_constraint_adds_nothing() -> None:
    incoming = pod("p", {"app": "other"}, constraints=[constraint()])
    got = run_filter(incoming, web_pods(n1=1), ABC)
    # skew = 1 + 0 - 0 for n1: still within maxSkew 1
    assert got == {"n1": None, "n2": None, "n3": None}


def test_min_domains_treats_the_global_minimum_as_zero() -> None:
    nodes = [node("n1", "a"), node("n2", "b")]
    pods = web_pods(n1=1, n2=1)
    assert run_filter(pod("p", constraints=[constraint()]), pods, nodes) == {"n1": None, "n2": None}
    got = run_filter(pod("p", constraints=[constraint(minDomains=3)]), pods, nodes)
    assert got == {"n1": (Code.Unschedulable, SKEW), "n2": (Code.Unschedulable, SKEW)}
    got = run_filter(pod("p", constraints=[constraint(2, minDomains=3)]), pods, nodes)
    assert got == {"n1": None, "n2": None}


def test_node_affinity_policy_honor_leaves_out_nodes_the_pod_cannot_use() -> None:
    nodes = [
        node("n1", "a", pool="general"),
        node("n2", "b", pool="general"),
        node("n3", "c", pool="batch"),
    ]
    pods = web_pods(n1=1, n2=1)
    honor = pod("p", constraints=[constraint()], node_selector={"pool": "general"})
    assert run_filter(honor, pods, nodes) == {"n1": None, "n2": None, "n3": None}
    ignore = pod(
        "p",
        constraints=[constraint(nodeAffinityPolicy="Ignore")],
        node_selector={"pool": "general"},
    )
    got = run_filter(ignore, pods, nodes)
    assert got == {"n1": (Code.Unschedulable, SKEW), "n2": (Code.Unschedulable, SKEW), "n3": None}


def test_node_taints_policy_honor_leaves_out_tainted_nodes() -> None:
    nodes = [node("n1", "a"), node("n2", "b"), node("n3", "c", taint=True)]
    pods = web_pods(n1=1, n2=1)
    ignore = pod("p", constraints=[constraint()])  # default: Ignore
    got = run_filter(ignore, pods, nodes)
    assert got is not None and got["n1"] == (Code.Unschedulable, SKEW)
    honor = pod("p", constraints=[constraint(nodeTaintsPolicy="Honor")])
    assert run_filter(honor, pods, nodes) == {"n1": None, "n2": None, "n3": None}
    tolerated = pod(
        "p",
        constraints=[constraint(nodeTaintsPolicy="Honor")],
        tolerations=[
            {"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}
        ],
    )
    got = run_filter(tolerated, pods, nodes)
    assert got is not None and got["n1"] == (Code.Unschedulable, SKEW)


def test_match_label_keys_count_only_the_same_revision() -> None:
    pods = [pod(f"old{i}", {"app": "web", "hash": "v1"}, node="n1") for i in range(4)]
    c = constraint(matchLabelKeys=["hash"])
    got = run_filter(pod("p", {"app": "web", "hash": "v2"}, constraints=[c]), pods, ABC)
    assert got == {"n1": None, "n2": None, "n3": None}
    got = run_filter(pod("p", {"app": "web", "hash": "v1"}, constraints=[c]), pods, ABC)
    assert got is not None and got["n1"] == (Code.Unschedulable, SKEW)


def test_other_namespaces_and_terminating_pods_are_not_counted() -> None:
    pods = [pod("s1", node="n1", ns="staging"), pod("s2", node="n1", ns="staging")]
    pods += [pod("t1", node="n1", terminating=True), pod("t2", node="n1", terminating=True)]
    assert run_filter(pod("p", constraints=[constraint()]), pods, ABC) == dict.fromkeys(
        ("n1", "n2", "n3")
    )


def test_empty_selector_counts_nothing_but_the_pod_itself_matches() -> None:
    pl, snap = setup(web_pods(n1=3), ABC)
    state = CycleState()
    pl.pre_filter(state, pod("p", constraints=[constraint(labels={})]), snap.list())
    s = state.read(podtopologyspread.PRE_FILTER_STATE_KEY)
    assert s.tp_value_to_match_num == [{"a": 0, "b": 0, "c": 0}]
    assert s.self_match == (1,)


def test_nil_selector_matches_nothing() -> None:
    c = {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}
    assert run_filter(pod("p", constraints=[c]), web_pods(n1=3), ABC) == dict.fromkeys(
        ("n1", "n2", "n3")
    )


def test_several_constraints_are_all_checked() -> None:
    nodes = [node("n1", "a"), node("n2", "a"), node("n3", "b")]
    cs = [constraint(), constraint(key=HOST)]
    got = run_filter(pod("p", constraints=cs), web_pods(n1=1), nodes)
    # zone: a=1, b=0 -> a fails; host: n1=1 -> n1 fails first on zone anyway
    assert got == {"n1": (Code.Unschedulable, SKEW), "n2": (Code.Unschedulable, SKEW), "n3": None}
    got = run_filter(pod("p", constraints=cs), web_pods(n1=1, n3=1), nodes)
    assert got == {"n1": (Code.Unschedulable, SKEW), "n2": None, "n3": (Code.Unschedulable, SKEW)}


def test_constraints_on_the_same_key_count_independently() -> None:
    pods = web_pods(n1=2) + [pod("db", {"app": "db"}, node="n2")]
    cs = [constraint(2), constraint(1, labels={"app": "db"})]
    got = run_filter(pod("p", {"app": "web"}, constraints=cs), pods, ABC)
    # web: a=2,b=0,c=0, self 1 -> a: 3 > 2; db: b=1, others 0, self 0 -> all within 1
    assert got == {"n1": (Code.Unschedulable, SKEW), "n2": None, "n3": None}


def test_schedule_anyway_constraints_do_not_filter() -> None:
    incoming = pod("p", constraints=[constraint(when="ScheduleAnyway")])
    assert run_filter(incoming, web_pods(n1=5), ABC) is None


def test_missing_state_is_an_error() -> None:
    pl, snap = setup([], ABC)
    st = pl.filter(CycleState(), pod("p"), snap.list()[0])
    assert st is not None and st.code == Code.Error
    assert st.reasons == ('reading "PreFilterPodTopologySpread" from cycleState: not found',)


# --- critical paths and PreFilterExtensions ---


@pytest.mark.parametrize(
    ("initial", "updates", "want_min"),
    [
        ({"a": 3, "b": 1, "c": 2}, [], 1),
        ({"a": 3, "b": 1, "c": 2}, [("b", 2)], 2),
        ({"a": 3, "b": 1, "c": 2}, [("b", 3)], 2),
        ({"a": 3, "b": 1, "c": 2}, [("a", 0)], 0),
        ({"a": 1}, [("a", 2)], 2),
        ({}, [("a", 1)], 1),
    ],
)
def test_critical_paths(
    initial: dict[str, int], updates: list[tuple[str, int]], want_min: int
) -> None:
    p = CriticalPaths()
    for v, n in initial.items():
        p.update(v, n)
    for v, n in updates:
        p.update(v, n)
    assert p.nums[0] == want_min
    assert p.nums[0] <= p.nums[1]


def test_critical_paths_start_at_max_int32() -> None:
    assert CriticalPaths().nums == [2**31 - 1, 2**31 - 1]


def test_add_and_remove_pod() -> None:
    pl, snap = setup(web_pods(n1=1, n2=1), ABC)
    incoming = pod("p", constraints=[constraint()])
    state = CycleState()
    pl.pre_filter(state, incoming, snap.list())
    n1, n2, n3 = snap.list()
    assert pl.filter(state, incoming, n3) is None
    ext = pl.pre_filter_extensions()
    assert ext.add_pod(state, incoming, PodInfo.of(pod("x", node="n3")), n3) is None
    s = state.read(podtopologyspread.PRE_FILTER_STATE_KEY)
    assert s.tp_value_to_match_num == [{"a": 1, "b": 1, "c": 1}]
    assert s.critical_paths[0].nums[0] == 1
    cloned = state.clone()
    assert ext.remove_pod(state, incoming, PodInfo.of(pod("n1-0", node="n1")), n1) is None
    assert pl.filter(state, incoming, n2) is not None  # a is 0 now: b=1 +1 - 0 > 1
    assert pl.filter(cloned, incoming, n2) is None
    # other namespace, non-matching labels: ignored
    assert ext.add_pod(state, incoming, PodInfo.of(pod("o", node="n1", ns="x")), n1) is None
    assert ext.add_pod(state, incoming, PodInfo.of(pod("o", {"app": "db"}, node="n1")), n1) is None
    assert state.read(podtopologyspread.PRE_FILTER_STATE_KEY).tp_value_to_match_num == [
        {"a": 0, "b": 1, "c": 1}
    ]


def test_update_with_pod_respects_inclusion_policies_and_keys() -> None:
    c = podtopologyspread.SpreadConstraint(
        1, ZONE, LabelSelector(match_labels={"app": "web"}).as_selector()
    )
    s = PreFilterState([c], [CriticalPaths()], [{}], (1,))
    preemptor = pod("p", node_selector={"pool": "general"})
    s.update_with_pod(pod("a", node="n1"), preemptor, node("n1", "a", pool="batch"), 1)
    s.update_with_pod(pod("b", node="n2"), preemptor, node("n2"), 1)  # no zone label
    assert s.tp_value_to_match_num == [{}]
    s.update_with_pod(pod("c", node="n3"), preemptor, node("n3", "a", pool="general"), 1)
    assert s.tp_value_to_match_num == [{"a": 1}]


# --- scoring ---


ZONES4 = [node("n1", "a"), node("n2", "a"), node("n3", "b"), node("n4", "c")]


def test_zone_scoring_with_topology_weight() -> None:
    incoming = pod("p", constraints=[constraint(when="ScheduleAnyway")])
    got = run_score(incoming, web_pods(n1=2, n2=1, n3=1), ZONES4)
    # zone counts a=3, b=1, c=0, weight log(3 + 2)
    assert got == ({"n1": 5, "n2": 5, "n3": 2, "n4": 0}, {"n1": 0, "n2": 0, "n3": 60, "n4": 100})
    incoming = pod("p", constraints=[constraint(2, when="ScheduleAnyway")])
    got = run_score(incoming, web_pods(n1=2, n2=1, n3=1), ZONES4)
    # maxSkew - 1 is added to every score
    assert got == ({"n1": 6, "n2": 6, "n3": 3, "n4": 1}, {"n1": 16, "n2": 16, "n3": 66, "n4": 100})


def test_hostname_scoring_counts_pods_on_the_node() -> None:
    incoming = pod("p", constraints=[constraint(key=HOST, when="ScheduleAnyway")])
    got = run_score(incoming, web_pods(n1=2, n2=1, n3=1), ZONES4)
    # weight log(4 + 2): 2 -> 3.58 -> 4, 1 -> 1.79 -> 2
    assert got == ({"n1": 4, "n2": 2, "n3": 2, "n4": 0}, {"n1": 0, "n2": 50, "n3": 50, "n4": 100})


def test_only_domains_of_filtered_nodes_are_weighed_and_counted() -> None:
    incoming = pod("p", constraints=[constraint(when="ScheduleAnyway")])
    got = run_score(incoming, web_pods(n1=2, n2=1, n4=3), ZONES4, filtered=["n1", "n3"])
    # domains a, b: weight log(4); a counts n1 and n2 (all nodes), c is not counted
    assert got is not None
    assert got[0] == {"n1": round(3 * go_log(4.0)), "n3": 0}
    assert got[1] == {"n1": 0, "n3": 100}


def test_nodes_missing_a_key_are_ignored_and_score_zero() -> None:
    nodes = [*ZONES4, node("x")]
    incoming = pod("p", constraints=[constraint(when="ScheduleAnyway")])
    got = run_score(incoming, web_pods(n1=1, x=5), nodes)
    assert got is not None
    assert got[0]["x"] == 0
    assert got[1] == {"n1": 0, "n2": 0, "n3": 100, "n4": 100, "x": 0}


def test_all_zero_scores_normalize_to_max() -> None:
    incoming = pod("p", constraints=[constraint(when="ScheduleAnyway")])
    got = run_score(incoming, [], ZONES4)
    assert got == (
        dict.fromkeys(("n1", "n2", "n3", "n4"), 0),
        dict.fromkeys(("n1", "n2", "n3", "n4"), 100),
    )


def test_do_not_schedule_constraints_do_not_score() -> None:
    assert run_score(pod("p", constraints=[constraint()]), [], ZONES4) is None


def test_scoring_honors_node_affinity_policy() -> None:
    nodes = [node("n1", "a", pool="g"), node("n2", "b", pool="g"), node("n3", "b", pool="batch")]
    incoming = pod(
        "p", constraints=[constraint(when="ScheduleAnyway")], node_selector={"pool": "g"}
    )
    got = run_score(incoming, web_pods(n1=1, n3=4), nodes, filtered=["n1", "n2"])
    assert got is not None
    assert got[0] == {"n1": round(go_log(4.0)), "n2": 0}  # n3's pods are not counted in b


# --- default constraints ---


def service(name: str, selector: dict[str, str], ns: str = "default") -> Any:
    return decode_any(
        {
            "kind": "Service",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"selector": selector},
        }
    )


def controller(kind: str, name: str, selector: dict[str, str], ns: str = "default") -> Any:
    spec: dict[str, Any] = (
        {"selector": selector}
        if kind == "ReplicationController"
        else {"selector": {"matchLabels": selector}}
    )
    return decode_any({"kind": kind, "metadata": {"name": name, "namespace": ns}, "spec": spec})


def test_default_selector_from_services_and_controllers() -> None:
    store = ObjectStore()
    store.upsert(service("web", {"app": "web"}))
    store.upsert(service("other-ns", {"app": "web"}, ns="x"))
    store.upsert(service("db", {"app": "db"}))
    store.upsert(controller("ReplicaSet", "rs", {"tier": "front"}))
    store.upsert(controller("ReplicationController", "rc", {"rc": "yes"}))
    store.upsert(controller("StatefulSet", "ss", {"ss": "yes"}))
    labels = {"app": "web", "tier": "front", "rc": "yes", "ss": "yes"}
    p = pod("p", labels)
    assert [s.metadata.name for s in get_pod_services(store, p)] == ["web"]
    sel = default_selector(p, store)
    assert sel.matches(labels) and not sel.matches({"app": "web2"})
    rs = default_selector(pod("p", labels, owner=("apps/v1", "ReplicaSet", "rs")), store)
    assert rs.matches(labels) and not rs.matches({"app": "web"})
    rc = default_selector(pod("p", labels, owner=("v1", "ReplicationController", "rc")), store)
    assert rc.matches(labels) and not rc.matches({"app": "web"})
    ss = default_selector(pod("p", labels, owner=("apps/v1", "StatefulSet", "ss")), store)
    assert ss.matches(labels) and not ss.matches({"app": "web", "tier": "front"})
    wrong_group = default_selector(
        pod("p", labels, owner=("extensions/v1beta1", "ReplicaSet", "rs")), store
    )
    assert wrong_group.matches({"app": "web"})
    missing = default_selector(pod("p", {"x": "y"}, owner=("apps/v1", "ReplicaSet", "nope")), store)
    assert missing.is_empty()


def test_system_defaulting_scores_pods_selected_by_a_service() -> None:
    nodes = [node("n1", "a"), node("n2", "b"), node("x")]
    objs = [service("web", {"app": "web"})]
    got = run_score(pod("p"), web_pods(n1=3, x=1), nodes, objects=objs)
    assert got is not None
    # hostname (maxSkew 3) and zone (maxSkew 5). With System defaults the node without a zone
    # label is not ignored: it gets hostname spreading, and its missing value "" counts as a
    # zone domain in the weight: log(3 + 2), not log(2 + 2).
    w = go_log(5.0)
    assert got[0] == {
        "n1": int(go_round(3 * w + 2 + 3 * w + 4)),
        "n2": int(go_round(0 * w + 2 + 0 * w + 4)),
        "x": int(go_round(1 * w + 2)),
    }
    assert got[0]["n1"] == 16
    assert run_filter(pod("p"), [], nodes, objects=objs) is None  # ScheduleAnyway only
    assert run_score(pod("p"), [], nodes) is None  # nothing selects the pod


def test_list_defaulting_applies_the_configured_constraints() -> None:
    args = PodTopologySpreadArgs(
        default_constraints=(
            TopologySpreadConstraint(
                max_skew=1, topology_key=ZONE, when_unsatisfiable="DoNotSchedule"
            ),
        ),
        defaulting_type="List",
    )
    objs = [controller("ReplicaSet", "rs", {"app": "web"})]
    owned = pod("p", owner=("apps/v1", "ReplicaSet", "rs"))
    got = run_filter(owned, web_pods(n1=2), ABC, args=args, objects=objs)
    assert got == {"n1": (Code.Unschedulable, SKEW), "n2": None, "n3": None}
    assert run_filter(pod("p"), web_pods(n1=2), ABC, args=args, objects=objs) is None
    # The pod's own constraints replace the defaults.
    own = pod("p", owner=("apps/v1", "ReplicaSet", "rs"), constraints=[constraint(5)])
    assert run_filter(own, web_pods(n1=2), ABC, args=args, objects=objs) == dict.fromkeys(
        ("n1", "n2", "n3")
    )
    # With List defaulting every node needs every key to be scored.
    score_args = PodTopologySpreadArgs(
        default_constraints=(
            TopologySpreadConstraint(
                max_skew=1, topology_key=ZONE, when_unsatisfiable="ScheduleAnyway"
            ),
        ),
        defaulting_type="List",
    )
    got2 = run_score(owned, [], [*ABC, node("x")], args=score_args, objects=objs)
    assert got2 is not None and got2[1]["x"] == 0 and got2[1]["n1"] == 100


# --- Go's math.Log and math.Round ---


@pytest.mark.parametrize(
    ("x", "bits"),
    [
        (3, "3ff193ea7aad030a"),
        (7, "3fff2272ae325a57"),
        (14, "40051cca16d7bba8"),
        (48, "400ef8383c50bb74"),
        (176, "4014ae935b3cb89e"),
        (5002, "40210901f6dc84b9"),
    ],
)
def test_go_log_matches_go_bit_for_bit(x: int, bits: str) -> None:
    assert struct.pack(">d", go_log(float(x))).hex() == bits


def test_go_round_is_half_away_from_zero() -> None:
    assert [go_round(v) for v in (0.5, 1.5, 2.5, -0.5, 2.4999, 0.49999999999999994)] == [
        1.0,
        2.0,
        3.0,
        -1.0,
        2.0,
        0.0,
    ]


# --- args ---


def test_args_defaults_and_decode() -> None:
    assert PodTopologySpreadArgs().defaulting_type == "System"
    assert len(PodTopologySpreadArgs().effective_default_constraints()) == 2
    args = decode(
        PodTopologySpreadArgs,
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway"}
            ],
        },
    )
    assert args.validate() == []
    assert args.effective_default_constraints() == args.default_constraints
    assert PodTopologySpreadArgs(defaulting_type="List").effective_default_constraints() == ()


def test_args_validation_messages() -> None:
    dup = TopologySpreadConstraint(
        max_skew=1, topology_key=ZONE, when_unsatisfiable="ScheduleAnyway"
    )
    bad = TopologySpreadConstraint(
        max_skew=0,
        topology_key="",
        when_unsatisfiable="ScheduleAnyway",
        label_selector=LabelSelector(),
    )
    args = PodTopologySpreadArgs(default_constraints=(dup, dup, bad), defaulting_type="List")
    assert args.validate() == [
        ("defaultConstraints[1]", f'Duplicate value: "{{{ZONE}, ScheduleAnyway}}"'),
        ("defaultConstraints[2].maxSkew", "Invalid value: 0: not in valid range (0, inf)"),
        ("defaultConstraints[2].topologyKey", "Required value: can not be empty"),
        (
            "defaultConstraints[2].labelSelector",
            "Forbidden: constraint must not define a selector, as they deduced for each pod",
        ),
    ]
    assert PodTopologySpreadArgs(default_constraints=(dup,)).validate() == [
        ("defaultingType", 'Invalid value: "System": when .defaultConstraints are not empty')
    ]
    assert PodTopologySpreadArgs(defaulting_type="Sometimes").validate() == [
        ("defaultingType", 'Unsupported value: "Sometimes": supported values: "System", "List"')
    ]
    bad_key = TopologySpreadConstraint(
        max_skew=1, topology_key="a/b/c", when_unsatisfiable="DoNotSchedule"
    )
    errs = PodTopologySpreadArgs(default_constraints=(bad_key,), defaulting_type="List").validate()
    assert errs and errs[0][0] == "defaultConstraints[0].topologyKey"
    assert errs[0][1].startswith('Invalid value: "a/b/c": a qualified name must consist of')
    with pytest.raises(ConfigError):
        podtopologyspread.new(PodTopologySpreadArgs(defaulting_type="Sometimes"), None)
    with pytest.raises(ConfigError):
        podtopologyspread.new(object(), None)


def test_package_exports() -> None:
    assert podtopologyspread.NAME == "PodTopologySpread"
    (spec,) = podtopologyspread.PLUGINS
    assert spec.name == "PodTopologySpread" and spec.args_type is PodTopologySpreadArgs
    assert spec.factory is podtopologyspread.new


# --- QueueingHints ---


def test_events_to_register() -> None:
    pl, _ = setup([], [])
    assert [(e.event.resource, e.event.action_type) for e in pl.events_to_register()] == [
        (
            EventResource.Pod,
            ActionType.Add
            | ActionType.UpdatePodLabel
            | ActionType.UpdatePodToleration
            | ActionType.Delete,
        ),
        (
            EventResource.Node,
            ActionType.Add
            | ActionType.Delete
            | ActionType.UpdateNodeLabel
            | ActionType.UpdateNodeTaint,
        ),
    ]


_TARGET = pod("p", constraints=[constraint()])
_HONOR = pod("p", constraints=[constraint(nodeTaintsPolicy="Honor")])
_TOL = [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]


@pytest.mark.parametrize(
    ("target", "old", "new", "want"),
    [
        (_TARGET, None, pod("a", node="n1"), QueueingHint.Queue),
        (_TARGET, None, pod("a"), QueueingHint.QueueSkip),  # unscheduled
        (_TARGET, None, pod("a", node="n1", ns="x"), QueueingHint.QueueSkip),
        (_TARGET, None, pod("a", {"app": "db"}, node="n1"), QueueingHint.QueueSkip),
        (_TARGET, pod("a", {"app": "db"}, node="n1"), pod("a", node="n1"), QueueingHint.Queue),
        (
            _TARGET,
            pod("a", {"app": "web", "x": "1"}, node="n1"),
            pod("a", node="n1"),
            QueueingHint.QueueSkip,
        ),
        (_TARGET, pod("a", node="n1"), pod("a", node="n1"), QueueingHint.QueueSkip),
        (_TARGET, pod("a", node="n1"), None, QueueingHint.Queue),
        (_TARGET, pod("a", {"app": "db"}, node="n1"), None, QueueingHint.QueueSkip),
        (_HONOR, pod("p"), pod("p", tolerations=_TOL), QueueingHint.Queue),
        (_TARGET, pod("p"), pod("p", tolerations=_TOL), QueueingHint.QueueSkip),
    ],
)
def test_pod_change_hint(target: Pod, old: Pod | None, new: Pod | None, want: QueueingHint) -> None:
    pl, _ = setup([], [])
    assert pl.is_schedulable_after_pod_change(target, old, new) == want


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        (None, node("a", "z1"), QueueingHint.Queue),
        (None, node("a"), QueueingHint.QueueSkip),
        (node("a", "z1"), None, QueueingHint.Queue),
        (node("a"), None, QueueingHint.QueueSkip),
        (node("a", "z1"), node("a", "z2"), QueueingHint.Queue),
        (node("a", "z1"), node("a", "z1", foo="bar"), QueueingHint.QueueSkip),
        (node("a"), node("a", "z1"), QueueingHint.Queue),
        (node("a", "z1"), node("a"), QueueingHint.Queue),
        (node("a", "z1"), node("a", "z1", taint=True), QueueingHint.Queue),
        (node("a"), node("a", taint=True), QueueingHint.QueueSkip),
    ],
)
def test_node_change_hint(old: Node | None, new: Node | None, want: QueueingHint) -> None:
    pl, _ = setup([], [])
    assert pl.is_schedulable_after_node_change(_TARGET, old, new) == want
