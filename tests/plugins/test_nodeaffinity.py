"""NodeAffinity PreFilter/Filter/Score, args, hints, and the conformance corpus."""

from __future__ import annotations

from typing import Any

import pytest

from kschedlib.api.codec import decode
from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.errors import ConfigError
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kschedlib.framework.interface import NodeScore, PreFilterResult
from kschedlib.framework.status import Code
from kschedlib.framework.types import NodeInfo
from kschedlib.plugins import nodeaffinity
from kschedlib.plugins.nodeaffinity import NodeAffinityArgs
from tests.plugins.simple_corpus import check_scenario, scenario_names

POD_REASON = "node(s) didn't match Pod's node affinity/selector"
ENFORCED_REASON = "node(s) didn't match scheduler-enforced node affinity"


def _req(key: str, op: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": op, "values": list(values)}


def _term(*exprs: dict[str, Any], fields: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    t: dict[str, Any] = {"matchExpressions": list(exprs)}
    if fields is not None:
        t["matchFields"] = fields
    return t


def _name_in(*names: str) -> dict[str, Any]:
    return _req("metadata.name", "In", *names)


def _pod(
    selector: dict[str, str] | None = None,
    required: list[dict[str, Any]] | None = None,
    preferred: list[tuple[int, dict[str, Any]]] | None = None,
    uid: str = "u1",
) -> Pod:
    spec: dict[str, Any] = {"containers": [{"name": "c"}], "nodeSelector": selector or {}}
    na: dict[str, Any] = {}
    if required is not None:
        na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": required}
    if preferred is not None:
        na["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": w, "preference": t} for w, t in preferred
        ]
    if na:
        spec["affinity"] = {"nodeAffinity": na}
    return Pod.from_dict({"metadata": {"name": "p", "namespace": "d", "uid": uid}, "spec": spec})


def _node(labels: dict[str, str], name: str = "node1") -> Node:
    return Node.from_dict({"metadata": {"name": name, "labels": labels}})


def _args(
    required: list[dict[str, Any]] | None = None,
    preferred: list[tuple[int, dict[str, Any]]] | None = None,
) -> NodeAffinityArgs:
    aff: dict[str, Any] = {}
    if required is not None:
        aff["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": required}
    if preferred is not None:
        aff["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": w, "preference": t} for w, t in preferred
        ]
    return decode(NodeAffinityArgs, {"addedAffinity": aff})


