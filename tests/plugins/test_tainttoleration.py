"""TaintToleration Filter/Score, hints, and the conformance corpus."""

from __future__ import annotations

from typing import Any

import pytest

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kschedlib.framework.interface import NodeScore
from kschedlib.framework.status import Code
from kschedlib.framework.types import NodeInfo
from kschedlib.plugins import tainttoleration
from kschedlib.plugins.tainttoleration.taint_toleration import (
    is_schedulable_after_node_change,
    is_schedulable_after_pod_toleration_change,
)
from tests.plugins.simple_corpus import check_scenario, scenario_names

Taint = tuple[str, str, str]  # key, value, effect


def _pod(*tolerations: dict[str, Any], uid: str = "u1") -> Pod:
    return Pod.from_dict(
        {
            "metadata": {"name": "p", "namespace": "d", "uid": uid},
            "spec": {"containers": [{"name": "c"}], "tolerations": list(tolerations)},
        }
    )


def _tol(key: str, value: str = "", effect: str = "", op: str = "Equal") -> dict[str, Any]:
    return {"key": key, "operator": op, "value": value, "effect": effect}


def _node(name: str, *taints: Taint) -> Node:
    return Node.from_dict(
        {
            "metadata": {"name": name},
            "spec": {"taints": [{"key": k, "value": v, "effect": e} for k, v, e in taints]},
        },
        validate=False,  # Go test-table names ("A") skip API validation, as in Go
    )


# From kube-scheduler's taint_toleration_test.go TestTaintTolerationFilter.
FILTER_CASES = [
    ("no tolerations, NoSchedule taint", _pod(), [("dedicated", "user1", "NoSchedule")], False),
    (
        "toleration matches dedicated=user1",
        _pod(_tol("dedicated", "user1", "NoSchedule")),
        [("dedicated", "user1", "NoSchedule")],
        True,
    ),
    (
        "toleration for another user",
        _pod(_tol("dedicated", "user2", "NoSchedule")),
        [("dedicated", "user1", "NoSchedule")],
        False,
    ),
    (
        "Exists tolerates any value",
        _pod(_tol("foo", effect="NoSchedule", op="Exists")),
        [("foo", "bar", "NoSchedule")],
        True,
    ),
    (
        "several tolerations cover several taints",
        _pod(
            _tol("dedicated", "user2", "NoSchedule"), _tol("foo", effect="NoSchedule", op="Exists")
        ),
        [("dedicated", "user2", "NoSchedule"), ("foo", "bar", "NoSchedule")],
        True,
    ),
    (
        "non-empty toleration effect must match",
        _pod(_tol("foo", "bar", "PreferNoSchedule")),
        [("foo", "bar", "NoSchedule")],
        False,
    ),
    (
        "empty toleration effect matches all",
        _pod(_tol("foo", "bar")),
        [("foo", "bar", "NoSchedule")],
        True,
    ),
    (
        "PreferNoSchedule taints never filter",
        _pod(_tol("dedicated", "user2", "NoSchedule")),
        [("dedicated", "user1", "PreferNoSchedule")],
        True,
    ),
    (
        "no toleration, PreferNoSchedule taint",
        _pod(),
        [("dedicated", "user1", "PreferNoSchedule")],
        True,
    ),
    ("NoExecute taints filter", _pod(), [("example.com/evicting", "", "NoExecute")], False),
    (
        "NoExecute with tolerationSeconds still passes",
        _pod(
            {
                "key": "example.com/evicting",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 0,
            }
        ),
        [("example.com/evicting", "", "NoExecute")],
        True,
    ),
    (
        "empty key with Exists tolerates everything",
        _pod({"operator": "Exists"}),
        [("a", "1", "NoSchedule"), ("b", "", "NoExecute")],
        True,
    ),
    (
        "one untolerated taint among tolerated ones",
        _pod(_tol("a", "1")),
        [("a", "1", "NoSchedule"), ("b", "2", "NoSchedule")],
        False,
    ),
    ("node without taints", _pod(), [], True),
]


