"""A plugin, binder, extender or kschedlib itself raising in a cycle never loses the pod: the
cycle ends with an Error status naming the plugin and the exception (Unreserve, forget the
assumed pod, requeue with backoff, FailedScheduling), and the pod is retried after backoff."""

from __future__ import annotations

from typing import Any

import pytest

from kschedlib import FakeClock, Pod
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.status import Code, Status
from kschedlib.results import Outcome
from tests.builders import accounted, new_scheduler, node, pod

POINTS = ("pre_filter", "add_pod", "filter", "pre_score", "score", "normalize_score",
          "reserve", "permit", "pre_bind", "bind", "post_filter")


class Boom:
    """A plugin at every extension point that raises at ``point`` while ``armed``."""

    name = "Boom"

    def __init__(self, point: str) -> None:
        self.point = point
        self.armed = True
        self.unreserved: list[str] = []
        self.reject_filter = point == "post_filter"

    def _maybe(self, point: str) -> None:
        if self.armed and self.point == point:
            raise ZeroDivisionError(f"boom in {point}")

    def pre_filter(self, state: CycleState, p: Pod, nodes: Any) -> tuple[None, Status | None]:
        self._maybe("pre_filter")
        return None, None

    def pre_filter_extensions(self) -> Any:
        return self

    def add_pod(self, state: CycleState, p: Pod, pi: Any, ni: Any) -> Status | None:
        self._maybe("add_pod")
        return None

    def remove_pod(self, state: CycleState, p: Pod, pi: Any, ni: Any) -> Status | None:
        self._maybe("remove_pod")
        return None

    def filter(self, state: CycleState, p: Pod, ni: Any) -> Status | None:
        self._maybe("filter")
        if self.reject_filter and self.armed:
            return Status(Code.Unschedulable, ("boom says no",))
        return None

    def post_filter(self, state: CycleState, p: Pod, statuses: Any) -> Any:
        self._maybe("post_filter")
        return None, Status(Code.Unschedulable)

    def pre_score(self, state: CycleState, p: Pod, nodes: Any) -> Status | None:
        self._maybe("pre_score")
        return None

    def score(self, state: CycleState, p: Pod, ni: Any) -> tuple[int, Status | None]:
        self._maybe("score")
        return 0, None

    def score_extensions(self) -> Any:
        return self

    def normalize_score(self, state: CycleState, p: Pod, scores: Any) -> Status | None:
        self._maybe("normalize_score")
        return None

    def reserve(self, state: CycleState, p: Pod, node_name: str) -> Status | None:
        self._maybe("reserve")
        return None

    def unreserve(self, state: CycleState, p: Pod, node_name: str) -> None:
        self.unreserved.append(p.key)
        raise RuntimeError("unreserve raising must not matter")

    def permit(self, state: CycleState, p: Pod, node_name: str) -> tuple[Status | None, float]:
        self._maybe("permit")
        return None, 0.0

    def pre_bind(self, state: CycleState, p: Pod, node_name: str) -> Status | None:
        self._maybe("pre_bind")
        return None

    def bind(self, state: CycleState, p: Pod, node_name: str) -> Status | None:
        self._maybe("bind")
        return None

    def post_bind(self, state: CycleState, p: Pod, node_name: str) -> None:
        raise RuntimeError("post-bind raising does not undo the binding")


def _config(point: str) -> dict[str, Any]:
    plugins: dict[str, Any] = {"multiPoint": {"enabled": [{"name": "Boom"}]}}
    if point == "bind":  # Boom must be the binder that runs
        plugins["bind"] = {"disabled": [{"name": "DefaultBinder"}]}
    return {"profiles": [{"plugins": plugins}]}


