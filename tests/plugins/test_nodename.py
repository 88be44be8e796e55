"""NodeName Filter, events, and the conformance corpus."""

from __future__ import annotations

import pytest

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import ActionType, ClusterEvent, EventResource
from kschedlib.framework.status import Code
from kschedlib.framework.types import NodeInfo
from kschedlib.plugins import nodename
from tests.plugins.simple_corpus import check_scenario, scenario_names


def _pod(node_name: str) -> Pod:
    return Pod.from_dict(
        {"metadata": {"name": "p", "namespace": "d"}, "spec": {"nodeName": node_name}}
    )


def _node_info(name: str) -> NodeInfo:
    return NodeInfo(Node.from_dict({"metadata": {"name": name}}))


@pytest.mark.parametrize(
    ("pod_node", "node", "fits"),
    [("", "foo", True), ("foo", "foo", True), ("bar", "foo", False)],
)
def test_filter(pod_node: str, node: str, fits: bool) -> None:
    pl = nodename.new(None, None)
    st = pl.filter(CycleState(), _pod(pod_node), _node_info(node))
    assert nodename.fits(_pod(pod_node), _node_info(node)) is fits
    if fits:
        assert st is None
    else:
        assert st is not None
        assert st.code == Code.UnschedulableAndUnresolvable
        assert st.reasons == ("node(s) didn't match the requested node name",)


def test_events_to_register() -> None:
    (ev,) = nodename.new(None, None).events_to_register()
    assert ev.event == ClusterEvent(EventResource.Node, ActionType.Add)
    assert ev.queueing_hint_fn is None


@pytest.mark.parametrize("scenario", scenario_names())
def test_conformance_corpus(scenario: str) -> None:
    problems, _ = check_scenario(scenario, nodename.NAME, nodename.new)
    assert problems == []
