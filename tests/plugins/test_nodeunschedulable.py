"""NodeUnschedulable Filter, hints, and the conformance corpus."""

from __future__ import annotations

from typing import Any

import pytest

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kschedlib.framework.status import Code
from kschedlib.framework.types import NodeInfo
from kschedlib.plugins import nodeunschedulable
from kschedlib.plugins.nodeunschedulable.node_unschedulable import (
    is_schedulable_after_node_change,
    is_schedulable_after_pod_toleration_change,
)
from tests.plugins.simple_corpus import check_scenario, scenario_names

UNSCHEDULABLE_TAINT_KEY = "node.kubernetes.io/unschedulable"


def _pod(tolerations: list[dict[str, Any]] | None = None, uid: str = "u1") -> Pod:
    return Pod.from_dict(
        {
            "metadata": {"name": "p", "namespace": "d", "uid": uid},
            "spec": {"containers": [{"name": "c"}], "tolerations": tolerations or []},
        }
    )


def _node(unschedulable: bool) -> Node:
    return Node.from_dict({"metadata": {"name": "n"}, "spec": {"unschedulable": unschedulable}})


@pytest.mark.parametrize(
    ("unschedulable", "tolerations", "fits"),
    [
        (False, None, True),
        (True, None, False),
        (True, [{"key": UNSCHEDULABLE_TAINT_KEY, "effect": "NoSchedule"}], True),
        (True, [{"key": UNSCHEDULABLE_TAINT_KEY, "operator": "Exists"}], True),
        (True, [{"key": UNSCHEDULABLE_TAINT_KEY, "operator": "Equal", "value": ""}], True),
        (True, [{"operator": "Exists"}], True),
        (True, [{"operator": "Exists", "effect": "NoSchedule"}], True),
        # wrong effect, wrong key, or a value the (value-less) taint lacks
        (True, [{"key": UNSCHEDULABLE_TAINT_KEY, "effect": "PreferNoSchedule"}], False),
        (True, [{"key": UNSCHEDULABLE_TAINT_KEY, "effect": "NoExecute"}], False),
        (True, [{"key": "node.kubernetes.io/other", "operator": "Exists"}], False),
        (True, [{"key": UNSCHEDULABLE_TAINT_KEY, "value": "true"}], False),
    ],
)
def test_filter(unschedulable: bool, tolerations: Any, fits: bool) -> None:
    st = nodeunschedulable.new(None, None).filter(
        CycleState(), _pod(tolerations), NodeInfo(_node(unschedulable))
    )
    if fits:
        assert st is None
    else:
        assert st is not None
        assert st.code == Code.UnschedulableAndUnresolvable
        assert st.reasons == ("node(s) were unschedulable",)


def test_events_to_register() -> None:
    evs = nodeunschedulable.new(None, None).events_to_register()
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
        (None, _node(False), QueueingHint.Queue),  # schedulable node added
        (None, _node(True), QueueingHint.QueueSkip),  # cordoned node added
        (_node(True), _node(False), QueueingHint.Queue),  # uncordoned
        (_node(False), _node(True), QueueingHint.QueueSkip),
        (_node(False), _node(False), QueueingHint.QueueSkip),
        (_node(True), _node(True), QueueingHint.QueueSkip),
    ],
)
def test_node_change_hint(old: Node | None, new: Node, want: QueueingHint) -> None:
    assert is_schedulable_after_node_change(_pod(), old, new) == want


def test_pod_toleration_change_hint() -> None:
    target = _pod()
    tolerating = _pod([{"key": UNSCHEDULABLE_TAINT_KEY, "effect": "NoSchedule"}])
    other_tol = _pod([{"key": "example.com/x", "operator": "Exists"}])
    other_pod = _pod([{"key": UNSCHEDULABLE_TAINT_KEY, "operator": "Exists"}], uid="u2")
    assert is_schedulable_after_pod_toleration_change(target, target, tolerating) == (
        QueueingHint.Queue
    )
    assert is_schedulable_after_pod_toleration_change(target, target, other_tol) == (
        QueueingHint.QueueSkip
    )
    assert is_schedulable_after_pod_toleration_change(target, None, other_pod) == (
        QueueingHint.QueueSkip
    )


@pytest.mark.parametrize("scenario", scenario_names())
def test_conformance_corpus(scenario: str) -> None:
    problems, _ = check_scenario(scenario, nodeunschedulable.NAME, nodeunschedulable.new)
    assert problems == []


def test_wrongly_typed_objects_queue_with_an_error() -> None:
    """util.As: a wrong old (or new) object is (Queue, err), never QueueSkip."""
    from kschedlib.errors import QueueingHintError

    with pytest.raises(QueueingHintError):
        is_schedulable_after_node_change(_pod(), "not a node", _node(False))
    with pytest.raises(QueueingHintError):
        is_schedulable_after_node_change(_pod(), _node(True), _pod())
    with pytest.raises(QueueingHintError):  # old pod wrongly typed: v1.35 checks it too
        is_schedulable_after_pod_toleration_change(_pod(), _node(False), _pod())