@pytest.mark.parametrize(
    ("name", "pod", "taints", "fits"), FILTER_CASES, ids=[c[0] for c in FILTER_CASES]
)
def test_filter(name: str, pod: Pod, taints: list[Taint], fits: bool) -> None:
    st = tainttoleration.new(None, None).filter(CycleState(), pod, NodeInfo(_node("n", *taints)))
    if fits:
        assert st is None
    else:
        assert st is not None
        assert st.code == Code.UnschedulableAndUnresolvable
        assert st.reasons == ("node(s) had untolerated taint(s)",)


def _scores(pod: Pod, nodes: list[Node]) -> list[int]:
    pl = tainttoleration.new(None, None)
    state = CycleState()
    infos = [NodeInfo(n) for n in nodes]
    assert pl.pre_score(state, pod, infos) is None
    scores = []
    for ni in infos:
        s, st = pl.score(state, pod, ni)
        assert st is None
        scores.append(NodeScore(ni.name, s))
    ext = pl.score_extensions()
    assert ext is not None
    assert ext.normalize_score(state, pod, scores) is None
    return [ns.score for ns in scores]


# From kube-scheduler's taint_toleration_test.go TestTaintTolerationScore.
SCORE_CASES = [
    (
        "tolerated taint beats intolerable one",
        _pod(_tol("foo", "bar", "PreferNoSchedule")),
        [
            _node("A", ("foo", "bar", "PreferNoSchedule")),
            _node("B", ("foo", "blah", "PreferNoSchedule")),
        ],
        [100, 0],
    ),
    (
        "all taints tolerated: same score however many",
        _pod(
            _tol("cpu-type", "arm64", "PreferNoSchedule"),
            _tol("disk-type", "ssd", "PreferNoSchedule"),
        ),
        [
            _node("A"),
            _node("B", ("cpu-type", "arm64", "PreferNoSchedule")),
            _node(
                "C",
                ("cpu-type", "arm64", "PreferNoSchedule"),
                ("disk-type", "ssd", "PreferNoSchedule"),
            ),
        ],
        [100, 100, 100],
    ),
    (
        "more intolerable taints, lower score",
        _pod(_tol("foo", "bar", "PreferNoSchedule")),
        [
            _node("A"),
            _node("B", ("cpu-type", "arm64", "PreferNoSchedule")),
            _node(
                "C",
                ("cpu-type", "arm64", "PreferNoSchedule"),
                ("disk-type", "ssd", "PreferNoSchedule"),
            ),
        ],
        [100, 50, 0],
    ),
    (
        "only PreferNoSchedule taints and tolerations count",
        _pod(_tol("cpu-type", "arm64", "NoSchedule"), _tol("disk-type", "ssd", "NoSchedule")),
        [
            _node("A"),
            _node("B", ("cpu-type", "arm64", "NoSchedule")),
            _node(
                "C",
                ("cpu-type", "arm64", "PreferNoSchedule"),
                ("disk-type", "ssd", "PreferNoSchedule"),
            ),
        ],
        [100, 100, 0],
    ),
    (
        "no taints preferred",
        _pod(_tol("foo", "bar", "NoSchedule")),
        [_node("A"), _node("B", ("cpu-type", "arm64", "PreferNoSchedule"))],
        [100, 0],
    ),
    (
        "toleration without effect tolerates PreferNoSchedule",
        _pod({"key": "example.com/spot", "operator": "Exists"}),
        [
            _node("A", ("example.com/spot", "true", "PreferNoSchedule")),
            _node("B", ("x", "", "PreferNoSchedule")),
        ],
        [100, 0],
    ),
]


@pytest.mark.parametrize(
    ("name", "pod", "nodes", "want"), SCORE_CASES, ids=[c[0] for c in SCORE_CASES]
)
def test_score(name: str, pod: Pod, nodes: list[Node], want: list[int]) -> None:
    assert _scores(pod, nodes) == want


