"""Scheduler.can_schedule(): a verdict without binding, evicting or nominating."""

from __future__ import annotations

import pytest

from kschedlib import FakeClock, Scheduler
from kschedlib.errors import InvalidObjectError
from tests.whatif.helpers import cache_view, node, pod, snapshot_view


def _cluster() -> Scheduler:
    s = Scheduler(clock=FakeClock(), seed=1)
    s.add_node(node("n0", cpu="2"))
    s.add_node(node("n1", cpu="2"))
    s.add_pod(pod("low0", cpu="1500m", node_name="n0", priority=1))
    s.add_pod(pod("low1", cpu="1800m", node_name="n1", priority=1))
    return s


def test_schedulable_pod_reports_the_node_and_changes_nothing() -> None:
    s = _cluster()
    before, cached = snapshot_view(s), cache_view(s)
    v = s.can_schedule(pod("small", cpu="400m"))
    assert v.schedulable and v.node == "n0"
    assert v.message == "Successfully assigned default/small to n0"
    assert v.explanation is not None and v.explanation.selected == "n0"
    assert snapshot_view(s) == before and cache_view(s) == cached
    assert s.pending_pods() == [] and s.events == []
    assert v.to_dict()["node"] == "n0"


def test_unschedulable_pod_gets_the_fit_error_and_the_preemption_plan() -> None:
    s = _cluster()
    before, cached = snapshot_view(s), cache_view(s)
    v = s.can_schedule(pod("high", cpu="1", priority=100))
    assert not v.schedulable and v.node is None
    assert v.message == "0/2 nodes are available: 2 Insufficient cpu."
    assert v.nominated_node == "n1"
    assert v.victims == ("default/low1",)
    assert v.outcome == "Unschedulable"
    # nothing was evicted, nominated or queued in the scheduler asked
    assert snapshot_view(s) == before and cache_view(s) == cached
    assert s.queue.nominator.nominated_pod_to_node == {}
    assert s.pending_pods() == []
    assert "preemption would nominate" in str(v)


def test_no_preemption_possible() -> None:
    s = _cluster()
    v = s.can_schedule(pod("huge", cpu="8", priority=100))
    assert not v.schedulable and v.nominated_node is None and v.victims == ()
    assert v.message.startswith("0/2 nodes are available: 2 Insufficient cpu. ")
    assert v.message.endswith(
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


def test_pending_pod_by_key_and_bad_input() -> None:
    s = _cluster()
    s.add_pod(pod("waiting", cpu="100m"))
    v = s.can_schedule("default/waiting")
    assert v.schedulable
    assert [p.key for p in s.pending_pods()] == ["default/waiting"]
    with pytest.raises(InvalidObjectError, match="spec.nodeName"):
        s.can_schedule(pod("bound", node_name="n0"))
    with pytest.raises(InvalidObjectError, match="not a pending pod"):
        s.can_schedule("default/nope")
    with pytest.raises(InvalidObjectError, match="spec.schedulerName"):
        s.can_schedule(pod("other", spec={"schedulerName": "else"}))


def test_gated_pod() -> None:
    s = _cluster()
    v = s.can_schedule(pod("gated", spec={"schedulingGates": [{"name": "wait"}]}))
    assert not v.schedulable and v.outcome == "Gated"
