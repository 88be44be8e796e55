"""Cluster and the assertions: right verdicts pass, wrong ones fail with a readable message."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kschedlib.testing import (
    Cluster,
    assert_feasible,
    assert_preempted,
    assert_rejected,
    assert_scheduled,
    assert_score_order,
    assert_unschedulable,
    describe,
    make_node,
    make_pod,
)


def _cluster() -> Cluster:
    return Cluster(nodes=[
        make_node("small").capacity(cpu="2", memory="4Gi"),
        make_node("big").capacity(cpu="8", memory="16Gi"),
        make_node("tainted").capacity(cpu="8", memory="16Gi").taint("gpu", "true"),
    ])


def test_schedule_and_assert_scheduled() -> None:
    c = _cluster()
    r = c.schedule(make_pod("p").req(cpu="1", memory="1Gi"))
    assert_scheduled(r, on="big")  # LeastAllocated prefers the emptier node
    assert_scheduled(r, on=["big", "small"])
    assert c.node_of("default/p") == "big"
    assert_feasible(r, ["big", "small"])
    assert_rejected(r, "tainted", plugin="TaintToleration", reason="untolerated taint")
    assert_score_order(r, ["big", "small"])
    assert_score_order(r, ["big", "small"], plugin="NodeResourcesFit")
    with pytest.raises(AssertionError, match="expected default/p on small, got big"):
        assert_scheduled(r, on="small")
    with pytest.raises(AssertionError, match=r"total score order \['small', 'big'\].*small=\d+ < big=\d+"):
        assert_score_order(r, ["small", "big"])
    with pytest.raises(AssertionError, match="to be unschedulable"):
        assert_unschedulable(r)
    with pytest.raises(AssertionError, match="tainted was not scored"):
        assert_score_order(r, ["big", "tainted"])
    with pytest.raises(AssertionError, match="missing: \\['tainted'\\]"):
        assert_feasible(r, ["big", "small", "tainted"])


def test_assert_unschedulable_names_the_reason() -> None:
    c = _cluster()
    r = c.schedule(make_pod("huge").req(cpu="64"))
    assert_unschedulable(r, reason="Insufficient cpu")
    with pytest.raises(AssertionError) as info:
        assert_unschedulable(r, reason="Insufficient memory")
    text = str(info.value)
    assert "to mention 'Insufficient memory'" in text
    assert "0/3 nodes are available" in text  # the actual message is in the failure
    assert "rejected small by NodeResourcesFit: Insufficient cpu" in text
    with pytest.raises(AssertionError, match="to be scheduled"):
        assert_scheduled(r)
    assert "Unschedulable" in describe(r)


def test_run_and_preemption() -> None:
    c = Cluster(
        nodes=[make_node("n1").capacity(cpu="2")],
        pods=[make_pod("low").req(cpu="2").priority(0).node("n1")],
    )
    first, second = c.run(make_pod("high").req(cpu="2").priority(100))
    assert_unschedulable(first, reason="Insufficient cpu")
    assert_preempted(first, victims=["default/low"], node="n1")
    assert_scheduled(second, on="n1")  # the victim is gone: the retry binds
    with pytest.raises(AssertionError, match="expected victims"):
        assert_preempted(first, victims=["default/other"])
    with pytest.raises(AssertionError, match="to preempt"):
        assert_preempted(second)


def test_pytest_plugin_fixtures(
    kschedlib_cluster: Callable[..., Cluster],
    make_pod: Callable[..., object],
    kschedlib_clock: object,
) -> None:
    c = kschedlib_cluster(nodes=[make_node("n1").capacity(cpu="1")])
    assert c.clock is kschedlib_clock
    assert_scheduled(c.schedule(make_pod("p").req(cpu="500m")), on="n1")  # type: ignore[attr-defined]


def test_plugin_is_registered_as_a_pytest11_entry_point() -> None:
    from importlib.metadata import entry_points

    eps = {ep.name: ep.value for ep in entry_points(group="pytest11")}
    assert eps.get("kschedlib") == "kschedlib.testing.pytest_plugin"