# (name, pod, node labels, node name, args, want PreFilterResult names, want PreFilter code,
#  want Filter reason) -- mostly from kube-scheduler's node_affinity_test.go TestNodeAffinity.
FILTER_CASES: list[tuple[Any, ...]] = [
    ("no requirements", _pod(), {}, "node1", None, None, Code.Skip, None),
    ("missing labels", _pod({"foo": "bar"}), {}, "node1", None, None, None, POD_REASON),
    ("same labels", _pod({"foo": "bar"}), {"foo": "bar"}, "node1", None, None, None, None),
    (
        "node labels are superset",
        _pod({"foo": "bar"}),
        {"foo": "bar", "baz": "blah"},
        "node1",
        None,
        None,
        None,
        None,
    ),
    (
        "node labels are subset",
        _pod({"foo": "bar", "baz": "blah"}),
        {"foo": "bar"},
        "node1",
        None,
        None,
        None,
        POD_REASON,
    ),
    (
        "In matches",
        _pod(required=[_term(_req("foo", "In", "bar", "value2"))]),
        {"foo": "bar"},
        "node1",
        None,
        None,
        None,
        None,
    ),
    (
        "Gt matches integer label",
        _pod(required=[_term(_req("kernel-version", "Gt", "0204"))]),
        {"kernel-version": "0206"},
        "node1",
        None,
        None,
        None,
        None,
    ),
    (
        "Lt mismatch",
        _pod(required=[_term(_req("kernel-version", "Lt", "0204"))]),
        {"kernel-version": "0206"},
        "node1",
        None,
        None,
        None,
        POD_REASON,
    ),
    (
        "Gt on a non-integer label never matches",
        _pod(required=[_term(_req("gen", "Gt", "3"))]),
        {"gen": "v7"},
        "node1",
        None,
        None,
        None,
        POD_REASON,
    ),
    (
        "NotIn mismatch",
        _pod(required=[_term(_req("mem-type", "NotIn", "DDR", "DDR2"))]),
        {"mem-type": "DDR"},
        "node1",
        None,
        None,
        None,
        POD_REASON,
    ),
    (
        "NotIn matches a missing label",
        _pod(required=[_term(_req("mem-type", "NotIn", "DDR"))]),
        {},
        "node1",
        None,
        None,
        None,
        None,
    ),
    (
        "Exists matches",
        _pod(required=[_term(_req("GPU", "Exists"))]),
        {"GPU": "NVIDIA-GRID-K1"},
        "node1",
        None,
        None,
        None,
        None,
    ),
    (
        "DoesNotExist mismatch",
        _pod(required=[_term(_req("GPU", "DoesNotExist"))]),
        {"GPU": "x"},
        "node1",
        None,
        None,
        None,
        POD_REASON,
    ),
    (
        "Exists and NotIn ANDed",
        _pod(required=[_term(_req("GPU", "Exists"), _req("GPU", "NotIn", "AMD", "INTER"))]),
        {"GPU": "NVIDIA-GRID-K1"},
        "node1",
        None,
        None,
        None,
        None,
    ),
    (
        "empty terms list matches nothing",
        _pod(required=[]),
        {"foo": "bar"},
        "node1",
        None,
        None,
        None,
        POD_REASON,
    ),
    (
        "empty term matches nothing",
        _pod(required=[_term()]),
        {"foo": "bar"},
        "node1",
        None,
        None,
        None,
        POD_REASON,
    ),
    (
        "terms are ORed",
        _pod(required=[_term(_req("foo", "In", "x")), _term(_req("diffkey", "In", "wrong"))]),
        {"diffkey": "wrong"},
        "node1",
        None,
        None,
        None,
        None,
    ),
    (
        "a broken term never matches but others still can",
        _pod(required=[_term(_req("gen", "Gt", "x")), _term(_req("zone", "In", "a"))]),
        {"gen": "5", "zone": "a"},
        "node1",
        None,
        None,
        None,
        None,
    ),
    (
        "a broken term alone never matches",
        _pod(required=[_term(_req("gen", "Gt", "x"))]),
        {"gen": "5"},
        "node1",
        None,
        None,
        None,
        POD_REASON,
    ),
    (
        "nodeSelector and affinity both needed",
        _pod({"foo": "bar"}, required=[_term(_req("foo", "Exists"))]),
        {"foo": "baz"},
        "node1",
        None,
        None,
        None,
        POD_REASON,
    ),
    (
        "matchFields narrows to the named node",
        _pod(required=[_term(fields=[_name_in("node1")])]),
        {},
        "node1",
        None,
        {"node1"},
        None,
        None,
    ),
    (
        "matchFields with another node",
        _pod(required=[_term(fields=[_name_in("node1")])]),
        {},
        "node2",
        None,
        {"node1"},
        None,
        POD_REASON,
    ),
    (
        "matchFields ANDed with a label expression",
        _pod(required=[_term(_req("foo", "In", "bar"), fields=[_name_in("node1")])]),
        {"foo": "bar"},
        "node1",
        None,
        {"node1"},
        None,
        None,
    ),
    (
        "matchFields in several terms are unioned",
        _pod(
            required=[
                _term(fields=[_name_in("node1")]),
                _term(_req("foo", "In", "bar"), fields=[_name_in("node2")]),
            ]
        ),
        {"foo": "bar"},
        "node2",
        None,
        {"node1", "node2"},
        None,
        None,
    ),
    (
        "a term without matchFields allows every node",
        _pod(required=[_term(fields=[_name_in("node1")]), _term(_req("foo", "In", "bar"))]),
        {"foo": "bar"},
        "node2",
        None,
        None,
        None,
        None,
    ),
    (
        "NotIn matchFields does not narrow",
        _pod(required=[_term(fields=[_req("metadata.name", "NotIn", "node1")])]),
        {},
        "node2",
        None,
        None,
        None,
        None,
    ),
    (
        "matchFields conflict within a term",
        _pod(required=[_term(fields=[_name_in("node1"), _name_in("node2")])]),
        {"foo": "bar"},
        "node2",
        None,
        None,
        Code.UnschedulableAndUnresolvable,
        POD_REASON,
    ),
    (
        "matches added affinity and pod affinity",
        _pod(required=[_term(_req("zone", "In", "foo"))]),
        {"zone": "foo"},
        "node2",
        _args(required=[_term(fields=[_name_in("node2")])]),
        None,
        None,
        None,
    ),
    (
        "matches added affinity but not pod affinity",
        _pod(required=[_term(_req("zone", "In", "bar"))]),
        {"zone": "foo"},
        "node2",
        _args(required=[_term(fields=[_name_in("node2")])]),
        None,
        None,
        POD_REASON,
    ),
    (
        "doesn't match added affinity",
        _pod(),
        {"zone": "foo"},
        "node2",
        _args(required=[_term(_req("zone", "In", "bar"))]),
        None,
        None,
        ENFORCED_REASON,
    ),
    (
        "added affinity checked before the pod's",
        _pod({"x": "y"}),
        {"zone": "foo"},
        "node2",
        _args(required=[_term(_req("zone", "In", "bar"))]),
        None,
        None,
        ENFORCED_REASON,
    ),
]