EXPECTED = {
    "pre_filter": 'running PreFilter plugin "Boom": ZeroDivisionError: boom in pre_filter',
    "add_pod": 'running AddPod on PreFilter plugin "Boom": ZeroDivisionError: boom in add_pod',
    "filter": 'running "Boom" filter plugin: ZeroDivisionError: boom in filter',
    "pre_score": 'running PreScore plugin "Boom": ZeroDivisionError: boom in pre_score',
    "score": 'running Score plugins: plugin "Boom" failed with: ZeroDivisionError: boom in score',
    "normalize_score": 'running Normalize on Score plugins: plugin "Boom" failed with: '
    "ZeroDivisionError: boom in normalize_score",
    "reserve": 'running Reserve plugin "Boom": ZeroDivisionError: boom in reserve',
    "permit": 'running Permit plugin "Boom": ZeroDivisionError: boom in permit',
    "pre_bind": 'running PreBind plugin "Boom": ZeroDivisionError: boom in pre_bind',
    "bind": 'running Bind plugin "Boom": ZeroDivisionError: boom in bind',
}


@pytest.mark.parametrize("point", POINTS)
def test_raising_plugin_is_an_error_status_and_the_pod_is_retried(point: str) -> None:
    boom = Boom(point)
    clock = FakeClock()
    s = new_scheduler(config=_config(point), clock=clock, plugins={"Boom": lambda a, h: boom})
    s.add_node(node("n1"))
    s.add_node(node("n2"))
    if point == "add_pod":  # AddPod runs for a nominated pod of equal priority on the node
        gated = pod("nominee", cpu="10", schedulingGates=[{"name": "later"}])
        s.add_pod(gated.with_nominated_node_name("n1"))
    s.add_pod(pod("victim-free"))
    results = s.run()
    assert len(results) == 1
    r = results[0]
    assert accounted(s, ["default/victim-free"]) == {"default/victim-free": "pending"}
    assert not s.cache.dump().assumed_pods
    events = [e for e in s.events if e.reason == "FailedScheduling"]
    assert events and events[-1].pod == "default/victim-free"
    if point == "post_filter":
        # kube-scheduler: a PostFilter error leaves the FitError, its message appended.
        assert r.outcome == Outcome.Unschedulable
        assert "boom in post_filter" in r.message
    elif point in ("pre_bind", "bind"):
        assert r.outcome == Outcome.BindFailed, r.message
        assert r.message == EXPECTED[point]
    else:
        assert r.outcome == Outcome.Error, r.message
        assert r.message == EXPECTED[point]
        assert events[-1].message == EXPECTED[point]
    if point in ("permit", "pre_bind", "bind"):
        assert boom.unreserved == ["default/victim-free"]
    # requeued with backoff: nothing ready now, scheduled once the backoff is over
    assert s.run() == []
    boom.armed = False
    clock.advance(400 if point == "post_filter" else 20)  # unschedulable: leftover flush
    again = s.run()
    assert [x.outcome for x in again] == [Outcome.Scheduled]
    assert accounted(s, ["default/victim-free"]) == {"default/victim-free": "bound"}


def test_pre_enqueue_raising_gates_the_pod_and_it_stays_pending() -> None:
    class Gate:
        name = "Gate"

        def pre_enqueue(self, p: Pod) -> Status | None:
            raise KeyError("gate")

    cfg = {"profiles": [{"plugins": {"preEnqueue": {"enabled": [{"name": "Gate"}]}}}]}
    s = new_scheduler(config=cfg, plugins={"Gate": lambda a, h: Gate()})
    s.add_node(node("n1"))
    s.add_pod(pod("p"))
    assert s.run() == []
    assert accounted(s, ["default/p"]) == {"default/p": "pending"}
    assert s.pending_pods_count()["gated"] == 1


class _RaisingBinder:
    def bind(self, p: Pod, node_name: str) -> None:
        raise OSError("connection reset")


def test_binder_raising_unreserves_and_requeues() -> None:
    clock = FakeClock()
    s = new_scheduler(clock=clock, binder=_RaisingBinder())
    s.add_node(node("n1"))
    s.add_pod(pod("p"))
    [r] = s.run()
    assert r.outcome == Outcome.BindFailed
    assert r.message == 'running Bind plugin "DefaultBinder": connection reset'
    assert accounted(s, ["default/p"]) == {"default/p": "pending"}
    assert not s.cache.dump().assumed_pods
    assert s.cache.get_node("n1").requested.milli_cpu == 0