def test_taints_017_first_pod_weighted_scores() -> None:
    """taints-017: 0..3 untolerated PreferNoSchedule taints -> 300, 201, 102, 0 at weight 3."""
    spot = ("example.com/spot", "true", "PreferNoSchedule")
    old = ("example.com/old-gen", "true", "PreferNoSchedule")
    noisy = ("example.com/noisy", "yes", "PreferNoSchedule")
    nodes = [_node("n1"), _node("n2", spot), _node("n3", spot, old), _node("n4", spot, old, noisy)]
    default_tols = [
        {"key": k, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
        for k in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
    ]
    assert [3 * s for s in _scores(_pod(*default_tols), nodes)] == [300, 201, 102, 0]
    tol_spot = _tol("example.com/spot", "true", "PreferNoSchedule")
    assert [3 * s for s in _scores(_pod(tol_spot, *default_tols), nodes)] == [300, 300, 150, 0]


def test_pre_score_keeps_only_prefer_no_schedule_tolerations() -> None:
    state = CycleState()
    pod = _pod(_tol("a", effect="NoSchedule"), _tol("b"), _tol("c", effect="PreferNoSchedule"))
    tainttoleration.new(None, None).pre_score(state, pod, [])
    s = state.read(tainttoleration.PRE_SCORE_STATE_KEY)
    assert [t.key for t in s.tolerations_prefer_no_schedule] == ["b", "c"]
    assert s.clone() is s


def test_score_without_pre_score_is_an_error() -> None:
    _, st = tainttoleration.new(None, None).score(CycleState(), _pod(), NodeInfo(_node("n")))
    assert st is not None and st.code == Code.Error


def test_events_to_register() -> None:
    evs = tainttoleration.new(None, None).events_to_register()
    assert [e.event for e in evs] == [
        ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeTaint),
        ClusterEvent(EventResource.Pod, ActionType.UpdatePodToleration),
    ]
    assert [e.queueing_hint_fn for e in evs] == [
        is_schedulable_after_node_change,
        is_schedulable_after_pod_toleration_change,
    ]


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        (None, _node("n", ("foo", "bar", "NoSchedule")), QueueingHint.QueueSkip),
        (None, _node("n", ("foo", "bar", "PreferNoSchedule")), QueueingHint.Queue),
        (None, _node("n", ("tolerated", "yes", "NoExecute")), QueueingHint.Queue),
        # was already tolerated: nothing changes for the pod
        (_node("n"), _node("n", ("tolerated", "yes", "NoSchedule")), QueueingHint.QueueSkip),
        # the untolerated taint went away
        (_node("n", ("foo", "bar", "NoSchedule")), _node("n"), QueueingHint.Queue),
        (
            _node("n", ("foo", "bar", "NoExecute")),
            _node("n", ("foo", "bar", "NoSchedule")),
            QueueingHint.QueueSkip,
        ),
    ],
)
def test_node_change_hint(old: Node | None, new: Node, want: QueueingHint) -> None:
    pod = _pod(_tol("tolerated", "yes"))
    assert is_schedulable_after_node_change(pod, old, new) == want


def test_node_change_hint_rejects_wrong_objects() -> None:
    with pytest.raises(TypeError):
        is_schedulable_after_node_change(_pod(), None, _pod())


def test_pod_toleration_change_hint() -> None:
    target = _pod()
    assert is_schedulable_after_pod_toleration_change(target, target, _pod(_tol("a"))) == (
        QueueingHint.Queue
    )
    assert is_schedulable_after_pod_toleration_change(target, None, _pod(uid="u2")) == (
        QueueingHint.QueueSkip
    )


@pytest.mark.parametrize("scenario", scenario_names())
def test_conformance_corpus(scenario: str) -> None:
    problems, _ = check_scenario(scenario, tainttoleration.NAME, tainttoleration.new)
    assert problems == []