@pytest.mark.parametrize(
    ("name", "pod", "labels", "node_name", "args", "want_names", "want_pre_code", "want_reason"),
    FILTER_CASES,
    ids=[c[0] for c in FILTER_CASES],
)
def test_pre_filter_and_filter(
    name: str,
    pod: Pod,
    labels: dict[str, str],
    node_name: str,
    args: NodeAffinityArgs | None,
    want_names: set[str] | None,
    want_pre_code: Code | None,
    want_reason: str | None,
) -> None:
    pl = nodeaffinity.new(args, None)
    ni = NodeInfo(_node(labels, node_name))
    state = CycleState()
    result, st = pl.pre_filter(state, pod, [ni])
    if want_pre_code is None:
        assert st is None
    else:
        assert st is not None and st.code == want_pre_code
        if want_pre_code == Code.UnschedulableAndUnresolvable:
            assert st.reasons == ("pod affinity terms conflict",)
    if want_names is None:
        assert result is None
    else:
        assert result == PreFilterResult(frozenset(want_names))
    for s in (state, CycleState()):  # with and without PreFilter state
        got = pl.filter(s, pod, ni)
        if want_reason is None:
            assert got is None
        else:
            assert got is not None
            assert got.code == Code.UnschedulableAndUnresolvable
            assert got.reasons == (want_reason,)


def test_pre_filter_state_is_written_and_shared_by_clone() -> None:
    state = CycleState()
    nodeaffinity.new(None, None).pre_filter(state, _pod({"a": "b"}), [])
    s = state.read(nodeaffinity.PRE_FILTER_STATE_KEY)
    assert s.clone() is s


def test_pre_filter_not_skipped_with_added_affinity() -> None:
    pl = nodeaffinity.new(_args(required=[_term(_req("zone", "Exists"))]), None)
    state = CycleState()
    assert pl.pre_filter(state, _pod(), []) == (None, None)
    assert nodeaffinity.PRE_FILTER_STATE_KEY in state


def test_pre_filter_skipped_with_only_added_preferred_affinity() -> None:
    pl = nodeaffinity.new(_args(preferred=[(1, _term(_req("zone", "Exists")))]), None)
    _, st = pl.pre_filter(CycleState(), _pod(), [])
    assert st is not None and st.code == Code.Skip


LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}
AFFINITY1 = [(2, _term(_req("foo", "In", "bar")))]
AFFINITY2 = [
    (2, _term(_req("foo", "In", "bar"))),
    (4, _term(_req("key", "In", "value"))),
    (5, _term(_req("foo", "In", "bar"), _req("key", "In", "value"), _req("az", "In", "az1"))),
]

# From kube-scheduler's node_affinity_test.go TestNodeAffinityPriority.
SCORE_CASES: list[tuple[Any, ...]] = [
    (
        "no preferred terms match",
        _pod(preferred=AFFINITY1),
        None,
        [LABEL4, LABEL2, LABEL3],
        [0, 0, 0],
    ),
    ("only node1 matches", _pod(preferred=AFFINITY1), None, [LABEL1, LABEL2, LABEL3], [100, 0, 0]),
    (
        "all match with different priorities",
        _pod(preferred=AFFINITY2),
        None,
        [LABEL1, LABEL5, LABEL2],
        [18, 100, 36],
    ),
    ("added affinity", _pod(), _args(preferred=AFFINITY1), [LABEL1, LABEL2], [100, 0]),
    (
        "added affinity and pod affinity add up",
        _pod(preferred=AFFINITY1),
        _args(preferred=[(3, _term(_req("key", "In", "value")))]),
        [LABEL1, LABEL2, LABEL5],
        [40, 60, 100],
    ),
    (
        "zero-weight terms are ignored",
        _pod(preferred=[(0, _term(_req("foo", "In", "bar"))), (1, _term(_req("key", "Exists")))]),
        None,
        [LABEL1, LABEL2],
        [0, 100],
    ),
]


