"""NodePorts PreFilter/Filter, hint, and the conformance corpus."""

from __future__ import annotations

from typing import Any

import pytest

from kschedlib.api.node import Node
from kschedlib.api.pod import Pod
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kschedlib.framework.status import Code
from kschedlib.framework.types import NodeInfo
from kschedlib.plugins import nodeports
from kschedlib.plugins.nodeports.node_ports import is_schedulable_after_pod_deleted
from tests.plugins.simple_corpus import check_scenario, scenario_names

Port = tuple[str, str, int]  # protocol, hostIP, hostPort


def _pod(
    *ports: Port, node: str = "", init: list[Port] | None = None, sidecar: bool = False
) -> Pod:
    def cports(ps: Any) -> list[dict[str, Any]]:
        return [
            {"protocol": proto, "hostIP": ip, "hostPort": port, "containerPort": port or 8080}
            for proto, ip, port in ps
        ]

    spec: dict[str, Any] = {"nodeName": node, "containers": [{"name": "c", "ports": cports(ports)}]}
    if init is not None:
        ic: dict[str, Any] = {"name": "i", "ports": cports(init)}
        if sidecar:
            ic["restartPolicy"] = "Always"
        spec["initContainers"] = [ic]
    return Pod.from_dict({"metadata": {"name": "p", "namespace": "d"}, "spec": spec})


def _node_info(*pods: Pod) -> NodeInfo:
    return NodeInfo(Node.from_dict({"metadata": {"name": "m1"}}), *pods)


# From kube-scheduler's node_ports_test.go TestNodePorts.
FILTER_CASES = [
    ("nothing running", _pod(("UDP", "127.0.0.1", 8080)), _node_info(), True),
    (
        "other port",
        _pod(("UDP", "127.0.0.1", 8080)),
        _node_info(_pod(("UDP", "127.0.0.1", 9090))),
        True,
    ),
    (
        "same udp port",
        _pod(("UDP", "127.0.0.1", 8080)),
        _node_info(_pod(("UDP", "127.0.0.1", 8080))),
        False,
    ),
    (
        "same tcp port",
        _pod(("TCP", "127.0.0.1", 8080)),
        _node_info(_pod(("TCP", "127.0.0.1", 8080))),
        False,
    ),
    (
        "different host ip",
        _pod(("TCP", "127.0.0.1", 8080)),
        _node_info(_pod(("TCP", "127.0.0.2", 8080))),
        True,
    ),
    (
        "different protocol",
        _pod(("UDP", "127.0.0.1", 8080)),
        _node_info(_pod(("TCP", "127.0.0.1", 8080))),
        True,
    ),
    (
        "second udp port conflict",
        _pod(("UDP", "127.0.0.1", 8000), ("UDP", "127.0.0.1", 8080)),
        _node_info(_pod(("UDP", "127.0.0.1", 8080))),
        False,
    ),
    (
        "first tcp port conflict",
        _pod(("TCP", "127.0.0.1", 8001), ("UDP", "127.0.0.1", 8080)),
        _node_info(_pod(("TCP", "127.0.0.1", 8001), ("UDP", "127.0.0.1", 8081))),
        False,
    ),
    (
        "first tcp port conflict due to 0.0.0.0 hostIP",
        _pod(("TCP", "0.0.0.0", 8001)),
        _node_info(_pod(("TCP", "127.0.0.1", 8001))),
        False,
    ),
    (
        "TCP hostPort conflict due to 0.0.0.0 hostIP",
        _pod(("TCP", "10.0.10.10", 8001), ("TCP", "0.0.0.0", 8001)),
        _node_info(_pod(("TCP", "127.0.0.1", 8001))),
        False,
    ),
    (
        "second tcp port conflict to 0.0.0.0 hostIP",
        _pod(("TCP", "127.0.0.1", 8001)),
        _node_info(_pod(("TCP", "0.0.0.0", 8001))),
        False,
    ),
    (
        "second different protocol",
        _pod(("UDP", "127.0.0.1", 8001)),
        _node_info(_pod(("TCP", "0.0.0.0", 8001))),
        True,
    ),
    (
        "UDP hostPort conflict due to 0.0.0.0 hostIP",
        _pod(("UDP", "127.0.0.1", 8001)),
        _node_info(_pod(("TCP", "0.0.0.0", 8001), ("UDP", "0.0.0.0", 8001))),
        False,
    ),
    (
        "empty hostIP means every address",
        _pod(("TCP", "", 9090)),
        _node_info(_pod(("TCP", "127.0.0.1", 9090))),
        False,
    ),
    (
        "sidecar init container ports count",
        _pod(init=[("TCP", "", 8001)], sidecar=True),
        _node_info(_pod(("TCP", "", 8001))),
        False,
    ),
]


