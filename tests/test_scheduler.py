"""The Scheduler facade driven as a host would: events in, binder called, time advanced."""

from __future__ import annotations

from typing import Any

import pytest

from kschedlib import (
    CacheError,
    Code,
    CycleState,
    FakeClock,
    Node,
    Outcome,
    Pod,
    Scheduler,
    Status,
)


def node(name: str, cpu: str = "4", **labels: str) -> Node:
    return Node.from_dict({
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
    })


def pod(name: str, cpu: str = "1", **spec: Any) -> Pod:
    return Pod.from_dict({
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}], **spec},
    })


class RecordingBinder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.fail_next = 0

    def bind(self, p: Pod, node_name: str) -> None:
        self.calls.append((p.key, node_name))
        if self.fail_next:
            self.fail_next -= 1
            raise RuntimeError("apiserver said no")


class Gate:
    """A Permit plugin that makes pods wait until the test allows or rejects them."""

    name = "Gate"

    def permit(self, state: CycleState, p: Pod, node_name: str) -> tuple[Status | None, float]:
        return Status(Code.Wait), 30.0


GATE_CONFIG = {
    "profiles": [{"plugins": {"permit": {"enabled": [{"name": "Gate"}]}}}],
}


def test_success_binds_and_records_event() -> None:
    binder = RecordingBinder()
    s = Scheduler(binder=binder, clock=FakeClock(), deterministic=True)
    s.add_node(node("n1"))
    s.add_node(node("n2"))
    s.add_pod(pod("web"))
    (r,) = s.run()
    assert r.outcome == Outcome.Scheduled and r.node in ("n1", "n2")
    assert binder.calls == [("default/web", r.node)]
    assert s.events[-1].reason == "Scheduled"
    assert s.events[-1].message == f"Successfully assigned default/web to {r.node}"
    assert [p.key for p in s.bound_pods()] == ["default/web"]
    exp = s.explain("default/web")
    assert exp is not None and set(exp.feasible) == {"n1", "n2"} and exp.selected == r.node
    assert exp.scores[r.node].plugins["NodeResourcesFit"].weight == 1
    assert s.metrics.schedule_attempts["scheduled"] == 1


def test_unschedulable_then_requeued_when_a_node_is_added() -> None:
    clock = FakeClock()
    s = Scheduler(clock=clock, deterministic=True)
    s.add_node(node("small", cpu="1"))
    s.add_pod(pod("big", cpu="2"))
    (r,) = s.run()
    assert r.outcome == Outcome.Unschedulable
    assert r.message.startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert s.pending_pods_count()["unschedulable"] == 1
    assert s.metrics.schedule_attempts["unschedulable"] == 1
    assert s.events[-1].reason == "FailedScheduling"
    assert s.run() == []  # parked in the unschedulable pods
    s.add_node(node("large", cpu="4"))  # NodeAdd: NodeResourcesFit's hint says Queue
    clock.advance(10)
    s.tick()
    (r2,) = s.run()
    assert r2.outcome == Outcome.Scheduled and r2.node == "large"


def test_permit_wait_allow_and_timeout() -> None:
    clock = FakeClock()
    binder = RecordingBinder()
    s = Scheduler(GATE_CONFIG, binder=binder, clock=clock, plugins={"Gate": lambda a, h: Gate()})
    s.add_node(node("n1"))
    s.add_pod(pod("a"))
    s.add_pod(pod("b"))
    results = s.run()
    assert [r.outcome for r in results] == [Outcome.Waiting, Outcome.Waiting]
    assert binder.calls == []  # waiting pods do not block each other, nothing is bound yet
    fwk = s.frameworks["default-scheduler"]
    wp = fwk.get_waiting_pod("uid-a")
    assert wp is not None and wp.get_pending_plugins() == ["Gate"]
    wp.allow("Gate")
    (done,) = s.run()
    assert done.outcome == Outcome.Scheduled and done.key == "default/a"
    clock.advance(31)
    # The rejection fails as a FitError naming Gate; a's binding happened while b was in
    # flight, so b is retried at once (and waits again).
    timed_out, retried = s.run()
    assert timed_out.outcome == Outcome.Unschedulable and timed_out.key == "default/b"
    assert timed_out.message == (
        "0/1 nodes are available: 1 rejected due to timeout after waiting 30s at plugin Gate."
    )
    assert retried.outcome == Outcome.Waiting and retried.key == "default/b"
    assert binder.calls == [("default/a", "n1")]


def test_bind_failure_forgets_and_retries() -> None:
    clock = FakeClock()
    binder = RecordingBinder()
    binder.fail_next = 1
    s = Scheduler(binder=binder, clock=clock, deterministic=True)
    s.add_node(node("n1"))
    s.add_pod(pod("web"))
    (r,) = s.run()
    assert r.outcome == Outcome.BindFailed and "apiserver said no" in r.message
    assert s.bound_pods() == []  # the assumed pod was forgotten
    assert s.cache.pod_count() == 0
    clock.advance(2)
    s.tick()
    (r2,) = s.run()
    assert r2.outcome == Outcome.Scheduled and r2.node == "n1"
    assert binder.calls == [("default/web", "n1"), ("default/web", "n1")]


def test_pods_for_other_schedulers_are_ignored_and_assigned_pods_cached() -> None:
    s = Scheduler(clock=FakeClock())
    s.add_node(node("n1", cpu="2"))
    s.add_pod(pod("mine"))
    s.add_pod(pod("theirs", schedulerName="other-scheduler"))
    s.add_pod(pod("running", cpu="1500m", nodeName="n1"))
    results = s.run()
    assert [r.key for r in results] == ["default/mine"]
    assert results[0].outcome == Outcome.Unschedulable  # 1.5 of 2 CPUs already used


def test_deleting_a_running_pod_frees_room() -> None:
    clock = FakeClock()
    s = Scheduler(clock=clock)
    s.add_node(node("n1", cpu="2"))
    running = pod("running", cpu="2", nodeName="n1")
    s.add_pod(running)
    s.add_pod(pod("next", cpu="1"))
    assert s.run()[0].outcome == Outcome.Unschedulable
    s.delete_pod(running)
    clock.advance(10)
    s.tick()
    assert s.run()[0].outcome == Outcome.Scheduled


def test_invalid_transitions_raise_and_leave_state_intact() -> None:
    s = Scheduler(clock=FakeClock())
    s.add_node(node("n1"))
    s.add_pod(pod("p"))
    with pytest.raises(CacheError):
        s.add_pod(pod("p"))
    s.update_node(node("ghost"))  # an unknown node is added, as kube-scheduler's cache does
    assert sorted(s.cache.node_names()) == ["ghost", "n1"]
    s.delete_node("ghost")
    assert len(s.pending_pods()) == 1
    assert s.run()[0].outcome == Outcome.Scheduled