def _scores(
    pod: Pod, args: NodeAffinityArgs | None, labels: list[dict[str, str]], pre_score: bool = True
) -> list[int]:
    pl = nodeaffinity.new(args, None)
    infos = [NodeInfo(_node(lb, f"node{i}")) for i, lb in enumerate(labels)]
    state = CycleState()
    if pre_score:
        assert pl.pre_score(state, pod, infos) is None
    scores = []
    for ni in infos:
        s, st = pl.score(state, pod, ni)
        assert st is None
        scores.append(NodeScore(ni.name, s))
    assert pl.score_extensions().normalize_score(state, pod, scores) is None
    return [ns.score for ns in scores]


@pytest.mark.parametrize(
    ("name", "pod", "args", "labels", "want"), SCORE_CASES, ids=[c[0] for c in SCORE_CASES]
)
def test_score(
    name: str,
    pod: Pod,
    args: NodeAffinityArgs | None,
    labels: list[dict[str, str]],
    want: list[int],
) -> None:
    assert _scores(pod, args, labels) == want
    assert _scores(pod, args, labels, pre_score=False) == want


def test_pre_score_skips_without_preferred_terms() -> None:
    st = nodeaffinity.new(None, None).pre_score(CycleState(), _pod({"a": "b"}), [])
    assert st is not None and st.code == Code.Skip


def test_pre_score_not_skipped_for_added_zero_weight_terms() -> None:
    pl = nodeaffinity.new(_args(preferred=[(0, _term(_req("a", "Exists")))]), None)
    assert pl.pre_score(CycleState(), _pod(), []) is None


def test_pre_score_error_for_broken_preferred_term() -> None:
    pod = _pod(preferred=[(2, _term(_req("invalid key", "In", "bar")))])
    st = nodeaffinity.new(None, None).pre_score(CycleState(), pod, [])
    assert st is not None and st.code == Code.Error
    assert st.message() == (
        '[0].matchExpressions[0].key: Invalid value: "invalid key": name part must consist of '
        "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
        "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
    )


def test_node_affinity_033_weighted_scores() -> None:
    """node-affinity-033: added preferred terms (ssd 40, us-east-1a 10) plus the pod's own
    (us-east-1b 50): node-2 scores 200 at weight 2, node-6 scores 0."""
    added = _args(
        required=[_term(_req("node.example.com/pool", "In", "general", "highmem"))],
        preferred=[
            (40, _term(_req("node.example.com/disk", "In", "ssd"))),
            (10, _term(_req("topology.kubernetes.io/zone", "In", "us-east-1a"))),
        ],
    )
    node2 = {
        "node.example.com/pool": "general",
        "node.example.com/disk": "hdd",
        "topology.kubernetes.io/zone": "us-east-1b",
    }
    node6 = {"node.example.com/pool": "general", "topology.kubernetes.io/zone": "us-east-1c"}
    pod = _pod(preferred=[(50, _term(_req("topology.kubernetes.io/zone", "In", "us-east-1b")))])
    assert [2 * s for s in _scores(pod, added, [node2, node6])] == [200, 0]
    assert [2 * s for s in _scores(_pod(), added, [node2, node6])] == [0, 0]


# --- args ---


def test_args_decode_and_defaults() -> None:
    assert NodeAffinityArgs().added_affinity is None
    assert NodeAffinityArgs().validate() == []
    args = decode(
        NodeAffinityArgs,
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "NodeAffinityArgs",
            "addedAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [_term(_req("zone", "In", "a"))]
                }
            },
        },
    )
    assert args.added_affinity is not None
    assert args.validate() == []


def test_args_validation_errors() -> None:
    args = _args(
        required=[
            _term(_req("zone", "In")),
            _term(_req("gen", "Gt", "1", "2"), fields=[_req("metadata.name", "In", "a", "b")]),
        ],
        preferred=[(0, _term(_req("bad key", "In", "x"))), (5, _term(_req("a", "Exists", "x")))],
    )
    base = "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
    pref = "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution"
    assert args.validate() == [
        (
            f"{base}[0].matchExpressions[0].values",
            "Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            f"{base}[1].matchExpressions[0].values",
            "Invalid value: []string{\"1\", \"2\"}: for 'Gt', 'Lt' operators, exactly one value "
            "is required",
        ),
        (
            f"{base}[1].matchFields[0].values",
            'Invalid value: []string{"a", "b"}: must have one element',
        ),
        (
            f"{pref}[1].matchExpressions[0].values",
            'Invalid value: []string{"x"}: values set must be empty for exists and does not exist',
        ),
    ]


