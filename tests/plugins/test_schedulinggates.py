"""SchedulingGates PreEnqueue and its queueing hint."""

from __future__ import annotations

from typing import Any

import pytest

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kschedlib.framework.status import Code
from kschedlib.plugins import schedulinggates
from kschedlib.plugins.schedulinggates.scheduling_gates import (
    is_schedulable_after_update_pod_scheduling_gates_eliminated as hint,
)


def _pod(name: str, gates: list[str], uid: str = "") -> Pod:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if uid:
        meta["uid"] = uid
    spec = {"containers": [{"name": "c"}], "schedulingGates": [{"name": g} for g in gates]}
    return Pod.from_dict({"metadata": meta, "spec": spec})


def test_pod_without_gates_passes() -> None:
    assert schedulinggates.new(None, None).pre_enqueue(_pod("p", [])) is None


@pytest.mark.parametrize(
    ("gates", "message"),
    [
        (["foo"], "waiting for scheduling gates: [foo]"),
        (["foo", "bar"], "waiting for scheduling gates: [foo bar]"),
        (["example.com/quota", "b"], "waiting for scheduling gates: [example.com/quota b]"),
    ],
)
def test_gated_pod_is_unresolvable(gates: list[str], message: str) -> None:
    st = schedulinggates.new(None, None).pre_enqueue(_pod("p", gates))
    assert st is not None
    assert st.code == Code.UnschedulableAndUnresolvable
    assert st.reasons == (message,)


def test_events_to_register() -> None:
    (ev,) = schedulinggates.new(None, None).events_to_register()
    assert ev.event == ClusterEvent(
        EventResource.Pod, ActionType.UpdatePodSchedulingGatesEliminated
    )
    assert ev.queueing_hint_fn is hint


def test_hint_queues_only_the_pod_itself() -> None:
    target = _pod("p", ["g"], uid="u1")
    assert hint(target, target, _pod("p", [], uid="u1")) == QueueingHint.Queue
    assert hint(target, None, _pod("other", [], uid="u2")) == QueueingHint.QueueSkip


def test_hint_rejects_wrong_objects() -> None:
    with pytest.raises(TypeError):
        hint(_pod("p", ["g"]), None, Node.from_dict({"metadata": {"name": "n"}}))
