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
from kschedlib.testing import (
    Cluster,
    assert_feasible,
    assert_scheduled,
    assert_unschedulable,
    make_node,
    make_pod,
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
    c = Cluster(nodes=[make_node("n1").capacity(cpu="4"), make_node("n2").capacity(cpu="4")],
                binder=binder)
    r = c.schedule(make_pod("web").req(cpu="1"))
    assert_scheduled(r, on=["n1", "n2"])
    assert_feasible(r, ["n1", "n2"])
    s = c.scheduler
    assert binder.calls == [("default/web", r.node)]
    assert s.events[-1].reason == "Scheduled"
    assert s.events[-1].message == f"Successfully assigned default/web to {r.node}"
    assert [p.key for p in s.bound_pods()] == ["default/web"]
    exp = s.explain("default/web")
    assert exp is not None and exp.selected == r.node
    assert exp.scores[r.node].plugins["NodeResourcesFit"].weight == 1
    assert s.metrics.schedule_attempts["scheduled"] == 1


def test_unschedulable_then_requeued_when_a_node_is_added() -> None:
    c = Cluster(nodes=[make_node("small").capacity(cpu="1")])
    s = c.scheduler
    (r,) = c.run(make_pod("big").req(cpu="2"))
    assert_unschedulable(r, reason="0/1 nodes are available: 1 Insufficient cpu.")
    assert s.pending_pods_count()["unschedulable"] == 1
    assert s.metrics.schedule_attempts["unschedulable"] == 1
    assert s.events[-1].reason == "FailedScheduling"
    assert c.run() == []  # parked in the unschedulable pods
    c.add(make_node("large").capacity(cpu="4"))  # NodeAdd: NodeResourcesFit's hint says Queue
    c.clock.advance(10)
    s.tick()
    (r2,) = c.run()
    assert_scheduled(r2, on="large")


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
    c = Cluster(nodes=[make_node("n1").capacity(cpu="2")])
    results = c.run(
        make_pod("mine").req(cpu="1"),
        make_pod("theirs").req(cpu="1").scheduler_name("other-scheduler"),
        make_pod("running").req(cpu="1500m").node("n1"),
    )
    assert [r.key for r in results] == ["default/mine"]
    assert_unschedulable(results[0], reason="Insufficient cpu")  # 1.5 of 2 CPUs already used


def test_deleting_a_running_pod_frees_room() -> None:
    running = make_pod("running").req(cpu="2").node("n1").obj()
    c = Cluster(nodes=[make_node("n1").capacity(cpu="2")], pods=[running])
    assert_unschedulable(c.schedule(make_pod("next").req(cpu="1")))
    c.scheduler.delete_pod(running)
    c.clock.advance(10)
    c.scheduler.tick()
    assert_scheduled(c.run()[0], on="n1")


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