@pytest.mark.parametrize(
    ("req", "field", "fragment"),
    [
        (_req("gen", "Gt", "x"), "values[0]", "the value must be an integer"),
        (_req("gen", "Lt", "-5"), "values[0]", "a valid label value must be"),
        (_req("example.com/", "Exists"), "key", "name part must be non-empty"),
        (_req("Example.com/a", "Exists"), "key", "prefix part a lowercase RFC 1123 subdomain"),
        (_req("a/b/c", "Exists"), "key", "a qualified name"),
        (_req("k", "In", "bad value"), "values[0]", "a valid label value must be"),
    ],
)
def test_args_validation_of_label_syntax(req: dict[str, Any], field: str, fragment: str) -> None:
    errs = _args(required=[_term(req)]).validate()
    assert len(errs) == 1
    path, msg = errs[0]
    assert path.endswith(f"nodeSelectorTerms[0].matchExpressions[0].{field}")
    assert fragment in msg


def test_new_rejects_invalid_args() -> None:
    with pytest.raises(ConfigError):
        nodeaffinity.new(_args(required=[_term(_req("zone", "In"))]), None)
    with pytest.raises(ConfigError):
        nodeaffinity.new({"addedAffinity": {}}, None)


def test_plugin_spec_carries_args_type() -> None:
    (spec,) = nodeaffinity.PLUGINS
    assert (spec.name, spec.args_type) == ("NodeAffinity", NodeAffinityArgs)


# --- EnqueueExtensions ---


def test_events_to_register() -> None:
    pl = nodeaffinity.new(None, None)
    (ev,) = pl.events_to_register()
    assert ev.event == ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel)
    assert ev.queueing_hint_fn == pl.is_schedulable_after_node_change


POD_FOO_BAR = _pod(required=[_term(_req("foo", "In", "bar"))])


@pytest.mark.parametrize(
    ("args", "pod", "old", "new", "want"),
    [
        (None, POD_FOO_BAR, None, _node({}), QueueingHint.QueueSkip),
        (None, POD_FOO_BAR, None, _node({"foo": "bar"}), QueueingHint.Queue),
        (None, POD_FOO_BAR, _node({}), _node({"x": "y"}), QueueingHint.QueueSkip),
        (
            None,
            POD_FOO_BAR,
            _node({"foo": "bar"}),
            _node({"foo": "bar", "x": "y"}),
            QueueingHint.QueueSkip,
        ),
        (None, POD_FOO_BAR, _node({}), _node({"foo": "bar"}), QueueingHint.Queue),
        (
            _args(required=[_term(_req("foo", "In", "bar"))]),
            _pod(),
            None,
            _node({}),
            QueueingHint.QueueSkip,
        ),
        (
            _args(required=[_term(_req("foo", "In", "bar"))]),
            _pod(),
            None,
            _node({"foo": "bar"}),
            QueueingHint.Queue,
        ),
        # the pod's own nodeSelector is part of its required affinity
        (None, _pod({"a": "b"}), _node({}), _node({"a": "b"}), QueueingHint.Queue),
        # a broken term that fails to match is reported as an error: queue
        (None, _pod(required=[_term(_req("gen", "Gt", "x"))]), None, _node({}), QueueingHint.Queue),
    ],
)
def test_node_change_hint(
    args: NodeAffinityArgs | None, pod: Pod, old: Node | None, new: Node, want: QueueingHint
) -> None:
    assert nodeaffinity.new(args, None).is_schedulable_after_node_change(pod, old, new) == want


def test_node_change_hint_rejects_wrong_objects() -> None:
    with pytest.raises(TypeError):
        nodeaffinity.new(None, None).is_schedulable_after_node_change(POD_FOO_BAR, "x", _node({}))


@pytest.mark.parametrize("scenario", scenario_names())
def test_conformance_corpus(scenario: str) -> None:
    problems, _ = check_scenario(scenario, nodeaffinity.NAME, nodeaffinity.new, NodeAffinityArgs)
    assert problems == []