class _Extender:
    name = "ext"

    def __init__(self, where: str) -> None:
        self.where = where

    def is_interested(self, p: Pod) -> bool:
        return True

    def is_ignorable(self) -> bool:
        return False

    def is_binder(self) -> bool:
        return self.where == "bind"

    def filter(self, p: Pod, nodes: Any) -> Any:
        if self.where == "filter":
            raise ValueError("extender down")
        return list(nodes), {}, {}

    def prioritize(self, p: Pod, nodes: Any) -> Any:
        raise ValueError("ignored by kube-scheduler")

    def bind(self, p: Pod, node_name: str) -> None:
        raise ValueError("extender bind down")

    def supports_preemption(self) -> bool:
        return False


@pytest.mark.parametrize("where", ["filter", "bind"])
def test_extender_raising_never_loses_the_pod(where: str) -> None:
    s = new_scheduler(extenders=[_Extender(where)])
    s.add_node(node("n1"))
    s.add_node(node("n2"))
    s.add_pod(pod("p"))
    [r] = s.run()
    assert r.outcome in (Outcome.Error, Outcome.BindFailed)
    assert "extender" in r.message
    assert accounted(s, ["default/p"]) == {"default/p": "pending"}
    assert not s.cache.dump().assumed_pods


def test_internal_error_after_assume_forgets_the_pod_and_requeues(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = FakeClock()
    s = new_scheduler(clock=clock)
    s.add_node(node("n1"))
    s.add_pod(pod("p"))

    def broken(*a: Any, **k: Any) -> Any:
        raise AttributeError("'NoneType' object has no attribute 'spec'")

    monkeypatch.setattr(s, "_binding_cycle", broken)
    [r] = s.run()
    assert r.outcome == Outcome.Error
    assert r.message.startswith("internal error: AttributeError:")
    assert accounted(s, ["default/p"]) == {"default/p": "pending"}
    assert not s.cache.dump().assumed_pods
    assert s.cache.get_node("n1").requested.milli_cpu == 0
    monkeypatch.undo()
    clock.advance(20)
    assert [x.outcome for x in s.run()] == [Outcome.Scheduled]


def test_internal_error_after_the_pod_left_the_queue_keeps_it_pending(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = FakeClock()
    s = new_scheduler(clock=clock)
    s.add_node(node("n1"))
    s.add_pod(pod("p"))
    from kschedlib.backend.cache import Cache

    real_add = Cache.add_pod
    calls = {"n": 0}

    def flaky(self: Cache, p: Pod) -> None:  # the bound pod's add to the cache fails once
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("cache add failed")
        real_add(self, p)

    monkeypatch.setattr(Cache, "add_pod", flaky)
    [r] = s.run()
    assert r.outcome == Outcome.Error and "cache add failed" in r.message
    assert accounted(s, ["default/p"]) == {"default/p": "pending"}
    clock.advance(20)
    assert [x.outcome for x in s.run()] == [Outcome.Scheduled]
    assert accounted(s, ["default/p"]) == {"default/p": "bound"}


def test_remove_pod_raising_during_preemption_dry_run_keeps_every_pod() -> None:
    boom = Boom("remove_pod")
    clock = FakeClock()
    s = new_scheduler(config=_config("remove_pod"), clock=clock,
                      plugins={"Boom": lambda a, h: boom})
    s.add_node(node("n1", cpu="1"))
    s.add_pod(pod("low", cpu="1", priority=0))
    assert [r.outcome for r in s.run()] == [Outcome.Scheduled]
    s.add_pod(pod("high", cpu="1", priority=100))
    [r] = s.run()
    assert r.outcome == Outcome.Unschedulable
    assert "boom in remove_pod" in r.message
    assert r.victims == ()
    assert accounted(s, ["default/low", "default/high"]) == {
        "default/low": "bound", "default/high": "pending"}