@pytest.mark.parametrize(
    ("name", "pod", "node_info", "fits"), FILTER_CASES, ids=[c[0] for c in FILTER_CASES]
)
def test_filter(name: str, pod: Pod, node_info: NodeInfo, fits: bool) -> None:
    pl = nodeports.new(None, None)
    state = CycleState()
    result, st = pl.pre_filter(state, pod, [node_info])
    assert result is None and st is None, name
    got = pl.filter(state, pod, node_info)
    assert nodeports.fits(pod, node_info) is fits, name
    if fits:
        assert got is None, name
    else:
        assert got is not None, name
        assert got.code == Code.Unschedulable
        assert got.reasons == ("node(s) didn't have free ports for the requested pod ports",)


@pytest.mark.parametrize(
    "pod",
    [
        _pod(),
        _pod(("TCP", "", 0)),  # containerPort only
        _pod(init=[("TCP", "", 8001)], sidecar=False),  # plain init container
    ],
)
def test_pre_filter_skips_pods_without_host_ports(pod: Pod) -> None:
    state = CycleState()
    result, st = nodeports.new(None, None).pre_filter(state, pod, [])
    assert result is None
    assert st is not None and st.code == Code.Skip
    assert nodeports.PRE_FILTER_STATE_KEY not in state


def test_get_host_ports_orders_sidecars_first() -> None:
    pod = _pod(("TCP", "", 80), init=[("UDP", "", 53)], sidecar=True)
    assert [(p.protocol, p.host_port) for p in nodeports.get_host_ports(pod)] == [
        ("UDP", 53),
        ("TCP", 80),
    ]


def test_filter_without_pre_filter_state_is_an_error() -> None:
    st = nodeports.new(None, None).filter(CycleState(), _pod(("TCP", "", 80)), _node_info())
    assert st is not None and st.code == Code.Error


def test_pre_filter_state_clone_is_shared() -> None:
    state = CycleState()
    nodeports.new(None, None).pre_filter(state, _pod(("TCP", "", 80)), [])
    s = state.read(nodeports.PRE_FILTER_STATE_KEY)
    assert s.clone() is s
    assert state.clone().read(nodeports.PRE_FILTER_STATE_KEY) is s


def test_events_to_register() -> None:
    evs = nodeports.new(None, None).events_to_register()
    assert [e.event for e in evs] == [
        ClusterEvent(EventResource.Pod, ActionType.Delete),
        ClusterEvent(EventResource.Node, ActionType.Add),
    ]
    assert evs[0].queueing_hint_fn is is_schedulable_after_pod_deleted
    assert evs[1].queueing_hint_fn is None


@pytest.mark.parametrize(
    ("deleted", "want"),
    [
        (_pod(("TCP", "", 8080), node="n1"), QueueingHint.Queue),  # frees the wanted port
        (_pod(("TCP", "", 8080)), QueueingHint.QueueSkip),  # never scheduled
        (_pod(node="n1"), QueueingHint.QueueSkip),  # held no host port
        (_pod(("TCP", "", 9090), node="n1"), QueueingHint.QueueSkip),  # other port
        (_pod(("UDP", "", 8080), node="n1"), QueueingHint.QueueSkip),  # other protocol
        (_pod(("TCP", "127.0.0.1", 8080), node="n1"), QueueingHint.Queue),  # 0.0.0.0 overlaps
    ],
)
def test_pod_deleted_hint(deleted: Pod, want: QueueingHint) -> None:
    target = _pod(("TCP", "", 8080))
    assert is_schedulable_after_pod_deleted(target, deleted, None) == want


def test_pod_deleted_hint_counts_nominated_pods() -> None:
    nominated = _pod(("TCP", "", 8080)).with_nominated_node_name("n1")
    assert is_schedulable_after_pod_deleted(_pod(("TCP", "", 8080)), nominated, None) == (
        QueueingHint.Queue
    )


@pytest.mark.parametrize("scenario", scenario_names())
def test_conformance_corpus(scenario: str) -> None:
    problems, _ = check_scenario(scenario, nodeports.NAME, nodeports.new)
    assert problems == []
